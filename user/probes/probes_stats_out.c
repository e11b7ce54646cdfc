// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The outputs of the span aggregation: the report's JSON, trace.json
 * events and the terminal summary. Apart from probes_stats.c because
 * they only read what the aggregation built, once, at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycles.h"
#include "util/json_write.h"
#include "probes/probes.h"
#include "probes/probe_nest.h"
#include "probes/probes_stats_internal.h"
#include "probes/uprobe_discovery.h"

/* ---- outputs ---- */

static const char *group_name(enum probe_group g)
{
	return g == PG_LLAMA ? "llama" : g == PG_SQLITE ? "sqlite" : "user";
}

static const char *drop_names[EP_PDROP__COUNT] = {
	[EP_PDROP_RINGBUF_FULL] = "ringbuf_full",
	[EP_PDROP_STACK_FULL] = "nesting_too_deep",
	[EP_PDROP_NO_THREAD_SLOT] = "thread_map_full",
	[EP_PDROP_UNMATCHED_RET] = "unmatched_return",
	[EP_PDROP_LOST_RET] = "lost_return",
	[EP_PDROP_SQL_READ] = "sql_text_unreadable",
	[EP_PDROP_LLAMA_ARGS] = "llama_params_unreadable",
	[EP_PDROP_NO_COOKIE] = "unknown_probe_address",
	[EP_PDROP_LLAMA_BATCH] = "llama_batch_unreadable",
	[EP_PDROP_HOLD_FULL] = "hold_map_full",
};

static cJSON *add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v);
}

static char *sanitized(const char *s)
{
	return utf8_sanitize(s ? s : "");
}

static int add_str(cJSON *o, const char *k, const char *v)
{
	char *s = sanitized(v);
	cJSON *r;

	if (!s)
		return -ENOMEM;
	r = cJSON_AddStringToObject(o, k, s);
	free(s);
	return r ? 0 : -ENOMEM;
}

static int cmp_sql_total(const void *a, const void *b, void *ctx)
{
	const struct probe_stats *st = ctx;
	uint64_t x = st->sql[*(const size_t *)a].total_ns, y = st->sql[*(const size_t *)b].total_ns;

	return x < y ? 1 : x > y ? -1 : 0;
}

static size_t *sql_order(const struct probe_stats *st)
{
	size_t *ord = malloc((st->nsql ? st->nsql : 1) * sizeof(*ord));

	if (!ord)
		return NULL;
	for (size_t i = 0; i < st->nsql; i++)
		ord[i] = i;
	qsort_r(ord, st->nsql, sizeof(*ord), cmp_sql_total, (void *)st);
	return ord;
}

