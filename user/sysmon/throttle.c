// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Throttling detection (see throttle.h). Each stream (one CPU, one zone, one
 * cooling device, one counter, one external source) is sorted and swept on
 * its own into "condition intervals" with causes; episodes are the union of
 * those intervals. Sorting each stream makes the result independent of the
 * order events arrived in.
 */
#include "sysmon/throttle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define THR_MAX_TRIPS 16
/* Same-time order: a busy window ending at t is closed before one starting
 * at t opens, so back-to-back windows stay continuous. */
enum { PT_BUSY_END = 0, PT_APPLY = 1 };

struct cond {
	uint64_t start, end;
	uint32_t causes;
	struct thr_entity ent;
};

struct conds {
	struct cond *v;
	size_t n, cap;
};

struct point {
	uint64_t t;
	int kind;
	size_t seq;
	const struct thr_event *e;
};

static int conds_add(struct conds *c, uint64_t s, uint64_t e, uint32_t causes,
		     const struct thr_entity *ent, const struct thr_opts *o)
{
	if (s < o->start_ns)
		s = o->start_ns;
	if (e > o->end_ns)
		e = o->end_ns;
	if (!causes || e <= s)
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		struct cond *nv = realloc(c->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = ncap;
	}
	c->v[c->n++] = (struct cond){ .start = s, .end = e, .causes = causes, .ent = *ent };
	return 0;
}

static uint64_t ev_time(const struct thr_event *e, const struct thr_opts *o)
{
	return e->ts_ns ? e->ts_ns : o->start_ns;
}

static int cmp_point(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Points of one stream, sorted; *np = count. */
static struct point *stream_points(const struct thr_event *const *ev, size_t n,
				   const struct thr_opts *o, size_t *np)
{
	struct point *p = calloc(2 * n + 1, sizeof(*p));
	size_t k = 0;

	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t t = ev_time(ev[i], o);

		if (ev[i]->type == THR_EV_BUSY) {
			uint64_t s = t > ev[i]->dur_ns ? t - ev[i]->dur_ns : 0;

			p[k++] = (struct point){ s, PT_APPLY, i, ev[i] };
			p[k++] = (struct point){ t, PT_BUSY_END, i, ev[i] };
		} else {
			p[k++] = (struct point){ t, PT_APPLY, i, ev[i] };
		}
	}
	qsort(p, k, sizeof(*p), cmp_point);
	*np = k;
	return p;
}

/* ---- one CPU ---- */
struct cpu_state {
	bool freq_ok, lim_ok, base_ok, hw_ok, busy_ok, busy_seen;
	int64_t freq, lim_max, base_max, hw_max, busy;
	uint64_t busy_end;
};

static uint32_t cpu_mask(const struct cpu_state *s, const struct thr_opts *o, uint32_t *inputs)
{
	int64_t allowed = s->lim_ok ? s->lim_max : s->hw_ok ? s->hw_max : 0;
	bool busy = s->busy_ok && s->busy >= (int64_t)o->busy_permille;
	uint32_t m = 0;

	if (s->freq_ok && allowed > 0)
		*inputs |= THR_IN_FREQ;
	if (!busy)
		return 0;
	if (s->lim_ok && s->base_ok && s->lim_max < s->base_max)
		m |= THR_CAUSE_FREQ_CAP;
	if (s->freq_ok && allowed > 0 &&
	    s->freq * 1000 < allowed * (int64_t)(1000 - o->freq_tol_permille))
		m |= THR_CAUSE_BUSY_BELOW_MAX;
	return m;
}

static int sweep_cpu(const struct thr_event *const *ev, size_t n, const struct thr_opts *o,
		     struct conds *c, uint32_t *inputs)
{
	struct thr_entity ent = { .kind = THR_ENT_CPU, .id = ev[0]->cpu };
	struct cpu_state s = { 0 };
	uint32_t cur = 0;
	uint64_t since = 0;
	size_t np, i = 0;
	struct point *p = stream_points(ev, n, o, &np);
	int err = 0;

