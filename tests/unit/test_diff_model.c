// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ebpf-prof diff` on synthetic report.json files: functions matched by
 * name and module across builds at other paths and addresses, the doubled
 * function flagged and the others not, probes and SQL matched, the --json
 * document, diff.html; then every kind of bad input (truncated, other
 * schema, hostile values, FIFO, huge and non-regular files). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "html_src.h"
#include "diff/diff_html.h"
#include "diff/diff_load.h"
#include "diff/diff_model.h"
#include "diff/diff_text.h"
#include "util/json_write.h"

struct spec {
	const char *root;     /* build directory: module paths differ per build */
	const char *unk_off;  /* offset of the unknown frame: differs per build */
	int hot, cold, unk;   /* samples of the three leaves */
	double wall_ms;	      /* per cycle, +-2 ms pattern added */
	int sql_rows;	      /* INSERT executions per cycle */
	const char *program;  /* command */
	const char *sym_name; /* name of the hot function */
	double tps;	      /* tokens/s per cycle (0: no tokens) */
	double energy_mj;     /* Jetson GPU energy per cycle (0: no gpu) */
	double on_ms;	      /* on-CPU per cycle (0: 90% of the wall time) */
	double prefill_ms;    /* cycles[].llm prefill per cycle (0: no llm) */
};

/* A report.json with 20 cycles, a flame of main -> {hot, cold, unknown},
 * one probe and one SQL statement. */
static char *make_report(const struct spec *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int total = s->hot + s->cold + s->unk;

	fprintf(f,
		"{\"schema\":\"ebpf-prof/1\",\"version\":\"t\","
		"\"target\":{\"command\":\"%s --flag\",\"processes\":[{\"pid\":1,\"comm\":\"x\"}]},"
		"\"time\":{\"duration_ns\":2000000000},"
		"\"sampling\":{\"frequency_hz\":1000,\"period_ns\":1000000},"
		"\"samples\":{\"total\":%d},\"cycles\":[",
		s->program, total);
	for (int i = 0; i < 20; i++) {
		long long w = llround((s->wall_ms + (i % 5) - 2) * 1e6),
			  t0 = (i + 1) * 1000000000LL;
		fprintf(f,
			"%s{\"index\":%d,\"start_ns\":%lld,\"end_ns\":%lld,\"wall_ns\":%lld,"
			"\"truncated\":false,\"samples\":%d,"
			"\"on_cpu_ns\":%.0f,\"inference_ns\":%.0f,\"sql_ns\":%d,\"gc_ns\":0,"
			"\"other_ns\":1000000,\"off_cpu_by_reason\":{\"sleep\":%d},"
			"\"rss_delta_bytes\":0,\"throttled_share\":0,",
			i ? "," : "", i, t0, t0 + w, w, total / 20 + (i % 3) - 1,
			s->on_ms > 0 ? s->on_ms * 1e6 + (i % 3) * 1e6 : (double)w * 0.9,
			50e6 + (i % 4) * 1e5, s->sql_rows * 10000 + (i % 3) * 100,
			2000000 + (i % 2) * 1000);
		fprintf(f, "\"tokens\":%d,\"tokens_per_s\":%.3f,", s->tps > 0 ? 32 : 0,
			s->tps > 0 ? s->tps + (i % 3) : 0);
		if (s->prefill_ms > 0)
			fprintf(f,
				"\"llm\":{\"prompt_tokens\":60,\"generated_tokens\":32,"
				"\"prefill_ms\":%.3f,\"decode_ms\":%.3f,\"ttft_ms\":%.3f,"
				"\"itl_p50_ms\":0.3,\"itl_p99_ms\":0.5,\"kv_used\":92,"
				"\"kv_size\":512},",
				s->prefill_ms + (i % 3) * 0.1, 10 + (i % 4) * 0.1,
				s->prefill_ms + 1 + (i % 3) * 0.1);
		else if (i % 2)
			fprintf(f, "\"llm\":null,");
		if (s->energy_mj > 0)
			fprintf(f, "\"gpu\":{\"power_mw\":%.1f,\"energy_mj\":%.1f}}",
				5000.0 + (i % 4) * 10, s->energy_mj + (i % 5));
		else
			fprintf(f, "\"gpu\":null}");
	}
	fprintf(f,
		"],\"cycles_whole_run\":false,"
		"\"flame\":{\"unit\":\"samples\",\"total\":%d,\"frames\":["
		"{\"name\":\"main\",\"module\":\"%s/app\",\"kernel\":false},"
		"{\"name\":\"%s\",\"module\":\"%s/app\",\"kernel\":false},"
		"{\"name\":\"cold\",\"module\":\"%s/app\",\"kernel\":false},"
		"{\"name\":\"[unknown] %s/libx.so+%s\",\"module\":\"%s/libx.so\",\"kernel\":false}],"
		"\"stacks\":[{\"f\":[0,1],\"n\":%d},{\"f\":[0,2],\"n\":%d},{\"f\":[0,3],\"n\":%d}]},"
		"\"probes\":{\"list\":[{\"label\":\"llama_decode\",\"library\":\"%s/app\","
		"\"count\":20,\"total_ns\":1000000000,\"p50_ns\":50000000,\"p99_ns\":52000000}]},"
		"\"sql\":{\"statements\":[{\"text\":\"INSERT INTO t VALUES(?1)\",\"count\":%d,"
		"\"total_ns\":%d,\"p50_ns\":10000,\"p99_ns\":20000,\"rows\":0}]}}",
		total, s->root, s->sym_name, s->root, s->root, s->root, s->unk_off, s->root, s->hot,
		s->cold, s->unk, s->root, 20 * s->sql_rows, 20 * s->sql_rows * 10000);
	fclose(f);
	return buf;
}

static int load(const struct spec *s, const char *dir, struct dl_run *r)
{
	char *t = make_report(s), err[512] = "";
	int e = dl_load_text(dir, t, strlen(t), r, err, sizeof(err));

	if (e)
		fprintf(stderr, "load %s: %s\n", dir, err);
	free(t);
	return e;
}

static const struct dm_row *row(const struct dm_result *r, enum dm_section sec, const char *name,
				const char *metric)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].section == sec && !strcmp(r->rows[i].name, name) &&
		    !strcmp(r->rows[i].metric, metric))
			return &r->rows[i];
	return NULL;
}

static const struct spec BASE = { "/home/ci/build-1",	  "0x1a2b", 600, 600, 100, 100, 20,
				  "/home/ci/build-1/app", "hot",    0,	 0 };

