// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.json cycles/findings round trip, the reader of a saved report.json
 * against hostile input, cycles.csv quoting, report.html escaping. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cycles/cycle_facts.h"
#include "html_src.h"
#include "cycles/cycles_json.h"
#include "export/csv.h"
#include "profile/profile.h"
#include "report/report_cmd.h"
#include "report/html_page.h"
#include "report/report_html.h"

#define MS 1000000ull
#define MB (1024ull * 1024)

/* Four 100 ms cycles; cycle 2 is slow (300 ms) because of a long SQL call
 * whose text tries to break out of the HTML script element. */
static int build(struct cycle_table *t)
{
	struct cycles_input *in = cycles_input_new();
	if (!in)
		return -ENOMEM;
	uint64_t s = 0;
	for (int i = 0; i < 4; i++) {
		uint64_t w = i == 2 ? 300 * MS : 100 * MS;
		cycles_add_begin(in, s, 1);
		cycles_add_end(in, s + w, 1);
		struct cyc_span inf = { s,  s + 50 * MS,    1,	 CYC_SPAN_INFERENCE,
					20, "llama_decode", NULL };
		cycle_facts_add_span(cycles_input_facts(in), &inf);
		struct cyc_span q = {
			s + 60 * MS,	s + (i == 2 ? 260 : 70) * MS,	1, CYC_SPAN_SQL, 0,
			"sqlite3_step", "=INSERT \"x\", '</script><b>'"
		};
		cycle_facts_add_span(cycles_input_facts(in), &q);
		cycle_facts_add_sample(cycles_input_facts(in), s + MS, 1, "matmul");
		cycle_facts_add_rss(cycles_input_facts(in), s + w, (100 + (uint64_t)i) * MB);
		s += w;
	}
	struct cycles_cfg cfg = { .run_start_ns = 0, .run_end_ns = s, .period_ns = MS };
	int e = cycles_compute(in, &cfg, t);
	cycles_input_free(in);
	return e;
}

static void test_roundtrip(void)
{
	struct cycle_table t, back;
	CHECK_INT_EQ(build(&t), 0);
	cJSON *j = cycles_to_json(&t);
	CHECK(j != NULL);
	char err[200] = "";
	CHECK_INT_EQ(cycles_from_json(j, &back, err, sizeof(err)), 0);
	CHECK_INT_EQ(back.n, t.n);
	for (size_t i = 0; i < t.n && i < back.n; i++) {
		const struct cycle_row *a = &t.rows[i], *b = &back.rows[i];
		CHECK_INT_EQ(a->wall_ns, b->wall_ns);
		CHECK_INT_EQ(a->sql_ns, b->sql_ns);
		CHECK_INT_EQ(a->part_sql_ns, b->part_sql_ns);
		CHECK_INT_EQ(a->other_ns, b->other_ns);
		CHECK_INT_EQ(a->rss_end_bytes, b->rss_end_bytes);
		CHECK_INT_EQ(a->rss_delta_bytes, b->rss_delta_bytes);
		CHECK_INT_EQ(a->has_rss, b->has_rss);
		CHECK_INT_EQ(a->has_freq, b->has_freq);
		CHECK_INT_EQ(a->n_top, b->n_top);
		CHECK_STR_EQ(a->sql_slowest, b->sql_slowest);
		if (a->n_top && b->n_top)
			CHECK_STR_EQ(a->top[0].name, b->top[0].name);
	}
	/* Findings of the read-back table equal those of the original. */
	struct findings_cfg cfg;
	findings_default_cfg(&cfg);
	struct findings f1, f2, f3;
	CHECK_INT_EQ(findings_evaluate(&t, &cfg, NULL, &f1), 0);
	CHECK_INT_EQ(findings_evaluate(&back, &cfg, NULL, &f2), 0);
	CHECK_INT_EQ(f1.n, f2.n);
	CHECK(f1.n > 0);
	cJSON *fj = findings_to_json(&f1);
	CHECK_INT_EQ(findings_from_json(fj, &f3, err, sizeof(err)), 0);
	CHECK_INT_EQ(f3.n, f1.n);
	for (size_t i = 0; i < f1.n && i < f2.n && i < f3.n; i++) {
		CHECK_STR_EQ(f1.v[i].evidence, f2.v[i].evidence);
		CHECK_STR_EQ(f1.v[i].rule, f3.v[i].rule);
		CHECK_STR_EQ(f1.v[i].evidence, f3.v[i].evidence);
		CHECK_INT_EQ(f1.v[i].ncycles, f3.v[i].ncycles);
		CHECK_INT_EQ(f1.v[i].severity, f3.v[i].severity);
	}
	cJSON_Delete(fj);
	findings_free(&f1);
	findings_free(&f2);
	findings_free(&f3);
	cJSON_Delete(j);
	cycle_table_free(&back);
	cycle_table_free(&t);
}

