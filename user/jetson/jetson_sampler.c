// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Periodic Jetson sampling for a recording run: own thread, running
 * aggregates (min/mean/max per metric), energy by trapezoid integration of
 * total board power over CLOCK_MONOTONIC, a bounded timeline for counter
 * tracks, and throttling statistics.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jetson/jetson.h"
#include "util/json_write.h"
#include "jetson/jetson_internal.h"
#include "util/log.h"

#define JS_MAX_METRICS	   64
#define JS_MAX_THR_SOURCES 16

struct js_metric {
	char key[96];	/* report key, e.g. "rail_mw.VDD_IN" */
	char track[96]; /* trace counter name */
	double min, max, sum;
	uint64_t n;
};

struct js_point {
	uint64_t ts;
	double energy_j; /* cumulative at ts, NAN before power is known */
	bool throttled;
	float v[JS_MAX_METRICS]; /* NAN = not available at this sample */
};

struct js_thr_source {
	char name[JETSON_NAME_LEN];
	enum jetson_throttle_kind kind;
	uint64_t samples;
};

struct jetson_sampler {
	struct jetson_reader *reader;
	unsigned interval_ms;
	jetson_sample_cb cb;
	void *cb_ctx;

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;

	/* written by the sampler thread, read after stop (or under lock) */
	uint64_t samples;
	uint64_t first_ns, last_ns;
	size_t nmetrics;
	struct js_metric metrics[JS_MAX_METRICS];
	double energy_j;
	bool energy_known;
	uint64_t energy_t0, energy_t1;
	double last_power_mw;
	uint64_t last_power_ns;
	bool have_last_power;

	struct js_point *tl;
	size_t tl_len, tl_cap;
	uint64_t tl_stride;

	uint64_t thr_samples, thr_first, thr_last;
	uint64_t thr_kind[3];
	size_t nthr_src;
	struct js_thr_source thr_src[JS_MAX_THR_SOURCES];

	struct jetson_snapshot *cur;   /* scratch for the thread */
	struct jetson_snapshot *first; /* kept for the "unavailable" list */
	struct jetson_snapshot *last;  /* power mode, board at the end */
	struct jetson_throttle_signal sig[JETSON_MAX_SIGNALS];
};

static int metric_index(struct jetson_sampler *s, const char *key, const char *track)
{
	for (size_t i = 0; i < s->nmetrics; i++)
		if (!strcmp(s->metrics[i].key, key))
			return (int)i;
	if (s->nmetrics >= JS_MAX_METRICS)
		return -1;
	struct js_metric *m = &s->metrics[s->nmetrics];
	jstrcpy(m->key, sizeof(m->key), key);
	jstrcpy(m->track, sizeof(m->track), track);
	m->min = INFINITY;
	m->max = -INFINITY;
	return (int)s->nmetrics++;
}

static void put(struct jetson_sampler *s, struct js_point *pt, const char *key, const char *track,
		double v)
{
	int i = metric_index(s, key, track);
	struct js_metric *m;

	if (i < 0 || !isfinite(v))
		return;
	m = &s->metrics[i];
	if (v < m->min)
		m->min = v;
	if (v > m->max)
		m->max = v;
	m->sum += v;
	m->n++;
	if (pt)
		pt->v[i] = (float)v;
}

static struct js_point *tl_slot(struct jetson_sampler *s)
{
	if (s->samples % s->tl_stride)
		return NULL;
	if (s->tl_len == s->tl_cap) {
		/* halve: keep every second point, then keep every 2*stride-th sample */
		size_t j = 0;
		for (size_t i = 0; i < s->tl_len; i += 2)
			s->tl[j++] = s->tl[i];
		s->tl_len = j;
		s->tl_stride *= 2;
		if (s->samples % s->tl_stride)
			return NULL;
	}
	struct js_point *pt = &s->tl[s->tl_len++];
	pt->ts = 0;
	for (size_t i = 0; i < JS_MAX_METRICS; i++)
		pt->v[i] = NAN;
	return pt;
}

static void note_throttle(struct jetson_sampler *s, const struct jetson_snapshot *snap, size_t nsig)
{
	if (!nsig)
		return;
	if (!s->thr_samples)
		s->thr_first = snap->mono_ns;
	s->thr_last = snap->mono_ns;
	s->thr_samples++;
	for (size_t k = 0; k < nsig && k < JETSON_MAX_SIGNALS; k++) {
		const struct jetson_throttle_signal *g = &s->sig[k];
		size_t j;

		if ((unsigned)g->kind < 3)
			s->thr_kind[g->kind]++;
		for (j = 0; j < s->nthr_src; j++)
			if (s->thr_src[j].kind == g->kind && !strcmp(s->thr_src[j].name, g->source))
				break;
		if (j == s->nthr_src) {
			if (s->nthr_src >= JS_MAX_THR_SOURCES)
				continue;
			jstrcpy(s->thr_src[j].name, sizeof(s->thr_src[j].name), g->source);
			s->thr_src[j].kind = g->kind;
			s->thr_src[j].samples = 0;
			s->nthr_src++;
		}
		s->thr_src[j].samples++;
	}
}

