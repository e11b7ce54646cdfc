// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Statistics of `ebpf-prof diff`: known values (SciPy's mannwhitneyu,
 * method="asymptotic", and the textbook formulas, computed once with
 * python3 and written here), then the verdict rule on simulated runs with
 * run-to-run noise: false alarms and power at the default threshold, for
 * per-cycle times and for function samples. */
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

	CHECK_INT_EQ(ds_bootstrap_median_change(x, 8, y, 8, 1, 1, 2000, 42, &e1), 0);
	CHECK_NEAR(e1.est, 0.5, 1e-12);
	CHECK(e1.lo <= e1.est && e1.est <= e1.hi);
	CHECK(e1.lo > 0.4 && e1.hi < 0.6);
	/* Same seed, same interval: a verdict does not change on a re-run. */
	CHECK_INT_EQ(ds_bootstrap_median_change(x, 8, y, 8, 1, 1, 2000, 42, &e2), 0);
	CHECK(e1.lo == e2.lo && e1.hi == e2.hi);
	/* The floor keeps a change from a zero median finite. */
	const double z[] = { 0, 0, 0, 0 }, w[] = { 5, 5, 5, 5 };
	CHECK_INT_EQ(ds_bootstrap_median_change(z, 4, w, 4, 10, 1, 100, 1, &e1), 0);
	CHECK_NEAR(e1.est, 0.5, 1e-12);
	CHECK_INT_EQ(ds_bootstrap_median_change(z, 4, w, 4, 0, 1, 100, 1, &e1), -EINVAL);
	CHECK_INT_EQ(ds_bootstrap_median_change(z, 4, w, 4, 10, 0, 100, 1, &e1), -EINVAL);
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