/* A minimal report.json text with the given cycles array text. */
static char *doc(const char *cycles)
{
	char *s = NULL;
	if (asprintf(
		    &s,
		    "{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},\"cycles\":%s}",
		    cycles) < 0)
		return NULL;
	return s;
}

static int load(const char *text, char *err, size_t el)
{
	struct report_data d;
	int e = report_load("t/report.json", text, strlen(text), &d, err, el);
	if (!e)
		report_data_free(&d);
	return e;
}

static void test_bad_input(void)
{
	char err[256];
	struct cycle_table t;
	CHECK_INT_EQ(build(&t), 0);
	cJSON *j = cycles_to_json(&t);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "schema", "ebpf-prof/1");
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(root, "sampling"), "period_ns", 1e6);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(root, "samples"), "total", 0);
	cJSON_AddItemToObject(root, "cycles", j);
	char *good = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	cycle_table_free(&t);
	CHECK_INT_EQ(load(good, err, sizeof(err)), 0);

	/* Every truncation of a valid file is rejected or loads; none crashes
	 * (ASan watches), and the shortest prefixes are not JSON at all. */
	size_t n = strlen(good);
	for (size_t k = 0; k < n; k++) {
		struct report_data d;
		int e = report_load("t/report.json", good, k, &d, err, sizeof(err));
		CHECK(e == -EINVAL);
		if (!e)
			report_data_free(&d);
	}
	/* Garbage bytes, including NULs and high bytes. */
	char junk[512];
	unsigned x = 12345;
	for (size_t k = 0; k < sizeof(junk); k++) {
		x = x * 1103515245u + 12345u;
		junk[k] = (char)(x >> 16);
	}
	struct report_data d;
	CHECK_INT_EQ(report_load("t/report.json", junk, sizeof(junk), &d, err, sizeof(err)),
		     -EINVAL);
	CHECK_INT_EQ(load("[]", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "t/report.json: top level is not a JSON object") != NULL);
	CHECK_INT_EQ(load("{\"schema\":\"ebpf-prof/9\"}", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "schema") != NULL);

	static const struct {
		const char *cycles, *msg;
	} bad[] = {
		{ "\"x\"", "cycles: not an array" },
		{ "[1]", "cycles[0]: not an object" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5}]", "cycles[0].wall_ns: missing" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":\"5\"}]",
		  "cycles[0].wall_ns: not a number" },
		{ "[{\"index\":-1,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5}]", "cycles[0].index" },
		{ "[{\"index\":1e30,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5}]",
		  "cycles[0].index" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":1e30,\"wall_ns\":1e30}]",
		  "cycles[0].end_ns" },
		{ "[{\"index\":0,\"start_ns\":9,\"end_ns\":5,\"wall_ns\":4}]", "wall_ns is not" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"truncated\":1}]",
		  "truncated: not a boolean" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"sql_slowest\":7}]",
		  "sql_slowest: not a string" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"throttled_share\":2}]",
		  "throttled_share" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"breakdown\":[]}]",
		  "breakdown: not an object" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"gpu\":3}]",
		  "gpu: not an object" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"top_functions\":{}}]",
		  "top_functions: not an array" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,\"top_functions\":"
		  "[{\"name\":\"a\",\"samples\":1},{\"samples\":2}]}]",
		  "name missing" },
		{ "[{\"index\":0,\"start_ns\":0,\"end_ns\":5,\"wall_ns\":5,"
		  "\"off_cpu_by_reason\":{\"sleep\":true}}]",
		  "sleep: not a number" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char *s = doc(bad[k].cycles);
		err[0] = 0;
		CHECK_INT_EQ(load(s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[k].msg))
			fprintf(stderr, "case %zu: error \"%s\" lacks \"%s\"\n", k, err,
				bad[k].msg);
		CHECK(strstr(err, bad[k].msg) != NULL);
		free(s);
	}
	/* Saved findings are checked when there are no cycles to recompute them. */
	CHECK_INT_EQ(
		load("{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},\"findings\":[{\"rule\":\"x\","
		     "\"severity\":\"bad\"}]}",
		     err, sizeof(err)),
		-EINVAL);
	CHECK_INT_EQ(
		load("{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},\"findings\":[{\"rule\":\"x\","
		     "\"severity\":\"info\",\"title\":\"t\",\"evidence\":\"e\","
		     "\"recommendation\":\"r\",\"cycles\":[1,-2]}]}",
		     err, sizeof(err)),
		-EINVAL);
	CHECK_INT_EQ(
		load("{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},\"findings\":[{\"rule\":\"x\","
		     "\"severity\":\"info\",\"title\":\"t\",\"evidence\":\"e\","
		     "\"recommendation\":\"r\",\"cycles\":[1,2]}]}",
		     err, sizeof(err)),
		0);
	free(good);
}

