/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Scheduler view of the traced threads: on/off-CPU time, off-CPU time by
 * reason, context switches, run-queue latency (accounted in the kernel by
 * bpf/sched.bpf.c with the rules of bpf/sched_acct.h), and an off-CPU
 * profile of the long blocking episodes.
 *
 * sched_view.c is pure (records in, report/summary out; unit-tested);
 * sched_module.c runs the BPF side as a recording module.
 */
#ifndef EBPF_PROF_SCHED_VIEW_H
#define EBPF_PROF_SCHED_VIEW_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "events/sched.h"
#include "util/histogram.h"
#include "profile/profile.h"
#include "rec_module.h"

/* One thread's kernel accounting, closed at the end of the run with
 * ep_acct_finish(). */
struct sched_thread_rec {
	uint32_t tid;
	struct ep_sched_thread t;
};

struct sched_stats {
	uint64_t drops[EP_SDROP__COUNT]; /* kernel-side, summed over CPUs */
	uint64_t collector_drops;	 /* episodes received but not added */
	uint64_t episodes;		 /* long episodes added to the off-CPU profile */
	uint64_t episode_ns;		 /* their summed length */
	uint64_t ustack_skipped;	 /* of those, reported without user frames by design
				  * (EP_SSTAT_USTACK_SKIPPED) */
	uint64_t ustack_walks; /* user stacks walked at switch-outs (EP_SSTAT_USTACK_WALKS) */
	/* Exited threads past SCHED_MAX_EXITED_LISTED, summed into one record:
	 * a fork storm must not cost a record per child. They count
	 * in every total; report.json lists the others one by one. */
	struct ep_sched_thread folded;
	uint64_t nfolded;
	uint32_t offcpu_min_us;
	bool stacks;
	const char *folded_file; /* NULL when not written */
};

/* Exited threads kept one by one; those harvested after are folded into
 * sched_stats.folded. Threads alive at the end are always listed. */
#define SCHED_MAX_EXITED_LISTED 2048

/* Adds t's times, switches and run-queue histogram to agg. */
void sched_rec_fold(struct ep_sched_thread *agg, const struct ep_sched_thread *t);

/* Names used in report.json for enum ep_off_reason and enum ep_sched_drop. */
const char *sched_reason_name(unsigned reason);
const char *sched_drop_name(unsigned drop);

/* Adds the kernel's per-thread run-queue histogram of t to h (every count at
 * its kernel bucket's midpoint; max and sum are the kernel's exact ones). */
void sched_hist_import(struct histogram *h, const struct ep_sched_thread *t);

/* The report.json "sched" object (docs/report-schema.md). Threads are
 * listed by pid, then tid. Returns NULL on allocation failure. */
cJSON *sched_report_json(const struct sched_thread_rec *recs, size_t n,
			 const struct sched_stats *st);

/* A few human lines: totals by reason, run-queue p99, busiest blockers. */
void sched_print_summary(const struct sched_thread_rec *recs, size_t n,
			 const struct sched_stats *st, FILE *out);

/* Off-CPU episode length (ns) -> profile weight in microseconds, at least 1
 * so a reported episode is never lost to rounding. */
uint64_t sched_episode_weight_us(uint64_t dur_ns);

/* Whether a ring record of size bytes is a well-formed off-CPU episode:
 * its frame counts fit the record and the array (records carry only the
 * frames they use). */
bool sched_offcpu_record_ok(const struct ep_offcpu *e, size_t size);

/* The recording module (sched_module.c). */
extern const struct rec_module sched_rec_module;

/* The off-CPU profile of a running sched module (period_ns = 1000: one
 * count is one microsecond), for profile.speedscope.json; NULL when the
 * module is off or runs without stacks. */
const struct profile *sched_offcpu_profile(void *state);

#endif