static void test_run_floor(void)
{
	/* +30% in [+10%, +50%], p 0.001, 5% per run: on the log scale the
	 * lower side's sd 0.0852 and the floor's 0.0707 add up to 0.1107, the
	 * upper side's 0.0730 to 0.1016 (python3, math.log1p / expm1 / erfc). */
	struct ds_count_test t = { .est = 0.3, .lo = 0.1, .hi = 0.5, .p = 0.001 };
	ds_run_floor(&t, 0.05);
	CHECK_NEAR(t.est, 0.3, 0);
	CHECK_NEAR(t.lo, 0.04634782196174413, 1e-12);
	CHECK_NEAR(t.hi, 0.5865717768306026, 1e-12);
	CHECK_NEAR(t.z, 2.3690603178101277, 1e-12);
	CHECK_NEAR(t.p, 0.017833344822204333, 1e-12);
	/* A decrease: the upper side (towards 0) gives z. */
	t = (struct ds_count_test){ .est = -0.3, .lo = -0.5, .hi = -0.1, .p = 0.001 };
	ds_run_floor(&t, 0.05);
	CHECK_NEAR(t.lo, -0.5135259481596791, 1e-12);
	CHECK_NEAR(t.hi, -0.0673075418942852, 1e-12);
	CHECK_NEAR(t.z, -2.435824996012736, 1e-12);
	CHECK_NEAR(t.p, 0.014857870871003431, 1e-12);
	/* A skewed interval (cycles now and then much slower): its long side
	 * does not drag the short one across 0. */
	t = (struct ds_count_test){ .est = 1.0, .lo = 0.85, .hi = 20, .p = 1e-6 };
	ds_run_floor(&t, 0.02);
	CHECK(t.lo > 0.7 && t.p < 1e-4 && t.hi > 20);
	/* The test's own p stays when it is the larger. */
	t = (struct ds_count_test){ .est = 0.3, .lo = 0.1, .hi = 0.5, .p = 0.5 };
	ds_run_floor(&t, 0.05);
	CHECK_NEAR(t.p, 0.5, 0);
	/* A change from about 0 (1 + lo <= 0): on the relative scale. */
	t = (struct ds_count_test){ .est = 0.5, .lo = -1.5, .hi = 2.5, .p = 0.2 };
	ds_run_floor(&t, 0.05);
	CHECK_NEAR(t.lo, -1.5047960729469394, 1e-12);
	CHECK_NEAR(t.hi, 2.5047960729469394, 1e-12);
	CHECK_NEAR(t.p, 0.6249699934015767, 1e-12);
	/* No floor, or nothing to widen: unchanged. */
	t = (struct ds_count_test){ .est = 0.3, .lo = 0.1, .hi = 0.5, .p = 0.001 };
	ds_run_floor(&t, 0);
	CHECK(t.lo == 0.1 && t.hi == 0.5 && t.p == 0.001);
	t = (struct ds_count_test){ .est = 0.3, .lo = NAN, .hi = 0.5, .p = 0.001 };
	ds_run_floor(&t, 0.05);
	CHECK(isnan(t.lo) && t.p == 0.001);

	/* Dispersion of two runs: the larger (4.848684210526316, as above). */
	const double v[] = { 10, 12, 9, 15, 30 }, flat[] = { 10, 10, 10 };
	CHECK_NEAR(dm_dispersion(flat, 3, v, 5), 4.848684210526316, 1e-12);
	CHECK_NEAR(dm_dispersion(NULL, 0, flat, 3), 1, 0);
	CHECK_INT_EQ((int)ds_block_len(20), 5);
	CHECK_INT_EQ((int)ds_block_len(1), 1);
	CHECK_INT_EQ((int)ds_block_len(0), 1);

	/* Cycles that drift together (AR(1), 0.9 from one cycle to the next):
	 * blocks of cycles widen the interval against drawing cycles one by
	 * one, which takes 20 correlated cycles for 20 independent ones. */
	struct ds_rng rng = { 99 };
	double w1 = 0, wb = 0;
	for (int s = 0; s < 50; s++) {
		double x[20], y[20], ax = 0, ay = 0;
		struct ds_effect e;

		for (int i = 0; i < 20; i++) {
			ax = 0.9 * ax + 0.05 * gauss(&rng);
			ay = 0.9 * ay + 0.05 * gauss(&rng);
			x[i] = 100 * (1 + ax);
			y[i] = 100 * (1 + ay);
		}
		CHECK_INT_EQ(ds_bootstrap_median_change(x, 20, y, 20, 1, 1, 200, 7, &e), 0);
		w1 += e.hi - e.lo;
		CHECK_INT_EQ(ds_bootstrap_median_change(x, 20, y, 20, 1, 5, 200, 7, &e), 0);
		wb += e.hi - e.lo;
	}
	fprintf(stderr,
		"drifting cycles: mean interval width %.3f drawn one by one, %.3f in blocks\n",
		w1 / 50, wb / 50);
	CHECK(wb > 1.3 * w1);
}

/* One run of n cycles, time per cycle: mean 100 * scale, 15% noise of which
 * run_sd is one factor for the whole run (the machine's state during that
 * run) and the rest per cycle. */
static void sim_run(struct ds_rng *r, double *v, size_t n, double scale, double run_sd)
{
	double cyc_sd = sqrt(0.15 * 0.15 - run_sd * run_sd), f = 1 + run_sd * gauss(r);

	for (size_t i = 0; i < n; i++)
		v[i] = 100 * scale * f * (1 + cyc_sd * gauss(r));
}

/* 1,000 simulated comparisons of 20 cycles against 20 with 15% noise, 2% of
 * it per run: with equal means, flagged (either way) in fewer than 5%; with
 * a 25% slower NEW, flagged as a regression in at least 90%. The same
 * equal runs without the run-level floor raise more false alarms. */
