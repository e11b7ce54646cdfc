/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The comparison of two runs for `ebpf-prof diff`: one row per compared
 * figure with both values, the change and its 95% interval, the test behind
 * it and a verdict. A change is a regression only when it goes the wrong
 * way by more than the threshold AND its test is significant; figures with
 * no test behind them (one number per run) are shown, never gating.
 */
#ifndef EP_DIFF_MODEL_H
#define EP_DIFF_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "diff/diff_load.h"

enum dm_section {
	DM_S_CYCLE,    /* per-cycle distributions */
	DM_S_RUN,      /* whole-run figures */
	DM_S_FUNCTION, /* CPU samples per function */
	DM_S_PROBE,
	DM_S_SQL,
};

enum dm_test {
	DM_T_NONE,     /* one number per run: not tested */
	DM_T_MWU,      /* Mann-Whitney U on per-cycle values; bootstrap interval */
	DM_T_RATE,     /* counts per cycle: rate ratio test */
	DM_T_TWO_PROP, /* shares of samples: two-proportion z-test */
};

enum dm_better { DM_LOWER, DM_HIGHER, DM_NEITHER };

enum dm_status {
	DM_SAME,	/* within the threshold or not significant */
	DM_REGRESSION,	/* worse beyond the threshold, significant, gating */
	DM_IMPROVEMENT, /* better beyond the threshold, significant */
	DM_CHANGED,	/* beyond the threshold and significant, no better side or not gating */
	DM_UNTESTED,	/* beyond the threshold, no test possible */
};

struct dm_row {
	enum dm_section section;
	char *name;	    /* what: "wall", a function, a probe label, SQL text */
	char *detail;	    /* module, library or NULL */
	const char *metric; /* "per cycle (median)", "self", "calls per cycle", ... */
	const char
		*unit; /* "ns", "samples", "calls", "bytes", "tokens/s", "mW", "mJ", "fraction" */
	double base, new; /* NAN: absent on that side */
	/* Functions: share of samples (0..1) next to the per-cycle figure. */
	double base_share, new_share;
	/* Relative change (new - base) / base, or a difference for
	 * fractions (abs_change); interval 95%; NAN when not computable. */
	double est, lo, hi;
	bool abs_change;
	double p; /* NAN when untested */
	enum dm_test test;
	enum dm_better better;
	enum dm_status status;
	bool gating; /* may count as a regression */
	size_t n_base, n_new;
};

struct dm_opts {
	double threshold; /* 0.10 = 10% */
	double alpha;	  /* family-wise, split over the tests of a section */
	double min_share; /* functions below this share on both sides are left out */
	unsigned boot_iters;
	unsigned long long seed;
};

void dm_default_opts(struct dm_opts *o);

struct dm_result {
	struct dm_row *rows;
	size_t nrows, cap;
	bool per_cycle; /* both runs have cycles: figures are per cycle */
	size_t regressions, improvements;
	char **warnings;
	size_t nwarnings;
	struct dm_opts opts;
};

/* Compares base with new. Returns 0 or -ENOMEM. */
int dm_compare(const struct dl_run *base, const struct dl_run *new, const struct dm_opts *o,
	       struct dm_result *out);
void dm_result_free(struct dm_result *r);

/* The verdict rule on its own (tested in isolation): est beyond threshold
 * in the worse direction and p < alpha. */
enum dm_status dm_decide(double est, double p, double alpha, double threshold,
			 enum dm_better better, bool gating);

/* Compares two per-cycle samples: Mann-Whitney p and the bootstrap change of
 * the medians (denominator at least denom). -EINVAL with fewer than 3
 * values on a side. */
int dm_compare_dist(const double *x, size_t nx, const double *y, size_t ny, double denom,
		    const struct dm_opts *o, double *est, double *lo, double *hi, double *p);

const char *dm_status_name(enum dm_status s);
const char *dm_section_name(enum dm_section s);
const char *dm_test_name(enum dm_test t);

#endif