static char *capture(int (*fn)(FILE *, const void *), const void *arg, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	*rc = fn(f, arg);
	fclose(f);
	return buf;
}

static int csv_fn(FILE *f, const void *t)
{
	return export_cycles_csv(f, t);
}

static int html_fn(FILE *f, const void *root)
{
	return report_html_write(f, root);
}

static void test_csv(void)
{
	struct cycle_table t;
	CHECK_INT_EQ(build(&t), 0);
	int rc = -1;
	char *csv = capture(csv_fn, &t, &rc);
	CHECK_INT_EQ(rc, 0);
	CHECK(csv != NULL);
	if (csv) {
		size_t lines = 0;
		for (char *p = csv; *p; p++)
			lines += *p == '\n';
		CHECK_INT_EQ(lines, 1 + t.n);
		CHECK(strncmp(csv, "index,tid,start_ns,end_ns,wall_ms,", 34) == 0);
		/* Quotes doubled, and the leading '=' defused. */
		CHECK(strstr(csv, "\"'=INSERT \"\"x\"\", '</script><b>'\"") != NULL);
		CHECK(strstr(csv, "\n2,1,200000000,500000000,300.000,0,") != NULL);
		/* No frequency readings: empty cells, not zeros. */
		CHECK(strstr(csv, ",104857600,0,,,0.00,,,,,\"matmul:1\"\n") != NULL);
	}
	free(csv);
	cycle_table_free(&t);
}

static void test_html(void)
{
	struct cycle_table t;
	CHECK_INT_EQ(build(&t), 0);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "schema", "ebpf-prof/1");
	cJSON_AddItemToObject(root, "cycles", cycles_to_json(&t));
	cJSON_AddStringToObject(root, "not_used", "</script>");
	int rc = -1;
	char *html = capture(html_fn, root, &rc);
	CHECK_INT_EQ(rc, 0);
	CHECK(html != NULL);
	if (html) {
		/* The template's two script elements close; the data cannot. */
		int closes = 0;
		for (char *p = html; (p = strstr(p, "</script>")); p++)
			closes++;
		CHECK_INT_EQ(closes, 2);
		CHECK(strstr(html, "\\u003c/script\\u003e\\u003cb\\u003e") != NULL);
		CHECK(strstr(html, "@@DATA@@") == NULL);
		CHECK(strstr(html, "not_used") == NULL);
		CHECK(strstr(html, "http://") == NULL ||
		      strstr(html, "http://www.w3.org/2000/svg"));
		CHECK(strstr(html, "https://") == NULL);
	}
	free(html);
	cJSON_Delete(root);
	cycle_table_free(&t);

	/* The embedded page is its source with the shared prelude, byte for
	 * byte, the prelude's helpers once (not also the page's own). */
	const char *src = getenv("EP_SOURCE_DIR");
	if (src) {
		char *want = ep_page_from_sources(src, "user/report/report_html_page.html");

		CHECK_STR_EQ(report_html_page, want);
		free(want);
	}
	CHECK(strstr(report_html_page, "@@PRELUDE@@") == NULL);
	const char *el = strstr(report_html_page, "function el(");
	CHECK(el != NULL && strstr(el + 1, "function el(") == NULL);
	const char *num = strstr(report_html_page, "function num(");
	CHECK(num != NULL && strstr(num + 1, "function num(") == NULL);

	/* A template without the data's place is refused, nothing written. */
	char *out = NULL;
	size_t outn = 0;
	FILE *f = open_memstream(&out, &outn);
	cJSON *d = cJSON_CreateObject();
	CHECK(f != NULL && d != NULL);
	if (f && d) {
		CHECK_INT_EQ(html_page_write(f, "<html></html>", d), -EINVAL);
		fclose(f);
		CHECK_INT_EQ(outn, 0);
	}
	free(out);
	cJSON_Delete(d);
}

