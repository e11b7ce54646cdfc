// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Histogram quantiles against exact quantiles of the same data. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "util/histogram.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted data: the definition hist_quantile
 * approximates. */
static uint64_t exact_q(const uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check_quantiles(const uint64_t *sorted, size_t n, const struct histogram *h)
{
	static const double qs[] = { 0.01, 0.1, 0.5, 0.9, 0.99, 0.999 };

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double want = (double)exact_q(sorted, n, qs[i]);
		double got = (double)hist_quantile(h, qs[i]);

		CHECK(fabs(got - want) <= want * HIST_MAX_REL_ERROR + 0.5);
	}
}

int main(void)
{
	enum { N = 20000 };
	static struct histogram h, a, b;
	uint64_t *v = malloc(N * sizeof(*v)), seed = 88172645463325252ull, lo, hi;

	CHECK(v != NULL);
	if (!v)
		return check_report("histogram");

	/* Bucket layout: contiguous, covering all of u64, each value inside
	 * its own bucket's range. */
	for (unsigned bkt = 0; bkt + 1 < HIST_NBUCKETS; bkt++) {
		uint64_t lo2, hi2;

		hist_bucket_range(bkt, &lo, &hi);
		hist_bucket_range(bkt + 1, &lo2, &hi2);
		if (lo2 != hi + 1 || lo > hi) {
			CHECK(lo2 == hi + 1 && lo <= hi);
			break;
		}
	}
	hist_bucket_range(0, &lo, &hi);
	CHECK_INT_EQ(lo, 0);
	hist_bucket_range(HIST_NBUCKETS - 1, &lo, &hi);
	CHECK(hi == UINT64_MAX);
	CHECK_INT_EQ(hist_bucket(UINT64_MAX), HIST_NBUCKETS - 1);
	for (int i = 0; i < 100000; i++) {
		uint64_t x = xorshift(&seed) >> (xorshift(&seed) % 64);
		unsigned bkt = hist_bucket(x);

		hist_bucket_range(bkt, &lo, &hi);
		if (x < lo || x > hi) {
			CHECK(x >= lo && x <= hi);
			break;
		}
	}

	/* Empty histogram. */
	hist_init(&h);
	CHECK_INT_EQ(hist_quantile(&h, 0.5), 0);
	CHECK_INT_EQ(hist_mean(&h), 0);

	/* Small values are exact. */
	for (uint64_t i = 1; i <= 10; i++)
		hist_add(&h, i);
	CHECK_INT_EQ(hist_quantile(&h, 0.5), 5);
	CHECK_INT_EQ(hist_quantile(&h, 0.9), 9);
	CHECK_INT_EQ(hist_quantile(&h, 1.0), 10);
	CHECK_INT_EQ(hist_quantile(&h, 0.0), 1);
	CHECK_INT_EQ(hist_quantile(&h, NAN), 1);
	CHECK_INT_EQ(hist_mean(&h), 5);
	CHECK_INT_EQ(h.min, 1);
	CHECK_INT_EQ(h.max, 10);

	/* Log-normal-ish latencies from 100 ns to ~10 s, split across two
	 * histograms and merged: quantiles within the stated bound. */
	hist_init(&h);
	hist_init(&a);
	hist_init(&b);
	for (size_t i = 0; i < N; i++) {
		v[i] = 100 + (xorshift(&seed) >> (xorshift(&seed) % 30 + 30));
		hist_add(i % 3 ? &a : &b, v[i]);
		hist_add(&h, v[i]);
	}
	hist_merge(&a, &b);
	CHECK_INT_EQ(a.count, N);
	CHECK_INT_EQ(a.sum, h.sum);
	CHECK_INT_EQ(a.min, h.min);
	CHECK_INT_EQ(a.max, h.max);
	qsort(v, N, sizeof(*v), cmp_u64);
	check_quantiles(v, N, &a);
	check_quantiles(v, N, &h);
	CHECK_INT_EQ(hist_quantile(&a, 1.0), v[N - 1]);

	/* Sum saturates instead of wrapping. */
	hist_init(&h);
	hist_add(&h, UINT64_MAX - 1);
	hist_add(&h, 5);
	CHECK(h.sum == UINT64_MAX);
	CHECK(hist_quantile(&h, 0.99) <= UINT64_MAX - 1);
	CHECK(hist_quantile(&h, 0.99) >=
	      (uint64_t)((double)(UINT64_MAX - 1) * (1 - HIST_MAX_REL_ERROR)));

	free(v);
	return check_report("histogram");
}
