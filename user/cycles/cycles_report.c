// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cycles module's end-of-run outputs: report.json `cycles` and its
 * meta, trace events, report.html, cycles.csv and the summary. Apart from
 * cycles_module.c because they only read the table cm_stop built.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/alloc_report.h"
#include "cycles/cycles_internal.h"
#include "cycles/cycles_json.h"
#include "cycles/cycles_summary.h"
#include "export/csv.h"
#include "llama/llama_findings.h"
#include "report/report_html.h"
#include "util/log.h"

/* Throttled share per cycle from the episodes the sysmon module found at
 * the end of the run (the detector needs the whole timeline). */
static void fill_throttling(struct cycle_table *t, const cJSON *root)
{
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(root, "time"), *p;
	const cJSON *eps = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "throttling"), "episodes");
	double t0, a, b;

	if (!cycles_json_number(cJSON_GetObjectItemCaseSensitive(tm, "start_monotonic_ns"), &t0) ||
	    !cJSON_IsArray(eps))
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct cycle_row *r = &t->rows[i];
		uint64_t thr = 0, last = r->start_ns;

		/* Episodes are sorted and disjoint in the report. */
		cJSON_ArrayForEach(p, eps)
		{
			uint64_t s0, s1;

			if (!cycles_json_number(cJSON_GetObjectItemCaseSensitive(p, "start_s"),
						&a) ||
			    !cycles_json_number(cJSON_GetObjectItemCaseSensitive(p, "end_s"), &b) ||
			    b < a || b > 1e9)
				continue;
			s0 = (uint64_t)t0 + (uint64_t)(a * 1e9);
			s1 = (uint64_t)t0 + (uint64_t)(b * 1e9);
			if (s0 < last)
				s0 = last;
			if (s1 > r->end_ns)
				s1 = r->end_ns;
			if (s1 > s0) {
				thr += s1 - s0;
				last = s1;
			}
		}
		if (r->wall_ns && (thr || r->has_freq))
			r->throttled_share = (double)thr / (double)r->wall_ns;
	}
}

/* Each cycle as an async slice (b/e with the cycle index as id): a
 * --cycle-every cycle does not nest with the spans on its thread, and
 * cycles of different threads overlap, so they get their own track. */
int cm_trace(void *state, FILE *out, bool *first)
{
	struct cycles_state *s = state;
	const struct cycle_table *t = cycle_sink_table(s->ctx->cycles);

	for (size_t i = 0; t && i < t->n; i++) {
		const struct cycle_row *r = &t->rows[i];
		uint64_t off = 0;

		for (int k = 0; k < CYC_OFF_REASONS; k++)
			off += r->part_off_cpu_ns[k];
		fprintf(out,
			"%s{\"name\":\"cycle %u\",\"cat\":\"cycle\",\"ph\":\"b\",\"id\":%u,"
			"\"ts\":%" PRIu64 ".%03u,\"pid\":%u,\"tid\":%u,\"args\":{\"wall_ms\":%.3f,"
			"\"inference_ms\":%.3f,\"sql_ms\":%.3f,\"off_cpu_ms\":%.3f,\"gc_ms\":%.3f,"
			"\"other_ms\":%.3f,\"truncated\":%s,\"partial\":%s}}\n",
			*first ? "" : ",", r->index, r->index, r->start_ns / 1000,
			(unsigned)(r->start_ns % 1000), s->main_pid, r->tid, r->wall_ns / 1e6,
			r->part_inference_ns / 1e6, r->part_sql_ns / 1e6, off / 1e6,
			r->part_gc_ns / 1e6, r->other_ns / 1e6, r->truncated ? "true" : "false",
			r->partial ? "true" : "false");
		*first = false;
		fprintf(out,
			",{\"name\":\"cycle %u\",\"cat\":\"cycle\",\"ph\":\"e\",\"id\":%u,"
			"\"ts\":%" PRIu64 ".%03u,\"pid\":%u,\"tid\":%u}\n",
			r->index, r->index, r->end_ns / 1000, (unsigned)(r->end_ns % 1000),
			s->main_pid, r->tid);
	}
	return ferror(out) ? -EIO : 0;
}

bool cm_has_trace(void *state)
{
	struct cycles_state *s = state;
	const struct cycle_table *t = cycle_sink_table(s->ctx->cycles);

	return t && t->n;
}

static int write_html(FILE *f, void *root)
{
	return report_html_write(f, root);
}