static void test_simulated(void)
{
	struct dm_opts o, nofloor;
	struct ds_rng rng = { 12345 };
	double x[20], y[20];
	int false_alarms = 0, found = 0, no_floor_alarms = 0;
	const int sims = 1000;

	dm_default_opts(&o);
	/* The interval decides now: 200 resamples give the verdicts of 2,000
	 * here (checked: 3.4% and 92.4% both ways), 10 times faster. */
	o.boot_iters = 200;
	nofloor = o;
	nofloor.run_noise = 0;
	for (int s = 0; s < sims; s++) {
		double est, lo, hi, p;

		sim_run(&rng, x, 20, 1, 0.02);
		sim_run(&rng, y, 20, 1, 0.02);
		CHECK_INT_EQ(dm_compare_dist(x, 20, y, 20, 1, &o, &est, &lo, &hi, &p), 0);
		false_alarms += dm_decide(est, p, o.alpha, o.threshold, DM_LOWER, true) != DM_SAME;
		CHECK_INT_EQ(dm_compare_dist(x, 20, y, 20, 1, &nofloor, &est, &lo, &hi, &p), 0);
		no_floor_alarms += dm_decide(est, p, o.alpha, o.threshold, DM_LOWER, true) !=
				   DM_SAME;
		sim_run(&rng, x, 20, 1, 0.02);
		sim_run(&rng, y, 20, 1.25, 0.02);
		CHECK_INT_EQ(dm_compare_dist(x, 20, y, 20, 1, &o, &est, &lo, &hi, &p), 0);
		found += dm_decide(est, p, o.alpha, o.threshold, DM_LOWER, true) == DM_REGRESSION;
	}
	fprintf(stderr,
		"simulated cycles: false alarms %d/%d (%d without the run-level floor), power %d/%d\n",
		false_alarms, sims, no_floor_alarms, found, sims);
	CHECK(false_alarms < sims * 5 / 100);
	CHECK(found >= sims * 90 / 100);
	CHECK(no_floor_alarms > false_alarms);
}

