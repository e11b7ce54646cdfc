// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ebpf-prof report` and `ebpf-prof diff` read report.json through one
 * reader: hostile variants of a good file (wrong types, out of range,
 * missing sampling, frame indexes outside the table) are refused by both
 * with the same one line naming the file and the field, and by both
 * commands with exit 1; a symlinked report.json is refused by both;
 * counts that sum past 2^64 saturate instead of wrapping; control
 * characters from the file (a command line with terminal escapes) never
 * reach the terminal. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "diff/diff_cmd.h"
#include "diff/diff_load.h"
#include "diff/diff_model.h"
#include "report/report_cmd.h"
#include "report/report_read.h"

/* A small good report: two cycles, a flame of three frames, a probe, a
 * statement, a finding; every section the readers look at. */
static const char GOOD[] =
	"{\"schema\":\"ebpf-prof/1\",\"version\":\"t\","
	"\"target\":{\"command\":\"./app --x\",\"pids\":[10],"
	"\"processes\":[{\"pid\":10,\"comm\":\"app\",\"cmdline\":\"./app --x\"}]},"
	"\"time\":{\"start_monotonic_ns\":1000,\"end_monotonic_ns\":2000001000,"
	"\"duration_ns\":2000000000},"
	"\"sampling\":{\"frequency_hz\":1000,\"period_ns\":1000000},"
	"\"samples\":{\"total\":30},"
	"\"top_functions\":[{\"name\":\"hot\",\"module\":\"/x/app\",\"kernel\":false,"
	"\"self\":20,\"total\":25}],"
	"\"modules\":[{\"path\":\"/x/app\",\"build_id\":\"0a1b2c3d\",\"samples\":30},"
	"{\"path\":\"/x/lib.so\",\"build_id\":null,\"samples\":2}],"
	"\"flame\":{\"total\":30,\"frames\":[{\"name\":\"main\",\"module\":\"/x/app\","
	"\"kernel\":false},{\"name\":\"hot\",\"module\":\"/x/app\",\"kernel\":false}],"
	"\"stacks\":[{\"f\":[0,1],\"n\":20},{\"f\":[0],\"n\":10}]},"
	"\"probes\":{\"list\":[{\"label\":\"step\",\"library\":\"/x/app\",\"group\":\"other\","
	"\"count\":2,\"total_ns\":1000,\"p50_ns\":500,\"p99_ns\":600}],"
	"\"tokens\":{\"count\":0}},"
	"\"sql\":{\"statements\":[{\"text\":\"SELECT 1\",\"count\":3,\"rows\":3,"
	"\"total_ns\":300,\"p50_ns\":100,\"p99_ns\":120}]},"
	"\"throttling\":{\"throttled_share\":0},"
	"\"sched\":{\"off_cpu_by_reason\":{\"sleep\":5}},"
	"\"cycles_whole_run\":false,"
	"\"cycles\":[{\"index\":0,\"start_ns\":1000,\"end_ns\":1001000,\"wall_ns\":1000000,"
	"\"samples\":1,\"top_functions\":[{\"name\":\"hot\",\"samples\":1}]},"
	"{\"index\":1,\"start_ns\":1001000,\"end_ns\":2001000,\"wall_ns\":1000000,"
	"\"samples\":1,\"gpu\":null}],"
	"\"findings\":[{\"rule\":\"slow_cycles\",\"severity\":\"info\",\"title\":\"t\","
	"\"evidence\":\"e\",\"recommendation\":\"r\",\"cycles\":[1]}]}";

/* src with the first `from` replaced by `to` (malloc'ed). */
static char *subst(const char *src, const char *from, const char *to)
{
	const char *at = src ? strstr(src, from) : NULL;
	char *s = NULL;

	if (!at) {
		fprintf(stderr, "fixture: '%s' not found\n", from);
		return NULL;
	}
	if (asprintf(&s, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from)) < 0)
		return NULL;
	return s;
}

static char *variant(const char *from, const char *to)
{
	return subst(GOOD, from, to);
}

