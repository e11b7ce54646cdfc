// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/histogram.h"

#include <string.h>

void hist_init(struct histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < HIST_SUB_BUCKETS)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= HIST_SUB_BITS */
	return (e - HIST_SUB_BITS + 1) * HIST_SUB_BUCKETS +
	       (unsigned)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB_BUCKETS - 1));
}

void hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	unsigned e, m;
	uint64_t width;

	if (b >= HIST_NBUCKETS)
		b = HIST_NBUCKETS - 1;
	if (b < HIST_SUB_BUCKETS) {
		*lo = *hi = b;
		return;
	}
	e = b / HIST_SUB_BUCKETS + HIST_SUB_BITS - 1;
	m = b % HIST_SUB_BUCKETS;
	width = 1ull << (e - HIST_SUB_BITS);
	*lo = (1ull << e) + (uint64_t)m * width;
	*hi = *lo + (width - 1);
}

void hist_add(struct histogram *h, uint64_t v)
{
	h->buckets[hist_bucket(v)]++;
	h->count++;
	h->sum = h->sum + v < h->sum ? UINT64_MAX : h->sum + v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct histogram *dst, const struct histogram *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < HIST_NBUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum = dst->sum + src->sum < dst->sum ? UINT64_MAX : dst->sum + src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_quantile(const struct histogram *h, double q)
{
	uint64_t rank, seen = 0, lo, hi, v;

	if (!h->count)
		return 0;
	if (!(q > 0)) /* also catches NaN */
		return h->min;
	if (q >= 1)
		return h->max;
	/* The smallest value with at least q of the samples at or below it. */
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (!rank)
		rank = 1;
	for (unsigned i = 0; i < HIST_NBUCKETS; i++) {
		seen += h->buckets[i];
		if (seen < rank)
			continue;
		hist_bucket_range(i, &lo, &hi);
		v = lo + (hi - lo) / 2;
		return v < h->min ? h->min : v > h->max ? h->max : v;
	}
	return h->max;
}

uint64_t hist_mean(const struct histogram *h)
{
	return h->count ? h->sum / h->count : 0;
}