/* Many cycles: the page embeds 5000 of 6000 (the slowest, those a finding
 * names, evenly spaced ones) and a summary over all 6000. Cycle i lasts
 * 1000 + i ns, so the median is 3999 + 1000 (nearest rank 3000), p95 rank
 * 5700 -> 6699, the slowest is #5999; cycle 17 is named by a finding. */
static void test_html_many(void)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "cycles");
	cJSON *fa = cJSON_AddArrayToObject(root, "findings"), *f = cJSON_CreateObject();
	int rc = -1, n17 = 0, n5999 = 0;
	size_t pre = (size_t)(strstr(report_html_page, "@@DATA@@") - report_html_page);

	for (int i = 0; i < 6000; i++) {
		cJSON *c = cJSON_CreateObject();

		cJSON_AddNumberToObject(c, "index", i);
		cJSON_AddNumberToObject(c, "wall_ns", 1000 + i);
		cJSON_AddItemToArray(arr, c);
	}
	cJSON_AddItemToObject(f, "cycles", cJSON_CreateIntArray((const int[]){ 17 }, 1));
	cJSON_AddItemToArray(fa, f);
	char *html = capture(html_fn, root, &rc);
	CHECK_INT_EQ(rc, 0);
	if (html && strlen(html) > pre) {
		cJSON *d = cJSON_ParseWithOpts(html + pre, NULL, false);
		const cJSON *cy = cJSON_GetObjectItemCaseSensitive(d, "cycles"), *c;
		const cJSON *sm = cJSON_GetObjectItemCaseSensitive(d, "cycles_summary");
		double prev = -1;
		bool ordered = true;

		CHECK_INT_EQ(cJSON_GetArraySize(cy), 5000);
		cJSON_ArrayForEach(c, cy)
		{
			double ix = cJSON_GetObjectItemCaseSensitive(c, "index")->valuedouble;

			ordered = ordered && ix > prev;
			prev = ix;
			n17 += ix == 17;
			n5999 += ix == 5999;
		}
		CHECK(ordered);
		CHECK_INT_EQ(n17, 1);
		CHECK_INT_EQ(n5999, 1);
		CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(sm, "count")->valuedouble, 6000);
		CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(sm, "shown")->valuedouble, 5000);
		CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(sm, "median_ns")->valuedouble, 3999);
		CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(sm, "p95_ns")->valuedouble, 6699);
		CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(sm, "slowest_index")->valuedouble,
			     5999);
		cJSON_Delete(d);
	} else {
		CHECK(!"no page");
	}
	free(html);
	cJSON_Delete(root);
}

/* A run without cycles: one whole-run cycle from the report's own sections
 * (1 s run; numbers chosen so every part is checkable by hand). */