static const struct {
	const char *from, *to, *msg; /* msg after "DIR/report.json: " */
} BAD[] = {
	{ "\"sampling\":{\"frequency_hz\":1000,\"period_ns\":1000000},", "", "sampling: missing" },
	{ "\"period_ns\":1000000", "\"period_ns\":null", "sampling.period_ns: missing" },
	{ "\"period_ns\":1000000", "\"period_ns\":0",
	  "sampling.period_ns: 0 is not a sampling period in ns" },
	{ "\"period_ns\":1000000", "\"period_ns\":-5",
	  "sampling.period_ns: -5 is not a sampling period in ns" },
	{ "\"sampling\":{", "\"sampling\":7,\"x\":{", "sampling: not an object" },
	{ "\"samples\":{\"total\":30},", "", "samples: missing" },
	{ "\"samples\":{\"total\":30}", "\"samples\":{\"total\":1e300}",
	  "samples.total: 1e+300 out of range (0 to 2^64)" },
	{ "\"samples\":{\"total\":30}", "\"samples\":{\"total\":-1}",
	  "samples.total: -1 out of range (0 to 2^64)" },
	{ "\"command\":\"./app --x\"", "\"command\":7", "target.command: not a string" },
	{ "\"pids\":[10]", "\"pids\":[10,\"x\"]", "target.pids[1]: not a number" },
	{ "\"duration_ns\":2000000000", "\"duration_ns\":\"long\"",
	  "time.duration_ns: not a number" },
	{ "\"self\":20,\"total\":25", "\"self\":-20,\"total\":25",
	  "top_functions[0].self: -20 out of range (0 to 2^64)" },
	{ "\"kernel\":false,\"self\"", "\"kernel\":0,\"self\"",
	  "top_functions[0].kernel: not a boolean" },
	{ "\"flame\":{", "\"flame\":[],\"x\":{", "flame: not an object" },
	{ "\"modules\":[", "\"modules\":\"x\",\"m\":[", "modules: not an array" },
	{ "\"path\":\"/x/app\"", "\"path\":7", "modules[0].path: not a string" },
	{ "\"build_id\":\"0a1b2c3d\"", "\"build_id\":\"0A1B2C3D\"",
	  "modules[0].build_id: not a build-id (2 to 128 lowercase hex digits)" },
	{ "\"build_id\":\"0a1b2c3d\"", "\"build_id\":\"0a1b2c3\"",
	  "modules[0].build_id: not a build-id (2 to 128 lowercase hex digits)" },
	{ "\"build_id\":\"0a1b2c3d\"", "\"build_id\":\"\"",
	  "modules[0].build_id: not a build-id (2 to 128 lowercase hex digits)" },
	{ "\"build_id\":\"0a1b2c3d\"", "\"build_id\":12",
	  "modules[0].build_id: not a build-id (2 to 128 lowercase hex digits)" },
	{ "\"build_id\":\"0a1b2c3d\",\"samples\":30", "\"build_id\":\"0a1b2c3d\",\"samples\":-3",
	  "modules[0].samples: -3 out of range (0 to 2^64)" },
	{ "\"stacks\":[{\"f\":[0,1],\"n\":20}", "\"stacks\":[{\"f\":[0,1,99],\"n\":20}",
	  "flame.stacks[0].f[2]: 99 is not an index of flame.frames (2 of them)" },
	{ "\"stacks\":[{\"f\":[0,1],\"n\":20}", "\"stacks\":[{\"f\":[0,1.5],\"n\":20}",
	  "flame.stacks[0].f[1]: 1.5 is not an index of flame.frames (2 of them)" },
	{ "\"stacks\":[{\"f\":[0,1],\"n\":20}", "\"stacks\":[{\"f\":[-1],\"n\":20}",
	  "flame.stacks[0].f[0]: -1 is not an index of flame.frames (2 of them)" },
	{ "{\"f\":[0],\"n\":10}", "{\"f\":[0],\"n\":-4}",
	  "flame.stacks[1].n: -4 out of range (0 to 2^64)" },
	{ "{\"f\":[0],\"n\":10}", "{\"f\":7,\"n\":10}", "flame.stacks[1].f: not an array" },
	{ "{\"name\":\"main\",\"module\":\"/x/app\"", "{\"name\":\"main\",\"module\":5",
	  "flame.frames[0].module: not a string" },
	{ "\"count\":2,\"total_ns\":1000", "\"count\":\"many\",\"total_ns\":1000",
	  "probes.list[0].count: not a number" },
	{ "\"count\":2,\"total_ns\":1000", "\"count\":2,\"total_ns\":1e400",
	  "probes.list[0].total_ns: inf out of range (0 to 2^64)" },
	{ "\"label\":\"step\"", "\"label\":[\"step\"]", "probes.list[0].label: not a string" },
	{ "\"text\":\"SELECT 1\",\"count\":3", "\"text\":\"SELECT 1\",\"count\":-2",
	  "sql.statements[0].count: -2 out of range (0 to 2^64)" },
	{ "\"text\":\"SELECT 1\"", "\"text\":5", "sql.statements[0].text: not a string" },
	{ "\"throttled_share\":0", "\"throttled_share\":9",
	  "throttling.throttled_share: 9 out of range (0 to 1)" },
	{ "\"off_cpu_by_reason\":{\"sleep\":5}", "\"off_cpu_by_reason\":{\"sleep\":\"x\"}",
	  "sched.off_cpu_by_reason.sleep: not a number" },
	{ "\"cycles_whole_run\":false", "\"cycles_whole_run\":\"no\"",
	  "cycles_whole_run: not a boolean" },
	{ "\"cycles\":[{\"index\":0,", "\"cycles\":\"x\",\"y\":[{\"index\":0,",
	  "cycles: not an array" },
	{ "\"cycles\":[{\"index\":0,", "\"cycles\":[{\"index\":1e400,",
	  "cycles[0].index: inf out of range" },
	{ "\"gpu\":null", "\"gpu\":\"x\"", "cycles[1].gpu: not an object" },
	{ "\"findings\":[{", "\"findings\":7,\"z\":[{", "findings: not an array" },
	{ "\"severity\":\"info\"", "\"severity\":\"bad\"", "findings[0].severity: unknown" },
};

