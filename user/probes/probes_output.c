// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the probes module shows: the live view's probe pane and drop
 * count during the run, and report.json, trace events and the summary at
 * the end (built by probes_stats.c). Apart from probes_module.c because
 * it only reads the statistics.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel/skel_types.h"
#include "llama/llama_facts.h"
#include "llama/llm_track.h"
#include "modules.skel.h"
#include "probes/probes_internal.h"
#include "top/top_live.h"

/* The LLM figures since the start (nothing before a decode's batch). */
static void live_llm(struct live_metrics *l, const struct llm_run *r)
{
	if (r->decodes <= r->unknown_batches)
		return;
	l->llm_on = true;
	l->llm_prompts = r->prompts;
	l->llm_prompt_tokens = r->prompt_tokens;
	l->llm_generated_tokens = r->generated_tokens;
	l->llm_prompt_tps = r->prefill_ns ? (double)r->prompt_tokens * 1e9 / (double)r->prefill_ns
					  : NAN;
	l->llm_gen_tps = r->decode_ns ? (double)r->generated_tokens * 1e9 / (double)r->decode_ns
				      : NAN;
	l->llm_ttft_p50_ms = r->ttft.count ? (double)hist_quantile(&r->ttft, 0.5) / 1e6 : NAN;
	l->llm_itl_p50_ms = r->itl.count ? (double)hist_quantile(&r->itl, 0.5) / 1e6 : NAN;
	l->llm_kv_used = r->kv_last >= 0 ? (double)r->kv_last : NAN;
	l->llm_kv_size = r->kv_size ? (double)r->kv_size : NAN;
	live_hist_from(&l->llm_ttft, &r->ttft);
	live_hist_from(&l->llm_itl, &r->itl);
}

/* Rates, latency quantiles (since the start), the slowest statement and
 * tokens/s for the live view and alerts, once a second when shown. */
void probes_update_live(struct probes_mod *m, uint64_t now)
{
	struct live_metrics *l = m->ctx->live;
	const struct sql_stmt_stat *slow = NULL;
	size_t n = probe_stats_nprobes(m->st);
	double dt = (double)(now - m->live_ns) / 1e9;

	if (!l || !cli_live_wanted(m->ctx->opts) || now < m->live_ns + 1000000000ull)
		return;
	/* The busiest probes first, those never called left out: the pane
	 * has room for a few, and the presets' unused functions (listed by
	 * id, llama before SQLite) used to fill it. */
	l->nprobes = 0;
	for (uint32_t id = 0; id < n && id < EP_PROBE_MAX; id++) {
		const struct probe_stat *ps = probe_stats_get(m->st, id);
		const struct probe_info *pi = probe_stats_info(m->st, id);
		struct live_probe lp;
		size_t k;

		if (!ps || !pi || !pi->def || (!ps->spans && !ps->calls))
			continue;
		snprintf(lp.name, sizeof(lp.name), "%s",
			 pi->def->label ? pi->def->label : pi->def->symbol);
		/* Count-only probes have no spans, only the in-kernel count. */
		lp.calls = ps->calls > ps->spans ? ps->calls : ps->spans;
		lp.rate_hz = m->live_ns && dt > 0 ? (double)(lp.calls - m->live_spans[id]) / dt
						  : NAN;
		m->live_spans[id] = lp.calls;
		lp.timed = pi->def->mode != EP_PM_COUNT;
		snprintf(lp.library, sizeof(lp.library), "%s",
			 pi->library && strrchr(pi->library, '/') ? strrchr(pi->library, '/') + 1
			 : pi->library				  ? pi->library
								  : "");
		live_hist_from(&lp.dur, &ps->hist);
		lp.p50_ns = ps->spans ? (double)hist_quantile(&ps->hist, 0.5) : NAN;
		lp.p99_ns = ps->spans ? (double)hist_quantile(&ps->hist, 0.99) : NAN;
		/* Insertion by rate (unknown rates last), kept to the pane's max. */
		k = l->nprobes;
		while (k > 0 && (isnan(l->probes[k - 1].rate_hz) ||
				 (!isnan(lp.rate_hz) && l->probes[k - 1].rate_hz < lp.rate_hz))) {
			if (k < LIVE_MAX_PROBES)
				l->probes[k] = l->probes[k - 1];
			k--;
		}
		if (k < LIVE_MAX_PROBES) {
			l->probes[k] = lp;
			if (l->nprobes < LIVE_MAX_PROBES)
				l->nprobes++;
		}
	}
	for (size_t i = 0; i < probe_stats_nsql(m->st); i++) {
		const struct sql_stmt_stat *q = probe_stats_sql(m->st, i);

		if (q && q->count && q->text &&
		    (!slow || q->total_ns / q->count > slow->total_ns / slow->count))
			slow = q;
	}
	if (slow) {
		snprintf(l->slowest_sql, sizeof(l->slowest_sql), "%s", slow->text);
		l->slowest_sql_ns = (double)slow->total_ns / (double)slow->count;
	}
	{
		double tps = NAN;

		if (probe_stats_tokens(m->st, &tps))
			l->tokens_per_s = tps;
	}
	live_llm(l, llm_tracker_run(m->llm));
	m->live_ns = now;
}

