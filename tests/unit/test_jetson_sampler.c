// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sampler thread on the fixture trees: aggregates, energy, report section,
 * trace counters, throttling statistics, prompt stop, bounded timeline. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "jetson/jetson.h"

struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned seen, want;
	unsigned throttled;
};

static void on_sample(void *ctx, const struct jetson_snapshot *s,
		      const struct jetson_throttle_signal *sig, size_t nsig)
{
	struct waiter *w = ctx;

	(void)s;
	(void)sig;
	pthread_mutex_lock(&w->lock);
	w->seen++;
	w->throttled += nsig > 0;
	if (w->seen >= w->want)
		pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Waits for the callback count, not for wall time; bounded so a hang fails. */
static bool wait_samples(struct waiter *w, unsigned n)
{
	struct timespec dl;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&w->lock);
	w->want = n;
	while (w->seen < n && ok)
		ok = pthread_cond_timedwait(&w->cond, &w->lock, &dl) == 0;
	pthread_mutex_unlock(&w->lock);
	return w->seen >= n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const cJSON *metric(const cJSON *gpu, const char *key, const char *field)
{
	return cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(gpu, "metrics"),
						 key),
		field);
}

static void run_tree(const char *shared, const char *tree, bool throttled, double total_mw)
{
	char root[1024];
	struct waiter w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };
	struct jetson_sampler_opts o = { .sysfs_root = root,
					 .interval_ms = 10,
					 .on_sample = on_sample,
					 .cb_ctx = &w,
					 .timeline_cap = 4 };
	struct jetson_sampler *s;
	cJSON *report, *gpu, *trace;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	bool first = true;
	uint64_t n, tf, tl;
	double dur, e;

	snprintf(root, sizeof(root), "%s/fixtures/jetson/%s", shared, tree);
	CHECK_INT_EQ(jetson_sampler_start_opts(&s, &o), 0);
	if (!s)
		return;
	CHECK(wait_samples(&w, 12));
	jetson_sampler_stop(s);
	n = jetson_sampler_count(s);
	CHECK(n >= 12);

	report = cJSON_CreateObject();
	CHECK_INT_EQ(jetson_report_json(s, report), 0);
	gpu = cJSON_GetObjectItem(report, "gpu");
	CHECK_INT_EQ(cJSON_GetObjectItem(gpu, "samples")->valuedouble, n);
	/* constant fixture values: min == mean == max == the oracle's value */
	CHECK(metric(gpu, "total_mw", "min")->valuedouble == total_mw);
	CHECK(metric(gpu, "total_mw", "max")->valuedouble == total_mw);
	CHECK_NEAR(metric(gpu, "total_mw", "mean")->valuedouble, total_mw, 1e-6);
	CHECK_INT_EQ(metric(gpu, "total_mw", "samples")->valuedouble, n);
	/* energy of constant power over the sampled span */
	dur = cJSON_GetObjectItem(gpu, "duration_s")->valuedouble;
	e = jetson_sampler_energy_j(s);
	CHECK(dur > 0);
	CHECK_NEAR(e, total_mw / 1000.0 * dur, 1e-6 * e + 1e-9);
	CHECK_NEAR(cJSON_GetObjectItem(gpu, "energy_j")->valuedouble, e, 1e-9);
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(gpu, "power_mode")));
	/* timeline stays within its cap however long the run */
	CHECK(cJSON_GetObjectItem(gpu, "timeline_points")->valuedouble <= 4);
	CHECK(cJSON_GetObjectItem(gpu, "timeline_stride")->valuedouble >= 4);

	n = jetson_sampler_throttled_samples(s, &tf, &tl);
	if (throttled) {
		CHECK_INT_EQ(n, jetson_sampler_count(s));
		CHECK(tf > 0 && tl >= tf);
		CHECK_INT_EQ(w.throttled, w.seen);
	} else {
		CHECK_INT_EQ(n, 0);
		CHECK_INT_EQ(w.throttled, 0);
	}

	mem = open_memstream(&buf, &len);
	fputc('[', mem);
	CHECK_INT_EQ(jetson_trace_counters(s, mem, 42, &first), 0);
	fputc(']', mem);
	fclose(mem);
	trace = cJSON_Parse(buf);
	CHECK(trace != NULL && cJSON_GetArraySize(trace) > 0);
	{
		const cJSON *ev;
		bool saw_power = false;
		cJSON_ArrayForEach(ev, trace)
		{
			CHECK_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ph")), "C");
			CHECK_INT_EQ(cJSON_GetObjectItem(ev, "pid")->valuedouble, 42);
			if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name")),
				    "board power mW"))
				saw_power |= fabs(cJSON_GetObjectItem(
							  cJSON_GetObjectItem(ev, "args"), "value")
							  ->valuedouble -
						  total_mw) < 0.01;
		}
		CHECK(saw_power);
	}
	cJSON_Delete(trace);
	free(buf);
	cJSON_Delete(report);
	jetson_sampler_free(s);
}

int main(void)
{
	const char *sh = ep_shared_dir("test_jetson_sampler");
	char root[1024];
	struct jetson_sampler *s = NULL;

	if (!sh)
		return 77;
	run_tree(sh, "jp6-agx-orin-throttled", true, 27677.44);
	run_tree(sh, "jp4-nano", false, 3594);

	snprintf(root, sizeof(root), "%s/fixtures/jetson/not-a-jetson", sh);
	CHECK_INT_EQ(jetson_sampler_start(&s, root, 100), -ENODEV);
	CHECK(s == NULL);

	/* a long interval must not delay stop: the wait is a condition variable */
	{
		struct waiter w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };
		struct jetson_sampler_opts o = { .sysfs_root = root,
						 .interval_ms = 600000,
						 .on_sample = on_sample,
						 .cb_ctx = &w };
		double t0;

		snprintf(root, sizeof(root), "%s/fixtures/jetson/jp5-xavier-nx", sh);
		CHECK_INT_EQ(jetson_sampler_start_opts(&s, &o), 0);
		if (!s) /* a broken fixture: failed above, nothing to stop */
			return check_report("test_jetson_sampler");
		CHECK(wait_samples(&w, 1));
		t0 = now_s();
		jetson_sampler_stop(s);
		CHECK(now_s() - t0 < 2.0);
		CHECK_INT_EQ(jetson_sampler_count(s), 1);
		/* one sample: no interval to integrate over yet */
		CHECK_NEAR(jetson_sampler_energy_j(s), 0.0, 1e-12);
		jetson_sampler_free(s);
	}
	return check_report("test_jetson_sampler");
}
