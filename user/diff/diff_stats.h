/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Statistics for `ebpf-prof diff`: a rank test and a bootstrap interval for
 * per-cycle distributions, and tests on sample counts for functions. Pure
 * functions of their inputs (the bootstrap takes its seed), so a comparison
 * gives the same verdict every time it is run on the same two reports.
 */
#ifndef EP_DIFF_STATS_H
#define EP_DIFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Two-sided 95% normal quantile. */
#define DS_Z95 1.959963984540054

/* Standard normal CDF. */
double ds_norm_cdf(double z);

/* Mann-Whitney U, two-sided, normal approximation with tie and continuity
 * correction (the "asymptotic" method of SciPy's mannwhitneyu). */
struct ds_mwu {
	double u; /* U of the first sample (x) */
	double z; /* of max(U1, U2), continuity-corrected; 0 when every value ties */
	double p; /* two-sided, in [0, 1] */
};
/* -EINVAL when a side is empty or a value is not finite, -ENOMEM. */
int ds_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct ds_mwu *out);

/* Deterministic generator (splitmix64) so bootstrap intervals repeat. */
struct ds_rng {
	uint64_t s;
};
uint64_t ds_rng_next(struct ds_rng *r);

/* Median (mean of the two middle values for an even count) of v[0..n);
 * sorts v. 0 for n == 0. */
double ds_median_sort(double *v, size_t n);
/* Same value in O(n) on average (selection), reordering v partially. */
double ds_median_select(double *v, size_t n);

/* Relative change of the medians, (med(y) - med(x)) / max(|med(x)|, floor),
 * and its 95% percentile-bootstrap interval from iters resamples of both
 * sides, seeded with seed. floor > 0 keeps a change from a median of 0
 * finite. Each side is resampled in blocks of `block` consecutive values
 * (circular block bootstrap; 1: values drawn one by one), so that values
 * in time order that drift together (cycles of one run on a machine whose
 * state changes) widen the interval as they should. */
struct ds_effect {
	double est, lo, hi;
};
int ds_bootstrap_median_change(const double *x, size_t nx, const double *y, size_t ny,
			       double denom_floor, size_t block, unsigned iters, uint64_t seed,
			       struct ds_effect *out);

/* Block length for n values in time order: ceil(sqrt(n)), at least 1. */
size_t ds_block_len(size_t n);

/* Shares a/n1 (base) and b/n2 (new) of samples: two-proportion z-test
 * (pooled variance) and the relative change of the share, b/n2 / (a/n1) - 1,
 * with a 95% interval from the log ratio (Katz); a zero count gets 0.5 added
 * for the interval (Haldane). -EINVAL when n1 or n2 is 0 or a > n1, b > n2. */
struct ds_count_test {
	double est, lo, hi; /* relative change */
	double z, p;
};
int ds_two_proportions(uint64_t a, uint64_t n1, uint64_t b, uint64_t n2, struct ds_count_test *out);

/* Counts a over exposure ta (base) and b over tb (new), e.g. samples of a
 * function over the number of cycles: the rate ratio test conditional on
 * a + b (b ~ Binomial(a + b, tb / (ta + tb)) under equal rates, normal
 * approximation) with the variance multiplied by phi >= 1 for counts more
 * spread than Poisson, and the relative change of the rate with its 95%
 * Wald interval on the log scale. */
int ds_rate_ratio(uint64_t a, double ta, uint64_t b, double tb, double phi,
		  struct ds_count_test *out);

/* Dispersion index (variance / mean, at least 1) of per-cycle counts, for
 * ds_rate_ratio's phi; 1 with fewer than 3 values or a zero mean. */
double ds_dispersion(const double *v, size_t n);

/* Run-to-run noise that no figure of one run can show: a machine that runs a
 * whole run some percent faster or slower. Widens a change t (est, lo, hi
 * from the spread within the runs, p from its test) by a relative standard
 * deviation run_sd per run, on the log scale of the ratio 1 + est, each
 * side of the interval on its own (a bootstrap interval may be skewed):
 * sd_side = sqrt(((est - bound) / 1.96)^2 + 2 * run_sd^2), the bound moved
 * to 1.96 * sd_side from est; z = log(1 + est) / sd of the side towards 0,
 * p the larger of the test's p and that z's two-sided p. When 1 + lo <= 0
 * (a change from about 0) the same on the relative scale. run_sd <= 0 or a
 * non-finite est, lo or hi: t unchanged. */
void ds_run_floor(struct ds_count_test *t, double run_sd);

/* Two-sided p of Student's t with df degrees of freedom (df > 1e7 or not
 * positive: the normal), and the t whose two-sided p is p2. */
double ds_t_p2(double t, double df);
double ds_t_quantile(double p2, double df);

/* Several runs per side: the run-to-run variance of a whole-run figure
 * from the runs' spread. y: per-run values on the log scale (or relative
 * to the figure), s: each value's own sampling variance (Poisson: 1 /
 * count; NULL: none). The pooled variance of the runs around their side's
 * mean (df = kb - 1 + kn - 1) less the mean sampling variance is the
 * run-level part; when it is above floor_sd^2 it is used with its degrees
 * of freedom, else the floor, as for one run. */
struct ds_spread {
	double observed;  /* pooled variance of y, NAN with one run a side */
	double beyond;	  /* observed less the sampling variance, >= 0 */
	double var_run;	  /* per run, in use: beyond or floor_sd^2 */
	double df_spread; /* degrees of freedom of observed */
	double k;	  /* 1 / kb + 1 / kn: a mean's variance per unit of var_run */
	bool estimated;	  /* var_run is the estimate (above the floor) */
};
int ds_run_spread(const double *yb, const double *sb, size_t kb, const double *yn, const double *sn,
		  size_t kn, double floor_sd, struct ds_spread *out);
/* ds_run_floor with the run-level variance of s: var_run x k added to each
 * side of the interval on the log scale; when estimated, the interval and
 * p from Student's t with Welch-Satterthwaite degrees of freedom. With one
 * run a side and the floor: the same as ds_run_floor. */
void ds_run_floor_var(struct ds_count_test *t, const struct ds_spread *s);

#endif