static int dl_text(const char *text, char *err, size_t len)
{
	struct dl_run r;
	int e = dl_load_text("d", text, strlen(text), &r, err, len);

	if (!e)
		dl_free(&r);
	return e;
}

static int report_text(const char *text, char *err, size_t len)
{
	struct report_data d;
	int e = report_load("d/report.json", text, strlen(text), &d, err, len);

	if (!e)
		report_data_free(&d);
	return e;
}

/* The same verdict and line from both readers. */
static void test_same_verdict(void)
{
	char e1[512], e2[512], want[512];

	CHECK_INT_EQ(dl_text(GOOD, e1, sizeof(e1)), 0);
	CHECK_INT_EQ(report_text(GOOD, e2, sizeof(e2)), 0);
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		char *t = variant(BAD[i].from, BAD[i].to);

		CHECK(t != NULL);
		if (!t)
			continue;
		snprintf(want, sizeof(want), "d/report.json: %s", BAD[i].msg);
		e1[0] = e2[0] = '\0';
		CHECK_INT_EQ(dl_text(t, e1, sizeof(e1)), -EINVAL);
		CHECK_INT_EQ(report_text(t, e2, sizeof(e2)), -EINVAL);
		if (strcmp(e1, want) || strcmp(e2, want))
			fprintf(stderr, "variant %zu:\n  diff:   %s\n  report: %s\n  want:   %s\n",
				i, e1, e2, want);
		CHECK_STR_EQ(e1, want);
		CHECK_STR_EQ(e2, want);
		free(t);
	}
}

static char base[256];

static void put(const char *dir, const char *text)
{
	char p[320];
	FILE *f;

	snprintf(p, sizeof(p), "%s/report.json", dir);
	unlink(p);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Runs main_fn(argv) with stdout and stderr into files; returns its exit
 * code and what it wrote (malloc'ed, NUL-terminated). */
static int capture(int (*main_fn)(int, char **), int argc, char **argv, char **out, char **err)
{
	char po[300], pe[300];
	int so = dup(1), se = dup(2), fo, fe, rc;
	char **dst[2] = { out, err };
	const char *paths[2] = { po, pe };

	snprintf(po, sizeof(po), "%s/stdout", base);
	snprintf(pe, sizeof(pe), "%s/stderr", base);
	fflush(stdout);
	fflush(stderr);
	fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fo, 1);
	dup2(fe, 2);
	rc = main_fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(paths[i], "r");
		char *b = calloc(1, 1 << 20);

		if (f && b)
			(void)!fread(b, 1, (1 << 20) - 1, f);
		if (f)
			fclose(f);
		*dst[i] = b;
	}
	return rc;
}

