// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Statistics of `ebpf-prof diff`: known values (SciPy's mannwhitneyu,
 * method="asymptotic", and the textbook formulas, computed once with
 * python3 and written here), then the verdict rule on simulated runs:
 * false alarms and power at the default threshold. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "diff/diff_model.h"
#include "diff/diff_stats.h"

static void test_mwu_known(void)
{
	struct ds_mwu m;
	/* SciPy's documentation example: statistic 17.0, p 0.11134688653314041. */
	const double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
	CHECK_INT_EQ(ds_mann_whitney(males, 5, females, 4, &m), 0);
	CHECK_NEAR(m.u, 17.0, 1e-12);
	CHECK_NEAR(m.p, 0.11134688653314041, 1e-12);

	/* Complete separation: U = 0, z = 2.5067182457620487, p = 0.012185780355344818. */
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	CHECK_INT_EQ(ds_mann_whitney(a, 5, b, 5, &m), 0);
	CHECK_NEAR(m.u, 0, 1e-12);
	CHECK_NEAR(m.z, 2.5067182457620487, 1e-12);
	CHECK_NEAR(m.p, 0.012185780355344818, 1e-12);

	/* Ties: the variance shrinks by sum(t^3 - t) / (n (n - 1)). */
	const double c[] = { 1, 2, 2, 3, 3, 3 }, d[] = { 2, 3, 4, 4, 5 };
	CHECK_INT_EQ(ds_mann_whitney(c, 6, d, 5, &m), 0);
	CHECK_NEAR(m.u, 5.5, 1e-12);
	CHECK_NEAR(m.z, 1.7022223637379919, 1e-12);
	CHECK_NEAR(m.p, 0.08871369199677624, 1e-12);

	/* Every value equal: nothing to tell apart. */
	const double e[] = { 4, 4, 4 };
	CHECK_INT_EQ(ds_mann_whitney(e, 3, e, 3, &m), 0);
	CHECK_NEAR(m.p, 1, 0);

	/* Bad input. */
	const double bad[] = { 1, NAN };
	CHECK_INT_EQ(ds_mann_whitney(bad, 2, a, 5, &m), -EINVAL);
	CHECK_INT_EQ(ds_mann_whitney(a, 0, b, 5, &m), -EINVAL);
}

static void test_counts_known(void)
{
	struct ds_count_test t;

	/* 50/1000 -> 80/1000: z 2.721095431170472, p 0.006506597483637838, share
	 * +60% in [+13.622417141424248%, +125.30765181782773%] (Katz). */
	CHECK_INT_EQ(ds_two_proportions(50, 1000, 80, 1000, &t), 0);
	CHECK_NEAR(t.z, 2.721095431170472, 1e-9);
	CHECK_NEAR(t.p, 0.006506597483637838, 1e-9);
	CHECK_NEAR(t.est, 0.6, 1e-12);
	CHECK_NEAR(t.lo, 0.13622417141424248, 1e-9);
	CHECK_NEAR(t.hi, 1.2530765181782773, 1e-9);
	CHECK_INT_EQ(ds_two_proportions(5, 4, 1, 10, &t), -EINVAL);
	CHECK_INT_EQ(ds_two_proportions(0, 0, 1, 10, &t), -EINVAL);
	/* A function absent from the base: finite interval above 0. */
	CHECK_INT_EQ(ds_two_proportions(0, 1000, 40, 1000, &t), 0);
	CHECK(t.p < 1e-6 && isfinite(t.lo) && t.lo > 0);

	/* 100 in 10 cycles -> 150 in 10: z 3.1622776601683795,
	 * p 0.0015654022580025488, +50% in [+16.466657662405093%, +93.18833777491409%]. */
	CHECK_INT_EQ(ds_rate_ratio(100, 10, 150, 10, 1, &t), 0);
	CHECK_NEAR(t.z, 3.1622776601683795, 1e-9);
	CHECK_NEAR(t.p, 0.0015654022580025488, 1e-9);
	CHECK_NEAR(t.est, 0.5, 1e-12);
	CHECK_NEAR(t.lo, 0.16466657662405093, 1e-9);
	CHECK_NEAR(t.hi, 0.9318833777491409, 1e-9);
	/* Over-dispersed (phi 2), other exposures: 100/10 -> 150/20 is -25%,
	 * z -1.5811388300841889, p 0.11384629800665824. */
	CHECK_INT_EQ(ds_rate_ratio(100, 10, 150, 20, 2, &t), 0);
	CHECK_NEAR(t.z, -1.5811388300841889, 1e-9);
	CHECK_NEAR(t.p, 0.11384629800665824, 1e-9);
	CHECK_NEAR(t.est, -0.25, 1e-12);
	CHECK_NEAR(t.lo, -0.4756106840705744, 1e-9);
	CHECK_NEAR(t.hi, 0.0726763168372857, 1e-9);
	CHECK_INT_EQ(ds_rate_ratio(1, 0, 1, 1, 1, &t), -EINVAL);

	/* Dispersion index: sample variance / mean = 4.848684210526316. */
	const double v[] = { 10, 12, 9, 15, 30 };
	CHECK_NEAR(ds_dispersion(v, 5), 4.848684210526316, 1e-12);
	const double flat[] = { 10, 10, 10 };
	CHECK_NEAR(ds_dispersion(flat, 3), 1, 0); /* never below Poisson */
	CHECK_NEAR(ds_dispersion(v, 2), 1, 0);
}