int probe_stats_report_json(const struct probe_stats *st, cJSON *root)
{
	cJSON *pr = cJSON_AddObjectToObject(root, "probes"), *list, *d, *by, *nf;
	uint64_t dt = 0;
	double tps;

	if (!pr || !(list = cJSON_AddArrayToObject(pr, "list")))
		return -ENOMEM;
	for (uint32_t id = 0; id < st->nprobes; id++) {
		const struct probe_info *in = &st->info[id];
		const struct probe_stat *s = &st->stat[id];
		cJSON *o;

		if (!in->def)
			continue;
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(list, o))
			return -ENOMEM;
		add_num(o, "id", id);
		if (add_str(o, "label", in->def->label) || add_str(o, "symbol", in->def->symbol) ||
		    add_str(o, "library", in->library))
			return -ENOMEM;
		if (in->def->usdt_provider && add_str(o, "usdt_provider", in->def->usdt_provider))
			return -ENOMEM;
		if (in->def->usdt_end && add_str(o, "usdt_end", in->def->usdt_end))
			return -ENOMEM;
		cJSON_AddStringToObject(o, "group", group_name(in->def->group));
		cJSON_AddStringToObject(o, "mode",
					in->def->mode == EP_PM_COUNT ? "count" : "latency");
		/* Calls entered come from an in-kernel counter; completed
		 * spans can be fewer (still open, or dropped). */
		add_num(o, "count",
			(double)(s->calls > s->spans + s->open ? s->calls : s->spans + s->open));
		add_num(o, "completed", (double)s->spans);
		add_num(o, "open", (double)s->open);
		add_num(o, "total_ns", (double)s->total_ns);
		add_num(o, "mean_ns", (double)hist_mean(&s->hist));
		add_num(o, "min_ns", (double)(s->spans ? s->hist.min : 0));
		add_num(o, "p50_ns", (double)hist_quantile(&s->hist, 0.5));
		add_num(o, "p90_ns", (double)hist_quantile(&s->hist, 0.9));
		add_num(o, "p99_ns", (double)hist_quantile(&s->hist, 0.99));
		add_num(o, "max_ns", (double)s->hist.max);
		add_num(o, "errors", (double)s->errors);
		if (in->def->group == PG_SQLITE)
			add_num(o, "nested_sql", (double)s->nested_sql);
		if (in->def->err_rule == PE_STEP) {
			add_num(o, "rows", (double)s->rows);
			add_num(o, "done", (double)s->done);
		}
	}
	d = cJSON_AddObjectToObject(pr, "dropped");
	by = d ? cJSON_AddObjectToObject(d, "by_cause") : NULL;
	if (!by)
		return -ENOMEM;
	for (int i = 0; i < EP_PDROP__COUNT; i++) {
		add_num(by, drop_names[i], (double)st->drops[i]);
		/* A return whose entry came before the attach: that call was
		 * never ours to time, nothing was lost. */
		if (i != EP_PDROP_UNMATCHED_RET)
			dt += st->drops[i];
	}
	add_num(by, "collector_bad_event", (double)st->bad_events);
	dt += st->bad_events;
	add_num(by, "module_queue_full", (double)st->module_lost);
	dt += st->module_lost;
	add_num(d, "total", (double)dt);
	add_num(pr, "trace_spans_not_kept", (double)st->spans_not_kept);
	add_num(pr, "trace_max_spans", (double)st->max_spans);
	{
		static const char *const cls_names[PROBE_NEST_CLASSES] = { "inference", "sql",
									   "other" };
		cJSON *cl = cJSON_AddObjectToObject(pr, "classes");

		if (!cl)
			return -ENOMEM;
		for (unsigned k = 0; k < PROBE_NEST_CLASSES; k++) {
			cJSON *o = cJSON_AddObjectToObject(cl, cls_names[k]);

			if (!o)
				return -ENOMEM;
			add_num(o, "ns", (double)probe_nest_ns(st->nest, k));
			add_num(o, "calls", (double)probe_nest_calls(st->nest, k));
		}
	}
	nf = cJSON_AddArrayToObject(pr, "not_found");
	if (!nf)
		return -ENOMEM;
	for (size_t i = 0; i < st->nnf; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(nf, o) || add_str(o, "probe", st->nf[2 * i]) ||
		    add_str(o, "reason", st->nf[2 * i + 1]))
			return -ENOMEM;
	}
	if (probe_stats_tokens(st, &tps)) {
		cJSON *t = cJSON_AddObjectToObject(pr, "tokens");

		if (!t)
			return -ENOMEM;
		add_num(t, "count", (double)st->tokens);
		add_num(t, "tokens_per_s", tps);
		add_num(t, "first_ns", (double)st->tok_first_ns);
		add_num(t, "last_ns", (double)st->tok_last_ns);
	}
	if (st->nsql) {
		cJSON *sq = cJSON_AddObjectToObject(root, "sql"), *arr;
		size_t *ord = sql_order(st);

		if (!sq || !ord || !(arr = cJSON_AddArrayToObject(sq, "statements"))) {
			free(ord);
			return -ENOMEM;
		}
		for (size_t k = 0; k < st->nsql; k++) {
			const struct sql_stmt_stat *s = &st->sql[ord[k]];
			cJSON *o = cJSON_CreateObject();

			if (!o || !cJSON_AddItemToArray(arr, o) || add_str(o, "text", s->text)) {
				free(ord);
				return -ENOMEM;
			}
			cJSON_AddBoolToObject(o, "truncated", s->truncated);
			add_num(o, "count", (double)s->count);
			add_num(o, "total_ns", (double)s->total_ns);
			add_num(o, "p50_ns", (double)hist_quantile(&s->hist, 0.5));
			add_num(o, "p99_ns", (double)hist_quantile(&s->hist, 0.99));
			add_num(o, "max_ns", (double)s->hist.max);
			add_num(o, "rows", (double)s->rows);
			add_num(o, "errors", (double)s->errors);
			add_num(o, "prepares", (double)s->prepares);
		}
		add_num(sq, "max_statements", (double)st->max_sql);
		free(ord);
	}
	return 0;
}

