// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ebpf-prof report DIR` (see report_cmd.h). */
#include "report/report_cmd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycles_json.h"
#include "cycles/cycles_summary.h"
#include "export/csv.h"
#include "util/log.h"
#include "report/output.h"
#include "report/report_html.h"
#include "report/report_read.h"

void report_data_free(struct report_data *d)
{
	cJSON_Delete(d->root);
	cycle_table_free(&d->cycles);
	findings_free(&d->findings);
	memset(d, 0, sizeof(*d));
}

/* The rest of report_load, on a tree report_read checked (taken over). */
static int load_root(const char *name, cJSON *root, struct report_data *out, char *err,
		     size_t errlen)
{
	int e = 0;

	memset(out, 0, sizeof(*out));
	out->root = root;
	const cJSON *cyc = cJSON_GetObjectItemCaseSensitive(out->root, "cycles");
	const cJSON *fin = cJSON_GetObjectItemCaseSensitive(out->root, "findings");
	bool rebuilt = false;
	if (cJSON_IsNull(cyc))
		cyc = NULL;
	if (cJSON_IsNull(fin))
		fin = NULL;
	if (!cyc) {
		/* A run without cycle boundaries: one whole-run cycle from the
		 * other sections, when the report has its times. */
		char ignored[64];
		rebuilt = !cycles_whole_run_from_report(out->root, &out->cycles, ignored,
							sizeof(ignored));
	}
	if (cyc || rebuilt) {
		if (cyc)
			e = cycles_from_json(cyc, &out->cycles, err, errlen);
		if (e)
			goto fail;
		const cJSON *wr = cJSON_GetObjectItemCaseSensitive(out->root, "cycles_whole_run");
		if (cyc && cJSON_IsBool(wr))
			out->cycles.whole_run = cJSON_IsTrue(wr);
		if (rebuilt) {
			cJSON *cj = cycles_to_json(&out->cycles);
			if (!cj || !cJSON_AddItemToObject(out->root, "cycles", cj) ||
			    !cJSON_AddBoolToObject(out->root, "cycles_whole_run", true)) {
				cJSON_Delete(cj);
				e = -ENOMEM;
				goto fail;
			}
		}
		struct findings_cfg cfg;
		struct findings_ctx ctx;
		findings_default_cfg(&cfg);
		cycles_findings_ctx(out->root, &ctx);
		e = findings_evaluate(&out->cycles, &cfg, &ctx, &out->findings);
		if (e)
			goto fail;
		cJSON *fj = findings_to_json(&out->findings);
		if (!fj) {
			e = -ENOMEM;
			goto fail;
		}
		if (fin)
			cJSON_ReplaceItemInObjectCaseSensitive(out->root, "findings", fj);
		else
			cJSON_AddItemToObject(out->root, "findings", fj);
	} else if (fin) {
		e = findings_from_json(fin, &out->findings, err, errlen);
		if (e)
			goto fail;
	}
	return 0;
fail:
	if (e == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	report_data_free(out);
	return e;
}

int report_load(const char *name, const char *text, size_t len, struct report_data *out, char *err,
		size_t errlen)
{
	cJSON *root;
	int e;

	memset(out, 0, sizeof(*out));
	e = report_parse(name, text, len, &root, err, errlen);
	return e ? e : load_root(name, root, out, err, errlen);
}

static int write_html(FILE *f, void *ctx)
{
	return report_html_write(f, ((struct report_data *)ctx)->root);
}

static int write_csv(FILE *f, void *ctx)
{
	return export_cycles_csv(f, &((struct report_data *)ctx)->cycles);
}

int report_cmd_main(int argc, char **argv)
{
	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: ebpf-prof report DIR\n"
			"  Rebuilds DIR/report.html, DIR/cycles.csv and the cycle summary from\n"
			"  DIR/report.json (findings are evaluated again with this version's "
			"rules).\n");
		return argc == 2 ? 0 : 2;
	}
	const char *dir = argv[1];
	struct report_data d;
	char err[512] = "";
	cJSON *root;
	int e = report_read(dir, &root, err, sizeof(err));
	if (!e)
		e = load_root(dir, root, &d, err, sizeof(err));
	if (e) {
		/* The line `diff` prints for the same file. */
		fprintf(stderr, "ebpf-prof report: %s\n", err);
		return 1;
	}
	struct output_dir od;
	e = output_dir_open(&od, dir);
	if (!e) {
		e = output_write(&od, "report.html", write_html, &d);
		if (!e && cJSON_GetObjectItemCaseSensitive(d.root, "cycles"))
			e = output_write(&od, "cycles.csv", write_csv, &d);
		output_dir_close(&od);
	}
	if (!e) {
		cycles_print_summary(stdout, &d.cycles, NULL, &d.findings, 5);
		printf("Wrote %s/report.html%s\n", dir, d.cycles.n ? " and cycles.csv" : "");
	}
	report_data_free(&d);
	return e ? 1 : 0;
}