	if (!p)
		return -ENOMEM;
	while (i < np && !err) {
		uint64_t t = p[i].t;

		for (; i < np && p[i].t == t; i++) {
			const struct thr_event *e = p[i].e;

			if (p[i].kind == PT_BUSY_END) {
				if (s.busy_ok && s.busy_end <= t)
					s.busy_ok = false;
				continue;
			}
			switch (e->type) {
			case THR_EV_FREQ:
				s.freq = e->a;
				s.freq_ok = e->a > 0;
				break;
			case THR_EV_FREQ_LIMITS:
				if (e->b <= 0)
					break;
				s.lim_max = e->b;
				s.lim_ok = true;
				if (!s.base_ok) {
					s.base_max = e->b;
					s.base_ok = true;
				}
				break;
			case THR_EV_HW_MAX:
				s.hw_max = e->a;
				s.hw_ok = e->a > 0;
				break;
			case THR_EV_BUSY:
				s.busy = e->a;
				s.busy_ok = true;
				s.busy_seen = true;
				s.busy_end = ev_time(e, o);
				break;
			}
		}
		uint32_t m = cpu_mask(&s, o, inputs);

		if (m != cur) {
			if (cur)
				err = conds_add(c, since, t, cur, &ent, o);
			cur = m;
			since = t;
		}
	}
	if (!err && cur)
		err = conds_add(c, since, o->end_ns, cur, &ent, o);
	if (s.busy_seen)
		*inputs |= THR_IN_BUSY;
	free(p);
	return err;
}

/* ---- one thermal zone ---- */
struct trip_state {
	bool def, fallback, pending, armed;
	int64_t temp, hyst;
	unsigned type;
};

static int sweep_zone(const struct thr_event *const *ev, size_t n, const struct thr_opts *o,
		      struct conds *c, uint32_t *inputs)
{
	struct thr_entity ent = { .kind = THR_ENT_ZONE, .id = ev[0]->id };
	struct trip_state tr[THR_MAX_TRIPS] = { 0 };
	bool temp_ok = false, crossed = false;
	int64_t temp = 0;
	uint32_t cur = 0;
	uint64_t since = 0;
	size_t np, i = 0;
	struct point *p = stream_points(ev, n, o, &np);
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		if (ev[k]->name[0] && !ent.name[0])
			memcpy(ent.name, ev[k]->name, sizeof(ent.name));
	while (i < np && !err) {
		uint64_t t = p[i].t;

		for (; i < np && p[i].t == t; i++) {
			const struct thr_event *e = p[i].e;
			struct trip_state *x = NULL;

			if (e->idx >= 0 && e->idx < THR_MAX_TRIPS)
				x = &tr[e->idx];
			switch (e->type) {
			case THR_EV_TRIP_DEF:
				/* x86_pkg_temp leaves unset trips at 0 mC: disabled. */
				if (!x || e->a <= 0)
					break;
				x->def = true;
				x->fallback = x->pending = false;
				x->temp = e->a;
				x->hyst = e->b > 0 ? e->b : 0;
				x->type = e->trip_type;
				break;
			case THR_EV_TRIP_CROSSED:
				crossed = true;
				if (!x || e->trip_type == THR_TRIP_ACTIVE)
					break;
				x->type = e->trip_type;
				x->armed = true;
				if (!x->def) {
					/* Trip temperature unknown: the reading at the
					 * crossing (or the next one) stands in for it. */
					x->fallback = true;
					x->pending = !temp_ok;
					x->temp = temp;
					x->hyst = 0;
				}
				break;
			case THR_EV_TEMP:
				temp = e->a;
				temp_ok = true;
				break;
			}
		}
		/* Re-evaluate every trip against the latest reading. */
		uint32_t m = 0;

		for (int k = 0; k < THR_MAX_TRIPS; k++) {
			struct trip_state *x = &tr[k];

			if (x->type == THR_TRIP_ACTIVE || (!x->def && !x->fallback))
				continue;
			if (x->pending && temp_ok) {
				x->pending = false;
				x->temp = temp;
			}
			if (temp_ok && !x->pending) {
				if (temp >= x->temp)
					x->armed = true;
				else if (temp < x->temp - x->hyst)
					x->armed = false;
			}
			if (x->armed)
				m |= THR_CAUSE_THERMAL_TRIP;
		}
		if (m != cur) {
			if (cur)
				err = conds_add(c, since, t, cur, &ent, o);
			cur = m;
			since = t;
		}
	}
	if (!err && cur)
		err = conds_add(c, since, o->end_ns, cur, &ent, o);
	bool any_def = false;

