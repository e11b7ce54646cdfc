// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* live_hist_from (top_live.h): a latency histogram as Prometheus buckets. */
#include "util/histogram.h"
#include "top/top_live.h"

void live_hist_from(struct live_hist *h, const struct histogram *src)
{
	uint64_t le_ns[LIVE_HIST_NB];

	*h = (struct live_hist){ .count = src->count, .sum_s = (double)src->sum / 1e9 };
	for (int i = 0; i < LIVE_HIST_NB; i++)
		le_ns[i] = (uint64_t)(live_hist_le(i) * 1e9 + 0.5);
	for (unsigned b = 0; b < HIST_NBUCKETS; b++) {
		uint64_t lo, hi;

		if (!src->buckets[b])
			continue;
		hist_bucket_range(b, &lo, &hi);
		for (int i = 0; i < LIVE_HIST_NB; i++)
			if (lo <= le_ns[i])
				h->le[i] += src->buckets[b];
	}
}
