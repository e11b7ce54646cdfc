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
#include <stdint.h>

#include "diff/diff_load.h"
#include "diff/diff_stats.h"

enum dm_section {
	DM_S_CYCLE,    /* per-cycle distributions */
	DM_S_RUN,      /* whole-run figures */
	DM_S_FUNCTION, /* CPU samples per function */
	DM_S_PROBE,
	DM_S_SQL,
};

enum dm_test {
	DM_T_NONE,	/* one number per run: not tested */
	DM_T_MWU,	/* Mann-Whitney U on per-cycle values; bootstrap interval */
	DM_T_RATE,	/* counts per cycle: rate ratio test */
	DM_T_TWO_PROP,	/* shares of samples: two-proportion z-test */
	DM_T_RUN_MEANS, /* one value per run, several runs a side: their spread */
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
	/* A per-cycle time under DM_SMALL_SHARE of the cycle: est, lo and hi
	 * are relative to that share of the median wall time, not to base. */
	bool of_cycle;
	double p; /* NAN when untested */
	enum dm_test test;
	enum dm_better better;
	enum dm_status status;
	bool gating; /* may count as a regression */
	/* Wall-clock per-cycle figures: the change and p of the same values
	 * at equal CPU share (each cycle's value times the share of its
	 * runnable time it ran); a status other than "same" needs both. */
	bool has_eq;
	double est_eq, p_eq;
	size_t n_base, n_new;
	/* Functions: the matching key (dl_func_key); total rows that gate as
	 * a regression along a call path: the callee where the growth
	 * concentrates, or NULL when it spreads over several. */
	char *key;
	char *via;
	/* Several runs on a side: the figure's relative sd over the runs of
	 * each side (NAN with one run), and whether the run-to-run noise came
	 * from their spread (else from --run-noise). */
	double sd_base, sd_new;
	bool from_spread;
};

/* Per-cycle times smaller than this share of the median cycle are compared
 * as changes of this share: a regression must add threshold x 5% of the
 * cycle (0.5% at the default 10%). */
#define DM_SMALL_SHARE 0.05

struct dm_opts {
	double threshold; /* 0.10 = 10% */
	double alpha;	  /* family-wise, split over the tests of a section */
	double min_share; /* functions below this share on both sides are left out */
	double run_noise; /* relative sd per run not visible within a run (ds_run_floor) */
	unsigned boot_iters;
	unsigned long long seed;
};

void dm_default_opts(struct dm_opts *o);

struct dm_result {
	struct dm_row *rows;
	size_t nrows, cap;
	bool per_cycle; /* both runs have cycles: figures are per cycle */
	/* No cycles, but both runs launched the same command (arguments) and
	 * it ran to completion: whole-run CPU times are compared and gate. */
	bool same_work;
	double wall_median; /* BASE's median wall time per cycle, NAN without cycles */
	/* What the launched program's file was in each run (path; whether
	 * it is another file), NULL when not known. */
	char *program_note;
	/* The program's file is another build (GNU build-ids differ): 1, the
	 * same build: 0, not known (no build-id on a side): -1. */
	int program_changed;
	double share_base, share_new; /* median CPU share per cycle, NAN unknown */
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

/* The share of a callee's growth over its caller's above which the
 * caller's growth is the callee's (a call path regression is named at the
 * deepest function whose growth is not a callee's). */
#define DM_VIA_SHARE 0.5
/* A callee is shared when callers other than the one named hold at least
 * this share of its time (in BASE). */
#define DM_SHARED_SHARE 0.10

/* Compares two per-cycle samples in time order: the change of the medians
 * (denominator at least denom) with its block-bootstrap interval widened by
 * o->run_noise (ds_run_floor), p the larger of the Mann-Whitney p and that
 * of the widened change. -EINVAL with fewer than 3 values on a side. */
int dm_compare_dist(const double *x, size_t nx, const double *y, size_t ny, double denom,
		    const struct dm_opts *o, double *est, double *lo, double *hi, double *p);
/* The same with the run-level noise of sp (several runs per side,
 * ds_run_spread) instead of o->run_noise; sp NULL: o->run_noise. */
int dm_compare_dist_sp(const double *x, size_t nx, const double *y, size_t ny, double denom,
		       const struct dm_opts *o, const struct ds_spread *sp, double *est, double *lo,
		       double *hi, double *p);

/* Several runs per side, fixed work: per-run counts cb[0..kb) (base) and
 * cn[0..kn) (new), each over the exposure of one run (1 / period: a sample
 * stands for a period of CPU), eb and en per run. The rate ratio of the
 * sums, Poisson error of the counts, plus the run-to-run variance from
 * the runs' spread beyond Poisson (ds_run_spread, at least --run-noise).
 * sp (may be NULL) gets the spread. -EINVAL on empty sides. */
int dm_compare_runs(const uint64_t *cb, const double *eb, size_t kb, const uint64_t *cn,
		    const double *en, size_t kn, const struct dm_opts *o, struct ds_count_test *t,
		    struct ds_spread *sp);

/* Counts a over exposure ta (base) and b over tb (new), e.g. a function's
 * samples over cycles / period: the rate ratio test with dispersion phi,
 * widened by o->run_noise (ds_run_floor). */
int dm_compare_rate(uint64_t a, double ta, uint64_t b, double tb, double phi,
		    const struct dm_opts *o, struct ds_count_test *t);
/* Dispersion for dm_compare_rate from the per-cycle sample counts of both
 * runs (NULL: a run without cycles): the larger of the two indexes. */
double dm_dispersion(const double *vb, size_t nb, const double *vn, size_t nn);

const char *dm_status_name(enum dm_status s);
const char *dm_section_name(enum dm_section s);
const char *dm_test_name(enum dm_test t);

#endif
