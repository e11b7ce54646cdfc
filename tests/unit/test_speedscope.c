// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* speedscope export: parsed back and checked against the rules of
 * formats.md §1 and against the hand-made profile in synth_profile.h. */
#include <cjson/cJSON.h>
#include <string.h>

#include "check.h"
#include "report/report.h"
#include "synth_profile.h"

static cJSON *export(const struct profile *p, const struct run_info *ri)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK_INT_EQ(export_speedscope(p, ri, m), 0);
	fclose(m);
	cJSON *j = cJSON_Parse(buf);
	CHECK(j != NULL);
	free(buf);
	return j;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	CHECK(cJSON_IsNumber(v));
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Structural rules every sampled profile must follow. */
static void check_profile(const cJSON *prof, int nframes)
{
	CHECK_STR_EQ(str(prof, "type"), "sampled");
	CHECK_STR_EQ(str(prof, "unit"), "nanoseconds");
	const cJSON *samples = cJSON_GetObjectItemCaseSensitive(prof, "samples");
	const cJSON *weights = cJSON_GetObjectItemCaseSensitive(prof, "weights");
	CHECK(cJSON_IsArray(samples) && cJSON_IsArray(weights));
	CHECK_INT_EQ(cJSON_GetArraySize(samples), cJSON_GetArraySize(weights));
	double sum = 0;
	const cJSON *w;
	cJSON_ArrayForEach(w, weights)
	{
		CHECK(cJSON_IsNumber(w) && w->valuedouble > 0);
		sum += w->valuedouble;
	}
	const cJSON *s, *f;
	cJSON_ArrayForEach(s, samples)
	{
		CHECK(cJSON_IsArray(s));
		cJSON_ArrayForEach(f, s)
			CHECK(cJSON_IsNumber(f) && f->valueint >= 0 && f->valueint < nframes);
	}
	double sv = num(prof, "startValue"), ev = num(prof, "endValue");
	CHECK(sv >= 0 && sv <= ev);
	CHECK_NEAR(ev - sv, sum, 0.5);
}

static const cJSON *find_profile(const cJSON *profiles, const char *name)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, profiles)
	{
		const char *n = str(p, "name");
		if (n && strcmp(n, name) == 0)
			return p;
	}
	return NULL;
}

/* The frame names of sample i of a profile, joined by '|'. */
static void sample_names(const cJSON *frames, const cJSON *prof, int i, char *out, size_t len)
{
	const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(prof, "samples"), i);
	const cJSON *f;
	out[0] = '\0';
	cJSON_ArrayForEach(f, s)
	{
		const char *n = str(cJSON_GetArrayItem(frames, f->valueint), "name");
		if (out[0])
			strncat(out, "|", len - strlen(out) - 1);
		strncat(out, n ? n : "?", len - strlen(out) - 1);
	}
}

static double weight(const cJSON *prof, int i)
{
	const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(prof, "weights"), i);
	return cJSON_IsNumber(w) ? w->valuedouble : -1;
}

