/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPU frequency / thermal timeline of a run: the throttle events from every
 * source (sysfs seed, tracepoints, /proc/stat busy shares, counters, Jetson
 * signals) in one array, their summaries for report.json ("thermal",
 * "cpufreq", "throttling") and trace.json counter tracks. Pure except for
 * the FILE the trace goes to. Rules: docs/thermal.md.
 */
#ifndef EBPF_PROF_THERMAL_H
#define EBPF_PROF_THERMAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jetson/jetson.h"
#include "sysmon/sysfs_seed.h"
#include "sysmon/throttle.h"

/* Bound on stored events (about 110 bytes each); more are counted. */
#define THERMAL_MAX_EVENTS (1u << 20)
#define THERMAL_MAX_CPUS   4096

/* Cumulative jiffies of one CPU from /proc/stat. */
struct cpu_times {
	bool ok;
	uint64_t busy, total;
};

/*
 * Parses the per-CPU "cpuN ..." lines of /proc/stat into out[N] (N < max).
 * busy = total - idle - iowait. Returns how many CPUs were read, or -EINVAL
 * when no line parses. Lines with garbage are skipped.
 */
int thermal_parse_proc_stat(const char *text, struct cpu_times *out, size_t max);

struct thermal_tl {
	struct thr_event *ev;
	size_t n, cap;
	size_t dropped;
	/* Busy windows are merged while they stay on the same side of the
	 * busy threshold, so a steady CPU costs one event, not one per period. */
	struct thr_event *pending_busy; /* per CPU, type 0 when none */
	size_t ncpus;
	unsigned busy_permille;
	/* Jetson signals seen active at the previous sample, by source. */
	char (*jsrc)[THR_NAME_LEN];
	uint32_t *jcause;
	size_t njsrc;
};

int thermal_tl_init(struct thermal_tl *t, size_t ncpus, unsigned busy_permille);
void thermal_tl_free(struct thermal_tl *t);
/* A new event slot (zeroed), or NULL when full (counted) or out of memory. */
struct thr_event *thermal_tl_push(struct thermal_tl *t, uint64_t ts, int type);
/* Busy shares between two /proc/stat readings taken at t0 and t1. */
void thermal_tl_busy(struct thermal_tl *t, const struct cpu_times *prev,
		     const struct cpu_times *cur, size_t ncpu, uint64_t t0, uint64_t t1);
/* Flushes merged busy windows (call before analysing). */
void thermal_tl_flush(struct thermal_tl *t);
/* One Jetson sample's throttle signals: sources turning on/off become
 * THR_EV_EXTERNAL events. */
void thermal_tl_jetson(struct thermal_tl *t, uint64_t ts, const struct jetson_throttle_signal *sig,
		       size_t nsig);
uint32_t thermal_jetson_cause(enum jetson_throttle_kind k);

/* report.json sections. seed may be NULL (not read). */
int thermal_report_json(const struct thermal_tl *t, const struct sysfs_seed *seed,
			const struct thr_result *res, uint64_t t0, uint64_t t1, cJSON *root);
/* Frequency (MHz, per CPU) and temperature (C, per zone) counter tracks. */
int thermal_trace_events(const struct thermal_tl *t, uint32_t pid, FILE *out, bool *first);
bool thermal_has_trace(const struct thermal_tl *t);

#endif