static void test_whole_run_from_report(void)
{
	static const char *text =
		"{\"schema\":\"ebpf-prof/1\",\"target\":{\"pids\":[10]},"
		"\"time\":{\"start_monotonic_ns\":5000000000,\"end_monotonic_ns\":6000000000},"
		"\"sampling\":{\"period_ns\":10000000},\"samples\":{\"total\":30},"
		"\"memory\":{\"system_ram_bytes\":1073741824,\"timeline\":["
		"{\"t_s\":0.1,\"pid\":10,\"rss_bytes\":1048576},{\"t_s\":0.2,\"pid\":11,\"rss_"
		"bytes\":1e9},"
		"{\"t_s\":0.9,\"pid\":10,\"rss_bytes\":3145728}]},"
		"\"throttling\":{\"episodes\":[{\"start_s\":0.5,\"end_s\":0.6},{\"start_s\":2,"
		"\"end_s\":1}]},"
		"\"sched\":{\"off_cpu_by_reason\":{\"sleep\":999},\"threads\":[{\"tid\":11},"
		"{\"tid\":10,\"off_cpu_by_reason\":{\"sleep\":100000000}}]},"
		"\"probes\":{\"list\":[{\"group\":\"llama\",\"total_ns\":700000000,\"count\":4},"
		"{\"group\":\"sqlite\",\"total_ns\":250000000,\"count\":9}],"
		"\"tokens\":{\"count\":70}},"
		"\"sql\":{\"statements\":[{\"text\":\"INSERT a\",\"count\":5,\"p99_ns\":9},"
		"{\"text\":\"SELECT b\",\"count\":4}]},"
		"\"top_functions\":[{\"name\":\"f\",\"self\":20},{\"name\":\"g\","
		"\"self\":1}]}";
	struct report_data d;
	char err[128] = "";
	CHECK_INT_EQ(report_load("t/report.json", text, strlen(text), &d, err, sizeof(err)), 0);
	CHECK(d.cycles.whole_run);
	CHECK_INT_EQ(d.cycles.n, 1);
	if (d.cycles.n == 1) {
		const struct cycle_row *r = &d.cycles.rows[0];
		CHECK_INT_EQ(r->wall_ns, 1000 * MS);
		CHECK_INT_EQ(r->on_cpu_ns, 300 * MS);
		CHECK_INT_EQ(r->off_cpu_ns[CYC_OFF_SLEEP], 100 * MS);
		CHECK_INT_EQ(r->off_cpu_ns[CYC_OFF_RUNQ], 0);
		CHECK_INT_EQ(r->inference_ns, 700 * MS);
		CHECK_INT_EQ(r->inference_calls, 4);
		CHECK_NEAR(r->tokens_per_s, 100, 1e-9);
		CHECK_INT_EQ(r->sql_count, 9);
		CHECK_STR_EQ(r->sql_slowest, "INSERT a");
		/* Partition filled up to the wall: sleep 100 first (rarely inside
		 * a probed call), SQL 250, inference the 650 left. */
		CHECK_INT_EQ(r->part_off_cpu_ns[CYC_OFF_SLEEP], 100 * MS);
		CHECK_INT_EQ(r->part_sql_ns, 250 * MS);
		CHECK_INT_EQ(r->part_inference_ns, 650 * MS);
		CHECK_INT_EQ(r->other_ns, 0);
		/* Only the main process's RSS; its last reading and the change. */
		CHECK_INT_EQ(r->rss_end_bytes, 3 * MB);
		CHECK_INT_EQ(r->rss_delta_bytes, 2 * MB);
		CHECK_NEAR(r->throttled_share, 0.1, 1e-9);
		CHECK_INT_EQ(r->n_top, 2);
		CHECK_STR_EQ(r->top[1].name, "g");
	}
	struct cycle_table t0;
	bool no_cycles = false, inference = false;
	for (size_t i = 0; i < d.findings.n; i++) {
		no_cycles |= !strcmp(d.findings.v[i].rule, "no_cycles");
		inference |= !strcmp(d.findings.v[i].rule, "inference_dominates");
	}
	CHECK(no_cycles);
	CHECK(inference);
	CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d.root, "cycles")));
	report_data_free(&d);

	/* A field of the wrong type anywhere the rebuild reads is refused by
	 * the reader, naming it (diff refuses the same: test_report_read.c). */
	static const struct {
		const char *from, *to, *msg;
	} wrong[] = {
		{ "\"rss_bytes\":3145728}", "\"rss_bytes\":3145728},{\"t_s\":\"x\",\"pid\":10}",
		  "t/report.json: memory.timeline[3].t_s: not a number" },
		{ "\"count\":9}", "\"count\":9},{\"group\":7}",
		  "t/report.json: probes.list[2].group: not a string" },
		{ "\"sleep\":100000000}", "\"sleep\":100000000,\"runqueue\":\"bad\"}",
		  "t/report.json: sched.threads[1].off_cpu_by_reason.runqueue: not a number" },
		{ "{\"name\":\"g\",", "{\"name\":3},{\"name\":\"g\",",
		  "t/report.json: top_functions[1].name: not a string" },
		{ "\"sampling\":{\"period_ns\":10000000},", "",
		  "t/report.json: sampling: missing" },
	};
	for (size_t k = 0; k < sizeof(wrong) / sizeof(wrong[0]); k++) {
		const char *at = strstr(text, wrong[k].from);
		char *t = NULL;

		CHECK(at != NULL);
		if (!at || asprintf(&t, "%.*s%s%s", (int)(at - text), text, wrong[k].to,
				    at + strlen(wrong[k].from)) < 0)
			continue;
		err[0] = '\0';
		CHECK_INT_EQ(report_load("t/report.json", t, strlen(t), &d, err, sizeof(err)),
			     -EINVAL);
		if (strcmp(err, wrong[k].msg))
			fprintf(stderr, "wrong %zu: \"%s\", want \"%s\"\n", k, err, wrong[k].msg);
		CHECK_STR_EQ(err, wrong[k].msg);
		free(t);
	}

	/* probes.classes (nested calls once) wins over the sum of the list:
	 * llama_decode 720 ms with ggml_graph_compute 696 ms inside is 720. */
	{
		static const char *cl =
			"{\"schema\":\"ebpf-prof/1\",\"target\":{\"pids\":[10]},"
			"\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},"
			"\"time\":{\"start_monotonic_ns\":0,\"end_monotonic_ns\":2000000000},"
			"\"sched\":{\"threads\":[{\"tid\":10,\"off_cpu_by_reason\":{"
			"\"sleep\":900000000}}]},"
			"\"probes\":{\"list\":[{\"group\":\"llama\",\"total_ns\":720000000,"
			"\"count\":12},{\"group\":\"llama\",\"total_ns\":696000000,\"count\":12}],"
			"\"classes\":{\"inference\":{\"ns\":720000000,\"calls\":12},"
			"\"sql\":{\"ns\":0,\"calls\":0},\"other\":{\"ns\":0,\"calls\":0}}}}";
		CHECK_INT_EQ(report_load("t/report.json", cl, strlen(cl), &d, err, sizeof(err)), 0);
		if (d.cycles.n == 1) {
			const struct cycle_row *r = &d.cycles.rows[0];
			CHECK_INT_EQ(r->inference_ns, 720 * MS);
			CHECK_INT_EQ(r->inference_calls, 12);
			CHECK_INT_EQ(r->part_inference_ns, 720 * MS);
			CHECK_INT_EQ(r->part_off_cpu_ns[CYC_OFF_SLEEP], 900 * MS);
			CHECK_INT_EQ(r->other_ns, 380 * MS);
		}
		inference = false;
		for (size_t i = 0; i < d.findings.n; i++)
			inference |= !strcmp(d.findings.v[i].rule, "inference_dominates");
		CHECK(!inference); /* 36%, not 71% */
		report_data_free(&d);
	}

	/* The SQL figures of a run without cycles mean what a cycle's do:
	 * sql_count the SQLite API calls (probes.classes.sql.calls, not the
	 * executions, which follow the resets), the slowest the longest single
	 * call (a 6.36 ms SELECT step, not the p99 of the costliest statement,
	 * 9780 fast INSERTs). */
	{
		static const char *sq =
			"{\"schema\":\"ebpf-prof/1\",\"target\":{\"pids\":[10]},"
			"\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},"
			"\"time\":{\"start_monotonic_ns\":0,\"end_monotonic_ns\":2000000000},"
			"\"probes\":{\"list\":[{\"group\":\"sqlite\",\"symbol\":\"sqlite3_step\","
			"\"total_ns\":90000000,\"count\":19562,\"max_ns\":6360000},"
			"{\"group\":\"sqlite\",\"symbol\":\"sqlite3_reset\",\"total_ns\":900000,"
			"\"count\":9780,\"max_ns\":40000},"
			"{\"group\":\"sqlite\",\"symbol\":\"sqlite3_x\",\"mode\":\"count\","
			"\"count\":1,\"max_ns\":900000000}],"
			"\"classes\":{\"inference\":{\"ns\":0,\"calls\":0},"
			"\"sql\":{\"ns\":91000000,\"calls\":29366},\"other\":{\"ns\":0,"
			"\"calls\":0}}},"
			"\"sql\":{\"statements\":[{\"text\":\"INSERT INTO t VALUES(?)\","
			"\"count\":9778,\"total_ns\":84000000,\"p99_ns\":8000,\"max_ns\":52000},"
			"{\"text\":\"SELECT count(*) FROM t\",\"count\":2,\"total_ns\":6400000,"
			"\"p99_ns\":6300000,\"max_ns\":6370000}]}}";
		CHECK_INT_EQ(report_load("t/report.json", sq, strlen(sq), &d, err, sizeof(err)), 0);
		CHECK_INT_EQ(d.cycles.n, 1);
		if (d.cycles.n == 1) {
			const struct cycle_row *r = &d.cycles.rows[0];
			CHECK_INT_EQ(r->sql_count, 29366);
			CHECK_INT_EQ(r->sql_slowest_ns, 6360000);
			CHECK_STR_EQ(r->sql_slowest, "SELECT count(*) FROM t");
		}
		report_data_free(&d);
		/* A report without probes.classes: the list's calls less the
		 * nested ones (inside sqlite3_exec). */
		static const char *old =
			"{\"schema\":\"ebpf-prof/1\",\"target\":{\"pids\":[10]},"
			"\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},"
			"\"time\":{\"start_monotonic_ns\":0,\"end_monotonic_ns\":2000000000},"
			"\"probes\":{\"list\":[{\"group\":\"sqlite\",\"total_ns\":9000,"
			"\"count\":7,\"nested_sql\":4},{\"group\":\"sqlite\",\"total_ns\":9000,"
			"\"count\":3}]},"
			"\"sql\":{\"statements\":[{\"text\":\"A\",\"count\":9,\"p99_ns\":10},"
			"{\"text\":\"B\",\"count\":1,\"p99_ns\":4000}]}}";
		CHECK_INT_EQ(report_load("t/report.json", old, strlen(old), &d, err, sizeof(err)),
			     0);
		if (d.cycles.n == 1) {
			const struct cycle_row *r = &d.cycles.rows[0];
			CHECK_INT_EQ(r->sql_count, 6);
			CHECK_STR_EQ(r->sql_slowest, "B");
			CHECK_INT_EQ(r->sql_slowest_ns, 4000);
		}
		report_data_free(&d);
	}

	/* The samples_lost finding's figures: samples lost whole (ring full,
	 * collector, unread at stop), not those kept without a stack or the
	 * ticks the overload guard did not take. */
	{
		struct findings_ctx fc;
		cJSON *r = cJSON_Parse(
			"{\"samples\":{\"total\":900},\"dropped\":{\"total\":1111,\"by_cause\":{"
			"\"ringbuf_full\":60,\"collector\":30,\"unread_at_stop\":10,"
			"\"user_stack_error\":11,\"rate_limited\":1000}}}");

		CHECK(r != NULL);
		cycles_findings_ctx(r, &fc);
		CHECK_INT_EQ(fc.samples_total, 900);
		CHECK_INT_EQ(fc.samples_lost, 100);
		cJSON_Delete(r);
		cycles_findings_ctx(NULL, &fc);
		CHECK_INT_EQ(fc.samples_total + fc.samples_lost, 0);
	}

	/* A live report holds u64 values as raw decimal text. */
	cJSON *live = cJSON_CreateObject(), *tm = cJSON_AddObjectToObject(live, "time");
	cJSON_AddItemToObject(tm, "start_monotonic_ns", cJSON_CreateRaw("5000000000"));
	cJSON_AddItemToObject(tm, "end_monotonic_ns", cJSON_CreateRaw("5250000000"));
	CHECK_INT_EQ(cycles_whole_run_from_report(live, &t0, err, sizeof(err)), 0);
	CHECK(t0.n == 1 && t0.rows[0].wall_ns == 250 * MS);
	cycle_table_free(&t0);
	cJSON_ReplaceItemInObject(tm, "end_monotonic_ns", cJSON_CreateRaw("52e9"));
	CHECK_INT_EQ(cycles_whole_run_from_report(live, &t0, err, sizeof(err)), -EINVAL);
	cJSON_Delete(live);
	double v = 0;
	cJSON *neg = cJSON_CreateRaw("-1"), *big = cJSON_CreateRaw("99999999999999999999999");
	CHECK(!cycles_json_number(neg, &v));
	CHECK(!cycles_json_number(big, &v));
	cJSON_Delete(neg);
	cJSON_Delete(big);

	/* Without run times nothing is rebuilt (and nothing fails). */
	cJSON *bad = cJSON_Parse("{\"time\":{\"start_monotonic_ns\":9,\"end_monotonic_ns\":3}}");
	struct cycle_table t;
	CHECK_INT_EQ(cycles_whole_run_from_report(bad, &t, err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(t.n, 0);
	cJSON_Delete(bad);
	/* Without them, report_load rebuilds nothing; a time that is not an
	 * object is refused by the reader, naming it. */
	CHECK_INT_EQ(
		load("{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0}}",
		     err, sizeof(err)),
		0);
	CHECK_INT_EQ(
		load("{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":0},\"time\":7}",
		     err, sizeof(err)),
		-EINVAL);
	CHECK(strstr(err, "t/report.json: time: not an object") != NULL);
}