/* Poisson count with mean m (Knuth's product for small m, normal beyond). */
static uint64_t poisson(struct ds_rng *r, double m)
{
	if (m > 30) {
		double v = m + sqrt(m) * gauss(r);
		return v > 0 ? (uint64_t)llround(v) : 0;
	}
	double l = exp(-m), p = 1;
	uint64_t k = 0;
	do {
		k++;
		p *= ((double)(ds_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	} while (p > l);
	return k - 1;
}

/* Function samples the way the model tests them: a function of 100 ms of
 * CPU per cycle at 1 ms per sample, time per cycle as in sim_run, samples
 * Poisson on top (so more spread than Poisson: the rate test scales its
 * variance by the dispersion of the per-cycle totals, which hold 100 ms
 * of other code too). 1,000 comparisons of 20 cycles: equal runs flagged
 * < 5%, 25% more CPU found >= 90%; without the dispersion (phi 1) the
 * same equal runs raise many more false alarms. */
static void test_simulated_samples(void)
{
	struct dm_opts o;
	struct ds_rng rng = { 54321 };
	int false_alarms = 0, found = 0, poisson_alarms = 0;
	const int sims = 1000;

	dm_default_opts(&o);
	for (int s = 0; s < sims; s++) {
		for (int k = 0; k < 2; k++) {
			double tf[2][20], to[2][20], tot[2][20];
			uint64_t n[2] = { 0, 0 };
			struct ds_count_test t;

			sim_run(&rng, tf[0], 20, 1, 0.02);
			sim_run(&rng, tf[1], 20, k ? 1.25 : 1, 0.02);
			sim_run(&rng, to[0], 20, 1, 0.02);
			sim_run(&rng, to[1], 20, 1, 0.02);
			for (int side = 0; side < 2; side++)
				for (int i = 0; i < 20; i++) {
					uint64_t c = poisson(&rng, fmax(tf[side][i], 0));

					n[side] += c;
					tot[side][i] =
						(double)(c + poisson(&rng, fmax(to[side][i], 0)));
				}
			double phi = dm_dispersion(tot[0], 20, tot[1], 20);
			/* Exposure: cycles / period, as in the model. */
			CHECK_INT_EQ(dm_compare_rate(n[0], 20, n[1], 20, phi, &o, &t), 0);
			enum dm_status st =
				dm_decide(t.est, t.p, o.alpha, o.threshold, DM_LOWER, true);
			if (k) {
				found += st == DM_REGRESSION;
				continue;
			}
			false_alarms += st != DM_SAME;
			CHECK_INT_EQ(dm_compare_rate(n[0], 20, n[1], 20, 1, &o, &t), 0);
			poisson_alarms += dm_decide(t.est, t.p, o.alpha, o.threshold, DM_LOWER,
						    true) != DM_SAME;
		}
	}
	fprintf(stderr,
		"simulated samples: false alarms %d/%d (%d taking counts as Poisson), power %d/%d\n",
		false_alarms, sims, poisson_alarms, found, sims);
	CHECK(false_alarms < sims * 5 / 100);
	CHECK(found >= sims * 90 / 100);
	CHECK(poisson_alarms > 2 * false_alarms);
}

/* Whole runs of fixed work (no cycles): CPU time T per run with one
 * run-level factor (2%), samples Poisson(T / period), compared as
 * `ebpf-prof diff` does when both runs did the same work: the rate test
 * with exposure 1 / period and the run-level floor, one test (alpha 0.04).
 * 500 samples a run (1 s of CPU at -F 499): equal runs flagged < 5%, 26%
 * more CPU (the slow beta) found >= 90%. */
static void test_simulated_whole_run(void)
{
	struct dm_opts o;
	struct ds_rng rng = { 777 };
	int false_alarms = 0, found = 0;
	const int sims = 2000;
	const double period = 2e6, cpu = 1e9;

	dm_default_opts(&o);
	for (int s = 0; s < sims; s++) {
		for (int k = 0; k < 2; k++) {
			double tb = cpu * (1 + 0.02 * gauss(&rng)),
			       tn = cpu * (k ? 1.26 : 1) * (1 + 0.02 * gauss(&rng));
			uint64_t a = poisson(&rng, tb / period), b = poisson(&rng, tn / period);
			struct ds_count_test t;

			CHECK_INT_EQ(dm_compare_rate(a, 1 / period, b, 1 / period, 1, &o, &t), 0);
			enum dm_status st =
				dm_decide(t.est, t.p, o.alpha, o.threshold, DM_LOWER, true);
			if (k)
				found += st == DM_REGRESSION;
			else
				false_alarms += st != DM_SAME;
		}
	}
	fprintf(stderr, "simulated whole runs: false alarms %d/%d, power (+26%%) %d/%d\n",
		false_alarms, sims, found, sims);
	CHECK(false_alarms < sims * 5 / 100);
	CHECK(found >= sims * 90 / 100);
}

/* Totals along call paths, one family: 8 functions whose total time per
 * run is 100 samples each (one run-level factor for all of them), tested
 * with Bonferroni over the 8 (alpha 0.04 / 8), the test the model applies
 * to total rows before naming a path. Equal runs: a run with any function
 * flagged (family-wise) < 5%; one function doubled (beta 100 -> 200
 * samples) found >= 90% and the others flagged < 5% of the time. */
static void test_simulated_paths(void)
{
	struct dm_opts o;
	struct ds_rng rng = { 4242 };
	int family_alarms = 0, found = 0, bystanders = 0;
	const int sims = 2000, nf = 8;
	const double period = 2e6;

	dm_default_opts(&o);
	for (int s = 0; s < sims; s++) {
		for (int k = 0; k < 2; k++) {
			double fb = 1 + 0.02 * gauss(&rng), fn = 1 + 0.02 * gauss(&rng);
			bool any = false;

			for (int i = 0; i < nf; i++) {
				double mult = k && i == 0 ? 2 : 1;
				uint64_t a = poisson(&rng, 100 * fb),
					 b = poisson(&rng, 100 * mult * fn);
				struct ds_count_test t;

				CHECK_INT_EQ(dm_compare_rate(a, 1 / period, b, 1 / period, 1, &o,
							     &t),
					     0);
				enum dm_status st = dm_decide(t.est, t.p, o.alpha / nf, o.threshold,
							      DM_LOWER, true);
				if (k && i == 0)
					found += st == DM_REGRESSION;
				else if (k)
					bystanders += st != DM_SAME;
				else
					any |= st != DM_SAME;
			}
			family_alarms += any;
		}
	}
	fprintf(stderr,
		"simulated call paths: runs with a false alarm %d/%d, doubled found %d/%d, "
		"others flagged %d/%d\n",
		family_alarms, sims, found, sims, bystanders, sims * (nf - 1));
	CHECK(family_alarms < sims * 5 / 100);
	CHECK(found >= sims * 90 / 100);
	CHECK(bystanders < sims * (nf - 1) * 5 / 100);
}

/* Student's t and the run-level spread of several runs per side. Known
 * values: with 2 degrees of freedom the two-sided p is 1 - t / sqrt(t^2 +
 * 2) (t 2: 0.18350341907227397; p 0.05: t 4.302652729911275), with 1 it
 * is 1 - 2 atan(t) / pi (t 1: 0.5); the table's t(0.975, 10) is
 * 2.2281388519649385. */
static void test_spread_known(void)
{
	CHECK_NEAR(ds_t_p2(2, 2), 0.18350341907227397, 1e-9);
	CHECK_NEAR(ds_t_p2(-2, 2), 0.18350341907227397, 1e-9);
	CHECK_NEAR(ds_t_p2(1, 1), 0.5, 1e-9);
	CHECK_NEAR(ds_t_p2(2.2281388519649385, 10), 0.05, 1e-9);
	CHECK_NEAR(ds_t_p2(1.959963984540054, INFINITY), 0.05, 1e-12);
	CHECK_NEAR(ds_t_quantile(0.05, 2), 4.302652729911275, 1e-6);
	CHECK_NEAR(ds_t_quantile(0.05, 10), 2.2281388519649385, 1e-6);
	CHECK(isnan(ds_t_quantile(0, 2)));

	struct ds_spread sp;
	/* Two runs a side, 0.1 apart on the log scale on each: pooled
	 * variance 0.005 with 2 degrees of freedom, above a 2% floor. */
	const double yb[] = { 0, 0.1 }, yn[] = { 0.05, 0.15 }, pois[] = { 0.004, 0.004 };
	CHECK_INT_EQ(ds_run_spread(yb, NULL, 2, yn, NULL, 2, 0.02, &sp), 0);
	CHECK_NEAR(sp.observed, 0.005, 1e-12);
	CHECK_NEAR(sp.var_run, 0.005, 1e-12);
	CHECK_NEAR(sp.k, 1, 1e-12);
	CHECK_NEAR(sp.df_spread, 2, 0);
	CHECK(sp.estimated);
	/* The Poisson part of that spread is not the runs': 0.001 left. */
	CHECK_INT_EQ(ds_run_spread(yb, pois, 2, yn, pois, 2, 0.02, &sp), 0);
	CHECK_NEAR(sp.beyond, 0.001, 1e-12);
	CHECK(sp.estimated);
	/* All of it Poisson: the floor, as for one run. */
	CHECK_INT_EQ(ds_run_spread(yb, pois, 2, yn, pois, 2, 0.05, &sp), 0);
	CHECK(!sp.estimated);
	CHECK_NEAR(sp.var_run, 0.0025, 1e-12);
	CHECK_INT_EQ(ds_run_spread(yb, NULL, 0, yn, NULL, 2, 0.02, &sp), -EINVAL);
	const double bad[] = { NAN, 0 };
	CHECK_INT_EQ(ds_run_spread(bad, NULL, 2, yn, NULL, 2, 0.02, &sp), -EINVAL);

	/* One run a side: exactly ds_run_floor (the numbers of test_run_floor). */
	const double one[] = { 0 };
	CHECK_INT_EQ(ds_run_spread(one, NULL, 1, one, NULL, 1, 0.05, &sp), 0);
	CHECK(!sp.estimated && sp.k == 2);
	struct ds_count_test t = { .est = 0.3, .lo = 0.1, .hi = 0.5, .p = 0.001 };
	ds_run_floor_var(&t, &sp);
	CHECK_NEAR(t.lo, 0.04634782196174413, 1e-12);
	CHECK_NEAR(t.hi, 0.5865717768306026, 1e-12);
	CHECK_NEAR(t.p, 0.017833344822204333, 1e-12);
	/* An estimated spread, no other error: Student's t with its 2 degrees
	 * of freedom. +30% (log 0.26236426446749106) against var 0.005 x 1:
	 * t 3.710393, p 0.06557 (1 - t / sqrt(t^2 + 2)). */
	CHECK_INT_EQ(ds_run_spread(yb, NULL, 2, yn, NULL, 2, 0.02, &sp), 0);
	t = (struct ds_count_test){ .est = 0.3, .lo = 0.3, .hi = 0.3, .p = 0 };
	ds_run_floor_var(&t, &sp);
	double tt = log1p(0.3) / sqrt(0.005);
	CHECK_NEAR(t.z, tt, 1e-9);
	CHECK_NEAR(t.p, 1 - tt / sqrt(tt * tt + 2), 1e-9);
	CHECK_NEAR(t.lo, expm1(log1p(0.3) - 4.302652729911275 * sqrt(0.005)), 1e-6);

	/* dm_compare_runs: 1000 -> 1200 samples per run, two runs a side that
	 * agree within Poisson: +20%, the floor (2%) in use. */
	struct dm_opts o;
	dm_default_opts(&o);
	const uint64_t cb[] = { 1000, 1010 }, cn[] = { 1200, 1195 };
	const double ex[] = { 1, 1 };
	CHECK_INT_EQ(dm_compare_runs(cb, ex, 2, cn, ex, 2, &o, &t, &sp), 0);
	CHECK_NEAR(t.est, 2395.0 / 2010 - 1, 1e-12);
	CHECK(!sp.estimated && t.p < 1e-4);
	/* Runs far apart (10% within a side): the spread, estimated. */
	const uint64_t wb[] = { 1000, 1100 }, wn[] = { 1200, 1320 };
	CHECK_INT_EQ(dm_compare_runs(wb, ex, 2, wn, ex, 2, &o, &t, &sp), 0);
	CHECK(sp.estimated && t.p > 0.01);
	CHECK_INT_EQ(dm_compare_runs(wb, ex, 0, wn, ex, 2, &o, &t, &sp), -EINVAL);
}

/* Per-run counts of k runs: Poisson around T / period with T = cpu x mult x
 * (1 + run_sd x N(0, 1)) per run (the machine's state in that run). */
static void sim_counts(struct ds_rng *r, uint64_t *c, size_t k, double mean, double mult,
		       double run_sd)
{
	for (size_t j = 0; j < k; j++)
		c[j] = poisson(r, fmax(mean * mult * (1 + run_sd * gauss(r)), 0));
}

/* Several runs per side of fixed work, as `ebpf-prof diff BASE... --
 * NEW...` tests whole-run CPU time (500 samples a run, 1 s at -F 499) and
 * functions along call paths (8 of 100 samples a run, Bonferroni over the
 * 8), with the run-level noise from the runs' spread beyond Poisson (at
 * least the 2% floor). At 2% run-to-run noise, 2 runs a side: false alarms
 * < 5%, +26% found >= 90%, beta doubled found >= 90%. At 6% (a noisy
 * machine, beyond the floor): the runs' spread at least halves the false
 * alarms of one run a side at the floor, and three runs a side do better
 * than two. */
static void test_simulated_runs(void)
{
	struct dm_opts o;
	struct ds_rng rng = { 2026 };
	const int sims = 1000, nf = 8;
	const double ex[3] = { 1, 1, 1 };
	int fa2 = 0, pw2 = 0, fa6 = 0, fa6_3 = 0, fa6_one = 0, pw6 = 0, pw6_3 = 0, fam = 0, dbl = 0,
	    by = 0;

	dm_default_opts(&o);
	for (int s = 0; s < sims; s++) {
		uint64_t b[3], n[3];
		struct ds_count_test t;

#define VERDICT() dm_decide(t.est, t.p, o.alpha, o.threshold, DM_LOWER, true)
		/* CPU time, 2% per run. */
		sim_counts(&rng, b, 2, 500, 1, 0.02);
		sim_counts(&rng, n, 2, 500, 1, 0.02);
		CHECK_INT_EQ(dm_compare_runs(b, ex, 2, n, ex, 2, &o, &t, NULL), 0);
		fa2 += VERDICT() != DM_SAME;
		sim_counts(&rng, n, 2, 500, 1.26, 0.02);
		CHECK_INT_EQ(dm_compare_runs(b, ex, 2, n, ex, 2, &o, &t, NULL), 0);
		pw2 += VERDICT() == DM_REGRESSION;
		/* 6% per run: the spread against one run each at the floor. */
		sim_counts(&rng, b, 3, 500, 1, 0.06);
		sim_counts(&rng, n, 3, 500, 1, 0.06);
		CHECK_INT_EQ(dm_compare_runs(b, ex, 2, n, ex, 2, &o, &t, NULL), 0);
		fa6 += VERDICT() != DM_SAME;
		CHECK_INT_EQ(dm_compare_runs(b, ex, 3, n, ex, 3, &o, &t, NULL), 0);
		fa6_3 += VERDICT() != DM_SAME;
		CHECK_INT_EQ(dm_compare_rate(b[0], 1, n[0], 1, 1, &o, &t), 0);
		fa6_one += VERDICT() != DM_SAME;
		sim_counts(&rng, n, 3, 500, 1.26, 0.06);
		CHECK_INT_EQ(dm_compare_runs(b, ex, 2, n, ex, 2, &o, &t, NULL), 0);
		pw6 += VERDICT() == DM_REGRESSION;
		CHECK_INT_EQ(dm_compare_runs(b, ex, 3, n, ex, 3, &o, &t, NULL), 0);
		pw6_3 += VERDICT() == DM_REGRESSION;
#undef VERDICT
		/* Functions along call paths, 2 runs a side, 2% per run shared
		 * by all functions of a run. */
		for (int k = 0; k < 2; k++) {
			double fb[2] = { 1 + 0.02 * gauss(&rng), 1 + 0.02 * gauss(&rng) },
			       fn[2] = { 1 + 0.02 * gauss(&rng), 1 + 0.02 * gauss(&rng) };
			bool any = false;

			for (int i = 0; i < nf; i++) {
				double mult = k && i == 0 ? 2 : 1;

				for (int j = 0; j < 2; j++) {
					b[j] = poisson(&rng, 100 * fb[j]);
					n[j] = poisson(&rng, 100 * mult * fn[j]);
				}
				CHECK_INT_EQ(dm_compare_runs(b, ex, 2, n, ex, 2, &o, &t, NULL), 0);
				enum dm_status st = dm_decide(t.est, t.p, o.alpha / nf, o.threshold,
							      DM_LOWER, true);
				if (k && i == 0)
					dbl += st == DM_REGRESSION;
				else if (k)
					by += st != DM_SAME;
				else
					any |= st != DM_SAME;
			}
			fam += any;
		}
	}
	fprintf(stderr,
		"simulated runs, 2 a side: 2%% per run: false alarms %d/%d, +26%% found %d/%d; "
		"6%% per run: false alarms %d/%d (3 a side: %d; one run a side at the floor: %d), "
		"+26%% found %d/%d (3 a side: %d); call paths: runs with a false alarm %d/%d, doubled found "
		"%d/%d, others flagged %d/%d\n",
		fa2, sims, pw2, sims, fa6, sims, fa6_3, fa6_one, pw6, sims, pw6_3, fam, sims, dbl,
		sims, by, sims * (nf - 1));
	CHECK(fa2 < sims * 5 / 100);
	CHECK(pw2 >= sims * 90 / 100);
	/* Beyond the floor the runs' spread is all that tells: two runs a
	 * side halve the false alarms of one run each, three do better. */
	CHECK(2 * fa6 < fa6_one);
	CHECK(fa6_3 < fa6);
	CHECK(fam < sims * 5 / 100);
	CHECK(dbl >= sims * 90 / 100);
	CHECK(by < sims * (nf - 1) * 5 / 100);
}

int main(void)
{
	test_mwu_known();
	test_counts_known();
	test_bootstrap();
	test_decide();
	test_run_floor();
	test_simulated();
	test_simulated_samples();
	test_simulated_whole_run();
	test_simulated_paths();
	test_spread_known();
	test_simulated_runs();
	return check_report("test_diff_stats");
}
