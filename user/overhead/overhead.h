/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profiler's own cost inside the target (pure part; the recording
 * module is overhead_module.c).
 *
 * A probed call costs the target a trap into the kernel per probe hit
 * (uprobe entry, uretprobe return, USDT point) plus the BPF program run
 * there; a CPU sample costs the sampling program's run. The trap is
 * measured once per run (overhead_calibrate: a function of our own is
 * called with and without a uprobe and a uretprobe on it), the programs'
 * runs and run time come from the kernel's BPF statistics
 * (BPF_ENABLE_STATS) for each of our programs. The estimate:
 *
 *   probes  = sum over uprobe/USDT programs of runs x trap + run time
 *           + watchpoint hits (py: cycles) x their trap + run time
 *   samples = sum over perf-event programs of run time
 *
 * It leaves out what the traced program itself does for a USDT point it
 * knows is enabled (CPython builds the name, file and line of every
 * function for function__return), so for py: cycles it is a lower bound.
 */
#ifndef EP_OVERHEAD_H
#define EP_OVERHEAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum overhead_kind {
	OVH_PROBE = 0, /* uprobe, uretprobe, USDT: a trap in the target */
	OVH_SAMPLE,    /* perf event: the CPU sampler */
	OVH_OTHER,     /* tracepoints (scheduler, memory): any process */
	OVH_WATCH,     /* hardware watchpoint (py: cycles): a debug exception */
};

struct overhead_prog {
	char name[32];
	enum overhead_kind kind;
	uint64_t runs, run_ns;
};

struct overhead {
	bool stats;	 /* run times known (BPF_ENABLE_STATS worked) */
	double trap_ns;	 /* measured per uprobe/uretprobe hit; < 0 unknown */
	double watch_ns; /* measured per watchpoint hit; < 0 unknown or unused */
	struct overhead_prog *progs;
	size_t n;
	uint64_t target_cpu_ns; /* the targets' on-CPU time; 0 unknown */
	/* The same cost seen by the CPU sampler: the targets' samples taken in
	 * the kernel's uprobe code (trap, dispatch, our programs, return). */
	uint64_t samples_in_probes, samples_total;
};

struct profile;
/* Counts p's samples with a kernel frame of the uprobe machinery. */
void overhead_count_samples(struct overhead *o, const struct profile *p);
/* The probes' share of the targets' CPU: from the samples when there are
 * at least 200 (1/sqrt(200) = 7% relative error at worst), else from
 * hits x trap over the on-CPU time (at most 1); -1 when unknown. */
double overhead_probe_share(const struct overhead *o);

/* The estimate of what the probes cost the targets, in ns: runs x trap
 * (when the trap is known) + the programs' run time. *hits: the runs. */
double overhead_probe_ns(const struct overhead *o, uint64_t *hits);
/* The CPU sampler's run time and runs. */
double overhead_sample_ns(const struct overhead *o, uint64_t *runs);

/* Measures the cost of one uprobe hit and of one uretprobe hit on a
 * function of this process (perf uprobe events without a program: the
 * trap alone), in ns each, best of several rounds. Returns 0 or -errno
 * (no uprobe PMU, not permitted). */
int overhead_calibrate(double *entry_ns, double *ret_ns);

/* Measures the cost of one hit of a hardware write watchpoint with a
 * program that returns at once (a debug exception and the perf event's
 * dispatch), in ns, best of several rounds. 0 or -errno. */
int overhead_calibrate_watch(double *ns);

/* report.json "overhead"; and its summary lines. */
int overhead_report_json(const struct overhead *o, cJSON *root);
void overhead_summary(const struct overhead *o, FILE *out);

void overhead_free(struct overhead *o);

#endif
