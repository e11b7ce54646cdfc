// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every value in shared/fixtures/jetson/expected/<tree>.json must come out of
 * the reader exactly (the fixture README is the oracle). Prose keys are
 * checked by meaning instead of text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jetson/jetson.h"

static const char *const trees[] = { "jp4-nano",     "jp5-xavier-nx",	       "jp5-orin-nano",
				     "jp6-agx-orin", "jp6-agx-orin-throttled", "not-a-jetson" };

/* Keys whose expected value is an explanation, not a reading. */
static const char *const prose[] = { "rails_source",	       "total_rule",
				     "throttle_reasons",       "why",
				     "nvidia_discrete_driver", "devfreq_decoys" };

static cJSON *load_json(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;
	cJSON *j;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	j = cJSON_Parse(buf);
	free(buf);
	return j;
}

static bool is_prose(const char *k)
{
	for (size_t i = 0; i < sizeof(prose) / sizeof(prose[0]); i++)
		if (!strcmp(k, prose[i]))
			return true;
	return false;
}

/* exact: objects must have the same key set (rails_mw, temps_c), not just a superset */
static void compare(const char *where, const cJSON *exp, const cJSON *act, bool exact)
{
	char sub[256];

	if (!act) {
		fprintf(stderr, "%s: missing\n", where);
		CHECK(act != NULL);
		return;
	}
	if (cJSON_IsObject(exp)) {
		const cJSON *e;
		CHECK(cJSON_IsObject(act));
		if (!cJSON_IsObject(act))
			return;
		cJSON_ArrayForEach(e, exp)
		{
			snprintf(sub, sizeof(sub), "%s.%s", where, e->string);
			compare(sub, e, cJSON_GetObjectItemCaseSensitive(act, e->string), false);
		}
		if (exact) {
			if (cJSON_GetArraySize(act) != cJSON_GetArraySize(exp))
				fprintf(stderr, "%s: %d keys, expected %d\n", where,
					cJSON_GetArraySize(act), cJSON_GetArraySize(exp));
			CHECK_INT_EQ(cJSON_GetArraySize(act), cJSON_GetArraySize(exp));
		}
	} else if (cJSON_IsArray(exp)) {
		CHECK(cJSON_IsArray(act));
		CHECK_INT_EQ(cJSON_GetArraySize(act), cJSON_GetArraySize(exp));
		for (int i = 0; i < cJSON_GetArraySize(exp) && i < cJSON_GetArraySize(act); i++) {
			snprintf(sub, sizeof(sub), "%s[%d]", where, i);
			compare(sub, cJSON_GetArrayItem(exp, i), cJSON_GetArrayItem(act, i), false);
		}
	} else if (cJSON_IsNumber(exp)) {
		if (!cJSON_IsNumber(act) || act->valuedouble != exp->valuedouble)
			fprintf(stderr, "%s: got %s%.17g, expected %.17g\n", where,
				cJSON_IsNumber(act) ? "" : "(non-number) ", act->valuedouble,
				exp->valuedouble);
		CHECK(cJSON_IsNumber(act) && act->valuedouble == exp->valuedouble);
	} else if (cJSON_IsString(exp)) {
		if (!cJSON_IsString(act))
			fprintf(stderr, "%s: not a string\n", where);
		CHECK_STR_EQ(cJSON_IsString(act) ? act->valuestring : NULL, exp->valuestring);
	} else if (cJSON_IsBool(exp)) {
		if (!cJSON_IsBool(act) || cJSON_IsTrue(act) != cJSON_IsTrue(exp))
			fprintf(stderr, "%s: bool mismatch\n", where);
		CHECK(cJSON_IsBool(act) && cJSON_IsTrue(act) == cJSON_IsTrue(exp));
	} else if (cJSON_IsNull(exp)) {
		if (!cJSON_IsNull(act))
			fprintf(stderr, "%s: expected null\n", where);
		CHECK(cJSON_IsNull(act));
	}
}

static bool has_signal(const struct jetson_snapshot *s, enum jetson_throttle_kind k,
		       const char *src)
{
	struct jetson_throttle_signal sig[JETSON_MAX_SIGNALS];
	size_t n = jetson_throttle_signals(s, sig, JETSON_MAX_SIGNALS);

	for (size_t i = 0; i < n && i < JETSON_MAX_SIGNALS; i++)
		if (sig[i].kind == k && !strcmp(sig[i].source, src))
			return true;
	return false;
}

