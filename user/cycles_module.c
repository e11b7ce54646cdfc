// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cycles recording module, first stage: no cycle boundaries yet
 * (--cycle/--cycle-every/marker are not wired), so the run is one cycle.
 * From the report the other modules have built (it runs after them), it
 * adds report.json `cycles`, `findings` and `flame`, writes report.html and
 * cycles.csv, and prints the cycle summary with the top findings.
 */
#include "cycles_module.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cycles_json.h"
#include "cycles_summary.h"
#include "export_csv.h"
#include "log.h"
#include "report_html.h"

/* Stacks kept for the HTML flame graph: the heaviest ones carry nearly all
 * samples, and the page stays small enough for a laptop browser. */
#define FLAME_MAX_STACKS 3000

struct cycles_state {
	const struct rec_ctx *ctx;
	struct output_dir *od; /* from write_files, still open while report.json is written */
	struct cycle_table table;
	struct findings findings;
	bool have;
};

static int cm_open(void **state, const struct rec_ctx *ctx)
{
	struct cycles_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	*state = s;
	return 0;
}

static int cm_write_files(void *state, struct output_dir *od)
{
	((struct cycles_state *)state)->od = od;
	return 0;
}

static int write_html(FILE *f, void *root)
{
	return report_html_write(f, root);
}

static int write_csv(FILE *f, void *t)
{
	return export_cycles_csv(f, t);
}

static int cm_report(void *state, cJSON *root)
{
	struct cycles_state *s = state;
	char err[128];
	if (s->ctx->prof) {
		cJSON *fl = flame_to_json(s->ctx->prof, FLAME_MAX_STACKS);
		if (!fl || !cJSON_AddItemToObject(root, "flame", fl)) {
			cJSON_Delete(fl);
			return -ENOMEM;
		}
	}
	int e = cycles_whole_run_from_report(root, &s->table, err, sizeof(err));
	if (e) {
		/* Not fatal: report.json is written without cycles. */
		log_warn("cycles: no per-cycle table: %s", err);
		return e == -ENOMEM ? e : 0;
	}
	struct findings_cfg cfg;
	struct findings_ctx fctx = { 0 };
	findings_default_cfg(&cfg);
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory");
	const cJSON *ram = cJSON_GetObjectItemCaseSensitive(mem, "system_ram_bytes");
	double v;
	if (cycles_json_number(ram, &v))
		fctx.mem_total_bytes = (uint64_t)v;
	const cJSON *lat = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "sched"), "runqueue_latency_ns");
	const cJSON *p99 = cJSON_GetObjectItemCaseSensitive(lat, "p99");
	if (cycles_json_number(p99, &v))
		fctx.runq_p99_ns = (uint64_t)v;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	fctx.ncpus = ncpu > 0 ? (uint32_t)ncpu : 0;
	e = findings_evaluate(&s->table, &cfg, &fctx, &s->findings);
	if (e)
		return e;
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
	s->have = true;
	/* report.json is the last file and the only hook that sees the whole
	 * report: the HTML (which embeds it) is written from here. A failure
	 * is logged by output_write and does not cost report.json. */
	if (s->od) {
		output_write(s->od, "report.html", write_html, root);
		output_write(s->od, "cycles.csv", write_csv, &s->table);
	}
	return 0;
}

static void cm_summary(void *state, FILE *out)
{
	struct cycles_state *s = state;
	if (s->have)
		cycles_print_summary(out, &s->table, &s->findings, 3);
}

static void cm_close(void *state)
{
	struct cycles_state *s = state;
	if (!s)
		return;
	cycle_table_free(&s->table);
	findings_free(&s->findings);
	free(s);
}

const struct rec_module cycles_rec_module = {
	.name = "cycles",
	.open = cm_open,
	.write_files = cm_write_files,
	.report_json = cm_report,
	.summary = cm_summary,
	.close = cm_close,
};
