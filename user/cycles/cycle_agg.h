/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Streaming aggregates over every cycle of a run, in bounded memory
 * however long the run. The per-cycle table keeps a bounded number of rows (the first
 * and the last ones, cycle_sink.h); the findings read these instead, so they
 * cover the whole run however long it is. Exact: counts, sums, the share
 * rules' cycle counts, token and SQL totals, the RSS peak and its
 * least-squares fit, the partition self-check. From histograms (within
 * HIST_MAX_REL_ERROR): medians. Kept whole: the slowest CYC_AGG_SLOWEST
 * cycles' parts, the first CYC_AGG_IDS cycle ids of each list, the slowest
 * run of the first CYC_AGG_STMTS distinct SQL statements.
 *
 * Partial cycles (still open at the end of the run) are not added: their
 * wall time is a cut, not a cycle's length.
 */
#ifndef EP_CYCLE_AGG_H
#define EP_CYCLE_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cycles/cycles.h"
#include "util/histogram.h"

/* The parts of a cycle the findings look at (one getter each). */
enum cyc_agg_part {
	CA_WALL,
	CA_SQL,
	CA_GC,
	CA_IO,	      /* off-CPU uninterruptible (partition) */
	CA_THROTTLED, /* throttled_share x wall */
	CA_RUNQ,      /* run queue + preempted (partition) */
	CA_INF,
	CA_PROBE,
	CA_SLEEP,    /* sleep + other off-CPU (partition) */
	CA_OTHER,    /* unattributed */
	CA_RUNQ_ALL, /* run queue + preempted, all threads (not a partition part) */
	CA__COUNT
};

#define CYC_AGG_IDS	1000
#define CYC_AGG_SLOWEST 32
#define CYC_AGG_STMTS	64
#define CYC_AGG_THREADS 64 /* thread bounds of the self-check counted exactly */

uint64_t cycle_agg_part(const struct cycle_row *r, enum cyc_agg_part p);

/* Cycles over a share of their wall time: exact count, first ids. */
struct cycle_agg_ids {
	uint64_t n;
	size_t kept;
	uint32_t v[CYC_AGG_IDS];
};

struct cycle_agg_slow {
	uint32_t index;
	uint64_t part[CA__COUNT];
};

struct cycle_agg_stmt {
	char *text;
	uint64_t ns;
	uint32_t cycle;
};

struct cycle_agg {
	/* Shares (of wall) over which a cycle is listed, per part; 0: none. */
	double over_share[CA__COUNT];
	uint64_t n, n_truncated;
	uint64_t sum[CA__COUNT];
	/* Smallest share of its cycle's wall time each part took, over the
	 * nmin cycles with a wall time (a part that fills every cycle is
	 * what the cycle is). */
	double min_share[CA__COUNT];
	uint64_t nmin;
	/* Over the cycles that are not truncated, and over those that are
	 * (the medians fall back to them when every cycle is truncated). */
	struct histogram hist[CA__COUNT], hist_tr[CA__COUNT];
	struct cycle_agg_ids over[CA__COUNT];

	uint64_t tokens, inference_ns, sql_count;
	/* LLM timing over the cycles with a decode whose batch was read:
	 * sums, the per-cycle TTFT and ITL p50 histograms, the fullest KV. */
	struct cycle_agg_llm {
		uint64_t cycles, prompts, prompt_tokens, generated_tokens, prefill_ns, decode_ns;
		struct histogram ttft, itl_p50;
		uint64_t itl_p99_max; /* the largest per-cycle p99 */
		int64_t kv_max;	      /* -1 unknown */
		uint32_t kv_size, kv_max_cycle;
	} llm;
	struct cycle_agg_stmt stmts[CYC_AGG_STMTS];
	size_t nstmts;
	uint64_t stmts_not_kept; /* runs of statements beyond CYC_AGG_STMTS */

	/* RSS at cycle end: peak, and a running least-squares fit of MB over
	 * the cycle index (Welford's co-moments). */
	uint64_t nrss, rss_peak;
	uint32_t rss_peak_cycle, rss_first, rss_last;
	double rss_y0, rss_y1, mx, my, cxx, cxy, cyy;

	/* The slowest cycles that are not truncated, slowest first. */
	struct cycle_agg_slow slowest[CYC_AGG_SLOWEST];
	size_t nslowest;

	/* Self-check (cycles_self_check) row by row: partition failures, and
	 * per thread count k the cycles whose per-kind sums exceed k threads
	 * (above CYC_AGG_THREADS: those over CYC_AGG_THREADS). */
	uint64_t bad_partition;
	char why_partition[160];
	uint64_t over_threads[CYC_AGG_THREADS + 1];
	char why_threads[CYC_AGG_THREADS + 1][160];
};

/* over_share may be NULL (no lists). */
void cycle_agg_init(struct cycle_agg *a, const double over_share[CA__COUNT]);
/* Adds a row (partial rows are ignored). Returns 0 or -ENOMEM (a
 * statement's text could not be kept: the totals are still right). */
int cycle_agg_add(struct cycle_agg *a, const struct cycle_row *r);
void cycle_agg_free(struct cycle_agg *a);

/* Self-check failures for nthreads (0: partition only), first described in
 * why. */
uint64_t cycle_agg_bad(const struct cycle_agg *a, uint32_t nthreads, char *why, size_t len);
/* Least-squares slope of RSS (MB) over the cycle index, r^2 in *r2. */
double cycle_agg_rss_slope(const struct cycle_agg *a, double *r2);
/* Median of a part over the cycles that are not truncated (all cycles when
 * every one is), within HIST_MAX_REL_ERROR. */
uint64_t cycle_agg_median(const struct cycle_agg *a, enum cyc_agg_part p);
/* Cycles that are not truncated with a wall time over v (from the
 * histogram: a bucket counts when its midpoint is over v). */
uint64_t cycle_agg_count_over(const struct cycle_agg *a, uint64_t v);

#endif
