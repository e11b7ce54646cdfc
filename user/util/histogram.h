/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Log-linear latency histogram: every power of two is split into
 * HIST_SUB_BUCKETS equal buckets, so a quantile is off by at most half a
 * bucket, i.e. HIST_MAX_REL_ERROR of the true value, over the whole u64
 * range, in a fixed 7.8 KiB. Values below HIST_SUB_BUCKETS are exact.
 * Histograms merge by adding buckets, so per-CPU or per-thread histograms
 * combine without losing precision.
 */
#ifndef EBPF_PROF_HISTOGRAM_H
#define EBPF_PROF_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS	 4
#define HIST_SUB_BUCKETS (1u << HIST_SUB_BITS)
/* Exact buckets 0..15, then 16 buckets per exponent 4..63. */
#define HIST_NBUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB_BUCKETS)
/* Half a bucket over the bucket's lowest value: 1 / (2 * 16). */
#define HIST_MAX_REL_ERROR (1.0 / (2 * HIST_SUB_BUCKETS))

struct histogram {
	uint64_t count;
	uint64_t sum; /* saturates at UINT64_MAX instead of wrapping */
	uint64_t min, max;
	uint64_t buckets[HIST_NBUCKETS];
};

void hist_init(struct histogram *h);
void hist_add(struct histogram *h, uint64_t v);
/* dst += src. */
void hist_merge(struct histogram *dst, const struct histogram *src);
/* Value at quantile q in [0, 1] (0.5 = median), within HIST_MAX_REL_ERROR
 * relative error and always within [min, max]; 0 for an empty histogram. */
uint64_t hist_quantile(const struct histogram *h, double q);
/* Mean, rounded down; 0 for an empty histogram. */
uint64_t hist_mean(const struct histogram *h);

/* Bucket index of v, and the [lo, hi] value range of a bucket (exposed for
 * tests and for exporters that draw the distribution). */
unsigned hist_bucket(uint64_t v);
void hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
