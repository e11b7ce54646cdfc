// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.json: fields present, consistent with the hand-made profile in
 * synth_profile.h, valid JSON in the zero-sample case, exact 64-bit values. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "report/report.h"
#include "synth_profile.h"

static char *render(const struct profile *p, const struct run_info *ri)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK_INT_EQ(export_report_json(p, ri, m), 0);
	fclose(m);
	return buf;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char key[64];
	while (o && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		path += n + (dot ? 1 : 0);
	}
	return o;
}

static double num(const cJSON *o, const char *path)
{
	const cJSON *v = get(o, path);
	if (!cJSON_IsNumber(v)) {
		fprintf(stderr, "not a number: %s\n", path);
		CHECK(cJSON_IsNumber(v));
		return NAN;
	}
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *path)
{
	const cJSON *v = get(o, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *top_fn(const cJSON *arr, const char *name)
{
	const cJSON *f;
	cJSON_ArrayForEach(f,
			   arr) if (str(f, "name") && strcmp(str(f, "name"), name) == 0) return f;
	return NULL;
}

static void test_full(void)
{
	struct profile p;
	struct synth_frames fr = { 0 };
	CHECK_INT_EQ(synth_build(&p, &fr), 0);
	p.drops[PROF_DROP_RINGBUF_FULL] = 3;
	p.drops[PROF_DROP_USER_STACK] = 2;
	struct report_target tg[2] = {
		{ .pid = 100, .comm = "app", .cmdline = "python train.py --lr \xff" },
		{ .pid = 200, .comm = "other", .exited = true, .parent_pid = 100 },
	};
	const char *files[] = { "profile.speedscope.json", "report.json" };
	struct run_info ri = {
		.targets = tg,
		.ntargets = 2,
		/* > 2^53: must survive exactly, cJSON doubles would round it */
		.start_mono_ns = 9007199254740993ULL,
		.end_mono_ns = 9007199254740993ULL + 2000000000ULL,
		.start_wall = { 0, 123456789 },
		.end_wall = { 1700000000, 500000000 },
		.freq_hz = 100,
		.kernel_frames = true,
		.stop_reason = "duration",
		.output_dir = "/tmp/out",
		.output_files = files,
		.noutput_files = 2,
		.first_sample_ns = 400,
		.exit_status = -1,
	};
	char *text = render(&p, &ri);
	CHECK(strstr(text, "\"start_monotonic_ns\":\t9007199254740993") != NULL);
	CHECK(strstr(text, "\"end_monotonic_ns\":\t9007201254740993") != NULL);
	cJSON *j = cJSON_Parse(text);
	CHECK(j != NULL);
	CHECK_STR_EQ(str(j, "schema"), "ebpf-prof/1");
	CHECK_STR_EQ(str(j, "version"), EBPF_PROF_VERSION);

	CHECK_INT_EQ(cJSON_GetArraySize(get(j, "target.pids")), 2);
	const cJSON *pr1 = cJSON_GetArrayItem(get(j, "target.processes"), 1);
	CHECK_INT_EQ(num(pr1, "pid"), 200);
	CHECK_INT_EQ(num(pr1, "parent_pid"), 100);
	CHECK(cJSON_IsTrue(get(pr1, "exited")));
	CHECK(cJSON_IsNull(get(pr1, "cmdline")));
	const cJSON *pr0 = cJSON_GetArrayItem(get(j, "target.processes"), 0);
	CHECK_STR_EQ(str(pr0, "cmdline"), "python train.py --lr \xef\xbf\xbd");
	CHECK_STR_EQ(str(pr0, "comm"), "app");
	CHECK(cJSON_IsFalse(get(j, "target.launched")));
	CHECK(cJSON_IsNull(get(j, "target.command")));
	CHECK(cJSON_IsNull(get(j, "target.exit_status")));

	CHECK_NEAR(num(j, "time.duration_ns"), 2e9, 0.5);
	CHECK_STR_EQ(str(j, "time.start_wall"), "1970-01-01T00:00:00.123Z");
	CHECK_STR_EQ(str(j, "time.end_wall"), "2023-11-14T22:13:20.500Z");
	CHECK_NEAR(num(j, "time.first_sample_monotonic_ns"), 400, 0);

	CHECK_NEAR(num(j, "sampling.frequency_hz"), 100, 0);
	CHECK_NEAR(num(j, "sampling.period_ns"), 1e7, 0);
	CHECK(cJSON_IsTrue(get(j, "sampling.kernel_frames")));
	CHECK_STR_EQ(str(j, "stop_reason"), "duration");

	CHECK_NEAR(num(j, "samples.total"), 13, 0);
	CHECK_NEAR(num(j, "samples.user"), 12, 0);
	CHECK_NEAR(num(j, "samples.kernel"), 1, 0);
	CHECK_NEAR(num(j, "samples.kernel_share"), 0.0769, 1e-9); /* 1/13 */

	CHECK_NEAR(num(j, "dropped.total"), 5, 0);
	const cJSON *bc = get(j, "dropped.by_cause");
	CHECK_INT_EQ(cJSON_GetArraySize(bc), PROF_DROP__COUNT);
	CHECK_NEAR(num(bc, "ringbuf_full"), 3, 0);
	CHECK_NEAR(num(bc, "user_stack_error"), 2, 0);
	CHECK_NEAR(num(bc, "collector"), 0, 0);

	/* main is in all 13 samples, leaf of D's 2; "a:b" leaf of 3 */
	const cJSON *top = get(j, "top_functions");
	CHECK_INT_EQ(cJSON_GetArraySize(top), 6);
	const cJSON *fm = top_fn(top, "main");
	CHECK_NEAR(num(fm, "self"), 2, 0);
	CHECK_NEAR(num(fm, "total"), 13, 0);
	CHECK_NEAR(num(fm, "total_pct"), 100.0, 0);
	CHECK_NEAR(num(fm, "self_pct"), 15.38, 1e-9); /* 2/13 */
	CHECK_STR_EQ(str(fm, "module"), "/usr/bin/app");
	const cJSON *fs = top_fn(top, "sys_read");
	CHECK(cJSON_IsTrue(get(fs, "kernel")));
	CHECK(cJSON_IsNull(get(fs, "module")));
	/* work: leaf of 4 (A 3, B 1), present in 5 */
	const cJSON *fw = top_fn(top, "work");
	CHECK_NEAR(num(fw, "self"), 4, 0);
	CHECK_NEAR(num(fw, "total"), 5, 0);
	CHECK_STR_EQ(str(cJSON_GetArrayItem(top, 0), "name"), "work");
	double prev = 1e9;
	const cJSON *f;
	cJSON_ArrayForEach(f, top)
	{
		CHECK(num(f, "self") <= prev);
		prev = num(f, "self");
	}

	const cJSON *th = get(j, "threads");
	CHECK_INT_EQ(cJSON_GetArraySize(th), 5);
	const cJSON *t0 = cJSON_GetArrayItem(th, 0);
	CHECK_NEAR(num(t0, "tid"), 101, 0);
	CHECK_NEAR(num(t0, "samples"), 6, 0);
	CHECK_NEAR(num(t0, "pct"), 46.15, 1e-9); /* 6/13 */
	CHECK_NEAR(num(cJSON_GetArrayItem(th, 4), "samples"), 0, 0);

	CHECK_STR_EQ(str(j, "output.dir"), "/tmp/out");
	CHECK_STR_EQ(cJSON_GetArrayItem(get(j, "output.files"), 1)->valuestring, "report.json");
	cJSON_Delete(j);
	free(text);
	profile_free(&p);
}

static void test_zero(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 49), 0);
	profile_thread(&p, 5, 5, "idle");
	struct run_info ri = { .launched = true, .command = "sleep 10", .exit_status = 0 };
	char *text = render(&p, &ri);
	CHECK(!strstr(text, "nan") && !strstr(text, "NaN") && !strstr(text, "inf"));
	cJSON *j = cJSON_Parse(text);
	CHECK(j != NULL);
	CHECK_NEAR(num(j, "samples.total"), 0, 0);
	CHECK_NEAR(num(j, "samples.kernel_share"), 0, 0);
	CHECK_INT_EQ(cJSON_GetArraySize(get(j, "top_functions")), 0);
	CHECK_NEAR(num(cJSON_GetArrayItem(get(j, "threads"), 0), "pct"), 0, 0);
	CHECK(cJSON_IsNull(get(j, "time.first_sample_monotonic_ns")));
	CHECK(cJSON_IsNull(get(j, "stop_reason")));
	CHECK_STR_EQ(str(j, "target.command"), "sleep 10");
	CHECK_NEAR(num(j, "target.exit_status"), 0, 0);
	CHECK_NEAR(num(j, "sampling.period_ns"), 20408163, 0);
	CHECK(cJSON_IsArray(get(j, "output.files")));
	cJSON_Delete(j);
	free(text);
	profile_free(&p);
}

