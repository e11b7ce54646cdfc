// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runs the Jetson sysfs sampler as a recording module. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jetson.h"
#include "jetson_module.h"
#include "log.h"
#include "throttle_feed.h"

struct jetson_mod {
	struct jetson_sampler *s;
	uint32_t pid; /* counter tracks are drawn under the first target */
	const struct rec_ctx *ctx;
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
	*state = m;
	return 0;
}

/* Runs on the sampler thread: only the feed is touched here. */
static void jm_on_sample(void *ctx, const struct jetson_snapshot *snap,
			 const struct jetson_throttle_signal *sig, size_t nsig)
{
	struct jetson_mod *m = ctx;

	if (m->ctx->throttle)
		throttle_feed_push(m->ctx->throttle, snap->mono_ns, sig, nsig);
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
	free(m);
}

const struct rec_module jetson_rec_module = {
	.name = "jetson",
	.open = jm_open,
	.attach = jm_attach,
	.stop = jm_stop,
	.report_json = jm_report,
	.trace_events = jm_trace,
	.has_trace = jm_has_trace,
	.close = jm_close,
};