	for (int k = 0; k < THR_MAX_TRIPS; k++)
		any_def |= tr[k].def && tr[k].type != THR_TRIP_ACTIVE;
	if ((temp_ok && any_def) || crossed)
		*inputs |= THR_IN_ZONES;
	free(p);
	return err;
}

bool thr_cdev_is_fan(const char *type)
{
	/* "Fan", "pwm-fan", "acpi_fan": cooling by air, the CPU keeps its clock. */
	for (const char *s = type; *s; s++)
		if (strncasecmp(s, "fan", 3) == 0)
			return true;
	return false;
}

/* ---- named on/off streams: cooling devices and external sources ---- */
static int sweep_named(const struct thr_event *const *ev, size_t n, const struct thr_opts *o,
		       struct conds *c, uint32_t *inputs)
{
	bool cdev = ev[0]->type == THR_EV_CDEV;
	struct thr_entity ent = { .kind = cdev ? THR_ENT_CDEV : THR_ENT_SOURCE, .id = -1 };
	uint32_t cur = 0;
	uint64_t since = 0;
	size_t np, i = 0;
	struct point *p;
	int err = 0;

	memcpy(ent.name, ev[0]->name, sizeof(ent.name));
	if (cdev && thr_cdev_is_fan(ev[0]->name))
		return 0;
	*inputs |= cdev ? THR_IN_COOLING : THR_IN_EXTERNAL;
	p = stream_points(ev, n, o, &np);
	if (!p)
		return -ENOMEM;
	while (i < np && !err) {
		uint64_t t = p[i].t;
		uint32_t m = cur;

		for (; i < np && p[i].t == t; i++) {
			const struct thr_event *e = p[i].e;

			if (cdev)
				m = e->a > 0 ? THR_CAUSE_COOLING : 0;
			else
				m = e->a ? e->cause : 0;
		}
		if (m != cur) {
			if (cur)
				err = conds_add(c, since, t, cur, &ent, o);
			cur = m;
			since = t;
		}
	}
	if (!err && cur)
		err = conds_add(c, since, o->end_ns, cur, &ent, o);
	free(p);
	return err;
}

/* ---- cumulative counters: a rise between two readings throttles that span ---- */
static int sweep_counter(const struct thr_event *const *ev, size_t n, const struct thr_opts *o,
			 struct conds *c, uint32_t *inputs)
{
	struct thr_entity ent = { .kind = THR_ENT_CPU, .id = ev[0]->cpu };
	uint32_t cause = ev[0]->counter == THR_CNT_CORE_THROTTLE ||
					 ev[0]->counter == THR_CNT_PKG_THROTTLE
				 ? THR_CAUSE_HW_THERMAL
				 : THR_CAUSE_POWER_CAP;
	size_t np;
	struct point *p = stream_points(ev, n, o, &np);
	int err = 0;

	if (!p)
		return -ENOMEM;
	if (np >= 2)
		*inputs |= THR_IN_COUNTERS;
	for (size_t i = 1; i < np && !err; i++)
		if (p[i].e->a > p[i - 1].e->a && p[i].t > p[i - 1].t)
			err = conds_add(c, p[i - 1].t, p[i].t, cause, &ent, o);
	free(p);
	return err;
}

/* ---- grouping ---- */
enum stream_kind { SK_CPU, SK_ZONE, SK_NAMED, SK_COUNTER, SK_BAD };