/* Folds one snapshot into aggregates, energy and timeline. Caller holds the lock. */
static void account(struct jetson_sampler *s, const struct jetson_snapshot *snap, size_t nsig)
{
	struct js_point *pt = tl_slot(s);
	char key[96], track[96];

	if (pt) {
		pt->ts = snap->mono_ns;
		pt->throttled = nsig > 0;
	}
	if (!s->samples)
		s->first_ns = snap->mono_ns;
	s->last_ns = snap->mono_ns;

	if (snap->gpu.load_permille.ok)
		put(s, pt, "gpu_load_pct", "GPU load %", snap->gpu.load_permille.v / 10.0);
	if (snap->gpu.cur_hz.ok)
		put(s, pt, "gpu_cur_mhz", "GPU MHz", jetson_mhz(snap->gpu.cur_hz.v));
	if (snap->emc_hz.ok) {
		put(s, pt, "emc_mhz", "EMC MHz", jetson_mhz(snap->emc_hz.v));
		if (snap->emc_mc_all.ok && snap->emc_hz.v >= 1000)
			put(s, pt, "emc_util_pct", "EMC util %",
			    jetson_emc_util_pct(snap->emc_mc_all.v, snap->emc_hz.v));
	}
	if (snap->total_uw.ok)
		put(s, pt, "total_mw", "board power mW", jetson_mw(snap->total_uw.v));
	for (size_t i = 0; i < snap->nrails; i++) {
		if (!snap->rails[i].power_uw.ok)
			continue;
		snprintf(key, sizeof(key), "rail_mw.%s", snap->rails[i].name);
		snprintf(track, sizeof(track), "rail %s mW", snap->rails[i].name);
		put(s, pt, key, track, jetson_mw(snap->rails[i].power_uw.v));
	}
	for (size_t i = 0; i < snap->nzones; i++) {
		if (snap->zones[i].state != JETSON_ZONE_OK)
			continue;
		snprintf(key, sizeof(key), "temp_c.%s", snap->zones[i].type);
		snprintf(track, sizeof(track), "temp %s C", snap->zones[i].type);
		put(s, pt, key, track, jetson_c(snap->zones[i].temp_mc));
	}
	if (snap->nfans && snap->fans[0].pwm.ok)
		put(s, pt, "fan_pct", "fan %", jetson_fan_pct(snap->fans[0].pwm.v));

	if (snap->total_uw.ok) {
		double p = jetson_mw(snap->total_uw.v);
		if (s->have_last_power && snap->mono_ns > s->last_power_ns) {
			double dt = (double)(snap->mono_ns - s->last_power_ns) / 1e9;
			s->energy_j += (s->last_power_mw + p) / 2.0 * dt / 1000.0;
			s->energy_t1 = snap->mono_ns;
		} else if (!s->energy_known) {
			s->energy_t0 = s->energy_t1 = snap->mono_ns;
		}
		s->energy_known = true;
		s->have_last_power = true;
		s->last_power_mw = p;
		s->last_power_ns = snap->mono_ns;
	} else {
		/* a gap: do not integrate across it */
		s->have_last_power = false;
	}
	if (pt)
		pt->energy_j = s->energy_known ? s->energy_j : NAN;
	note_throttle(s, snap, nsig);
	/* read without the lock by jetson_sampler_count() while running */
	__atomic_store_n(&s->samples, s->samples + 1, __ATOMIC_RELAXED);
}

