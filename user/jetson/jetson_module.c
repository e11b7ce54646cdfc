// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runs the Jetson sysfs sampler as a recording module. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycle_sink.h"
#include "jetson/jetson.h"
#include "jetson/jetson_module.h"
#include "util/log.h"
#include "sysmon/throttle_feed.h"
#include "top/top_live.h"

struct jetson_mod {
	struct jetson_sampler *s;
	uint32_t pid; /* counter tracks are drawn under the first target */
	const struct rec_ctx *ctx;
	/* Latest GPU figures for the live view: written on the sampler
	 * thread, copied to ctx->live from poll (recorder thread). */
	pthread_mutex_t lock;
	bool fresh;
	double gpu_load_pct, gpu_power_w, gpu_temp_c;
	uint64_t ts_ns; /* of the snapshot the figures come from */
	int throttled;
};

static int jm_open(void **state, const struct rec_ctx *ctx)
{
	struct jetson_mod *m;

	if (ctx->opts->no_gpu)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	pthread_mutex_init(&m->lock, NULL);
	*state = m;
	return 0;
}

static bool has_gpu(const char *name)
{
	return strcasestr(name, "gpu") != NULL;
}

/* Sampler thread: the snapshot's GPU load, GPU rail power, GPU zone. */
static void jm_live(struct jetson_mod *m, const struct jetson_snapshot *snap, size_t nsig)
{
	double load = NAN, w = NAN, t = NAN;

	if (snap->gpu.present && snap->gpu.load_permille.ok)
		load = (double)snap->gpu.load_permille.v / 10.0;
	for (size_t i = 0; i < snap->nrails && i < JETSON_MAX_RAILS; i++)
		if (has_gpu(snap->rails[i].name) && snap->rails[i].power_uw.ok) {
			w = (double)snap->rails[i].power_uw.v / 1e6;
			break;
		}
	for (size_t i = 0; i < snap->nzones && i < JETSON_MAX_ZONES; i++)
		if (has_gpu(snap->zones[i].type) && snap->zones[i].state == JETSON_ZONE_OK) {
			t = (double)snap->zones[i].temp_mc / 1000.0;
			break;
		}
	pthread_mutex_lock(&m->lock);
	m->gpu_load_pct = load;
	m->gpu_power_w = w;
	m->gpu_temp_c = t;
	m->ts_ns = snap->mono_ns;
	m->throttled = nsig ? 1 : 0;
	m->fresh = true;
	pthread_mutex_unlock(&m->lock);
}

static int jm_poll(void *state, uint64_t now)
{
	struct jetson_mod *m = state;
	struct live_metrics *l = m->ctx->live;

	(void)now;
	if (!l || !m->s)
		return 0;
	pthread_mutex_lock(&m->lock);
	if (m->fresh) {
		l->gpu_load_pct = m->gpu_load_pct;
		l->gpu_power_w = m->gpu_power_w;
		l->gpu_temp_c = m->gpu_temp_c;
		l->throttled = m->throttled;
		m->fresh = false;
		/* Per-cycle GPU means: the sink is the recorder thread's. */
		if (!isnan(m->gpu_load_pct) || !isnan(m->gpu_power_w) || !isnan(m->gpu_temp_c)) {
			struct cyc_gpu_sample g = { m->ts_ns, m->gpu_load_pct,
						    m->gpu_power_w * 1000.0, m->gpu_temp_c };

			cycle_sink_gpu(m->ctx->cycles, &g);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Runs on the sampler thread: only the feed is touched here. */
static void jm_on_sample(void *ctx, const struct jetson_snapshot *snap,
			 const struct jetson_throttle_signal *sig, size_t nsig)
{
	struct jetson_mod *m = ctx;

	if (m->ctx->throttle)
		throttle_feed_push(m->ctx->throttle, snap->mono_ns, sig, nsig);
	if (m->ctx->live && (cli_live_wanted(m->ctx->opts) || m->ctx->cycles))
		jm_live(m, snap, nsig);
}

static int jm_attach(void *state)
{
	struct jetson_mod *m = state;
	struct jetson_sampler_opts so = {
		.sysfs_root = m->ctx->opts->sysfs_root,
		.interval_ms = m->ctx->opts->gpu_interval_ms,
		.on_sample = jm_on_sample,
		.cb_ctx = m,
	};
	int err = jetson_sampler_start_opts(&m->s, &so);

	/* Not a Jetson is the common case (already said under -v); any other
	 * failure costs only the GPU data, never the run. */
	if (err && err != -ENODEV)
		log_warn("Jetson sampler not started: %s", strerror(-err));
	if (err)
		m->s = NULL;
	return 0;
}

static void jm_stop(void *state)
{
	struct jetson_mod *m = state;

	if (m->s)
		jetson_sampler_stop(m->s);
}

static int jm_report(void *state, cJSON *root)
{
	struct jetson_mod *m = state;

	return m->s ? jetson_report_json(m->s, root) : 0;
}

static int jm_trace(void *state, FILE *out, bool *first)
{
	struct jetson_mod *m = state;
	uint32_t pid = m->ctx->ri->ntargets ? m->ctx->ri->targets[0].pid : 0;

	return m->s ? jetson_trace_counters(m->s, out, pid, first) : 0;
}

static bool jm_has_trace(void *state)
{
	struct jetson_mod *m = state;

	return m->s != NULL;
}

static void jm_close(void *state)
{
	struct jetson_mod *m = state;

	if (!m)
		return;
	jetson_sampler_free(m->s);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

const struct rec_module jetson_rec_module = {
	.name = "jetson",
	.open = jm_open,
	.attach = jm_attach,
	.poll = jm_poll,
	.stop = jm_stop,
	.report_json = jm_report,
	.trace_events = jm_trace,
	.has_trace = jm_has_trace,
	.close = jm_close,
};