/* Spans and calls lost so far (kernel counters + malformed records) for the
 * live view and --alert drops>0, every 250 ms; the final figures are read at
 * stop. */
void probes_update_live_drops(struct probes_mod *m, uint64_t now)
{
	struct live_metrics *l = m->ctx->live;
	int fd = bpf_map__fd(m->skel->maps.probe_drops);
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[512], sum = probe_stats_bad_events(m->st) + m->bus_lost;

	if (!l || !cli_live_wanted(m->ctx->opts) || ncpu <= 0 || ncpu > 512 ||
	    now < m->live_drops_ns + 250000000ull)
		return;
	m->live_drops_ns = now;
	for (uint32_t k = 0; k < EP_PDROP__COUNT; k++) {
		/* Returns of calls entered before the attach: nothing lost. */
		if (k == EP_PDROP_UNMATCHED_RET)
			continue;
		if (bpf_map_lookup_elem(fd, &k, v))
			return;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	}
	l->drops[LIVE_SRC_PROBES] = (int64_t)sum;
}
int pm_report(void *state, cJSON *root)
{
	struct probes_mod *m = state;

	/* Loaded for launch mode's holds alone: nothing probed, no section. */
	if (!m->skel || m->holds_only)
		return 0;
	int64_t max_prompt;
	uint64_t prompts;
	int e = probe_stats_report_json(m->st, root);

	if (e)
		return e;
	max_prompt = probe_stats_max_prompt(m->st, &prompts);
	e = llama_facts_report_json(m->llama, root, max_prompt, prompts);
	return e ? e : llm_run_report_json(m->llm, root);
}

int pm_trace(void *state, FILE *out, bool *first)
{
	struct probes_mod *m = state;

	return probe_stats_trace_events(m->st, out, first);
}

bool pm_has_trace(void *state)
{
	struct probes_mod *m = state;

	if (!m->skel || m->holds_only)
		return false;
	return probe_stats_has_trace(m->st);
}

/* The whole run's LLM timing, per prompt, under the probes' table. */
static void llm_summary(const struct llm_run *r, FILE *out)
{
	if (r->decodes <= r->unknown_batches)
		return;
	fprintf(out, "  LLM: %llu prompts, %llu prompt tokens", (unsigned long long)r->prompts,
		(unsigned long long)r->prompt_tokens);
	if (r->prefill_ns)
		fprintf(out, " (%.0f/s)", (double)r->prompt_tokens * 1e9 / (double)r->prefill_ns);
	fprintf(out, ", %llu generated", (unsigned long long)r->generated_tokens);
	if (r->decode_ns)
		fprintf(out, " (%.1f/s)", (double)r->generated_tokens * 1e9 / (double)r->decode_ns);
	if (r->ttft.count)
		fprintf(out, "; TTFT p50 %.1f ms, p99 %.1f ms",
			(double)hist_quantile(&r->ttft, 0.5) / 1e6,
			(double)hist_quantile(&r->ttft, 0.99) / 1e6);
	if (r->itl.count)
		fprintf(out, "; ITL p50 %.2f ms, p99 %.2f ms",
			(double)hist_quantile(&r->itl, 0.5) / 1e6,
			(double)hist_quantile(&r->itl, 0.99) / 1e6);
	if (r->kv_max >= 0)
		fprintf(out, "; KV up to %lld", (long long)r->kv_max);
	if (r->kv_max >= 0 && r->kv_size)
		fprintf(out, " of %u", r->kv_size);
	if (r->unknown_batches)
		fprintf(out, " (%llu decode batches unreadable)",
			(unsigned long long)r->unknown_batches);
	fputc('\n', out);
}

void pm_summary(void *state, FILE *out)
{
	struct probes_mod *m = state;

	if (!m->skel || m->holds_only)
		return;
	probe_stats_summary(m->st, out);
	llm_summary(llm_tracker_run(m->llm), out);
}