static enum stream_kind stream_of(const struct thr_event *e)
{
	switch (e->type) {
	case THR_EV_FREQ:
	case THR_EV_FREQ_LIMITS:
	case THR_EV_HW_MAX:
	case THR_EV_BUSY:
		return e->cpu >= 0 ? SK_CPU : SK_BAD;
	case THR_EV_COUNTER:
		return e->cpu >= -1 && e->counter <= THR_CNT_PKG_POWER_LIMIT ? SK_COUNTER : SK_BAD;
	case THR_EV_TRIP_DEF:
	case THR_EV_TEMP:
	case THR_EV_TRIP_CROSSED:
		return e->id >= 0 ? SK_ZONE : SK_BAD;
	case THR_EV_CDEV:
		return e->name[0] ? SK_NAMED : SK_BAD;
	case THR_EV_EXTERNAL:
		return e->name[0] && e->cause && !(e->cause & ~((1u << THR_NCAUSES) - 1)) ? SK_NAMED
											  : SK_BAD;
	}
	return SK_BAD;
}

static int cmp_stream(const void *pa, const void *pb)
{
	const struct thr_event *a = *(const struct thr_event *const *)pa;
	const struct thr_event *b = *(const struct thr_event *const *)pb;
	enum stream_kind ka = stream_of(a), kb = stream_of(b);
	int r;

	if (ka != kb)
		return (int)ka - (int)kb;
	switch (ka) {
	case SK_CPU:
		return (a->cpu > b->cpu) - (a->cpu < b->cpu);
	case SK_ZONE:
		return (a->id > b->id) - (a->id < b->id);
	case SK_COUNTER:
		if (a->cpu != b->cpu)
			return (a->cpu > b->cpu) - (a->cpu < b->cpu);
		return (a->counter > b->counter) - (a->counter < b->counter);
	case SK_NAMED:
		if (a->type != b->type)
			return a->type - b->type;
		r = strncmp(a->name, b->name, THR_NAME_LEN);
		return r;
	default:
		return 0;
	}
}

