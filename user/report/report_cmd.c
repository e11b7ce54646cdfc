// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ebpf-prof report DIR` (see report_cmd.h). */
#include "report/report_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cycles/cycles_json.h"
#include "cycles/cycles_summary.h"
#include "export/csv.h"
#include "util/log.h"
#include "report/output.h"
#include "report/report_html.h"

/* A report.json of a long run with many cycles is a few MB; far beyond
 * this it is not ours. */
#define REPORT_MAX_BYTES (256u << 20)

void report_data_free(struct report_data *d)
{
	cJSON_Delete(d->root);
	cycle_table_free(&d->cycles);
	findings_free(&d->findings);
	memset(d, 0, sizeof(*d));
}

int report_load(const char *text, size_t len, struct report_data *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->root = cJSON_ParseWithLength(text, len);
	if (!out->root) {
		snprintf(err, errlen, "not valid JSON (truncated or corrupt)");
		return -EINVAL;
	}
	int e = 0;
	if (!cJSON_IsObject(out->root)) {
		snprintf(err, errlen, "top level is not an object");
		e = -EINVAL;
		goto fail;
	}
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(out->root, "schema");
	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "ebpf-prof/1") != 0) {
		snprintf(err, errlen, "schema is not \"ebpf-prof/1\"");
		e = -EINVAL;
		goto fail;
	}
	const cJSON *cyc = cJSON_GetObjectItemCaseSensitive(out->root, "cycles");
	const cJSON *fin = cJSON_GetObjectItemCaseSensitive(out->root, "findings");
	bool rebuilt = false;
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
		snprintf(err, errlen, "out of memory");
	report_data_free(out);
	return e;
}

static int read_report(const char *dir, char **text, size_t *len)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/report.json", dir) >= (int)sizeof(path)) {
		log_error("report: directory name too long: %s", dir);
		return -ENAMETOOLONG;
	}
	/* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
	 * anything but a regular file is refused below. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		log_error("cannot open %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > REPORT_MAX_BYTES) {
		log_error("%s: not a regular file of at most %u MB", path, REPORT_MAX_BYTES >> 20);
		close(fd);
		return -EINVAL;
	}
	size_t cap = (size_t)st.st_size, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
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
	char *text = NULL;
	size_t len = 0;
	int e = read_report(dir, &text, &len);
	if (e)
		return 1;
	struct report_data d;
	char err[256] = "";
	e = report_load(text, len, &d, err, sizeof(err));
	free(text);
	if (e) {
		log_error("%s/report.json: %s", dir, err);
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