static int write_csv(FILE *f, void *t)
{
	return export_cycles_csv(f, t);
}

/* report.html and cycles.csv, after report.json. A failure is logged by
 * output_write (and listed as not written); it costs no other file. */
int cm_write_files(void *state, struct output_dir *od)
{
	struct cycles_state *s = state;

	if (s->have && s->report_root) {
		output_write(od, "report.html", write_html, (void *)s->report_root);
		output_write(od, "cycles.csv", write_csv, &s->table);
	}
	s->report_root = NULL;
	return 0;
}

static int add_meta(struct cycles_state *s, cJSON *root)
{
	const struct cycle_sink_stats *st = s->ctx->cycles ? cycle_sink_stats(s->ctx->cycles)
							   : NULL;
	cJSON *m = cJSON_AddObjectToObject(root, "cycles_meta"), *d;
	const char *src = "none";

	if (!m)
		return -ENOMEM;
	if (s->table.n && !s->table.whole_run)
		src = s->spec.src == CYC_SRC_AUTO || s->spec.src == CYC_SRC_MARKER ? "marker"
		      : s->spec.every						   ? "cycle-every"
										   : "cycle";
	if (!cJSON_AddStringToObject(m, "boundaries", src) ||
	    (s->spec.text && !cJSON_AddStringToObject(m, "spec", s->spec.text)) ||
	    (s->problem[0] && !cJSON_AddStringToObject(m, "problem", s->problem)) ||
	    !cJSON_AddNumberToObject(m, "lag_ms", CYCLE_LAG_NS / 1e6) ||
	    !cJSON_AddNumberToObject(m, "unmatched_ends", st ? (double)st->unmatched_ends : 0) ||
	    !cJSON_AddNumberToObject(m, "return_to_return", st ? (double)st->chained : 0) ||
	    !cJSON_AddNumberToObject(m, "gc_unpaired", (double)s->gc_unpaired) ||
	    !cJSON_AddNumberToObject(m, "peak_held_facts", st ? (double)st->peak_held_facts : 0) ||
	    !cJSON_AddNumberToObject(m, "rows_kept", (double)s->table.n) ||
	    !cJSON_AddNumberToObject(m, "rows_not_kept", st ? (double)st->rows_not_kept : 0) ||
	    !cJSON_AddNumberToObject(m, "rows_max", CYCLE_MAX_ROWS))
		return -ENOMEM;
	if (s->run && s->run->n && cycles_agg_to_json(s->run, m))
		return -ENOMEM;
	if (s->spec.src == CYC_SRC_PY) {
		cJSON *w = cJSON_AddObjectToObject(m, "py_watch");

		if (!cJSON_AddStringToObject(m, "py_mechanism",
					     s->py_by_watch ? "watchpoint" : "usdt") ||
		    !w || !cJSON_AddNumberToObject(w, "objects", (double)s->pw_armed) ||
		    !cJSON_AddNumberToObject(w, "hits", (double)s->pw_stats[EP_CYC_W_HITS]) ||
		    !cJSON_AddNumberToObject(w, "first", (double)s->pw_stats[EP_CYC_W_FIRST]) ||
		    !cJSON_AddNumberToObject(w, "unchanged",
					     (double)s->pw_stats[EP_CYC_W_UNCHANGED]) ||
		    !cJSON_AddNumberToObject(w, "unreadable",
					     (double)s->pw_stats[EP_CYC_W_UNREADABLE]) ||
		    !cJSON_AddNumberToObject(w, "freed", (double)s->pw_stats[EP_CYC_W_DEAD]))
			return -ENOMEM;
		/* The functions NAME matched: more than one, each one's calls
		 * are cycles (docs/cycles.md). */
		cJSON *fa = cJSON_AddArrayToObject(w, "functions");

		if (!fa)
			return -ENOMEM;
		for (size_t i = 0; i < s->npy_fns; i++) {
			cJSON *o = cJSON_CreateObject();

			if (!o || !cJSON_AddItemToArray(fa, o) ||
			    !cJSON_AddStringToObject(o, "name", s->py_fns[i].qual) ||
			    !cJSON_AddStringToObject(o, "file", s->py_fns[i].file) ||
			    !cJSON_AddNumberToObject(o, "line", s->py_fns[i].line))
				return -ENOMEM;
		}
	}
	d = cJSON_AddObjectToObject(m, "dropped");
	if (!d ||
	    !cJSON_AddNumberToObject(d, "ringbuf_full",
				     (double)s->drops[EP_CYC_DROP_RINGBUF_FULL]) ||
	    !cJSON_AddNumberToObject(d, "depth_map_full",
				     (double)s->drops[EP_CYC_DROP_DEPTH_MAP_FULL]) ||
	    !cJSON_AddNumberToObject(d, "late_facts", st ? (double)st->late_facts : 0) ||
	    !cJSON_AddNumberToObject(d, "over_cap_facts", st ? (double)st->dropped_facts : 0) ||
	    !cJSON_AddNumberToObject(d, "names", st ? (double)st->dropped_names : 0) ||

	    !cJSON_AddNumberToObject(d, "reordered_entries", st ? (double)st->reordered : 0) ||
	    !cJSON_AddNumberToObject(d, "bad_events", (double)s->bad_events) ||
	    !cJSON_AddNumberToObject(m, "boundaries_after_end", (double)s->after_end))
		return -ENOMEM;
	return 0;
}