/* The two commands on files: exit 1 and the same line (after their
 * names) for every bad variant, and for a symlinked report.json. */
static void test_commands(void)
{
	char bad[300], good[300], link[320], want[1024];
	char *out, *e1, *e2;

	snprintf(bad, sizeof(bad), "%s/bad", base);
	snprintf(good, sizeof(good), "%s/good", base);
	CHECK(mkdir(bad, 0755) == 0 && mkdir(good, 0755) == 0);
	put(good, GOOD);
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		char *t = variant(BAD[i].from, BAD[i].to);
		char *ra[] = { "report", bad, NULL },
		     *da[] = { "diff", "--no-html", bad, good, NULL };

		if (!t)
			continue;
		put(bad, t);
		free(t);
		CHECK_INT_EQ(capture(report_cmd_main, 2, ra, &out, &e1), 1);
		free(out);
		CHECK_INT_EQ(capture(diff_cmd_main, 4, da, &out, &e2), DIFF_EXIT_ERROR);
		free(out);
		snprintf(want, sizeof(want), "ebpf-prof report: %s/report.json: %s\n", bad,
			 BAD[i].msg);
		CHECK_STR_EQ(e1, want);
		snprintf(want, sizeof(want), "ebpf-prof diff: %s/report.json: %s\n", bad,
			 BAD[i].msg);
		CHECK_STR_EQ(e2, want);
		free(e1);
		free(e2);
	}
	/* A symlink to a good report: refused by both, never followed. */
	snprintf(link, sizeof(link), "%s/report.json", bad);
	unlink(link);
	snprintf(want, sizeof(want), "%s/report.json", good);
	CHECK(symlink(want, link) == 0);
	{
		char *ra[] = { "report", bad, NULL },
		     *da[] = { "diff", "--no-html", good, bad, NULL };
		cJSON *root = NULL;

		CHECK_INT_EQ(report_read(bad, &root, want, sizeof(want)), -ELOOP);
		CHECK(root == NULL);
		CHECK_INT_EQ(capture(report_cmd_main, 2, ra, &out, &e1), 1);
		free(out);
		CHECK_INT_EQ(capture(diff_cmd_main, 4, da, &out, &e2), DIFF_EXIT_ERROR);
		free(out);
		snprintf(
			want, sizeof(want),
			"ebpf-prof report: %s/report.json: a symbolic link: not followed (copy the "
			"file itself into the directory)\n",
			bad);
		CHECK_STR_EQ(e1, want);
		snprintf(want, sizeof(want),
			 "ebpf-prof diff: %s/report.json: a symbolic link: not followed (copy the "
			 "file itself into the directory)\n",
			 bad);
		CHECK_STR_EQ(e2, want);
		free(e1);
		free(e2);
	}
	unlink(link);
}

/* Stack counts that sum past 2^64 stop at 2^64 - 1: the same report
 * against itself is "same", not a -100% change. */