static void check_tree(const char *shared, const char *tree, struct jetson_snapshot *s)
{
	char root[1024], exp_path[1024];
	struct jetson_reader_opts o = { .sysfs_root = root };
	struct jetson_reader *r;
	cJSON *exp, *act, *e;

	snprintf(root, sizeof(root), "%s/fixtures/jetson/%s", shared, tree);
	snprintf(exp_path, sizeof(exp_path), "%s/fixtures/jetson/expected/%s.json", shared, tree);
	exp = load_json(exp_path);
	CHECK(exp != NULL);
	CHECK_INT_EQ(jetson_reader_open(&r, &o), 0);
	if (!exp || !r) {
		cJSON_Delete(exp);
		return;
	}
	jetson_reader_sample(r, s);
	act = jetson_snapshot_json(s);
	CHECK(act != NULL);
	fprintf(stderr, "-- %s\n", tree);
	cJSON_ArrayForEach(e, exp)
	{
		char where[128];
		if (is_prose(e->string))
			continue;
		snprintf(where, sizeof(where), "%s:%s", tree, e->string);
		compare(where, e, cJSON_GetObjectItemCaseSensitive(act, e->string),
			!strcmp(e->string, "rails_mw") || !strcmp(e->string, "temps_c"));
	}

	/* prose keys, by meaning */
	e = cJSON_GetObjectItemCaseSensitive(exp, "devfreq_decoys");
	if (e) {
		const cJSON *d;
		cJSON_ArrayForEach(d, e) CHECK(strcmp(s->gpu.devfreq, d->valuestring) != 0);
	}
	e = cJSON_GetObjectItemCaseSensitive(exp, "total_rule");
	if (e && strstr(e->valuestring, "sums all rails"))
		CHECK_INT_EQ(s->total_rail, -1);
	else if (e)
		CHECK(s->total_rail >= 0);
	e = cJSON_GetObjectItemCaseSensitive(exp, "nvidia_discrete_driver");
	if (e)
		CHECK(!strncmp(e->valuestring, s->board.nvidia_driver,
			       strlen(s->board.nvidia_driver)) &&
		      s->board.nvidia_driver[0]);
	e = cJSON_GetObjectItemCaseSensitive(exp, "throttled");
	if (cJSON_IsBool(e))
		CHECK_INT_EQ(jetson_snapshot_throttled(s), cJSON_IsTrue(e) ? 1 : 0);
	else
		CHECK_INT_EQ(jetson_snapshot_throttled(s), -1);
	if (!strcmp(tree, "jp6-agx-orin-throttled")) {
		/* the three reasons the README lists */
		CHECK(has_signal(s, JETSON_THR_ZONE_TRIP, "gpu-thermal"));
		CHECK(has_signal(s, JETSON_THR_COOLING_ALERT, "gpu-throttle-alert"));
		CHECK(has_signal(s, JETSON_THR_GPU_BUSY_BELOW_MAX, "gpu"));
		/* tj is only above active (fan) trips */
		CHECK(!has_signal(s, JETSON_THR_ZONE_TRIP, "tj-thermal"));
	}
	if (!strcmp(tree, "jp6-agx-orin")) {
		/* unreadable sensors are unavailable, not 0 C */
		for (size_t i = 0; i < s->nzones; i++)
			if (!strncmp(s->zones[i].type, "cv", 2))
				CHECK_INT_EQ(s->zones[i].state, JETSON_ZONE_UNAVAILABLE);
	}
	cJSON_Delete(act);
	jetson_reader_close(r);

	/* No root: debugfs denied; EMC frequency becomes unavailable, nothing else changes. */
	o.deny_debugfs = true;
	CHECK_INT_EQ(jetson_reader_open(&r, &o), 0);
	if (r) {
		cJSON *emc;
		jetson_reader_sample(r, s);
		act = jetson_snapshot_json(s);
		emc = cJSON_GetObjectItemCaseSensitive(act, "emc");
		if (s->board.is_jetson) {
			CHECK(!s->emc_hz.ok);
			CHECK_INT_EQ(s->emc_hz.err, -EACCES);
			CHECK(s->debugfs_denied);
			CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(emc, "cur_mhz")));
			CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(emc, "util_pct")));
			compare("nodebugfs:rails_mw",
				cJSON_GetObjectItemCaseSensitive(exp, "rails_mw"),
				cJSON_GetObjectItemCaseSensitive(act, "rails_mw"), true);
			compare("nodebugfs:gpu", cJSON_GetObjectItemCaseSensitive(exp, "gpu"),
				cJSON_GetObjectItemCaseSensitive(act, "gpu"), false);
			char *txt = cJSON_PrintUnformatted(
				cJSON_GetObjectItemCaseSensitive(act, "unavailable"));
			CHECK(txt && strstr(txt, "needs root"));
			free(txt);
		}
		cJSON_Delete(act);
		jetson_reader_close(r);
	}
	cJSON_Delete(exp);
}

int main(void)
{
	const char *shared = ep_shared_dir("test_jetson_fixtures");
	struct jetson_snapshot *s = calloc(1, sizeof(*s));
	struct jetson_board b;

	if (!shared) {
		fprintf(stderr, "EP_SHARED_DIR not set\n");
		free(s);
		return 77;
	}
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
		check_tree(shared, trees[i], s);

	/* detection alone */
	{
		char root[1024];
		snprintf(root, sizeof(root), "%s/fixtures/jetson/not-a-jetson", shared);
		CHECK_INT_EQ(jetson_detect(root, &b), 0);
		CHECK(!b.is_jetson);
		snprintf(root, sizeof(root), "%s/fixtures/jetson/jp5-xavier-nx", shared);
		CHECK_INT_EQ(jetson_detect(root, &b), 0);
		CHECK(b.is_jetson);
		CHECK_STR_EQ(b.l4t, "35.4.1");
		CHECK(jetson_detect("/nonexistent-root-for-test", &b) < 0);
	}
	free(s);
	return check_report("test_jetson_fixtures");
}