int cm_report(void *state, cJSON *root)
{
	struct cycles_state *s = state;
	char err[128];
	int e;

	if (s->ctx->prof) {
		cJSON *fl = flame_to_json(s->ctx->prof, "samples", FLAME_MAX_STACKS,
					  FLAME_MAX_THREADS, FLAME_THREAD_STACKS);
		if (!fl || !cJSON_AddItemToObject(root, "flame", fl)) {
			cJSON_Delete(fl);
			return -ENOMEM;
		}
	}
	if (s->ctx->cycles && cycle_sink_table(s->ctx->cycles)->n) {
		cycle_sink_take_table(s->ctx->cycles, &s->table);
		fill_throttling(&s->table, root);
	} else {
		e = cycles_whole_run_from_report(root, &s->table, err, sizeof(err));
		if (e) {
			/* Not fatal: report.json is written without cycles. */
			log_warn("cycles: no per-cycle table: %s", err);
			return e == -ENOMEM ? e : 0;
		}
	}
	struct findings_cfg cfg;
	struct findings_ctx fctx;
	findings_default_cfg(&cfg);
	cycles_findings_ctx(root, &fctx);
	fctx.cycle_spec = s->spec.text;
	fctx.cycle_problem = s->problem[0] ? s->problem : NULL;
	fctx.py_watch = s->py_by_watch;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	fctx.ncpus = ncpu > 0 ? (uint32_t)ncpu : 0;
	/* Past the table's cap, the findings read the aggregates of every
	 * cycle; the rows kept supply per-cycle throttling. */
	s->run = s->ctx->cycles && s->table.n && !s->table.whole_run
			 ? cycle_sink_agg(s->ctx->cycles)
			 : NULL;
	e = findings_evaluate_agg(&s->table, s->run, &cfg, &fctx, &s->findings);
	if (!e)
		e = alloc_findings_from_report(root, &s->findings);
	if (!e)
		e = llama_findings_from_report(root, &s->table, fctx.ncpus, &s->findings);
	if (e)
		return e;
	findings_sort(&s->findings);
	cJSON *cj = cycles_to_json(&s->table), *fj = findings_to_json(&s->findings);
	if (!cj || !fj || !cJSON_AddItemToObject(root, "cycles", cj)) {
		cJSON_Delete(cj);
		cJSON_Delete(fj);
		return -ENOMEM;
	}
	if (!cJSON_AddItemToObject(root, "findings", fj) ||
	    !cJSON_AddBoolToObject(root, "cycles_whole_run", s->table.whole_run)) {
		cJSON_Delete(fj);
		return -ENOMEM;
	}
	e = add_meta(s, root);
	if (e)
		return e;
	s->have = true;
	/* The HTML embeds the whole report: written by write_files, which
	 * the recorder calls after report.json, while it still holds this
	 * tree. */
	s->report_root = root;
	return 0;
}

void cm_summary(void *state, FILE *out)
{
	struct cycles_state *s = state;

	if (s->have)
		cycles_print_summary(out, &s->table, s->run, &s->findings, 3);
	if (s->npy_fns > 1) {
		char list[1024];

		cycles_py_fns_text(s, list, sizeof(list));
		fprintf(out, "cycles: %s named %zu functions, the calls of each were cycles: %s\n",
			s->spec.text, s->npy_fns, list);
	}
}