bool probe_stats_has_trace(const struct probe_stats *st)
{
	return st->nspans > 0 || st->spans_not_kept > 0;
}

static void sep(FILE *out, bool *first)
{
	if (!*first)
		fputc(',', out);
	*first = false;
}

int probe_stats_trace_events(const struct probe_stats *st, FILE *out, bool *first)
{
	for (size_t i = 0; i < st->nthreads; i++) {
		const struct thread_ent *t = &st->threads[i];

		sep(out, first);
		fprintf(out,
			"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
			t->pid, t->tid);
		json_write_strn(out, t->name, strnlen(t->name, sizeof(t->name)));
		fputs("}}\n", out);
	}
	for (size_t i = 0; i < st->nspans; i++) {
		const struct probe_span_rec *r = &st->spans[i];
		const struct probe_def *def = st->info[r->probe_id].def;

		sep(out, first);
		fputs("{\"name\":", out);
		json_write_str(out, def->label);
		/* ns / 1000 printed to three decimals keeps every nanosecond, so
		 * nested calls stay nested in the viewer. */
		fprintf(out,
			",\"cat\":\"probe,%s\",\"ph\":\"X\",\"ts\":%" PRIu64
			".%03u,\"dur\":%" PRIu64 ".%03u,\"pid\":%u,\"tid\":%u,\"args\":{",
			group_name(def->group), r->start_ns / 1000, (unsigned)(r->start_ns % 1000),
			r->dur_ns / 1000, (unsigned)(r->dur_ns % 1000), r->pid, r->tid);
		if (r->open)
			fputs("\"open\":true", out);
		else if (def->err_rule == PE_NULL || def->err_rule == PE_NONE)
			fprintf(out, "\"ret\":%" PRId64, r->ret);
		else
			fprintf(out, "\"ret\":%d", (int32_t)r->ret);
		if (r->sql >= 0 && (size_t)r->sql < st->nsql) {
			fputs(",\"sql\":", out);
			json_write_str(out, st->sql[r->sql].text);
		}
		fputs("}}\n", out);
	}
	/* The timeline ends here for probes: said in the file, at the point in
	 * time it happens, so that an empty stretch is not read as idle. */
	if (st->spans_not_kept) {
		const struct probe_span_rec *r = &st->first_not_kept;

		sep(out, first);
		fprintf(out,
			"{\"name\":\"probe spans not kept from here: %" PRIu64
			" (trace.json keeps the first %zu, --trace-max-spans; report.json counts "
			"every call)\",\"cat\":\"probe,cap\",\"ph\":\"i\",\"s\":\"g\",\"ts\":%" PRIu64
			".%03u,\"pid\":%u,\"tid\":%u,\"args\":{\"spans_not_kept\":%" PRIu64
			",\"max_spans\":%zu}}\n",
			st->spans_not_kept, st->max_spans, r->start_ns / 1000,
			(unsigned)(r->start_ns % 1000), r->pid, r->tid, st->spans_not_kept,
			st->max_spans);
	}
	return ferror(out) ? -EIO : 0;
}

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 10000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 10000000)
		snprintf(buf, len, "%.1fus", (double)ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
}

/* The label of a probe that was never called (NULL otherwise). */
static const char *idle_label(const struct probe_stats *st, uint32_t id)
{
	const struct probe_stat *s = &st->stat[id];

	if (!st->info[id].def || s->calls || s->spans || s->open)
		return NULL;
	return st->info[id].def->label;
}