static void *sampler_main(void *arg)
{
	struct jetson_sampler *s = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		size_t nsig;

		pthread_mutex_unlock(&s->lock);
		jetson_reader_sample(s->reader, s->cur);
		nsig = jetson_throttle_signals(s->cur, s->sig, JETSON_MAX_SIGNALS);
		if (s->cb)
			s->cb(s->cb_ctx, s->cur, s->sig,
			      nsig < JETSON_MAX_SIGNALS ? nsig : JETSON_MAX_SIGNALS);
		pthread_mutex_lock(&s->lock);
		if (!s->samples)
			*s->first = *s->cur;
		*s->last = *s->cur;
		account(s, s->cur, nsig);

		next.tv_sec += s->interval_ms / 1000;
		next.tv_nsec += (long)(s->interval_ms % 1000) * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		{
			/* a slow sample must not make us fire a burst to catch up */
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > next.tv_sec ||
			    (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
				next = now;
		}
		while (!s->stop) {
			int rc = pthread_cond_timedwait(&s->cond, &s->lock, &next);
			if (rc == ETIMEDOUT)
				break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int jetson_sampler_start_opts(struct jetson_sampler **out, const struct jetson_sampler_opts *o)
{
	struct jetson_reader_opts ro = { .sysfs_root = o->sysfs_root,
					 .deny_debugfs = o->deny_debugfs };
	struct jetson_sampler *s;
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->interval_ms = o->interval_ms ? o->interval_ms : JETSON_DEFAULT_INTERVAL_MS;
	if (s->interval_ms < JETSON_MIN_INTERVAL_MS)
		s->interval_ms = JETSON_MIN_INTERVAL_MS;
	s->cb = o->on_sample;
	s->cb_ctx = o->cb_ctx;
	s->tl_cap = o->timeline_cap ? o->timeline_cap : JETSON_TIMELINE_CAP;
	if (s->tl_cap < 2)
		s->tl_cap = 2;
	s->tl_stride = 1;
	err = jetson_reader_open(&s->reader, &ro);
	if (err) {
		free(s);
		return err;
	}
	if (!jetson_reader_board(s->reader)->is_jetson) {
		log_info("jetson: not a Jetson (%s); GPU module off",
			 jetson_reader_board(s->reader)->why);
		jetson_reader_close(s->reader);
		free(s);
		return -ENODEV;
	}
	s->tl = calloc(s->tl_cap, sizeof(*s->tl));
	s->cur = calloc(1, sizeof(*s->cur));
	s->first = calloc(1, sizeof(*s->first));
	s->last = calloc(1, sizeof(*s->last));
	if (!s->tl || !s->cur || !s->first || !s->last) {
		jetson_sampler_free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&s->thread, NULL, sampler_main, s);
	if (err) {
		log_error("jetson: cannot start sampler thread: %s", strerror(err));
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		s->thread_started = false;
		jetson_reader_close(s->reader);
		s->reader = NULL;
		free(s->tl);
		free(s->cur);
		free(s->first);
		free(s->last);
		free(s);
		return -err;
	}
	s->thread_started = true;
	log_info("jetson: %s, sampling every %u ms", jetson_reader_board(s->reader)->model,
		 s->interval_ms);
	*out = s;
	return 0;
}

int jetson_sampler_start(struct jetson_sampler **out, const char *sysfs_root, unsigned interval_ms)
{
	struct jetson_sampler_opts o = { .sysfs_root = sysfs_root, .interval_ms = interval_ms };

	return jetson_sampler_start_opts(out, &o);
}

void jetson_sampler_stop(struct jetson_sampler *s)
{
	if (!s || !s->thread_started)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
}

void jetson_sampler_free(struct jetson_sampler *s)
{
	if (!s)
		return;
	if (s->thread_started)
		jetson_sampler_stop(s);
	if (s->cur) { /* lock/cond exist only once allocation succeeded */
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
	}
	jetson_reader_close(s->reader);
	free(s->tl);
	free(s->cur);
	free(s->first);
	free(s->last);
	free(s);
}

uint64_t jetson_sampler_count(const struct jetson_sampler *s)
{
	return __atomic_load_n(&s->samples, __ATOMIC_RELAXED);
}

double jetson_sampler_energy_j(const struct jetson_sampler *s)
{
	return s->energy_known ? s->energy_j : -1.0;
}

static double energy_at(const struct jetson_sampler *s, uint64_t t)
{
	const struct js_point *a = NULL, *b = NULL;

	for (size_t i = 0; i < s->tl_len; i++) {
		if (isnan(s->tl[i].energy_j))
			continue;
		if (s->tl[i].ts <= t)
			a = &s->tl[i];
		if (s->tl[i].ts >= t) {
			b = &s->tl[i];
			break;
		}
	}
	if (!a || !b)
		return NAN;
	if (b->ts == a->ts)
		return a->energy_j;
	return a->energy_j +
	       (b->energy_j - a->energy_j) * (double)(t - a->ts) / (double)(b->ts - a->ts);
}

double jetson_sampler_energy_between(const struct jetson_sampler *s, uint64_t t0_ns, uint64_t t1_ns)
{
	double e0, e1;

	if (t1_ns < t0_ns)
		return -1.0;
	e0 = energy_at(s, t0_ns);
	e1 = energy_at(s, t1_ns);
	if (isnan(e0) || isnan(e1))
		return -1.0;
	return e1 - e0;
}

uint64_t jetson_sampler_throttled_samples(const struct jetson_sampler *s, uint64_t *first_ns,
					  uint64_t *last_ns)
{
	if (first_ns)
		*first_ns = s->thr_first;
	if (last_ns)
		*last_ns = s->thr_last;
	return s->thr_samples;
}

int jetson_report_json(const struct jetson_sampler *s, cJSON *report)
{
	cJSON *gpu, *metrics, *thr, *unav, *snap, *src;
	const struct jetson_snapshot *last = s->last;

	if (!report)
		return -EINVAL;
	gpu = cJSON_AddObjectToObject(report, "gpu");
	if (!gpu)
		return -ENOMEM;
	cJSON_AddStringToObject(gpu, "source", "jetson-sysfs");
	cJSON_AddStringToObject(gpu, "board", last->board.model);
	cJSON_AddStringToObject(gpu, "soc", last->board.soc);
	cJSON_AddStringToObject(gpu, "l4t", last->board.l4t);
	cJSON_AddStringToObject(gpu, "devfreq", last->gpu.devfreq);
	if (s->samples && last->power_mode_id.ok) {
		cJSON *pm = cJSON_AddObjectToObject(gpu, "power_mode");
		cJSON_AddNumberToObject(pm, "id", (double)last->power_mode_id.v);
		if (last->power_mode_name[0])
			cJSON_AddStringToObject(pm, "name", last->power_mode_name);
		else
			cJSON_AddNullToObject(pm, "name");
	} else {
		cJSON_AddNullToObject(gpu, "power_mode");
	}
	cJSON_AddNumberToObject(gpu, "interval_ms", s->interval_ms);
	cJSON_AddNumberToObject(gpu, "samples", (double)s->samples);
	cJSON_AddNumberToObject(gpu, "duration_s",
				s->samples > 1 ? (double)(s->last_ns - s->first_ns) / 1e9 : 0.0);
	metrics = cJSON_AddObjectToObject(gpu, "metrics");
	for (size_t i = 0; i < s->nmetrics; i++) {
		const struct js_metric *m = &s->metrics[i];
		cJSON *o;
		if (!m->n)
			continue;
		o = cJSON_AddObjectToObject(metrics, m->key);
		cJSON_AddNumberToObject(o, "min", m->min);
		cJSON_AddNumberToObject(o, "mean", m->sum / (double)m->n);
		cJSON_AddNumberToObject(o, "max", m->max);
		cJSON_AddNumberToObject(o, "samples", (double)m->n);
	}
	if (s->energy_known)
		cJSON_AddNumberToObject(gpu, "energy_j", s->energy_j);
	else
		cJSON_AddNullToObject(gpu, "energy_j");
	cJSON_AddStringToObject(
		gpu, "energy_rule",
		last->total_rail >= 0
			? "trapezoid integration of the module input rail over CLOCK_MONOTONIC"
			: "trapezoid integration of the sum of all rails (no input rail)");

	thr = cJSON_AddObjectToObject(gpu, "throttling");
	cJSON_AddNumberToObject(thr, "samples", (double)s->thr_samples);
	cJSON_AddNumberToObject(thr, "first_mono_ns", (double)s->thr_first);
	cJSON_AddNumberToObject(thr, "last_mono_ns", (double)s->thr_last);
	src = cJSON_AddArrayToObject(thr, "sources");
	for (size_t i = 0; i < s->nthr_src; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "kind", jetson_throttle_kind_name(s->thr_src[i].kind));
		cJSON_AddStringToObject(o, "source", s->thr_src[i].name);
		cJSON_AddNumberToObject(o, "samples", (double)s->thr_src[i].samples);
		cJSON_AddItemToArray(src, o);
	}

	/* what was unavailable at the start of the run, and why */
	snap = s->samples ? jetson_snapshot_json(s->first) : NULL;
	unav = snap ? cJSON_DetachItemFromObject(snap, "unavailable") : NULL;
	cJSON_AddItemToObject(gpu, "unavailable", unav ? unav : cJSON_CreateArray());
	cJSON_Delete(snap);
	cJSON_AddNumberToObject(gpu, "timeline_points", (double)s->tl_len);
	cJSON_AddNumberToObject(gpu, "timeline_stride", (double)s->tl_stride);
	return 0;
}

int jetson_trace_counters(const struct jetson_sampler *s, FILE *out, uint32_t pid, bool *first)
{
	for (size_t k = 0; k < s->tl_len; k++) {
		const struct js_point *pt = &s->tl[k];

		for (size_t i = 0; i <= s->nmetrics; i++) {
			double v;
			const char *name;

			if (i == s->nmetrics) {
				name = "jetson throttled";
				v = pt->throttled ? 1 : 0;
			} else {
				if (isnan(pt->v[i]))
					continue;
				name = s->metrics[i].track;
				v = pt->v[i];
			}
			if (!*first)
				fputc(',', out);
			*first = false;
			fputs("{\"name\":", out);
			json_write_str(out, name);
			fprintf(out,
				",\"cat\":\"jetson\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%u,"
				"\"args\":{\"value\":%.7g}}\n",
				(double)pt->ts / 1000.0, pid, v);
		}
	}
	return ferror(out) ? -EIO : 0;
}
