// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Streaming aggregates over every cycle (see cycle_agg.h). */
#include "cycles/cycle_agg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB_D (1024.0 * 1024.0)

uint64_t cycle_agg_part(const struct cycle_row *r, enum cyc_agg_part p)
{
	switch (p) {
	case CA_WALL:
		return r->wall_ns;
	case CA_SQL:
		return r->part_sql_ns;
	case CA_GC:
		return r->part_gc_ns;
	case CA_IO:
		return r->part_off_cpu_ns[CYC_OFF_BLOCKED];
	case CA_THROTTLED:
		return (uint64_t)(r->throttled_share * (double)r->wall_ns);
	case CA_RUNQ:
		return r->part_off_cpu_ns[CYC_OFF_RUNQ] + r->part_off_cpu_ns[CYC_OFF_PREEMPTED];
	case CA_INF:
		return r->part_inference_ns;
	case CA_PROBE:
		return r->part_probe_ns;
	case CA_SLEEP:
		return r->part_off_cpu_ns[CYC_OFF_SLEEP] + r->part_off_cpu_ns[CYC_OFF_OTHER];
	case CA_OTHER:
		return r->other_ns;
	case CA_RUNQ_ALL:
		return r->off_cpu_ns[CYC_OFF_RUNQ] + r->off_cpu_ns[CYC_OFF_PREEMPTED];
	case CA__COUNT:
		break;
	}
	return 0;
}

void cycle_agg_init(struct cycle_agg *a, const double over_share[CA__COUNT])
{
	memset(a, 0, sizeof(*a));
	for (int p = 0; p < CA__COUNT; p++) {
		hist_init(&a->hist[p]);
		hist_init(&a->hist_tr[p]);
		if (over_share)
			a->over_share[p] = over_share[p];
	}
	hist_init(&a->llm.ttft);
	hist_init(&a->llm.itl_p50);
	a->llm.kv_max = -1;
}

static void add_llm(struct cycle_agg_llm *a, const struct cycle_row *r)
{
	const struct cycle_llm *l = &r->llm;

	if (!l->has)
		return;
	a->cycles++;
	a->prompts += l->prompts;
	a->prompt_tokens += l->prompt_tokens;
	a->generated_tokens += l->generated_tokens;
	a->prefill_ns += l->prefill_ns;
	a->decode_ns += l->decode_ns;
	if (l->has_ttft)
		hist_add(&a->ttft, l->ttft_ns);
	if (l->has_itl) {
		hist_add(&a->itl_p50, l->itl_p50_ns);
		if (l->itl_p99_ns > a->itl_p99_max)
			a->itl_p99_max = l->itl_p99_ns;
	}
	if (l->kv_used > a->kv_max) {
		a->kv_max = l->kv_used;
		a->kv_max_cycle = r->index;
	}
	if (l->kv_size)
		a->kv_size = l->kv_size;
}

void cycle_agg_free(struct cycle_agg *a)
{
	for (size_t i = 0; i < a->nstmts; i++)
		free(a->stmts[i].text);
	a->nstmts = 0;
}

static void add_id(struct cycle_agg_ids *l, uint32_t id)
{
	if (l->kept < CYC_AGG_IDS)
		l->v[l->kept++] = id;
	l->n++;
}

/* As cycles_self_check, one row; the thread bound is the smallest thread
 * count the row's sums fit in. */
static void self_check(struct cycle_agg *a, const struct cycle_row *r)
{
	struct cycle_table one = { .rows = (struct cycle_row *)r, .n = 1 };
	char why[160];

	if (cycles_self_check(&one, 0, why, sizeof(why))) {
		if (!a->bad_partition++)
			snprintf(a->why_partition, sizeof(a->why_partition), "%s", why);
		return;
	}
	/* Failing for k threads implies failing for every smaller k. */
	for (uint32_t k = CYC_AGG_THREADS; k >= 1; k--)
		if (cycles_self_check(&one, k, why, sizeof(why))) {
			for (uint32_t j = 1; j <= k; j++)
				if (!a->over_threads[j]++)
					snprintf(a->why_threads[j], sizeof(a->why_threads[j]), "%s",
						 why);
			break;
		}
}

static int add_stmt(struct cycle_agg *a, const struct cycle_row *r)
{
	size_t k = 0;

	while (k < a->nstmts && strcmp(a->stmts[k].text, r->sql_slowest))
		k++;
	if (k == a->nstmts) {
		if (k == CYC_AGG_STMTS) {
			a->stmts_not_kept++;
			return 0;
		}
		a->stmts[k].text = strdup(r->sql_slowest);
		if (!a->stmts[k].text)
			return -ENOMEM;
		a->stmts[k].ns = 0;
		a->nstmts++;
	}
	if (r->sql_slowest_ns > a->stmts[k].ns) {
		a->stmts[k].ns = r->sql_slowest_ns;
		a->stmts[k].cycle = r->index;
	}
	return 0;
}