static void test_bootstrap(void)
{
	const double x[] = { 100, 101, 99, 102, 98, 100, 103, 97 };
	const double y[] = { 150, 151, 149, 152, 148, 150, 153, 147 };
	struct ds_effect e1, e2;

	CHECK_INT_EQ(ds_bootstrap_median_change(x, 8, y, 8, 1, 2000, 42, &e1), 0);
	CHECK_NEAR(e1.est, 0.5, 1e-12);
	CHECK(e1.lo <= e1.est && e1.est <= e1.hi);
	CHECK(e1.lo > 0.4 && e1.hi < 0.6);
	/* Same seed, same interval: a verdict does not change on a re-run. */
	CHECK_INT_EQ(ds_bootstrap_median_change(x, 8, y, 8, 1, 2000, 42, &e2), 0);
	CHECK(e1.lo == e2.lo && e1.hi == e2.hi);
	/* The floor keeps a change from a zero median finite. */
	const double z[] = { 0, 0, 0, 0 }, w[] = { 5, 5, 5, 5 };
	CHECK_INT_EQ(ds_bootstrap_median_change(z, 4, w, 4, 10, 100, 1, &e1), 0);
	CHECK_NEAR(e1.est, 0.5, 1e-12);
	CHECK_INT_EQ(ds_bootstrap_median_change(z, 4, w, 4, 0, 100, 1, &e1), -EINVAL);
	/* Selection agrees with sorting, duplicates and sorted input included. */
	struct ds_rng rng = { 7 };
	for (int t = 0; t < 500; t++) {
		double a[64], c[64];
		size_t n = 1 + ds_rng_next(&rng) % 64;

		for (size_t i = 0; i < n; i++)
			a[i] = t % 3 == 0 ? (double)i
					  : (double)(ds_rng_next(&rng) % (t % 2 ? 5 : 1000));
		memcpy(c, a, n * sizeof(*a));
		CHECK(ds_median_select(a, n) == ds_median_sort(c, n));
	}
	double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };
	CHECK_NEAR(ds_median_sort(odd, 3), 2, 0);
	CHECK_NEAR(ds_median_sort(even, 4), 2.5, 0);
}

static void test_decide(void)
{
	CHECK_INT_EQ(dm_decide(0.3, 0.001, 0.05, 0.1, DM_LOWER, true), DM_REGRESSION);
	CHECK_INT_EQ(dm_decide(0.3, 0.001, 0.05, 0.1, DM_LOWER, false), DM_CHANGED);
	CHECK_INT_EQ(dm_decide(0.3, 0.2, 0.05, 0.1, DM_LOWER, true), DM_SAME);
	CHECK_INT_EQ(dm_decide(0.05, 1e-9, 0.05, 0.1, DM_LOWER, true), DM_SAME);
	CHECK_INT_EQ(dm_decide(-0.3, 0.001, 0.05, 0.1, DM_LOWER, true), DM_IMPROVEMENT);
	CHECK_INT_EQ(dm_decide(-0.3, 0.001, 0.05, 0.1, DM_HIGHER, true), DM_REGRESSION);
	CHECK_INT_EQ(dm_decide(0.3, NAN, 0.05, 0.1, DM_LOWER, true), DM_UNTESTED);
	CHECK_INT_EQ(dm_decide(0.3, 0.001, 0.05, 0.1, DM_NEITHER, true), DM_CHANGED);
}

/* Normal deviate (Box-Muller) from the test's own generator. */
static double gauss(struct ds_rng *r)
{
	double u1 = ((double)(ds_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(ds_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* 1,000 simulated comparisons of 20 cycles against 20, each cycle's time
 * with 15% noise: with equal means, flagged (either way) in fewer than 5%;
 * with a 25% slower NEW, flagged as a regression in at least 90%. */
static void test_simulated(void)
{
	struct dm_opts o;
	struct ds_rng rng = { 12345 };
	double x[20], y[20];
	int false_alarms = 0, found = 0;
	const int sims = 1000;

	dm_default_opts(&o);
	/* The verdict uses the point estimate and p, not the interval: few
	 * resamples keep 2,000 comparisons fast (also under qemu in CI). */
	o.boot_iters = 10;
	for (int s = 0; s < sims; s++) {
		double est, lo, hi, p;

		for (int i = 0; i < 20; i++) {
			x[i] = 100 * (1 + 0.15 * gauss(&rng));
			y[i] = 100 * (1 + 0.15 * gauss(&rng));
		}
		CHECK_INT_EQ(dm_compare_dist(x, 20, y, 20, 1, &o, &est, &lo, &hi, &p), 0);
		false_alarms += dm_decide(est, p, o.alpha, o.threshold, DM_LOWER, true) != DM_SAME;
		for (int i = 0; i < 20; i++) {
			x[i] = 100 * (1 + 0.15 * gauss(&rng));
			y[i] = 125 * (1 + 0.15 * gauss(&rng));
		}
		CHECK_INT_EQ(dm_compare_dist(x, 20, y, 20, 1, &o, &est, &lo, &hi, &p), 0);
		found += dm_decide(est, p, o.alpha, o.threshold, DM_LOWER, true) == DM_REGRESSION;
	}
	fprintf(stderr, "simulated: false alarms %d/%d, power %d/%d\n", false_alarms, sims, found,
		sims);
	CHECK(false_alarms < sims * 5 / 100);
	CHECK(found >= sims * 90 / 100);
}

int main(void)
{
	test_mwu_known();
	test_counts_known();
	test_bootstrap();
	test_decide();
	test_simulated();
	return check_report("test_diff_stats");
}