/* The flame section's thread split: entries for the heaviest threads, one
 * merged entry for the rest, per kept stack [entry, count] pairs that add
 * up to its count, and stacks kept per thread. Three threads: 10 runs A x5 and B x1, 11 runs B x3,
 * 12 runs C x1; two threads listed, 12 merged. */
static int pair_n(const cJSON *stack, int entry)
{
	const cJSON *p;
	int n = -1;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(
				      stack, "t")) if (cJSON_GetArrayItem(p, 0)->valueint == entry)
		n = cJSON_GetArrayItem(p, 1)->valueint;
	return n;
}

static void test_flame_threads(void)
{
	struct profile p;
	uint32_t fr[3];
	int64_t t10, t11, t12;

	CHECK_INT_EQ(profile_init(&p, 100), 0);
	fr[0] = (uint32_t)profile_intern_frame(&p, "main", "/bin/x", false);
	fr[1] = (uint32_t)profile_intern_frame(&p, "hash", "/bin/x", false);
	fr[2] = (uint32_t)profile_intern_frame(&p, "sort", "/bin/x", false);
	t10 = profile_thread(&p, 1, 10, "hasher");
	t11 = profile_thread(&p, 1, 11, "sorter");
	t12 = profile_thread(&p, 1, 12, "napper");
	CHECK(t10 >= 0 && t11 >= 0 && t12 >= 0);
	uint32_t a[] = { fr[0], fr[1] }, b[] = { fr[0], fr[2] }, c[] = { fr[0] };
	for (int i = 0; i < 5; i++)
		CHECK_INT_EQ(profile_add_sample(&p, (uint32_t)t10, 100 + (uint64_t)i, a, 2, 0,
						false),
			     0);
	CHECK_INT_EQ(profile_add_sample(&p, (uint32_t)t10, 200, b, 2, 0, false), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT_EQ(profile_add_sample(&p, (uint32_t)t11, 100 + (uint64_t)i, b, 2, 0,
						false),
			     0);
	CHECK_INT_EQ(profile_add_weighted(&p, (uint32_t)t12, 100, c, 1, 0, 1), 0);

	cJSON *o = flame_to_json(&p, "samples", 10, 2, 0);
	CHECK(o != NULL);
	const cJSON *th = cJSON_GetObjectItemCaseSensitive(o, "threads"),
		    *st = cJSON_GetObjectItemCaseSensitive(o, "stacks");
	CHECK_INT_EQ(cJSON_GetArraySize(th), 3);
	CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 0), "tid")->valueint,
		     10);
	CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 0), "n")->valueint, 6);
	CHECK_STR_EQ(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 1), "comm")->valuestring,
		"sorter");
	CHECK_INT_EQ(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 2), "merged")->valueint, 1);
	CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 2), "n")->valueint, 1);
	CHECK_INT_EQ(cJSON_GetArraySize(st), 3);
	/* Heaviest first: A (5), B (4), C (1). */
	CHECK_INT_EQ(pair_n(cJSON_GetArrayItem(st, 0), 0), 5);
	CHECK_INT_EQ(pair_n(cJSON_GetArrayItem(st, 0), 1), -1);
	CHECK_INT_EQ(pair_n(cJSON_GetArrayItem(st, 1), 0), 1);
	CHECK_INT_EQ(pair_n(cJSON_GetArrayItem(st, 1), 1), 3);
	CHECK_INT_EQ(pair_n(cJSON_GetArrayItem(st, 2), 2), 1);
	cJSON_Delete(o);

	/* Stacks cut at 2: the merged thread keeps its total, no pair points
	 * to a stack that is not there. Every thread listed: no merged entry. */
	o = flame_to_json(&p, "us", 2, 3, 0);
	CHECK(o != NULL);
	th = cJSON_GetObjectItemCaseSensitive(o, "threads");
	st = cJSON_GetObjectItemCaseSensitive(o, "stacks");
	CHECK_INT_EQ(cJSON_GetArraySize(st), 2);
	CHECK_INT_EQ(cJSON_GetArraySize(th), 3);
	CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 2), "merged") == NULL);
	CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(th, 2), "tid")->valueint,
		     12);
	CHECK_STR_EQ(cJSON_GetObjectItemCaseSensitive(o, "unit")->valuestring, "us");
	cJSON_Delete(o);

	/* One stack kept per listed thread beyond the run's heaviest: 12's
	 * light C comes back, heaviest first still. */
	o = flame_to_json(&p, "samples", 1, 3, 1);
	CHECK(o != NULL);
	st = cJSON_GetObjectItemCaseSensitive(o, "stacks");
	CHECK_INT_EQ(cJSON_GetArraySize(st), 3);
	CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(st, 0), "n")->valueint, 5);
	CHECK_INT_EQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(st, 1), "n")->valueint, 4);
	CHECK_INT_EQ(pair_n(cJSON_GetArrayItem(st, 2), 2), 1);
	cJSON_Delete(o);
	profile_free(&p);
}

int main(void)
{
	test_flame_threads();
	test_whole_run_from_report();
	test_roundtrip();
	test_bad_input();
	test_csv();
	test_html();
	test_html_many();
	return check_report("test_cycles_json");
}