static void add_slow(struct cycle_agg *a, const struct cycle_row *r)
{
	size_t i = a->nslowest;

	if (i == CYC_AGG_SLOWEST) {
		if (r->wall_ns <= a->slowest[i - 1].part[CA_WALL])
			return;
		i--;
	} else {
		a->nslowest++;
	}
	/* Insertion from the end: slowest first, earlier index first on ties. */
	while (i > 0 && a->slowest[i - 1].part[CA_WALL] < r->wall_ns) {
		a->slowest[i] = a->slowest[i - 1];
		i--;
	}
	a->slowest[i].index = r->index;
	for (int p = 0; p < CA__COUNT; p++)
		a->slowest[i].part[p] = cycle_agg_part(r, (enum cyc_agg_part)p);
}

int cycle_agg_add(struct cycle_agg *a, const struct cycle_row *r)
{
	int err = 0;

	if (r->partial)
		return 0;
	a->n++;
	a->n_truncated += r->truncated;
	if (r->wall_ns)
		a->nmin++;
	for (int p = 0; p < CA__COUNT; p++) {
		uint64_t v = cycle_agg_part(r, (enum cyc_agg_part)p);

		a->sum[p] += v;
		if (r->wall_ns) {
			double sh = (double)v / (double)r->wall_ns;

			if (a->nmin == 1 || sh < a->min_share[p])
				a->min_share[p] = sh;
		}
		hist_add(r->truncated ? &a->hist_tr[p] : &a->hist[p], v);
		if (a->over_share[p] > 0 && r->wall_ns &&
		    (double)v > a->over_share[p] * (double)r->wall_ns)
			add_id(&a->over[p], r->index);
	}
	a->tokens += r->tokens;
	a->inference_ns += r->inference_ns;
	add_llm(&a->llm, r);
	a->sql_count += r->sql_count;
	if (r->sql_slowest)
		err = add_stmt(a, r);
	if (r->has_rss) {
		double x = r->index, y = (double)r->rss_end_bytes / MB_D, dx, dy;

		if (!a->nrss || r->rss_end_bytes > a->rss_peak) {
			a->rss_peak = r->rss_end_bytes;
			a->rss_peak_cycle = r->index;
		}
		if (!a->nrss) {
			a->rss_first = r->index;
			a->rss_y0 = y;
		}
		a->rss_last = r->index;
		a->rss_y1 = y;
		a->nrss++;
		dx = x - a->mx;
		dy = y - a->my;
		a->mx += dx / (double)a->nrss;
		a->my += dy / (double)a->nrss;
		a->cxx += dx * (x - a->mx);
		a->cxy += dx * (y - a->my);
		a->cyy += dy * (y - a->my);
	}
	if (!r->truncated)
		add_slow(a, r);
	self_check(a, r);
	return err;
}

uint64_t cycle_agg_bad(const struct cycle_agg *a, uint32_t nthreads, char *why, size_t len)
{
	uint32_t k = nthreads > CYC_AGG_THREADS ? CYC_AGG_THREADS : nthreads;
	uint64_t over = k ? a->over_threads[k] : 0;

	if (why && len)
		snprintf(why, len, "%s",
			 a->bad_partition ? a->why_partition
			 : over		  ? a->why_threads[k]
					  : "");
	return a->bad_partition + over;
}

double cycle_agg_rss_slope(const struct cycle_agg *a, double *r2)
{
	*r2 = 0;
	if (a->nrss < 2 || a->cxx <= 0)
		return 0;
	/* A flat series is perfectly explained by a flat line. */
	*r2 = a->cyy > 0 ? (a->cxy * a->cxy) / (a->cxx * a->cyy) : 1.0;
	return a->cxy / a->cxx;
}

uint64_t cycle_agg_median(const struct cycle_agg *a, enum cyc_agg_part p)
{
	const struct histogram *h = a->hist[p].count ? &a->hist[p] : &a->hist_tr[p];

	if (!h->count)
		return 0;
	/* Lower middle, as the table's median: 1-based rank (n - 1) / 2 + 1,
	 * which hist_quantile's ceil(q * n) gives for q half a rank below. */
	return hist_quantile(h, ((double)((h->count - 1) / 2) + 0.5) / (double)h->count);
}

uint64_t cycle_agg_count_over(const struct cycle_agg *a, uint64_t v)
{
	const struct histogram *h = &a->hist[CA_WALL];
	uint64_t n = 0, lo, hi;

	for (unsigned b = 0; b < HIST_NBUCKETS; b++) {
		if (!h->buckets[b])
			continue;
		hist_bucket_range(b, &lo, &hi);
		if (lo / 2 + hi / 2 > v)
			n += h->buckets[b];
	}
	return n;
}