void probe_stats_summary(const struct probe_stats *st, FILE *out)
{
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t drops = st->bad_events;
	double tps;
	size_t nidle = 0;

	if (!st->nprobes && !st->nnf)
		return;
	fprintf(out, "\nProbes:\n  %-28s %-22s %10s %9s %9s %9s %9s %9s %7s\n", "probe", "library",
		"count", "total", "mean", "p50", "p99", "max", "errors");
	for (uint32_t id = 0; id < st->nprobes; id++) {
		const struct probe_info *in = &st->info[id];
		const struct probe_stat *s = &st->stat[id];
		uint64_t n = s->calls > s->spans + s->open ? s->calls : s->spans + s->open;

		if (!in->def)
			continue;
		/* A preset function the program never called is no row. */
		if (!n) {
			nidle++;
			continue;
		}
		fmt_ns(a, sizeof(a), s->total_ns);
		fmt_ns(b, sizeof(b), hist_mean(&s->hist));
		fmt_ns(c, sizeof(c), hist_quantile(&s->hist, 0.5));
		fmt_ns(d, sizeof(d), hist_quantile(&s->hist, 0.99));
		fmt_ns(e, sizeof(e), s->hist.max);
		if (in->def->mode == EP_PM_COUNT)
			fprintf(out, "  %-28.28s %-22.22s %10" PRIu64 "   (counted, not timed)\n",
				in->def->label, proc_maps_basename(in->library), n);
		else
			fprintf(out,
				"  %-28.28s %-22.22s %10" PRIu64 " %9s %9s %9s %9s %9s %7" PRIu64
				"%s\n",
				in->def->label, proc_maps_basename(in->library), n, a, b, c, d, e,
				s->errors, s->open ? " (open at end)" : "");
	}
	if (nidle) {
		const char *sep = "";

		fprintf(out, "  not called:");
		for (uint32_t id = 0; id < st->nprobes; id++) {
			const char *label = idle_label(st, id);
			bool said = false;

			/* A function probed in several files (per-ISA ggml
			 * variants, several processes) is named once. */
			for (uint32_t k = 0; label && k < id && !said; k++)
				said = (idle_label(st, k) && !strcmp(idle_label(st, k), label));
			if (label && !said) {
				fprintf(out, "%s %s", sep, label);
				sep = ",";
			}
		}
		fputc('\n', out);
	}
	if (probe_stats_tokens(st, &tps))
		fprintf(out, "  tokens: %" PRIu64 " (%.1f/s from the first to the last)\n",
			st->tokens, tps);
	if (st->nsql) {
		size_t *ord = sql_order(st);

		if (ord) {
			fprintf(out, "  SQL by total time:\n");
			for (size_t k = 0; k < st->nsql && k < 10; k++) {
				const struct sql_stmt_stat *s = &st->sql[ord[k]];

				fmt_ns(a, sizeof(a), s->total_ns);
				fmt_ns(b, sizeof(b), hist_quantile(&s->hist, 0.99));
				fprintf(out,
					"    %9s  x%-8" PRIu64 " p99 %-9s rows %-8" PRIu64
					" %.60s\n",
					a, s->count, b, s->rows, s->text);
			}
			free(ord);
		}
	}
	for (int i = 0; i < EP_PDROP__COUNT; i++)
		if (i != EP_PDROP_UNMATCHED_RET)
			drops += st->drops[i];
	drops += st->module_lost;
	if (drops)
		fprintf(out,
			"  probe events dropped: %" PRIu64 " (see report.json probes.dropped)\n",
			drops);
	if (st->spans_not_kept)
		fprintf(out,
			"  trace.json: the first %zu probe spans kept, %" PRIu64
			" later ones not (--trace-max-spans; statistics count every call)\n",
			st->max_spans, st->spans_not_kept);
	for (size_t i = 0; i < st->nnf; i++)
		fprintf(out, "  not probed: %s: %s\n", st->nf[2 * i], st->nf[2 * i + 1]);
}