static int cmp_cond(const void *pa, const void *pb)
{
	const struct cond *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

static bool ent_eq(const struct thr_entity *a, const struct thr_entity *b)
{
	return a->kind == b->kind && a->id == b->id && strncmp(a->name, b->name, THR_NAME_LEN) == 0;
}

static void ep_add_entity(struct thr_episode *ep, const struct thr_entity *e)
{
	for (size_t i = 0; i < ep->naffected; i++)
		if (ent_eq(&ep->affected[i], e))
			return;
	if (ep->naffected < THR_MAX_AFFECTED)
		ep->affected[ep->naffected++] = *e;
	else
		ep->affected_dropped++;
}

static int build_episodes(struct conds *c, const struct thr_opts *o, struct thr_result *r)
{
	uint64_t uend = 0;
	size_t cap = 0;

	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_cond);
	for (size_t i = 0; i < c->n; i++) {
		const struct cond *x = &c->v[i];
		struct thr_episode *ep = r->nepisodes ? &r->episodes[r->nepisodes - 1] : NULL;

		/* Union length, merged gaps excluded. */
		if (x->start >= uend) {
			r->throttled_ns += x->end - x->start;
			uend = x->end;
		} else if (x->end > uend) {
			r->throttled_ns += x->end - uend;
			uend = x->end;
		}
		if (!ep || x->start > ep->end_ns + o->merge_gap_ns) {
			if (r->nepisodes == cap) {
				size_t ncap = cap ? 2 * cap : 8;
				struct thr_episode *nv = realloc(r->episodes, ncap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				r->episodes = nv;
				cap = ncap;
			}
			ep = &r->episodes[r->nepisodes++];
			memset(ep, 0, sizeof(*ep));
			ep->start_ns = x->start;
			ep->end_ns = x->end;
		}
		if (x->end > ep->end_ns)
			ep->end_ns = x->end;
		ep->causes |= x->causes;
		r->causes |= x->causes;
		ep_add_entity(ep, &x->ent);
	}
	return 0;
}

int throttle_analyze(const struct thr_event *ev, size_t n, const struct thr_opts *oin,
		     struct thr_result *r)
{
	struct thr_opts o = *oin;
	const struct thr_event **v = NULL;
	struct conds c = { 0 };
	size_t nv = 0;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (o.end_ns < o.start_ns || (n && !ev))
		return -EINVAL;
	if (!o.busy_permille)
		o.busy_permille = 900;
	if (!o.freq_tol_permille || o.freq_tol_permille >= 1000)
		o.freq_tol_permille = 50;
	r->run_ns = o.end_ns - o.start_ns;
	if (n) {
		v = calloc(n, sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (stream_of(&ev[i]) == SK_BAD || memchr(ev[i].name, 0, THR_NAME_LEN) == NULL)
			r->ignored++;
		else
			v[nv++] = &ev[i];
	}
	/* Stable grouping: qsort is not stable, but each stream is re-sorted
	 * by (time, kind, index in the stream) so ties are settled there. */
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_stream);
	for (size_t i = 0; i < nv && !err;) {
		size_t j = i + 1;

		while (j < nv && cmp_stream(&v[i], &v[j]) == 0)
			j++;
		switch (stream_of(v[i])) {
		case SK_CPU:
			err = sweep_cpu(v + i, j - i, &o, &c, &r->inputs);
			break;
		case SK_ZONE:
			err = sweep_zone(v + i, j - i, &o, &c, &r->inputs);
			break;
		case SK_NAMED:
			err = sweep_named(v + i, j - i, &o, &c, &r->inputs);
			break;
		case SK_COUNTER:
			err = sweep_counter(v + i, j - i, &o, &c, &r->inputs);
			break;
		default:
			break;
		}
		i = j;
	}
	if (!err)
		err = build_episodes(&c, &o, r);
	free(c.v);
	free(v);
	if (err) {
		throttle_result_free(r);
		return err;
	}
	r->share = r->run_ns ? (double)r->throttled_ns / (double)r->run_ns : 0.0;
	if (r->nepisodes)
		r->verdict = THR_VERDICT_THROTTLED;
	else if ((r->inputs & THR_IN_FREQ && r->inputs & THR_IN_BUSY) ||
		 r->inputs & (THR_IN_ZONES | THR_IN_COOLING | THR_IN_COUNTERS | THR_IN_EXTERNAL))
		r->verdict = THR_VERDICT_NOT_THROTTLED;
	else
		r->verdict = THR_VERDICT_UNKNOWN;
	return 0;
}

void throttle_result_free(struct thr_result *r)
{
	if (!r)
		return;
	free(r->episodes);
	r->episodes = NULL;
	r->nepisodes = 0;
}

double throttle_share_between(const struct thr_result *r, uint64_t t0, uint64_t t1)
{
	uint64_t sum = 0;

	if (!r || t1 <= t0)
		return 0.0;
	for (size_t i = 0; i < r->nepisodes; i++) {
		uint64_t s = r->episodes[i].start_ns > t0 ? r->episodes[i].start_ns : t0;
		uint64_t e = r->episodes[i].end_ns < t1 ? r->episodes[i].end_ns : t1;

		if (e > s)
			sum += e - s;
	}
	return (double)sum / (double)(t1 - t0);
}

const char *thr_cause_name(uint32_t bit)
{
	switch (bit) {
	case THR_CAUSE_THERMAL_TRIP:
		return "thermal_trip";
	case THR_CAUSE_FREQ_CAP:
		return "freq_cap";
	case THR_CAUSE_COOLING:
		return "cooling_device";
	case THR_CAUSE_POWER_CAP:
		return "power_cap";
	case THR_CAUSE_BUSY_BELOW_MAX:
		return "busy_below_max";
	case THR_CAUSE_HW_THERMAL:
		return "hw_thermal";
	}
	return "unknown";
}

const char *thr_verdict_name(enum thr_verdict v)
{
	switch (v) {
	case THR_VERDICT_THROTTLED:
		return "throttled";
	case THR_VERDICT_NOT_THROTTLED:
		return "not-throttled";
	default:
		return "unknown";
	}
}
