// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cycles.csv writer (see export/csv.h). */
#include "export/csv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"

static void csv_text(FILE *f, const char *s)
{
	if (!s)
		return;
	/* SQL text and symbol names come from the profiled process: a leading
	 * '=' would run as a formula when the file is opened in a spreadsheet. */
	bool formula = strchr("=+-@\t\r", s[0]) != NULL && s[0];
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

static void ms(FILE *f, uint64_t ns)
{
	fprintf(f, ",%.3f", (double)ns / 1e6);
}

/* A time in ms, or an empty cell when unknown. */
static void ms_or_empty(FILE *f, bool has, uint64_t ns)
{
	if (has)
		ms(f, ns);
	else
		fputc(',', f);
}

/* The cycle's LLM timing: every cell empty without a decode whose batch
 * was read. */
static void llm_cells(FILE *f, const struct cycle_llm *l)
{
	if (!l->has) {
		fputs(",,,,,,,,,", f);
		return;
	}
	fprintf(f, ",%" PRIu64 ",%" PRIu64, l->prompt_tokens, l->generated_tokens);
	ms(f, l->prefill_ns);
	ms(f, l->decode_ns);
	ms_or_empty(f, l->has_ttft, l->ttft_ns);
	ms_or_empty(f, l->has_itl, l->itl_p50_ns);
	ms_or_empty(f, l->has_itl, l->itl_p99_ns);
	if (l->kv_used >= 0)
		fprintf(f, ",%" PRId64, l->kv_used);
	else
		fputc(',', f);
	if (l->kv_size)
		fprintf(f, ",%" PRIu32, l->kv_size);
	else
		fputc(',', f);
}

int export_cycles_csv(FILE *f, const struct cycle_table *t)
{
	fputs("index,tid,start_ns,end_ns,wall_ms,truncated,partial,samples,on_cpu_ms,off_cpu_ms",
	      f);
	for (unsigned k = 0; k < CYC_OFF_REASONS; k++)
		fprintf(f, ",off_%s_ms", cycles_off_reason_name(k));
	fputs(",inference_ms,inference_calls,tokens,tokens_per_s,prompt_tokens,generated_tokens,"
	      "prefill_ms,decode_ms,ttft_ms,itl_p50_ms,itl_p99_ms,kv_used,kv_size,sql_ms,sql_count,"
	      "sql_slowest_ms,sql_slowest,probe_other_ms,probe_other_calls,gc_ms,gc_count,"
	      "other_ms,incomplete_spans,rss_end_bytes,rss_delta_bytes,cpu_mhz_mean,cpu_mhz_min,"
	      "throttled_pct,gpu_load_pct,gpu_power_mw,gpu_temp_c,gpu_energy_mj,top_functions\n",
	      f);
	for (size_t i = 0; i < t->n; i++) {
		const struct cycle_row *r = &t->rows[i];
		fprintf(f, "%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64, r->index, r->tid,
			r->start_ns, r->end_ns);
		ms(f, r->wall_ns);
		fprintf(f, ",%d,%d,%" PRIu64, r->truncated, r->partial, r->samples);
		ms(f, r->on_cpu_ns);
		ms(f, r->off_cpu_total_ns);
		for (unsigned k = 0; k < CYC_OFF_REASONS; k++)
			ms(f, r->off_cpu_ns[k]);
		ms(f, r->inference_ns);
		fprintf(f, ",%" PRIu32 ",%" PRIu64 ",%.3f", r->inference_calls, r->tokens,
			r->tokens_per_s);
		llm_cells(f, &r->llm);
		ms(f, r->sql_ns);
		fprintf(f, ",%" PRIu32, r->sql_count);
		ms(f, r->sql_slowest_ns);
		fputc(',', f);
		char *clean = r->sql_slowest ? utf8_sanitize(r->sql_slowest) : NULL;
		csv_text(f, clean ? clean : r->sql_slowest);
		free(clean);
		ms(f, r->probe_other_ns);
		fprintf(f, ",%" PRIu32, r->probe_other_calls);
		ms(f, r->gc_ns);
		fprintf(f, ",%" PRIu32, r->gc_count);
		ms(f, r->other_ns);
		fprintf(f, ",%" PRIu32, r->incomplete_spans);
		/* Unknown values are empty cells (pandas: NaN), never 0. */
		if (r->has_rss)
			fprintf(f, ",%" PRIu64 ",%" PRId64, r->rss_end_bytes, r->rss_delta_bytes);
		else
			fputs(",,", f);
		if (r->has_freq)
			fprintf(f, ",%.1f,%.1f", r->mhz_mean, r->mhz_min);
		else
			fputs(",,", f);
		fprintf(f, ",%.2f", r->throttled_share * 100);
		if (r->has_gpu) {
			/* A board may lack one of the three (no GPU rail or
			 * zone): NaN, an empty cell like any unknown. */
			const double g[4] = { r->gpu_load_pct, r->gpu_power_mw, r->gpu_temp_c,
					      r->gpu_energy_mj };

			for (int k = 0; k < 4; k++)
				if (isnan(g[k]))
					fputc(',', f);
				else
					fprintf(f, k == 3 ? ",%.3f" : ",%.1f", g[k]);
		} else {
			fputs(",,,,", f);
		}
		fputc(',', f);
		if (r->n_top) {
			/* name:samples pairs, ';'-separated, in one quoted cell. */
			size_t len = 0;
			for (uint32_t k = 0; k < r->n_top; k++)
				len += strlen(r->top[k].name) + 24;
			char *buf = malloc(len + 1);
			if (!buf)
				return -ENOMEM;
			size_t off = 0;
			for (uint32_t k = 0; k < r->n_top; k++)
				off += (size_t)snprintf(buf + off, len + 1 - off, "%s%s:%" PRIu64,
							k ? ";" : "", r->top[k].name,
							r->top[k].samples);
			char *cl = utf8_sanitize(buf);
			csv_text(f, cl ? cl : buf);
			free(cl);
			free(buf);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