/* A component of 2% of the cycle that grew 20% (0.4% of the cycle): not a
 * regression; the same 20% of a component of 20% of the cycle is. Real runs
 * of one build moved a 0.7% SQL share by 30% between runs, tight within
 * each (docs/diff.md). */
static void test_small_component(void)
{
	struct spec bs = BASE, ns = BASE;
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;

	bs.sql_rows = 200; /* 2 ms of 100 ms */
	ns.sql_rows = 240;
	if (load(&bs, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "SQL", "median per cycle");
	CHECK(w && w->status == DM_SAME);
	if (w) { /* +0.4 ms against 5% of the 100 ms cycle, marked so */
		char ch[32];

		CHECK_NEAR(w->est, 0.08, 0.002);
		CHECK(w->of_cycle);
		diff_fmt_change(ch, sizeof(ch), w);
		CHECK_STR_EQ(ch, "+20%"); /* its own change: 2 -> 2.4 ms */
	}
	cJSON *j = diff_to_json(&b, &n, &r), *rs = j ? cJSON_GetObjectItem(j, "rows") : NULL, *x;
	bool seen = false;
	cJSON_ArrayForEach(x, rs)
	{
		cJSON *nm = cJSON_GetObjectItem(x, "name"),
		      *k = cJSON_GetObjectItem(x, "change_kind");
		if (cJSON_IsString(nm) && !strcmp(nm->valuestring, "SQL") && cJSON_IsString(k)) {
			CHECK_STR_EQ(k->valuestring, "of-cycle");
			seen = true;
		}
	}
	CHECK(seen);
	cJSON_Delete(j);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);

	/* A small part that grew tenfold reads as its own change and what
	 * it adds to the cycle, not a starred percentage. */
	bs.sql_rows = 20; /* 0.2 ms of 100 ms */
	ns.sql_rows = 200;
	if (load(&bs, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "SQL", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION && w->of_cycle);
	{
		char buf[8192] = "";
		FILE *mf = fmemopen(buf, sizeof(buf) - 1, "w");

		diff_print_summary(mf, &b, &n, &r, 10);
		fclose(mf);
		CHECK(strstr(buf, "SQL 200.1 us -> 2.00 ms (+900%), +1.80 ms per cycle = +1.8% of "
				  "the cycle") != NULL);
		if (!strstr(buf, "+1.8% of the cycle"))
			fputs(buf, stderr);
	}
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);

	bs.sql_rows = 2000; /* 20 ms of 100 ms */
	ns.sql_rows = 2400;
	if (load(&bs, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "SQL", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION && !w->of_cycle);
	if (w)
		CHECK_NEAR(w->est, 0.2, 0.002);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

/* Tokens/s (higher is better) and Jetson energy per cycle, when present. */
static void test_tokens_and_power(void)
{
	struct spec bs = BASE, ns = BASE;
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;

	bs.tps = 100;
	bs.energy_mj = 400;
	ns.tps = 70;	    /* 30% fewer tokens/s */
	ns.energy_mj = 600; /* 50% more energy per cycle */
	if (load(&bs, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "tokens/s", "median per cycle");
	CHECK(w && w->better == DM_HIGHER && w->status == DM_REGRESSION);
	if (w)
		CHECK_NEAR(w->est, -0.3, 0.01);
	w = row(&r, DM_S_CYCLE, "GPU energy", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION && w->est > 0.45 && w->est < 0.55);
	w = row(&r, DM_S_CYCLE, "GPU power", "median per cycle");
	CHECK(w && w->status == DM_SAME);
	dm_result_free(&r);
	/* The other way round: improvements, no regression. */
	CHECK_INT_EQ(dm_compare(&n, &b, &o, &r), 0);
	CHECK_INT_EQ(r.regressions, 0);
	w = row(&r, DM_S_CYCLE, "tokens/s", "median per cycle");
	CHECK(w && w->status == DM_IMPROVEMENT);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

/* LLM prefill and decode as cycle components (cycles[].llm): the prefill
 * doubled, the decode the same; runs without llm have no such rows. */
static void test_llm_components(void)
{
	struct spec bs = BASE, ns = BASE;
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;

	bs.prefill_ms = 20;
	ns.prefill_ms = 40;
	if (load(&bs, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "LLM prefill", "median per cycle");
	CHECK(w && w->better == DM_LOWER && w->status == DM_REGRESSION);
	if (w)
		CHECK_NEAR(w->est, 1.0, 0.02);
	w = row(&r, DM_S_CYCLE, "LLM decode", "median per cycle");
	CHECK(w && w->status == DM_SAME);
	w = row(&r, DM_S_CYCLE, "time to first token", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION);
	dm_result_free(&r);
	dl_free(&n);
	/* Without llm (null or absent) in the new run: nothing to compare. */
	ns.prefill_ms = 0;
	if (load(&ns, "new", &n)) {
		CHECK(0);
		dl_free(&b);
		return;
	}
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "LLM prefill", "median per cycle");
	CHECK(!w || w->status != DM_REGRESSION);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

/* Wall time doubled with the same CPU work: a machine twice as busy (the
 * CPU share halved), not a regression, and a warning says so; the same
 * wall time with the CPU share kept (twice the work per cycle) is one. */
static void test_cpu_share(void)
{
	struct spec bs = BASE, busy = BASE, slow = BASE;
	struct dl_run b, n, m;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;

	bs.on_ms = 60;	    /* of 98 ms runnable: share 0.61 */
	busy.wall_ms = 200; /* same 60 ms on a CPU: share 0.31 */
	busy.on_ms = 60;
	slow.wall_ms = 200; /* 120 ms on a CPU: share 0.61 */
	slow.on_ms = 120;
	if (load(&bs, "base", &b) || load(&busy, "busy", &n) || load(&slow, "slow", &m)) {
		CHECK(0);
		return;
	}
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK_NEAR(r.share_base, 61e6 / 98e6, 0.02);
	CHECK_NEAR(r.share_new, 61e6 / 198e6, 0.02);
	w = row(&r, DM_S_CYCLE, "wall time", "median per cycle");
	CHECK(w && w->est > 0.9 && w->p < 1e-4); /* +100% raw, significant */
	CHECK(w && w->has_eq && fabs(w->est_eq) < 0.05 && w->status == DM_SAME);
	w = row(&r, DM_S_CYCLE, "unattributed", "median per cycle");
	CHECK(w && w->has_eq && w->status == DM_SAME);
	w = row(&r, DM_S_CYCLE, "on-CPU time", "median per cycle");
	CHECK(w && !w->has_eq && w->status == DM_SAME);
	CHECK_INT_EQ(r.regressions, 0);
	bool warned = false;
	for (size_t i = 0; i < r.nwarnings; i++)
		warned |= strstr(r.warnings[i], "much busier in busy (CPU share per cycle") != NULL;
	CHECK(warned);
	dm_result_free(&r);

	CHECK_INT_EQ(dm_compare(&b, &m, &o, &r), 0);
	w = row(&r, DM_S_CYCLE, "wall time", "median per cycle");
	CHECK(w && w->has_eq && w->est_eq > 0.9 && w->status == DM_REGRESSION);
	w = row(&r, DM_S_CYCLE, "on-CPU time", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION);
	CHECK_INT_EQ(r.nwarnings, 0);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
	dl_free(&m);
}

static void test_regression(void)
{
	struct spec ns = BASE;
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;

	ns.root = "/tmp/other-checkout/build";
	ns.unk_off = "0x2b3c";
	ns.program = "/tmp/other-checkout/build/app";
	ns.hot = 1200;	   /* twice the work */
	ns.wall_ms = 145;  /* and the cycles slower */
	ns.sql_rows = 200; /* ten times the rows */
	if (load(&BASE, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	CHECK(b.funcs_from_flame && n.funcs_from_flame);
	CHECK_INT_EQ(b.ncycles, 20);
	CHECK_STR_EQ(b.program, "app");
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(r.per_cycle);
	CHECK_INT_EQ(r.nwarnings, 0); /* same program name: no warning */

	/* Matched across paths: both sides present. */
	w = row(&r, DM_S_FUNCTION, "hot", "self");
	CHECK(w && isfinite(w->base) && isfinite(w->new));
	if (w) {
		CHECK_INT_EQ(w->status, DM_REGRESSION);
		CHECK_NEAR(w->base, 600 * 1e6 / 20, 1);
		/* 1200 vs 600 samples in 20 cycles each: +100%. */
		CHECK_NEAR(w->est, 1.0, 1e-9);
		CHECK(w->lo > 0.6 && w->lo < 1.0 && w->hi > 1.0 && w->hi < 1.5);
		CHECK(w->p < 1e-6);
		CHECK_STR_EQ(w->detail, "/tmp/other-checkout/build/app");
	}
	w = row(&r, DM_S_FUNCTION, "cold", "self");
	CHECK(w && w->status == DM_SAME && fabs(w->est) < 1e-9);
	w = row(&r, DM_S_FUNCTION, "[unknown] libx.so", "self");
	CHECK(w && isfinite(w->base) && isfinite(w->new) && w->status == DM_SAME);
	/* main's total grew, but totals do not gate. */
	w = row(&r, DM_S_FUNCTION, "main", "total");
	CHECK(w && w->status == DM_CHANGED && !w->gating);
	/* Per-cycle distributions. */
	w = row(&r, DM_S_CYCLE, "wall time", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION && w->test == DM_T_MWU);
	if (w) {
		CHECK_NEAR(w->base, 100e6, 1);
		CHECK_NEAR(w->est, 0.45, 1e-9);
		CHECK(w->lo <= 0.45 && w->hi >= 0.45);
	}
	/* on-CPU time follows the wall time in these reports. */
	w = row(&r, DM_S_CYCLE, "on-CPU time", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION);
	w = row(&r, DM_S_CYCLE, "SQL", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION);
	w = row(&r, DM_S_CYCLE, "inference", "median per cycle");
	CHECK(w && w->status == DM_SAME);
	/* Probes by label and library file name, SQL by text. */
	w = row(&r, DM_S_PROBE, "llama_decode", "calls per cycle");
	CHECK(w && w->base == 1 && w->new == 1 && w->status == DM_SAME);
	w = row(&r, DM_S_SQL, "INSERT INTO t VALUES(?1)", "executions per cycle");
	CHECK(w && w->base == 20 && w->new == 200 && w->status == DM_CHANGED);
	CHECK_INT_EQ(r.regressions, 4);

	/* --json */
	cJSON *j = diff_to_json(&b, &n, &r);
	CHECK(j != NULL);
	if (j) {
		char *txt = cJSON_PrintUnformatted(j);
		cJSON *back = txt ? cJSON_Parse(txt) : NULL; /* valid JSON (no NaN) */
		CHECK(back != NULL);
		CHECK_STR_EQ(cJSON_GetObjectItem(back, "schema")->valuestring, "ebpf-prof-diff/1");
		CHECK_STR_EQ(cJSON_GetObjectItem(back, "verdict")->valuestring, "regression");
		CHECK_STR_EQ(cJSON_GetObjectItem(back, "normalization")->valuestring, "per-cycle");
		CHECK_INT_EQ(cJSON_GetObjectItem(back, "regressions")->valueint, 4);
		const cJSON *x, *hot = NULL;
		cJSON_ArrayForEach(x, cJSON_GetObjectItem(back, "rows"))
		{
			if (!strcmp(cJSON_GetObjectItem(x, "name")->valuestring, "hot") &&
			    !strcmp(cJSON_GetObjectItem(x, "metric")->valuestring, "self"))
				hot = x;
		}
		CHECK(hot != NULL);
		if (hot) {
			const cJSON *ci = cJSON_GetObjectItem(hot, "ci95");
			CHECK_STR_EQ(cJSON_GetObjectItem(hot, "status")->valuestring, "regression");
			CHECK_STR_EQ(cJSON_GetObjectItem(hot, "test")->valuestring, "rate-ratio");
			CHECK_NEAR(cJSON_GetObjectItem(hot, "change")->valuedouble, 1.0, 1e-9);
			CHECK_NEAR(cJSON_GetObjectItem(hot, "base_share")->valuedouble,
				   600.0 / 1300, 1e-9);
			CHECK(cJSON_GetArraySize(ci) == 2 &&
			      cJSON_GetArrayItem(ci, 0)->valuedouble < 1.0 &&
			      cJSON_GetArrayItem(ci, 1)->valuedouble > 1.0);
		}
		/* diff.html: the page with the data, nothing fetched. */
		char *html = NULL;
		size_t hl = 0;
		FILE *f = open_memstream(&html, &hl);
		CHECK_INT_EQ(diff_html_write(f, j, &b, &n), 0); /* takes j */
		fclose(f);
		CHECK(html && strstr(html, "\"k\":\"u|hot|app\"") != NULL);
		CHECK(html && strstr(html, "@@DATA@@") == NULL);
		CHECK(html && strstr(html, "https://") == NULL);
		free(html);
		cJSON_Delete(back);
		free(txt);
	}
	/* Terminal summary names the function and the verdict. */
	char *out = NULL;
	size_t ol = 0;
	FILE *f = open_memstream(&out, &ol);
	diff_print_summary(f, &b, &n, &r, 10);
	fclose(f);
	CHECK(out && strstr(out, "Regressions (4)") && strstr(out, "hot (app)") &&
	      strstr(out, "+100.0%") && strstr(out, "Result: 4 regressions."));
	free(out);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

static void test_quiet_and_warnings(void)
{
	struct spec ns = BASE;
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;

	ns.hot = 590;
	ns.cold = 610;
	ns.wall_ms = 101;
	ns.program = "/usr/bin/other-program";
	if (load(&BASE, "base", &b) || load(&ns, "new", &n)) {
		CHECK(0);
		return;
	}
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK_INT_EQ(r.regressions, 0);
	CHECK_INT_EQ(r.improvements, 0);
	/* Different programs: warned, still compared. */
	CHECK(r.nwarnings == 1 && strstr(r.warnings[0], "different programs"));
	CHECK(row(&r, DM_S_FUNCTION, "hot", "self") != NULL);
	dm_result_free(&r);
	dl_free(&n);

	/* Per run: NEW without cycles -> shares of samples. */
	char *t = make_report(&BASE);
	char *c = strstr(t, "\"cycles\":[");
	memcpy(c, "\"cyclez\"", 8);
	char err[256];
	CHECK_INT_EQ(dl_load_text("new", t, strlen(t), &n, err, sizeof(err)), 0);
	free(t);
	CHECK_INT_EQ(n.ncycles, 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(!r.per_cycle);
	const struct dm_row *w = row(&r, DM_S_FUNCTION, "hot", "self");
	CHECK(w && w->test == DM_T_TWO_PROP && fabs(w->est) < 1e-9 && w->status == DM_SAME);
	CHECK(r.nwarnings >= 1);
	dm_result_free(&r);
	dl_free(&n);
	dl_free(&b);
}

/* An older report.json: flame frames without "module". */
static void test_old_report_without_modules(void)
{
	struct spec ns = BASE;
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	char *t = make_report(&BASE), err[256], *p;

	/* Remove the frames' modules ("module":"<root>/..." inside "frames"). */
	char *fr = strstr(t, "\"frames\":"), *end = strstr(t, "\"stacks\":");
	while ((p = strstr(fr, "\"module\":\"")) && p < end) {
		char *q = strchr(p + 10, '"');
		memmove(p, q + 2, strlen(q + 2) + 1); /* drop through the comma */
		end = strstr(t, "\"stacks\":");
	}
	CHECK_INT_EQ(dl_load_text("old", t, strlen(t), &b, err, sizeof(err)), 0);
	free(t);
	CHECK(!b.has_modules);
	ns.hot = 1200;
	CHECK_INT_EQ(load(&ns, "new", &n), 0);
	CHECK(n.has_modules);
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	const struct dm_row *w = row(&r, DM_S_FUNCTION, "hot", "self");
	CHECK(w && isfinite(w->base) && isfinite(w->new) && w->status == DM_REGRESSION);
	w = row(&r, DM_S_FUNCTION, "cold", "self");
	CHECK(w && w->status == DM_SAME);
	bool warned = false;
	for (size_t i = 0; i < r.nwarnings; i++)
		warned |= strstr(r.warnings[i], "matched by name only") != NULL;
	CHECK(warned);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

/* Sizes beyond real runs stay fast: 20000 cycles a side (the recorder's
 * cap), thousands of functions with one side lacking modules (the
 * name-only path), 2000 SQL statements. Bounded by the test timeout. */
static void test_large(void)
{
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	struct timespec t0, t1;
	char err[256];

	for (int side = 0; side < 2; side++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		fputs("{\"schema\":\"ebpf-prof/1\",\"sampling\":{\"period_ns\":1000000},"
		      "\"samples\":{\"total\":12000},\"cycles\":[",
		      f);
		for (int i = 0; i < 20000; i++) {
			long long w = 1000000 + (i * 7919) % 100000, t0 = i * 2000000LL;

			fprintf(f,
				"%s{\"index\":%d,\"start_ns\":%lld,\"end_ns\":%lld,\"wall_ns\":%lld,"
				"\"samples\":%d,\"sql_ns\":%d}",
				i ? "," : "", i, t0, t0 + w, w, 10 + i % 7, (i * 31) % 5000);
		}
		fputs("],\"flame\":{\"total\":12000,\"frames\":[", f);
		for (int i = 0; i < 6000; i++)
			fprintf(f, "%s{\"name\":\"fn%d\",\"module\":%s}", i ? "," : "", i % 4500,
				side ? "\"/x/app\"" : "null");
		fputs("],\"stacks\":[", f);
		for (int i = 0; i < 6000; i++)
			fprintf(f, "%s{\"f\":[%d,%d],\"n\":2}", i ? "," : "", i, (i + 1) % 6000);
		fputs("]},\"sql\":{\"statements\":[", f);
		for (int i = 0; i < 2000; i++)
			fprintf(f, "%s{\"text\":\"SELECT %d\",\"count\":%d}", i ? "," : "", i,
				1 + i % 3);
		fputs("]}}", f);
		fclose(f);
		CHECK_INT_EQ(dl_load_text(side ? "new" : "base", buf, len, side ? &n : &b, err,
					  sizeof(err)),
			     0);
		free(buf);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK(b.keys_without_module && n.keys_without_module);
	CHECK_INT_EQ(b.nfuncs, 4500); /* fn0..fn4499, duplicates merged */
	dm_default_opts(&o);
	o.min_share = 0; /* every function */
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "large comparison: %zu rows in %.2f s\n", r.nrows,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	CHECK_INT_EQ(r.regressions, 0);
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

static int load_err(const char *text, char *err, size_t len)
{
	struct dl_run r;
	int e = dl_load_text("d", text, strlen(text), &r, err, len);

	if (!e)
		dl_free(&r);
	return e;
}

static void test_bad_text(void)
{
	char err[512];
	char *t = make_report(&BASE);

	/* Truncated anywhere: one clear line. */
	for (size_t cut = 1; cut < strlen(t); cut += 97) {
		char save = t[cut];
		struct dl_run r;

		t[cut] = 0;
		err[0] = 0;
		int e = dl_load_text("d", t, cut, &r, err, sizeof(err));
		CHECK_INT_EQ(e, -EINVAL);
		CHECK(strstr(err, "d/report.json: not valid JSON (truncated") != NULL);
		if (!e)
			dl_free(&r);
		t[cut] = save;
	}
	free(t);
	CHECK_INT_EQ(load_err("{\"schema\":\"ebpf-prof/2\"}", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "schema \"ebpf-prof/2\" is not supported") != NULL);
	CHECK_INT_EQ(load_err("{\"version\":\"1\"}", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not an ebpf-prof report") != NULL);
	CHECK_INT_EQ(load_err("[1,2]", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a JSON object") != NULL);
	struct dl_run r;
	CHECK_INT_EQ(dl_load_text("d", "", 0, &r, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "empty") != NULL);

	/* Hostile strings: markup, invalid UTF-8, a NUL, terminal escape
	 * sequences (ESC, BEL, the C1 CSI): loaded, cleaned of every control
	 * character, the outputs still valid. Wrong types and ranges are
	 * refused instead: test_report_read.c. */
	const char *hostile =
		"{\"schema\":\"ebpf-prof/1\",\"target\":{\"command\":"
		"\"/bin/\\u001b]0;owned\\u0007app\\u001b[2J --flag\"},"
		"\"sampling\":{\"period_ns\":1000000},\"samples\":{\"total\":10},"
		"\"flame\":{\"total\":10,\"frames\":[{\"name\":\"ok\\u0000x\"},{\"name\":"
		"\"</script><b>\xff\xfe\\u009b31m\",\"module\":\"m\\u001b\"}],"
		"\"stacks\":[{\"f\":[0,1],\"n\":10}]}}";
	CHECK_INT_EQ(dl_load_text("h", hostile, strlen(hostile), &r, err, sizeof(err)), 0);
	CHECK_INT_EQ(r.func_samples, 10);
	CHECK(r.command && !strpbrk(r.command, "\x1b\x07") && strstr(r.command, "app"));
	CHECK(r.program && !strpbrk(r.program, "\x1b\x07"));
	for (size_t i = 0; i < r.nfuncs; i++) {
		CHECK(r.funcs[i].self <= r.funcs[i].total && r.funcs[i].total <= r.func_samples);
		CHECK(!strpbrk(r.funcs[i].name, "\x1b\x07") &&
		      !strstr(r.funcs[i].name, "\xc2\x9b"));
		CHECK(!r.funcs[i].module || !strchr(r.funcs[i].module, 0x1b));
	}
	struct dl_run r2;
	CHECK_INT_EQ(dl_load_text("h2", hostile, strlen(hostile), &r2, err, sizeof(err)), 0);
	struct dm_opts o;
	struct dm_result res;
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&r, &r2, &o, &res), 0);
	CHECK_INT_EQ(res.regressions, 0);
	cJSON *j = diff_to_json(&r, &r2, &res);
	char *html = NULL;
	size_t hl = 0;
	FILE *f = open_memstream(&html, &hl);
	CHECK_INT_EQ(diff_html_write(f, j, &r, &r2), 0);
	fclose(f);
	/* The markup in a name stays inside the data script. */
	CHECK(html && strstr(html, "</script><b>") == NULL);
	CHECK(html && strstr(html, "\\u003c/script\\u003e\\u003cb\\u003e") != NULL);
	for (size_t i = 0; html && i + 4 < hl; i++) {
		size_t n = utf8_seq_len((const unsigned char *)html + i, hl - i);
		CHECK(n > 0);
		if (n > 1)
			i += n - 1;
		if (!n)
			break;
	}
	free(html);
	dm_result_free(&res);
	dl_free(&r);
	dl_free(&r2);
}

static void test_bad_files(void)
{
	char tmpl[] = "/tmp/ep-diff-test.XXXXXX", path[512], err[512];
	struct dl_run r;
	char *dir = mkdtemp(tmpl);

	CHECK(dir != NULL);
	if (!dir)
		return;
	/* No such directory, a file instead of a directory. */
	snprintf(path, sizeof(path), "%s/nope", dir);
	CHECK_INT_EQ(dl_load(path, &r, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "No such file") != NULL);
	/* A directory without report.json. */
	CHECK_INT_EQ(dl_load(dir, &r, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "no report.json") != NULL);
	/* A FIFO: refused at once, not waited on. */
	snprintf(path, sizeof(path), "%s/report.json", dir);
	CHECK_INT_EQ(mkfifo(path, 0600), 0);
	CHECK_INT_EQ(dl_load(dir, &r, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a regular file") != NULL);
	unlink(path);
	/* A directory named report.json. */
	CHECK_INT_EQ(mkdir(path, 0700), 0);
	CHECK(dl_load(dir, &r, err, sizeof(err)) < 0);
	rmdir(path);
	/* Huge (sparse): refused before reading. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_INT_EQ(ftruncate(fd, (off_t)DL_MAX_BYTES + 1), 0);
	close(fd);
	CHECK_INT_EQ(dl_load(dir, &r, err, sizeof(err)), -EFBIG);
	CHECK(strstr(err, "more than a report.json can be") != NULL);
	/* Truncated on disk. */
	char *t = make_report(&BASE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(write(fd, t, strlen(t) / 2) > 0);
	close(fd);
	CHECK_INT_EQ(dl_load(dir, &r, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "truncated") != NULL);
	/* Whole: loads; BASE_DIR given as the file: not a directory. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
	close(fd);
	free(t);
	CHECK_INT_EQ(dl_load(dir, &r, err, sizeof(err)), 0);
	dl_free(&r);
	CHECK_INT_EQ(dl_load(path, &r, err, sizeof(err)), -ENOTDIR);
	unlink(path);
	rmdir(dir);
}

static void test_func_key(void)
{
	char *k = dl_func_key("[unknown] /usr/lib/libx.so.1+0x1a2b", "/usr/lib/libx.so.1", false);
	CHECK_STR_EQ(k, "u|[unknown] libx.so.1|libx.so.1");
	free(k);
	k = dl_func_key("schedule", "[kernel.kallsyms]", true);
	CHECK_STR_EQ(k, "k|schedule|[kernel.kallsyms]");
	free(k);
	k = dl_func_key("f", NULL, false);
	CHECK_STR_EQ(k, "u|f|");
	free(k);
}

/* The embedded page is its source with the shared prelude, byte for byte,
 * the prelude's helpers once (not also the page's own). */
static void test_page_embedded(void)
{
	const char *src = getenv("EP_SOURCE_DIR");
	const char *el = strstr(diff_html_page, "function el("),
		   *num = strstr(diff_html_page, "function num(");

	if (src) {
		char *want = ep_page_from_sources(src, "user/diff/diff_html_page.html");

		CHECK_STR_EQ(diff_html_page, want);
		free(want);
	}
	CHECK(strstr(diff_html_page, "@@DATA@@") != NULL);
	CHECK(strstr(diff_html_page, "@@PRELUDE@@") == NULL);
	CHECK(el != NULL && strstr(el + 1, "function el(") == NULL);
	CHECK(num != NULL && strstr(num + 1, "function num(") == NULL);
}

/* A fixed-work run without cycles, launched as "DIR/PROG 600": main calls
 * alpha, beta and gamma_, each spins (the shared leaf) and calls delta,
 * which spins too; beta spins beta x the others. */
/* own: samples of each function's own spin (300); build_id: the program's
 * in report.json's modules, NULL none. */
static char *make_fixed_ex(const char *dir, const char *prog, int beta, const char *args,
			   int status, int own, const char *build_id)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const int del = 100;
	int total = 3 * own + 3 * del + (beta - 1) * own;

	fprintf(f,
		"{\"schema\":\"ebpf-prof/1\",\"version\":\"t\","
		"\"target\":{\"launched\":true,\"command\":\"%s/%s %s\",\"exit_status\":%d,"
		"\"processes\":[{\"pid\":1,\"comm\":\"%s\"}]},",
		dir, prog, args, status, prog);
	if (build_id)
		fprintf(f, "\"modules\":[{\"path\":\"%s/%s\",\"build_id\":\"%s\",\"samples\":%d}],",
			dir, prog, build_id, total);
	fprintf(f,
		"\"time\":{\"duration_ns\":%d},"
		"\"sampling\":{\"frequency_hz\":500,\"period_ns\":2000000},"
		"\"samples\":{\"total\":%d},"
		"\"flame\":{\"unit\":\"samples\",\"total\":%d,\"frames\":[",
		1000000 * (own + 700), total, total);
	const char *names[] = { "main", "alpha", "beta", "gamma_", "delta", "spin" };
	for (int i = 0; i < 6; i++)
		fprintf(f, "%s{\"name\":\"%s\",\"module\":\"%s/%s\",\"kernel\":false}",
			i ? "," : "", names[i], dir, prog);
	fprintf(f,
		"],\"stacks\":[{\"f\":[0,1,5],\"n\":%d},{\"f\":[0,1,4,5],\"n\":%d},"
		"{\"f\":[0,2,5],\"n\":%d},{\"f\":[0,2,4,5],\"n\":%d},"
		"{\"f\":[0,3,5],\"n\":%d},{\"f\":[0,3,4,5],\"n\":%d}]}}",
		own, del, beta * own, del, own, del);
	fclose(f);
	return buf;
}

static char *make_fixed(const char *dir, const char *prog, int beta, const char *args, int status)
{
	return make_fixed_ex(dir, prog, beta, args, status, 300, NULL);
}

static int load_fixed(const char *name, const char *dir, const char *prog, int beta,
		      const char *args, int status, struct dl_run *r)
{
	char *t = make_fixed(dir, prog, beta, args, status), err[512] = "";
	int e = dl_load_text(name, t, strlen(t), r, err, sizeof(err));

	if (e)
		fprintf(stderr, "load %s: %s\n", name, err);
	free(t);
	return e;
}

/* The fixed-work run (one build) with timer interrupts on top of spin:
 * irq samples under asm_sysvec_apic_timer_interrupt, all of them in the
 * shared irqentry_exit_to_user_mode, which asm_common_interrupt calls too
 * (20 samples). */
static int load_fixed_irq(const char *name, int irq, struct dl_run *r)
{
	char *t = make_fixed("/ci/build", "app", 1, "600", 0), err[512] = "", *tail, *buf = NULL;
	size_t len = 0;
	FILE *f;
	int e = -ENOMEM;

	tail = t ? strstr(t, "],\"stacks\":[") : NULL;
	f = tail ? open_memstream(&buf, &len) : NULL;
	if (f) {
		/* The frames 6-9 after the program's, the stacks after its own. */
		fprintf(f,
			"%.*s,{\"name\":\"asm_sysvec_apic_timer_interrupt\",\"module\":\"[kernel."
			"kallsyms]\",\"kernel\":true},{\"name\":\"irqentry_exit_to_user_mode\","
			"\"module\":\"[kernel.kallsyms]\",\"kernel\":true},{\"name\":"
			"\"asm_common_interrupt\",\"module\":\"[kernel.kallsyms]\",\"kernel\":true},"
			"{\"name\":\"__schedule\",\"module\":\"[kernel.kallsyms]\",\"kernel\":true}",
			(int)(tail - t), t);
		fprintf(f, "%.*s,{\"f\":[0,1,5,6,7],\"n\":%d},{\"f\":[0,3,5,8,7],\"n\":20}]}}",
			(int)(strlen(tail) - 3), tail, irq);
		fclose(f);
		e = buf ? dl_load_text(name, buf, strlen(buf), r, err, sizeof(err)) : -ENOMEM;
		if (e)
			fprintf(stderr, "load %s: %s\n", name, err);
	}
	free(buf);
	free(t);
	return e;
}

/* A kernel entry path that grew (the machine's load: more timer interrupts
 * ending in a reschedule) through a shared kernel callee is never named as
 * a regression along a path: its growth is not the program's code. */
static void test_kernel_path_not_named(void)
{
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;

	if (load_fixed_irq("base", 5, &b) || load_fixed_irq("new", 40, &n)) {
		CHECK(0);
		return;
	}
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_FUNCTION, "asm_sysvec_apic_timer_interrupt", "total");
	CHECK(w != NULL);
	if (w) {
		/* Significant and via the shared callee, yet not a regression. */
		CHECK(w->p < 0.001);
		CHECK(w->status == DM_CHANGED);
	}
	dm_result_free(&r);
	dl_free(&b);
	dl_free(&n);
}

/* Fixed work without cycles, new build's beta doing twice the work: the
 * run's CPU time and beta's total gate, beta named "via spin"; alpha,
 * gamma_, delta not; main's growth is beta's (changed, not named). The same
 * with the new build in another folder under another name. Two runs of one
 * build: nothing. Other arguments: not the same work, shares compared. */
static void test_fixed_work(void)
{
	const struct {
		const char *dir, *prog;
	} news[] = { { "/ci/build", "app" }, { "/ci/build-new", "app" }, { "/ci/b2", "app-v2" } };

	for (size_t k = 0; k < sizeof(news) / sizeof(news[0]); k++) {
		struct dl_run b, n;
		struct dm_opts o;
		struct dm_result r;
		const struct dm_row *w;

		if (load_fixed("base", "/ci/build", "app", 1, "600", 0, &b) ||
		    load_fixed("new", news[k].dir, news[k].prog, 2, "600", 0, &n)) {
			CHECK(0);
			return;
		}
		CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
		CHECK(b.main_as_program && n.main_as_program);
		dm_default_opts(&o);
		CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
		CHECK(r.same_work && !r.per_cycle);
		w = row(&r, DM_S_RUN, "CPU time (samples)", "per run");
		CHECK(w && w->test == DM_T_RATE && w->gating && w->status == DM_REGRESSION);
		w = row(&r, DM_S_FUNCTION, "beta", "total");
		CHECK(w && w->status == DM_REGRESSION && w->via && !strcmp(w->via, "spin"));
		if (w)
			CHECK_NEAR(w->est, 300.0 / 400, 1e-9); /* 400 -> 700 samples */
		const char *quiet[] = { "alpha", "gamma_", "delta" };
		for (size_t i = 0; i < 3; i++) {
			w = row(&r, DM_S_FUNCTION, quiet[i], "total");
			CHECK(w && w->status == DM_SAME);
		}
		w = row(&r, DM_S_FUNCTION, "main", "total");
		CHECK(w && w->status == DM_CHANGED && w->via && !strcmp(w->via, "beta"));
		w = row(&r, DM_S_FUNCTION, "spin", "self");
		CHECK(w && w->status == DM_REGRESSION);
		CHECK_INT_EQ(r.regressions, 3); /* run CPU, spin self, beta via spin */
		CHECK(r.program_note != NULL);
		if (r.program_note)
			CHECK(strstr(r.program_note, k ? "another file" : "in both runs") != NULL);
		bool named_warn = false;
		for (size_t i = 0; i < r.nwarnings; i++)
			named_warn |= strstr(r.warnings[i], "named differently") != NULL;
		CHECK(named_warn == (k == 2));
		char buf[4096] = "";
		FILE *mf = fmemopen(buf, sizeof(buf) - 1, "w");
		diff_print_summary(mf, &b, &n, &r, 10);
		fclose(mf);
		CHECK(strstr(buf, "beta (via spin)") != NULL);
		dm_result_free(&r);
		dl_free(&b);
		dl_free(&n);
	}

	/* A caller that starts calling the shared leaf (beta spun not at all
	 * before): named via it too. */
	{
		struct dl_run b0, n1;
		struct dm_opts o0;
		struct dm_result r0;

		if (load_fixed("base", "/ci/build", "app", 0, "600", 0, &b0) ||
		    load_fixed("new", "/ci/build", "app", 1, "600", 0, &n1)) {
			CHECK(0);
			return;
		}
		CHECK_INT_EQ(dl_align_keys(&b0, &n1), 0);
		dm_default_opts(&o0);
		CHECK_INT_EQ(dm_compare(&b0, &n1, &o0, &r0), 0);
		const struct dm_row *w0 = row(&r0, DM_S_FUNCTION, "beta", "total");
		CHECK(w0 && w0->status == DM_REGRESSION && w0->via && !strcmp(w0->via, "spin"));
		dm_result_free(&r0);
		dl_free(&b0);
		dl_free(&n1);
	}

	/* One build twice: quiet, whole-run figures tested. */
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;

	if (load_fixed("base", "/ci/build", "app", 1, "600", 0, &b) ||
	    load_fixed("new", "/ci/build", "app", 1, "600", 0, &n)) {
		CHECK(0);
		return;
	}
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(r.same_work);
	CHECK_INT_EQ(r.regressions, 0);
	CHECK_INT_EQ(r.improvements, 0);
	dm_result_free(&r);
	dl_free(&n);

	/* Other arguments, or a run that failed: not the same work. */
	if (load_fixed("new", "/ci/build", "app", 2, "900", 0, &n)) {
		CHECK(0);
		dl_free(&b);
		return;
	}
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(!r.same_work);
	const struct dm_row *w = row(&r, DM_S_FUNCTION, "spin", "self");
	CHECK(w && w->test == DM_T_TWO_PROP);
	w = row(&r, DM_S_RUN, "CPU time (samples)", "per run");
	CHECK(w && w->test == DM_T_NONE && w->status == DM_UNTESTED);
	dm_result_free(&r);
	dl_free(&n);
	if (load_fixed("new", "/ci/build", "app", 2, "600", 1, &n)) {
		CHECK(0);
		dl_free(&b);
		return;
	}
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(!r.same_work);
	dm_result_free(&r);
	dl_free(&n);
	dl_free(&b);
}

/* One side of k fixed-work runs: own samples per run from owns[]. */
static int load_side(const char *const *names, size_t k, const char *dir, int beta, const int *owns,
		     const char *const *ids, const char *const *args, struct dl_run *r, char *err,
		     size_t errlen)
{
	char *t[4] = { 0 };
	size_t lens[4];
	int e = -ENOMEM;

	for (size_t j = 0; j < k; j++) {
		if (!(t[j] = make_fixed_ex(dir, "app", beta, args ? args[j] : "600", 0, owns[j],
					   ids ? ids[j] : NULL)))
			goto out;
		lens[j] = strlen(t[j]);
	}
	e = dl_load_side_text(names, (const char *const *)t, lens, k, r, err, errlen);
out:
	for (size_t j = 0; j < k; j++)
		free(t[j]);
	return e;
}

/* Several runs per side: summed profiles, figures per run (the mean), the
 * noise from the runs' spread; build-ids say whether the program changed. */
static void test_several_runs(void)
{
	const char *bn[] = { "b1", "b2" }, *nn[] = { "n1", "n2" };
	const int ob[] = { 300, 306 }, on[] = { 303, 297 };
	const char *same_id[] = { "aa11", "aa11" }, *new_id[] = { "bb22", "bb22" };
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;
	char err[512] = "";

	dm_default_opts(&o);
	/* One build, two runs a side, rebuilt in place (same path). */
	if (load_side(bn, 2, "/ci/build", 1, ob, same_id, NULL, &b, err, sizeof(err)) ||
	    load_side(nn, 2, "/ci/build", 1, on, same_id, NULL, &n, err, sizeof(err))) {
		fprintf(stderr, "load: %s\n", err);
		CHECK(0);
		return;
	}
	CHECK_INT_EQ((int)b.nruns, 2);
	CHECK(b.runs != NULL && !strcmp(b.dir, "b1 + b2"));
	/* 300 + 306 own samples: 3 x own + 300 delta per run, summed. */
	CHECK_INT_EQ((int)b.samples, 3 * 300 + 300 + 3 * 306 + 300);
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(r.same_work);
	CHECK_INT_EQ(r.regressions, 0);
	CHECK_INT_EQ(r.program_changed, 0);
	CHECK(r.program_note && strstr(r.program_note, "the same build (build-id aa11)"));
	w = row(&r, DM_S_RUN, "CPU time (samples)", "per run");
	CHECK(w && w->test == DM_T_RATE && w->gating && w->status == DM_SAME);
	if (w) {
		/* The mean per run at 2 ms a sample. */
		CHECK_NEAR(w->base, (1200.0 + 1218.0) / 2 * 2e6, 1e-3);
		CHECK(isfinite(w->sd_base) && isfinite(w->sd_new));
	}
	w = row(&r, DM_S_RUN, "duration", "per run");
	CHECK(w && w->test == DM_T_RUN_MEANS && !w->gating);
	w = row(&r, DM_S_FUNCTION, "beta", "total");
	CHECK(w && w->status == DM_SAME && isfinite(w->sd_base));
	cJSON *j = diff_to_json(&b, &n, &r);
	const cJSON *base = cJSON_GetObjectItemCaseSensitive(j, "base");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(base, "runs")) == 2);
	CHECK(cJSON_GetObjectItemCaseSensitive(base, "nruns")->valuedouble == 2);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "program_changed")));
	cJSON_Delete(j);
	char buf[8192] = "";
	FILE *mf = fmemopen(buf, sizeof(buf) - 1, "w");
	diff_print_summary(mf, &b, &n, &r, 10);
	fclose(mf);
	CHECK(strstr(buf, "(2 runs: mean, sd)") != NULL);
	dm_result_free(&r);
	dl_free(&n);

	/* The new build (beta 2x), in place: beta via spin, CPU time; the
	 * build-id tells the rebuild. */
	if (load_side(nn, 2, "/ci/build", 2, on, new_id, NULL, &n, err, sizeof(err))) {
		CHECK(0);
		dl_free(&b);
		return;
	}
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	w = row(&r, DM_S_FUNCTION, "beta", "total");
	CHECK(w && w->status == DM_REGRESSION && w->via && !strcmp(w->via, "spin"));
	w = row(&r, DM_S_RUN, "CPU time (samples)", "per run");
	CHECK(w && w->status == DM_REGRESSION);
	CHECK_INT_EQ(r.program_changed, 1);
	CHECK(r.program_note && strstr(r.program_note, "rebuilt in place"));
	dm_result_free(&r);
	dl_free(&n);

	/* Runs of the new side with other arguments: not the same work, said. */
	const char *args[] = { "600", "900" };
	if (load_side(nn, 2, "/ci/build", 1, on, NULL, args, &n, err, sizeof(err))) {
		CHECK(0);
		dl_free(&b);
		return;
	}
	CHECK(n.side_note && strstr(n.side_note, "same command"));
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(!r.same_work);
	CHECK_INT_EQ(r.program_changed, -1);
	dm_result_free(&r);
	dl_free(&n);
	dl_free(&b);

	/* Runs of one side sampled at other periods, or one with cycles:
	 * refused, naming both. */
	char *t1 = make_fixed("/ci/build", "app", 1, "600", 0), *t2 = strdup(t1), *p;
	if ((p = strstr(t2, "2000000}")))
		memcpy(p, "1000000}", 8);
	const char *tt[] = { t1, t2 };
	size_t ll[] = { strlen(t1), strlen(t2) };
	CHECK_INT_EQ(dl_load_side_text(bn, tt, ll, 2, &b, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "b1/report.json and b2/report.json: sampling periods differ") != NULL);
	free(t1);
	free(t2);
}

/* Several runs a side with cycles: the cycles of both runs compared, the
 * run-level noise from the spread of the runs' medians, functions per
 * cycle from the runs' rates. Equal runs quiet; slower cycles and twice
 * the hot function's work found. */
static void test_several_runs_cycles(void)
{
	struct spec s1 = BASE, s2 = BASE, n1 = BASE, n2 = BASE;
	char *t[4];
	struct dl_run b, n;
	struct dm_opts o;
	struct dm_result r;
	const struct dm_row *w;
	char err[512] = "";
	const char *bn[] = { "b1", "b2" }, *nn[] = { "n1", "n2" };

	s2.wall_ms = 101;
	s2.hot = 610;
	n1.hot = 1200;
	n1.wall_ms = 145;
	n2 = n1;
	n2.wall_ms = 146;
	t[0] = make_report(&s1);
	t[1] = make_report(&s2);
	t[2] = make_report(&n1);
	t[3] = make_report(&n2);
	size_t l[4] = { strlen(t[0]), strlen(t[1]), strlen(t[2]), strlen(t[3]) };
	dm_default_opts(&o);
	if (dl_load_side_text(bn, (const char *const *)t, l, 2, &b, err, sizeof(err)) ||
	    dl_load_side_text(nn, (const char *const *)t + 2, l + 2, 2, &n, err, sizeof(err))) {
		fprintf(stderr, "load: %s\n", err);
		CHECK(0);
		goto out;
	}
	CHECK_INT_EQ((int)b.ncycles, 40);
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK(r.per_cycle);
	w = row(&r, DM_S_CYCLE, "wall time", "median per cycle");
	CHECK(w && w->status == DM_REGRESSION && isfinite(w->sd_base) && isfinite(w->sd_new));
	w = row(&r, DM_S_FUNCTION, "hot", "self");
	CHECK(w && w->status == DM_REGRESSION && isfinite(w->sd_base));
	if (w) /* per cycle: (600 + 610) samples over 40 cycles at 1 ms */
		CHECK_NEAR(w->base, 1210 * 1e6 / 40, 1);
	dm_result_free(&r);
	/* The base side against itself as two other runs: quiet. */
	dl_free(&n);
	if (dl_load_side_text(nn, (const char *const *)t, l, 2, &n, err, sizeof(err))) {
		CHECK(0);
		dl_free(&b);
		goto out;
	}
	CHECK_INT_EQ(dl_align_keys(&b, &n), 0);
	CHECK_INT_EQ(dm_compare(&b, &n, &o, &r), 0);
	CHECK_INT_EQ(r.regressions, 0);
	dm_result_free(&r);
	dl_free(&n);
	dl_free(&b);
out:
	for (int i = 0; i < 4; i++)
		free(t[i]);
}

int main(void)
{
	test_several_runs();
	test_several_runs_cycles();
	test_fixed_work();
	test_kernel_path_not_named();
	test_small_component();
	test_func_key();
	test_regression();
	test_quiet_and_warnings();
	test_old_report_without_modules();
	test_tokens_and_power();
	test_llm_components();
	test_cpu_share();
	test_large();
	test_bad_text();
	test_bad_files();
	test_page_embedded();
	return check_report("test_diff_model");
}