/* The unwind section: present with a mode, shares over all user stacks,
 * per-stack cost over CFI stacks only, and no division by zero. */
static void test_unwind_section(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 99), 0);
	struct run_info ri = { .exit_status = -1 };
	char *text = render(&p, &ri);
	cJSON *j = cJSON_Parse(text);
	CHECK(j && !get(j, "unwind")); /* no mode: no section */
	cJSON_Delete(j);
	free(text);

	ri.unwind = (struct run_unwind){ .mode = "auto",
					 .stack_bytes = 8192,
					 .cfi = 300,
					 .fp = 100,
					 .fp_fallback = 100,
					 .no_window = 100,
					 .copy_errors = 7,
					 .truncated = 30,
					 .errors = 4,
					 .unwind_ns = 240000,
					 .calls = 400,
					 .timed = 24 };
	text = render(&p, &ri);
	j = cJSON_Parse(text);
	CHECK(j != NULL);
	CHECK_STR_EQ(str(j, "unwind.mode"), "auto");
	CHECK_NEAR(num(j, "unwind.stack_bytes"), 8192, 0);
	CHECK_NEAR(num(j, "unwind.cfi_stacks"), 300, 0);
	CHECK_NEAR(num(j, "unwind.fp_stacks"), 100, 0);
	CHECK_NEAR(num(j, "unwind.fp_fallback"), 100, 0);
	CHECK_NEAR(num(j, "unwind.window_copy_errors"), 7, 0);
	CHECK_NEAR(num(j, "unwind.truncated"), 30, 0);
	CHECK_NEAR(num(j, "unwind.truncated_share"), 0.075, 1e-9);
	CHECK_NEAR(num(j, "unwind.error_share"), 0.01, 1e-9);
	CHECK_NEAR(num(j, "unwind.unwind_ns_per_stack"), 10000, 0);
	cJSON_Delete(j);
	free(text);

	ri.unwind = (struct run_unwind){ .mode = "fp" };
	text = render(&p, &ri);
	CHECK(!strstr(text, "nan") && !strstr(text, "NaN"));
	j = cJSON_Parse(text);
	CHECK_NEAR(num(j, "unwind.truncated_share"), 0, 0);
	CHECK_NEAR(num(j, "unwind.unwind_ns_per_stack"), 0, 0);
	cJSON_Delete(j);
	free(text);
	profile_free(&p);
}

int main(void)
{
	test_full();
	test_zero();
	test_unwind_section();
	return check_report("test_report");
}
