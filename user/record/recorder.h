/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The state of one recording run, shared by record.c (the run's phases, in
 * order) and its parts in this folder: the targets and their lifecycle
 * (targets.c), the modules driven through rec_module.h (modules.c).
 * Internal to the recorder: nothing outside record.c and user/record/
 * includes it.
 */
#ifndef EBPF_PROF_RECORDER_H
#define EBPF_PROF_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"
#include "kernel/bpf_parts.h"
#include "kernel/kfeat.h"
#include "kernel/vstat.h"
#include "overload/priority.h"
#include "overload/tick_guard.h"
#include "proc/pid_index.h"
#include "profile/cpu_samples.h"
#include "profile/profile.h"
#include "profile/sampler.h"
#include "rec_module.h"
#include "record/launch.h"
#include "report/output.h"
#include "report/report.h"
#include "symbolize/ksym_part.h"
#include "top/top_live.h"

/* The data sources beside the CPU sampler, in the order they run (see
 * modules.c). */
extern const struct rec_module *const rec_modules[];
extern const size_t rec_nmodules;

#define for_each_module(r, i)                     \
	for (size_t i = 0; i < rec_nmodules; i++) \
		if ((r)->mstate[i])

struct recorder {
	const struct cli_opts *opts; /* as the kernel allows (preflight.h) */
	struct kfeat kf;	     /* what the running kernel's BPF has */
	/* The verifier's figures of every program loaded (kernel/vstat.h). */
	struct vstat vs;
	struct collector_prio prio;
	struct profile prof;
	struct cpu_samples cs; /* the sampler's records into prof */
	struct symbolizer *sym;
	struct unwinder *uw;
	struct ktables *kt; /* --unwind cfi-kernel */
	struct sampler_opts so;
	struct sampler *sampler;
	struct pyframes *py; /* NULL: --python native or no bpf_loop */
	struct run_info ri;
	struct rec_ctx mctx;
	void *mstate[REC_MAX_MODULES];	/* per module in `rec_modules`, NULL when off */
	struct bpf_parts_objs bpf_objs; /* the modules' BPF object(s) */
	struct ksym_part ksym;		/* kallsyms iterator (symbolize/ksym_part.h) */
	/* Targets: ri.targets, indexed by pid. */
	uint32_t pids[CLI_MAX_PIDS]; /* --pid, resolved to processes */
	int npids;
	size_t cap_targets;
	struct pid_index tgidx; /* pid -> ri.targets[] */
	size_t nalive;
	/* The launched command (launch mode), held until everything is
	 * attached. */
	struct launch l;
	pid_t child;
	bool child_reaped;
	uint64_t child_zombie_ns; /* when check_liveness first saw it exited */
	/* Signals, through a descriptor the loop polls. */
	sigset_t orig_mask;
	int sfd;
	char *outdir;
	struct output_dir od;
	uint64_t deadline; /* -d: when the run stops; 0: none */
	uint64_t next_liveness_ns;
	uint64_t next_live_drops_ns;
	uint64_t next_trim_ns;
	uint64_t t_drained, t_stopped; /* for the stop's timing line */
	struct links_reaper *reaper;
	struct live_metrics live;
	bool stop_requested;
	struct metrics_server *metrics; /* --metrics */
	struct rotator *rot;		/* --rotate */
	struct tick_guard tick;		/* -F against the perf interrupt limit */
};

#endif