static void test_saturation(void)
{
	char *t = variant("{\"f\":[0,1],\"n\":20},{\"f\":[0],\"n\":10}",
			  "{\"f\":[0,1],\"n\":1.8e19},{\"f\":[0,1],\"n\":1.8e19},"
			  "{\"f\":[0],\"n\":1.8e19}");
	struct dl_run a, b;
	struct dm_opts o;
	struct dm_result r;
	char err[512];
	const struct dl_func *hot;

	CHECK(t != NULL);
	if (!t)
		return;
	CHECK_INT_EQ(dl_load_text("a", t, strlen(t), &a, err, sizeof(err)), 0);
	CHECK_INT_EQ(dl_load_text("b", t, strlen(t), &b, err, sizeof(err)), 0);
	free(t);
	CHECK(a.func_samples == UINT64_MAX);
	hot = dl_find_func(&a, "u|hot|app");
	CHECK(hot && hot->self == UINT64_MAX && hot->total == UINT64_MAX);
	dm_default_opts(&o);
	CHECK_INT_EQ(dm_compare(&a, &b, &o, &r), 0);
	CHECK_INT_EQ(r.regressions, 0);
	CHECK_INT_EQ(r.improvements, 0);
	for (size_t i = 0; i < r.nrows; i++)
		if (r.rows[i].section == DM_S_FUNCTION)
			CHECK(r.rows[i].status == DM_SAME);
	dm_result_free(&r);
	dl_free(&a);
	dl_free(&b);

	/* report's whole-run rebuild (no cycles): samples x period past 2^64. */
	t = variant("\"samples\":{\"total\":30}", "\"samples\":{\"total\":1.7e19}");
	char *t2 = subst(t, "\"cycles\":[", "\"cyclez\":[");
	struct report_data d;

	CHECK(t2 != NULL);
	if (t2) {
		CHECK_INT_EQ(report_load("s/report.json", t2, strlen(t2), &d, err, sizeof(err)), 0);
		CHECK(d.cycles.n == 1 && d.cycles.rows[0].on_cpu_ns == UINT64_MAX);
		report_data_free(&d);
	}
	free(t);
	free(t2);
}

static bool has_control(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
			return true;
		if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
			return true;
	}
	return false;
}

/* A command line and names with terminal escapes (a window title, a clear
 * screen, the C1 CSI): nothing of them reaches either command's output. */
static void test_control_chars(void)
{
	char dir[300], *out, *err;
	char *t = variant("\"command\":\"./app --x\"",
			  "\"command\":\"./app \\u001b]0;owned\\u0007\\u001b[2J\\u009b31m --x\"");
	/* For report's summary: the findings kept from the file (no cycles,
	 * no run times to rebuild one), with an escape in the title. */
	char *t2 = subst(t, "\"title\":\"t\"", "\"title\":\"ti\\u001b[31mtle\"");
	char *t3 = subst(t2, "\"cycles\":[", "\"cyclez\":[");
	char *t4 = subst(t3, "\"time\":{", "\"timez\":{");

	free(t);
	free(t2);
	free(t3);
	CHECK(t4 != NULL);
	if (!t4)
		return;
	snprintf(dir, sizeof(dir), "%s/esc", base);
	CHECK(mkdir(dir, 0755) == 0);
	put(dir, t4);
	free(t4);
	{
		char *ra[] = { "report", dir, NULL };
		char *da[] = { "diff", "--no-html", dir, dir, NULL };
		char *dj[] = { "diff", "--no-html", "--json", dir, dir, NULL };

		CHECK_INT_EQ(capture(report_cmd_main, 2, ra, &out, &err), 0);
		CHECK(strstr(out, "ti?[31mtle") != NULL);
		CHECK(!has_control(out) && !has_control(err));
		free(out);
		free(err);
		CHECK_INT_EQ(capture(diff_cmd_main, 4, da, &out, &err), 0);
		CHECK(strstr(out, "app") != NULL);
		CHECK(!has_control(out) && !has_control(err));
		free(out);
		free(err);
		CHECK_INT_EQ(capture(diff_cmd_main, 5, dj, &out, &err), 0);
		/* The JSON document: cleaned, no escaped control either. */
		CHECK(strstr(out, "./app ?]0;owned??[2J?31m --x") != NULL);
		CHECK(!has_control(out) && !strstr(out, "\\u001b") && !strstr(out, "\\u0007"));
		free(out);
		free(err);
	}
	{
		char *c = report_clean_text("a\x1b[2Jb\tc\n\xc2\x9b"
					    "d\xff");

		CHECK_STR_EQ(c, "a?[2Jb c ?d\xef\xbf\xbd");
		free(c);
	}
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char cmd[300];

	snprintf(base, sizeof(base), "%s/ep-report-read-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	test_same_verdict();
	test_commands();
	test_saturation();
	test_control_chars();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	(void)!system(cmd);
	return check_report("test_report_read");
}