static void test_synth(void)
{
	struct profile p;
	struct synth_frames fr = { 0 };
	CHECK_INT_EQ(synth_build(&p, &fr), 0);
	struct report_target tg = { .pid = 100, .comm = "app" };
	struct run_info ri = { .targets = &tg, .ntargets = 1, .start_mono_ns = 500 };
	cJSON *j = export(&p, &ri);
	if (!j) {
		profile_free(&p);
		return;
	}
	CHECK_STR_EQ(str(j, "$schema"), "https://www.speedscope.app/file-format-schema.json");
	CHECK_STR_EQ(str(j, "exporter"), "ebpf-prof@" EBPF_PROF_VERSION);
	CHECK(str(j, "name") != NULL);

	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "shared"), "frames");
	CHECK_INT_EQ(cJSON_GetArraySize(frames), 6);
	const cJSON *fmain = cJSON_GetArrayItem(frames, (int)fr.f[F_MAIN]);
	CHECK_STR_EQ(str(fmain, "name"), "main");
	CHECK_STR_EQ(str(fmain, "file"), "/usr/bin/app");
	const cJSON *fsys = cJSON_GetArrayItem(frames, (int)fr.f[F_SYS]);
	CHECK_STR_EQ(str(fsys, "file"), "[kernel.kallsyms]");
	const cJSON *fnl = cJSON_GetArrayItem(frames, (int)fr.f[F_NL]);
	CHECK_STR_EQ(str(fnl, "name"), "line\nbreak"); /* escaped and parsed back */
	CHECK(cJSON_GetObjectItemCaseSensitive(fnl, "file") == NULL);

	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(j, "profiles");
	/* the idle thread has no samples and no profile */
	CHECK_INT_EQ(cJSON_GetArraySize(profiles), 4);
	const cJSON *prof;
	cJSON_ArrayForEach(prof, profiles) check_profile(prof, 6);

	/* several pids: names carry the pid */
	const cJSON *a = find_profile(profiles, "app (pid 100, tid 100)");
	const cJSON *b = find_profile(profiles, "app (pid 100, tid 101)");
	const cJSON *c = find_profile(profiles, "other (pid 200, tid 200)");
	CHECK(a && b && c);
	/* B has the most samples (6) */
	const cJSON *act = cJSON_GetObjectItemCaseSensitive(j, "activeProfileIndex");
	CHECK(cJSON_IsNumber(act) && cJSON_GetArrayItem(profiles, act->valueint) == b);
	if (a && b && c) {
		char names[128];
		/* A: [main,work]x2, [main,work,sys_read], [main,work] */
		CHECK_INT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "samples")), 3);
		sample_names(frames, a, 0, names, sizeof(names));
		CHECK_STR_EQ(names, "main|work");
		sample_names(frames, a, 1, names, sizeof(names));
		CHECK_STR_EQ(names, "main|work|sys_read");
		sample_names(frames, a, 2, names, sizeof(names));
		CHECK_STR_EQ(names, "main|work");
		CHECK_NEAR(weight(a, 0), 2.0 * SYNTH_PERIOD, 0.5);
		CHECK_NEAR(weight(a, 1), 1.0 * SYNTH_PERIOD, 0.5);
		/* first sample 1000, run start 500 */
		CHECK_NEAR(num(a, "startValue"), 500, 0.5);
		CHECK_NEAR(num(a, "endValue"), 500 + 4.0 * SYNTH_PERIOD, 0.5);
		/* B keeps "a;b" then work then "a:b": distinct frames, in order */
		sample_names(frames, b, 0, names, sizeof(names));
		CHECK_STR_EQ(names, "main|a;b");
		sample_names(frames, b, 2, names, sizeof(names));
		CHECK_STR_EQ(names, "main|a:b");
		CHECK_NEAR(weight(b, 2), 3.0 * SYNTH_PERIOD, 0.5);
		/* C's first sample (400) precedes the run start: clamped to 0 */
		CHECK_NEAR(num(c, "startValue"), 0, 0.5);
	}
	cJSON_Delete(j);

	/* One pid only: names without the pid. */
	profile_free(&p);
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	uint32_t f = (uint32_t)profile_intern_frame(&p, "x", NULL, false);
	uint32_t t1 = (uint32_t)profile_thread(&p, 7, 7, "solo");
	uint32_t t2 = (uint32_t)profile_thread(&p, 7, 8, "solo");
	profile_add_sample(&p, t1, 10, &f, 1, 0, false);
	profile_add_sample(&p, t2, 10, &f, 1, 0, false);
	j = export(&p, &ri);
	profiles = cJSON_GetObjectItemCaseSensitive(j, "profiles");
	CHECK(find_profile(profiles, "solo (tid 8)") != NULL);
	cJSON_Delete(j);
	profile_free(&p);
}

static void test_empty(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	/* A target comm that fills all 16 bytes (no NUL) must not be overread
	 * into the neighbouring fields. */
	struct report_target tg = { .pid = 1, .cmdline = "zzz" };
	memset(tg.comm, 'x', sizeof(tg.comm));
	struct run_info ri = { .targets = &tg, .ntargets = 1 };
	cJSON *j = export(&p, &ri);
	CHECK_STR_EQ(str(j, "name"), "xxxxxxxxxxxxxxxx (pid 1)");
	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(j, "profiles");
	/* speedscope rejects an empty profile list */
	CHECK_INT_EQ(cJSON_GetArraySize(profiles), 1);
	check_profile(cJSON_GetArrayItem(profiles, 0), 0);
	cJSON_Delete(j);
	profile_free(&p);
}

int main(void)
{
	test_synth();
	test_empty();
	return check_report("test_speedscope");
}
