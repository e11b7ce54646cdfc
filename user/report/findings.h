/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Bottleneck findings (pure): the per-cycle table in, findings out. Each
 * finding carries a severity, its evidence (the numbers and the cycle ids it
 * rests on) and a recommendation. A rule that has no evidence produces no
 * finding. Rules and thresholds: docs/cycles.md.
 */
#ifndef EP_FINDINGS_H
#define EP_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "cycles/cycles.h"
#include "cycles/cycle_agg.h"

enum finding_severity { FIND_INFO = 0, FIND_WARNING = 1, FIND_CRITICAL = 2 };

struct findings_cfg {
	double inference_share;	  /* of wall time; default 0.60 */
	double sql_share;	  /* default 0.15 */
	double other_share;	  /* unattributed; default 0.10 */
	double slow_factor;	  /* slow cycle: wall > factor * median; default 1.5 */
	uint32_t slow_min_cycles; /* need this many cycles for a median; default 3 */
	double mem_pressure;	  /* RSS / RAM; default 0.80 */
	double leak_mb_per_cycle; /* fitted growth to report; default 0.5 MB/cycle */
	double leak_min_r2;	  /* fit quality; default 0.6 */
	uint32_t leak_min_cycles; /* default 5 */
	double throttle_share;	  /* a cycle counts as throttled above this; default 0.01 */
	double runq_share;	  /* run-queue wait / wall; default 0.05 */
	uint64_t runq_p99_ns;	  /* run-queue latency p99 that alone is a finding; 10 ms */
	uint32_t max_listed;	  /* cycles named in evidence text; default 10 */
	double overhead_share;	  /* our probes' share of the target's CPU; 0.02 */
	double lost_share;	  /* samples lost of those taken; 0.01 (critical 0.05) */
};

/* Facts about the machine and run that are not per cycle; zeros = unknown
 * (the rules that need them stay silent). */
struct findings_ctx {
	uint64_t mem_total_bytes;
	uint32_t ncpus;
	uint32_t max_runnable; /* most runnable target threads seen at once */
	uint64_t runq_p99_ns;
	/* Our own cost (report.json "overhead"): the probes' share of the
	 * targets' CPU (<= 0: unknown or none), their hits, the estimated time
	 * and the targets' on-CPU time. */
	double probe_share;
	uint64_t probe_hits;
	double probe_ns;
	uint64_t target_cpu_ns;
	/* The part of it that is --alloc's allocator probes (report.json
	 * memory.alloc.cost): its own finding (alloc_probe_cost) above its own
	 * threshold, left out of probe_overhead. 0: none or unknown. */
	double alloc_probe_share;
	uint64_t alloc_probe_hits;
	double alloc_probe_ns;
	double alloc_probe_threshold;
	/* --cycle / --cycle-every as given (NULL: none) and, when it gave no
	 * cycle, why (NULL: unknown). */
	const char *cycle_spec;
	const char *cycle_problem;
	/* py: cycles by watchpoint (traps at FUNCTION's calls only), not by
	 * CPython's USDT points (traps at every Python call). */
	bool py_watch;
	/* Threads of the targets (the self-check's bound); 0 unknown. */
	uint32_t nthreads;
	/* CPU samples kept, and lost whole (ring full, the collector, unread
	 * at stop: report.json dropped.by_cause); both 0: unknown. */
	uint64_t samples_total, samples_lost;
};

struct finding {
	const char *rule; /* stable id: "inference_dominates", ... (static) */
	enum finding_severity severity;
	char *title;
	char *evidence;
	char *recommendation;
	double value;	  /* the rule's main number (share, MB/cycle, ...) */
	double threshold; /* what it was compared with */
	uint32_t *cycles; /* cycle indexes the finding is about */
	size_t ncycles;
};

struct findings {
	struct finding *v;
	size_t n;
};

void findings_default_cfg(struct findings_cfg *cfg);

/* Evaluates every rule; findings are sorted by severity (critical first),
 * then rule order. Returns 0 or -ENOMEM / -EINVAL. */
int findings_evaluate(const struct cycle_table *t, const struct findings_cfg *cfg,
		      const struct findings_ctx *ctx, struct findings *out);
/* The same over a run whose table keeps only part of its cycles: run
 * aggregates every cycle (built with findings_agg_init and the same cfg),
 * t supplies the rows kept (per-cycle throttling, the partial cycles).
 * run NULL, or holding as many cycles as t: findings_evaluate. */
int findings_evaluate_agg(const struct cycle_table *t, const struct cycle_agg *run,
			  const struct findings_cfg *cfg, const struct findings_ctx *ctx,
			  struct findings *out);
/* The shares cfg lists cycles over, per aggregate part. */
void findings_over_shares(const struct findings_cfg *cfg, double over[CA__COUNT]);
/* An aggregate whose cycle lists match cfg's shares. */
void findings_agg_init(struct cycle_agg *ag, const struct findings_cfg *cfg);
void findings_free(struct findings *f);
/* Critical first, the order kept within a severity (stable): after
 * findings from other sources were appended. */
void findings_sort(struct findings *f);

const char *finding_severity_name(enum finding_severity s);

/* Least-squares fit y = a + b*x; returns b, sets *r2 (0 when undefined). */
double findings_fit_slope(const double *x, const double *y, size_t n, double *r2);

#endif
