// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End-of-run cycle table and top findings on stdout. */
#include "cycles/cycles_summary.h"

static double msd(uint64_t ns)
{
	return (double)ns / 1e6;
}

#include <stdlib.h>

typedef uint64_t (*part_fn)(const struct cycle_row *r);

static uint64_t p_wall(const struct cycle_row *r)
{
	return r->wall_ns;
}
static uint64_t p_inf(const struct cycle_row *r)
{
	return r->part_inference_ns;
}
static uint64_t p_sql(const struct cycle_row *r)
{
	return r->part_sql_ns;
}
static uint64_t p_gc(const struct cycle_row *r)
{
	return r->part_gc_ns;
}
static uint64_t p_probe(const struct cycle_row *r)
{
	return r->part_probe_ns;
}
static uint64_t p_off(const struct cycle_row *r)
{
	uint64_t s = 0;

	for (int k = 0; k < CYC_OFF_REASONS; k++)
		s += r->part_off_cpu_ns[k];
	return s;
}
static uint64_t p_other(const struct cycle_row *r)
{
	return r->other_ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, as cycles_wall_percentile. */
static uint64_t rank(const uint64_t *sorted, size_t n, double pct)
{
	size_t r = (size_t)(pct / 100.0 * (double)n + 0.999999);

	return sorted[(r ? r : 1) - 1];
}

/* Where the time of a typical, a p95 and the slowest cycle goes: the
 * partition (breakdown) per part, the parts that are zero everywhere left
 * out. Percentiles are per part, so the column does not add up. */
static void print_parts(FILE *out, const struct cycle_table *t, const struct cycle_row *slow)
{
	static const struct {
		const char *name;
		part_fn f;
	} parts[] = { { "wall", p_wall },
		      { "inference", p_inf },
		      { "SQL", p_sql },
		      { "GC", p_gc },
		      { "other probes", p_probe },
		      { "off-CPU", p_off },
		      { "unattributed", p_other } };
	uint64_t *v = malloc(t->n * sizeof(*v));

	if (!v)
		return;
	fprintf(out, "  %-14s %10s %10s %10s\n", "", "median", "p95", "slowest");
	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		uint64_t any = 0;

		for (size_t i = 0; i < t->n; i++) {
			v[i] = parts[k].f(&t->rows[i]);
			any |= v[i];
		}
		if (!any && k)
			continue;
		qsort(v, t->n, sizeof(*v), cmp_u64);
		fprintf(out, "  %-14s %7.1f ms %7.1f ms %7.1f ms\n", parts[k].name,
			msd(rank(v, t->n, 50)), msd(rank(v, t->n, 95)), msd(parts[k].f(slow)));
	}
	free(v);
}

/* One line of LLM timing: prompt and generated tokens with their rates,
 * time to first token and inter-token latency (medians over cycles), the
 * fullest KV cache. From the run's aggregates when there are (every
 * cycle), else from the table's rows. */
static void print_llm(FILE *out, const struct cycle_table *t, const struct cycle_agg *run)
{
	struct cycle_agg_llm l = { .kv_max = -1 };
	uint64_t *ttft = NULL, *itl = NULL, ttft_med = 0, itl_med = 0;
	size_t nttft = 0, nitl = 0;

	if (run && run->llm.cycles) {
		l = run->llm;
		nttft = l.ttft.count;
		nitl = l.itl_p50.count;
		ttft_med = hist_quantile(&l.ttft, 0.5);
		itl_med = hist_quantile(&l.itl_p50, 0.5);
	} else {
		ttft = malloc((t->n ? t->n : 1) * sizeof(*ttft));
		itl = malloc((t->n ? t->n : 1) * sizeof(*itl));
		if (!ttft || !itl)
			goto out;
		for (size_t i = 0; i < t->n; i++) {
			const struct cycle_llm *c = &t->rows[i].llm;

			if (!c->has)
				continue;
			l.cycles++;
			l.prompts += c->prompts;
			l.prompt_tokens += c->prompt_tokens;
			l.generated_tokens += c->generated_tokens;
			l.prefill_ns += c->prefill_ns;
			l.decode_ns += c->decode_ns;
			if (c->has_ttft)
				ttft[nttft++] = c->ttft_ns;
			if (c->has_itl)
				itl[nitl++] = c->itl_p50_ns;
			if (c->kv_used > l.kv_max)
				l.kv_max = c->kv_used;
			if (c->kv_size)
				l.kv_size = c->kv_size;
		}
		qsort(ttft, nttft, sizeof(*ttft), cmp_u64);
		qsort(itl, nitl, sizeof(*itl), cmp_u64);
		ttft_med = nttft ? rank(ttft, nttft, 50) : 0;
		itl_med = nitl ? rank(itl, nitl, 50) : 0;
	}
	if (!l.cycles)
		goto out;
	fprintf(out, "  LLM: %llu prompt tokens", (unsigned long long)l.prompt_tokens);
	if (l.prefill_ns)
		fprintf(out, " (%.0f/s)", (double)l.prompt_tokens * 1e9 / (double)l.prefill_ns);
	fprintf(out, ", %llu generated", (unsigned long long)l.generated_tokens);
	if (l.decode_ns)
		fprintf(out, " (%.1f/s)", (double)l.generated_tokens * 1e9 / (double)l.decode_ns);
	fprintf(out, ", prefill %.1f ms, decode %.1f ms", msd(l.prefill_ns), msd(l.decode_ns));
	if (nttft)
		fprintf(out, ", TTFT median %.1f ms", msd(ttft_med));
	if (nitl)
		fprintf(out, ", ITL median %.2f ms", msd(itl_med));
	if (l.kv_max >= 0 && l.kv_size)
		fprintf(out, ", KV up to %lld of %u", (long long)l.kv_max, l.kv_size);
	else if (l.kv_max >= 0)
		fprintf(out, ", KV up to %lld", (long long)l.kv_max);
	fputc('\n', out);
out:
	free(ttft);
	free(itl);
}

void cycles_print_summary(FILE *out, const struct cycle_table *all, const struct cycle_agg *run,
			  const struct findings *f, size_t max_findings)
{
	struct cycle_table view, *t = &view;
	int npartial = all ? cycles_complete_view(all, &view) : 0;

	if (npartial < 0)
		return;
	if (all && t->n && run && run->n > t->n) {
		/* The table keeps part of the cycles: the figures of all. */
		fprintf(out,
			"Cycles: %llu  median %.1f ms  p95 %.1f ms  mean %.1f ms  slowest #%u %.1f ms "
			"(table: %zu rows kept, the first and the last)\n",
			(unsigned long long)run->n, msd(cycle_agg_median(run, CA_WALL)),
			msd(hist_quantile(run->hist[CA_WALL].count ? &run->hist[CA_WALL]
								   : &run->hist_tr[CA_WALL],
					  0.95)),
			msd(run->sum[CA_WALL]) / (double)run->n,
			run->nslowest ? run->slowest[0].index : 0,
			run->nslowest ? msd(run->slowest[0].part[CA_WALL]) : 0.0, t->n);
	} else if (all && t->n) {
		const struct cycle_row *slow = &t->rows[0];
		uint64_t total = 0;
		for (size_t i = 0; i < t->n; i++) {
			total += t->rows[i].wall_ns;
			if (t->rows[i].wall_ns > slow->wall_ns)
				slow = &t->rows[i];
		}
		fprintf(out,
			"Cycles: %zu%s  median %.1f ms  p95 %.1f ms  mean %.1f ms  slowest "
			"#%u %.1f ms\n",
			t->n, t->whole_run ? " (whole run, no cycles defined)" : "",
			msd(cycles_wall_percentile(t, 50)), msd(cycles_wall_percentile(t, 95)),
			msd(total) / (double)t->n, slow->index, msd(slow->wall_ns));
		char why[200];

		if (cycles_self_check(t, 0, why, sizeof(why)))
			fprintf(out, "  (breakdown withheld: self-check failed: %s)\n", why);
		else if (!t->whole_run && t->n >= 2)
			print_parts(out, t, slow);
	} else if (all && npartial) {
		fprintf(out, "Cycles: 0 complete\n");
	}
	if (all && t->n)
		print_llm(out, t, run);
	/* Open at the end of the run: its length is where the run stopped. */
	for (size_t i = 0; all && i < all->n; i++)
		if (all->rows[i].partial)
			fprintf(out,
				"  partial cycle #%u: %.1f ms until the end of the run (still open: "
				"not in the figures above nor in the findings)\n",
				all->rows[i].index, msd(all->rows[i].wall_ns));
	if (all)
		cycles_view_free(&view);
	if (!f || !f->n)
		return;
	fprintf(out, "Findings (%zu):\n", f->n);
	for (size_t i = 0; i < f->n && i < max_findings; i++)
		fprintf(out, "  [%s] %s\n      %s\n      -> %s\n",
			finding_severity_name(f->v[i].severity), f->v[i].title, f->v[i].evidence,
			f->v[i].recommendation);
	if (f->n > max_findings)
		fprintf(out, "  ... %zu more in report.json / report.html\n", f->n - max_findings);
}
