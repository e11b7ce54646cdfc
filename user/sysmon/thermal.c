// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPU frequency / thermal timeline and its report sections (see thermal.h). */
#include "sysmon/thermal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"

int thermal_parse_proc_stat(const char *text, struct cpu_times *out, size_t max)
{
	const char *p = text;
	int n = 0;

	if (!text)
		return -EINVAL;
	for (size_t i = 0; i < max; i++)
		out[i].ok = false;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		const char *q = p;
		uint64_t v[8] = { 0 }, total = 0, cpu = 0;
		int k = 0;
		bool bad = false, overflow = false;

		if (strncmp(q, "cpu", 3) == 0 && isdigit((unsigned char)q[3])) {
			q += 3;
			for (; isdigit((unsigned char)*q) && cpu < max; q++)
				cpu = cpu * 10 + (uint64_t)(*q - '0');
			/* user nice system idle iowait irq softirq steal; guest
			 * time is already inside user. */
			for (; k < 8 && !bad; k++) {
				if (*q != ' ') {
					bad = true;
					break;
				}
				while (*q == ' ')
					q++;
				if (!isdigit((unsigned char)*q)) {
					bad = true;
					break;
				}
				for (; isdigit((unsigned char)*q); q++) {
					if (v[k] > (UINT64_MAX / 16))
						overflow = true;
					v[k] = v[k] * 10 + (uint64_t)(*q - '0');
				}
			}
			/* Kernels before 2.6.11 stop after steal-less fields:
			 * at least user..iowait must be there. */
			if (!overflow && (!bad || k >= 5)) {
				for (int i = 0; i < 8; i++)
					total += v[i];
				if (cpu < max && isdigit((unsigned char)p[3]) &&
				    total >= v[3] + v[4]) {
					out[cpu].ok = true;
					out[cpu].total = total;
					out[cpu].busy = total - v[3] - v[4];
					n++;
				}
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return n ? n : -EINVAL;
}

int thermal_tl_init(struct thermal_tl *t, size_t ncpus, unsigned busy_permille)
{
	memset(t, 0, sizeof(*t));
	t->ncpus = ncpus;
	t->busy_permille = busy_permille ? busy_permille : 900;
	if (ncpus) {
		t->pending_busy = calloc(ncpus, sizeof(*t->pending_busy));
		if (!t->pending_busy)
			return -ENOMEM;
	}
	return 0;
}

void thermal_tl_free(struct thermal_tl *t)
{
	free(t->ev);
	free(t->pending_busy);
	free(t->jsrc);
	free(t->jcause);
	memset(t, 0, sizeof(*t));
}

struct thr_event *thermal_tl_push(struct thermal_tl *t, uint64_t ts, int type)
{
	struct thr_event *e;

	if (t->n >= THERMAL_MAX_EVENTS) {
		t->dropped++;
		return NULL;
	}
	e = thr_events_push(&t->ev, &t->n, &t->cap);
	if (!e) {
		t->dropped++;
		return NULL;
	}
	e->ts_ns = ts;
	e->type = (uint16_t)type;
	return e;
}

static void flush_one(struct thermal_tl *t, size_t cpu)
{
	struct thr_event *p = &t->pending_busy[cpu];
	struct thr_event *e;

	if (!p->type)
		return;
	e = thermal_tl_push(t, p->ts_ns, THR_EV_BUSY);
	if (e)
		*e = *p;
	p->type = 0;
}

void thermal_tl_busy(struct thermal_tl *t, const struct cpu_times *prev,
		     const struct cpu_times *cur, size_t ncpu, uint64_t t0, uint64_t t1)
{
	if (t1 <= t0)
		return;
	for (size_t c = 0; c < ncpu && c < t->ncpus; c++) {
		struct thr_event *p = &t->pending_busy[c];
		uint64_t dt, db;
		int64_t share;

		if (!prev[c].ok || !cur[c].ok || cur[c].total <= prev[c].total ||
		    cur[c].busy < prev[c].busy)
			continue;
		dt = cur[c].total - prev[c].total;
		db = cur[c].busy - prev[c].busy;
		share = db >= dt ? 1000 : (int64_t)(db * 1000 / dt);
		if (p->type && p->ts_ns == t0 &&
		    (p->a >= t->busy_permille) == (share >= t->busy_permille)) {
			uint64_t d = t1 - t0;

			p->a = (int64_t)(((double)p->a * (double)p->dur_ns +
					  (double)share * (double)d) /
					 (double)(p->dur_ns + d));
			p->dur_ns += d;
			p->ts_ns = t1;
			continue;
		}
		flush_one(t, c);
		memset(p, 0, sizeof(*p));
		p->type = THR_EV_BUSY;
		p->cpu = (int32_t)c;
		p->ts_ns = t1;
		p->dur_ns = t1 - t0;
		p->a = share;
	}
}

void thermal_tl_flush(struct thermal_tl *t)
{
	for (size_t c = 0; c < t->ncpus; c++)
		flush_one(t, c);
}

uint32_t thermal_jetson_cause(enum jetson_throttle_kind k)
{
	switch (k) {
	case JETSON_THR_GPU_BUSY_BELOW_MAX:
		return THR_CAUSE_BUSY_BELOW_MAX;
	case JETSON_THR_ZONE_TRIP:
		return THR_CAUSE_THERMAL_TRIP;
	case JETSON_THR_COOLING_ALERT:
		return THR_CAUSE_COOLING;
	}
	return THR_CAUSE_POWER_CAP;
}

void thermal_tl_jetson(struct thermal_tl *t, uint64_t ts, const struct jetson_throttle_signal *sig,
		       size_t nsig)
{
	char(*now)[THR_NAME_LEN] = nsig ? calloc(nsig, THR_NAME_LEN) : NULL;
	uint32_t *cause = nsig ? calloc(nsig, sizeof(*cause)) : NULL;
	size_t nnow = 0;

	if (nsig && (!now || !cause)) {
		free(now);
		free(cause);
		t->dropped++;
		return;
	}
	for (size_t i = 0; i < nsig; i++) {
		char name[THR_NAME_LEN];
		bool dup = false;

		snprintf(name, sizeof(name), "jetson:%.40s", sig[i].source);
		for (size_t k = 0; k < nnow; k++)
			dup |= !strcmp(now[k], name);
		if (dup)
			continue;
		memcpy(now[nnow], name, THR_NAME_LEN);
		cause[nnow++] = thermal_jetson_cause(sig[i].kind);
	}
	for (size_t i = 0; i < nnow; i++) {
		bool was = false;
		struct thr_event *e;

		for (size_t k = 0; k < t->njsrc; k++)
			was |= !strcmp(t->jsrc[k], now[i]);
		if (was || !(e = thermal_tl_push(t, ts, THR_EV_EXTERNAL)))
			continue;
		memcpy(e->name, now[i], THR_NAME_LEN);
		e->a = 1;
		e->cause = cause[i];
	}
	for (size_t k = 0; k < t->njsrc; k++) {
		bool still = false;
		struct thr_event *e;

		for (size_t i = 0; i < nnow; i++)
			still |= !strcmp(t->jsrc[k], now[i]);
		if (still || !(e = thermal_tl_push(t, ts, THR_EV_EXTERNAL)))
			continue;
		memcpy(e->name, t->jsrc[k], THR_NAME_LEN);
		e->a = 0;
		e->cause = t->jcause[k];
	}
	free(t->jsrc);
	free(t->jcause);
	t->jsrc = now;
	t->jcause = cause;
	t->njsrc = nnow;
}

/* ---- summaries ---- */
struct kv {
	int32_t key;
	uint64_t ts;
	int64_t v;
	size_t seq;
};

static int cmp_kv(const void *pa, const void *pb)
{
	const struct kv *a = pa, *b = pb;

	if (a->key != b->key)
		return (a->key > b->key) - (a->key < b->key);
	if (a->ts != b->ts)
		return (a->ts > b->ts) - (a->ts < b->ts);
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Values of one event type keyed by CPU (or zone id), sorted. */
static struct kv *collect(const struct thermal_tl *t, int type, uint64_t t0, size_t *n)
{
	struct kv *v = calloc(t->n + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct thr_event *e = &t->ev[i];

		if (e->type != type)
			continue;
		v[k++] = (struct kv){ type == THR_EV_TEMP ? e->id : e->cpu,
				      e->ts_ns ? e->ts_ns : t0, e->a, i };
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_kv);
	*n = k;
	return v;
}

struct stats {
	int64_t min, max;
	double mean; /* time-weighted over [first reading, t1] */
	size_t n;
};

/* Group [i, j) of one key: each value holds until the next one. */
static struct stats group_stats(const struct kv *v, size_t i, size_t j, uint64_t t0, uint64_t t1)
{
	struct stats s = { v[i].v, v[i].v, 0, j - i };
	double acc = 0, w = 0;

	for (size_t k = i; k < j; k++) {
		uint64_t a = v[k].ts < t0 ? t0 : v[k].ts;
		uint64_t b = k + 1 < j ? v[k + 1].ts : t1;

		if (v[k].v < s.min)
			s.min = v[k].v;
		if (v[k].v > s.max)
			s.max = v[k].v;
		if (b > t1)
			b = t1;
		if (b > a) {
			acc += (double)v[k].v * (double)(b - a);
			w += (double)(b - a);
		}
	}
	s.mean = w > 0 ? acc / w : (double)v[j - 1].v;
	return s;
}

static const struct seed_cpu *seed_cpu(const struct sysfs_seed *s, int cpu)
{
	for (size_t i = 0; s && i < s->ncpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

static const char *trip_type_name(int t)
{
	static const char *const n[] = { "active", "passive", "hot", "critical" };

	return t >= 0 && t < 4 ? n[t] : "unknown";
}

static double rel_s(uint64_t ts, uint64_t t0)
{
	return ts > t0 ? (double)(ts - t0) / 1e9 : 0.0;
}

static int cpufreq_json(const struct thermal_tl *t, const struct sysfs_seed *seed, uint64_t t0,
			uint64_t t1, cJSON *root)
{
	cJSON *o = cJSON_AddObjectToObject(root, "cpufreq"), *cpus;
	size_t n, nlim;
	struct kv *v = collect(t, THR_EV_FREQ, t0, &n);
	struct kv *lim = collect(t, THR_EV_FREQ_LIMITS, t0, &nlim);

	if (!o || !v || !lim) {
		free(v);
		free(lim);
		return -ENOMEM;
	}
	cJSON_AddBoolToObject(o, "available", n > 0);
	if (!n)
		cJSON_AddStringToObject(o, "reason",
					"no cpufreq in sysfs and no power:cpu_frequency event "
					"(VM or cpufreq driver absent)");
	cpus = cJSON_AddArrayToObject(o, "cpus");
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int cpu = v[i].key;
		const struct seed_cpu *sc = seed_cpu(seed, cpu);
		cJSON *c = cJSON_CreateObject();
		size_t changes = 0;
		int64_t lo_lim = -1;

		while (j < n && v[j].key == cpu)
			j++;
		struct stats s = group_stats(v, i, j, t0, t1);

		cJSON_AddItemToArray(cpus, c);
		cJSON_AddNumberToObject(c, "cpu", cpu);
		cJSON_AddNumberToObject(c, "min_mhz", s.min / 1000.0);
		cJSON_AddNumberToObject(c, "mean_mhz", s.mean / 1000.0);
		cJSON_AddNumberToObject(c, "max_mhz", s.max / 1000.0);
		cJSON_AddNumberToObject(c, "readings", (double)s.n);
		for (size_t k = 0; k < nlim; k++) {
			if (lim[k].key != cpu)
				continue;
			changes++;
			/* FREQ_LIMITS carries min in a, max in b: look it up. */
			int64_t mx = t->ev[lim[k].seq].b;

			if (lo_lim < 0 || mx < lo_lim)
				lo_lim = mx;
		}
		if (sc && sc->max_khz.ok)
			cJSON_AddNumberToObject(c, "allowed_max_mhz", sc->max_khz.v / 1000.0);
		else
			cJSON_AddNullToObject(c, "allowed_max_mhz");
		if (lo_lim > 0)
			cJSON_AddNumberToObject(c, "lowest_allowed_max_mhz", lo_lim / 1000.0);
		else
			cJSON_AddNullToObject(c, "lowest_allowed_max_mhz");
		if (sc && sc->hw_max_khz.ok)
			cJSON_AddNumberToObject(c, "hw_max_mhz", sc->hw_max_khz.v / 1000.0);
		else
			cJSON_AddNullToObject(c, "hw_max_mhz");
		cJSON_AddNumberToObject(c, "limit_events", (double)changes);
		if (sc && sc->governor[0])
			cJSON_AddStringToObject(c, "governor", sc->governor);
		if (sc && sc->driver[0])
			cJSON_AddStringToObject(c, "driver", sc->driver);
		i = j;
	}
	free(v);
	free(lim);
	return 0;
}

static const char *zone_name(const struct thermal_tl *t, const struct sysfs_seed *seed, int id)
{
	for (size_t i = 0; seed && i < seed->nzones; i++)
		if (seed->zones[i].id == id && seed->zones[i].type[0])
			return seed->zones[i].type;
	for (size_t i = 0; i < t->n; i++)
		if ((t->ev[i].type == THR_EV_TEMP || t->ev[i].type == THR_EV_TRIP_CROSSED) &&
		    t->ev[i].id == id && t->ev[i].name[0])
			return t->ev[i].name;
	return "";
}

static int thermal_json(const struct thermal_tl *t, const struct sysfs_seed *seed, uint64_t t0,
			uint64_t t1, cJSON *root)
{
	cJSON *o = cJSON_AddObjectToObject(root, "thermal"), *zones, *crossed, *cdevs;
	size_t n;
	struct kv *v = collect(t, THR_EV_TEMP, t0, &n);

	if (!o || !v) {
		free(v);
		return -ENOMEM;
	}
	bool avail = n > 0 || (seed && seed->thermal_available);

	cJSON_AddBoolToObject(o, "available", avail);
	if (!avail)
		cJSON_AddStringToObject(o, "reason",
					"no thermal zones in sysfs and no "
					"thermal:thermal_temperature event");
	zones = cJSON_AddArrayToObject(o, "zones");
	/* Every seeded zone is listed, readable or not; zones only seen in
	 * events are added after. */
	for (size_t zi = 0; seed && zi < seed->nzones; zi++) {
		const struct seed_zone *z = &seed->zones[zi];
		cJSON *c = cJSON_CreateObject(), *trips;
		size_t i = 0, j;

		cJSON_AddItemToArray(zones, c);
		cJSON_AddNumberToObject(c, "id", z->id);
		cJSON_AddStringToObject(c, "type", z->type);
		while (i < n && v[i].key != z->id)
			i++;
		for (j = i; j < n && v[j].key == z->id;)
			j++;
		if (j > i) {
			struct stats s = group_stats(v, i, j, t0, t1);

			cJSON_AddNumberToObject(c, "min_c", s.min / 1000.0);
			cJSON_AddNumberToObject(c, "mean_c", s.mean / 1000.0);
			cJSON_AddNumberToObject(c, "max_c", s.max / 1000.0);
			cJSON_AddNumberToObject(c, "readings", (double)s.n);
		} else {
			cJSON_AddNullToObject(c, "min_c");
			cJSON_AddNullToObject(c, "mean_c");
			cJSON_AddNullToObject(c, "max_c");
			cJSON_AddNumberToObject(c, "readings", 0);
			cJSON_AddStringToObject(c, "unavailable",
						z->temp_mc.ok ? "sensor offline (-256 C)"
							      : strerror(-z->temp_mc.err));
		}
		trips = cJSON_AddArrayToObject(c, "trips");
		for (size_t k = 0; k < z->ntrips; k++) {
			const struct seed_trip *tr = &z->trips[k];
			cJSON *x;

			if (!tr->temp_mc.ok)
				continue;
			x = cJSON_CreateObject();
			cJSON_AddItemToArray(trips, x);
			cJSON_AddNumberToObject(x, "index", tr->idx);
			cJSON_AddStringToObject(x, "type", tr->type[0] ? tr->type : "unknown");
			cJSON_AddNumberToObject(x, "temp_c", tr->temp_mc.v / 1000.0);
			if (tr->hyst_mc.ok)
				cJSON_AddNumberToObject(x, "hyst_c", tr->hyst_mc.v / 1000.0);
			/* Reached = some reading at/above it, for non-disabled trips. */
			bool reached = false;

			for (size_t q = i; q < j && tr->temp_mc.v > 0; q++)
				reached |= v[q].v >= tr->temp_mc.v;
			cJSON_AddBoolToObject(x, "reached", reached);
		}
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool seeded = false;

		while (j < n && v[j].key == v[i].key)
			j++;
		for (size_t zi = 0; seed && zi < seed->nzones; zi++)
			seeded |= seed->zones[zi].id == v[i].key;
		if (!seeded) {
			struct stats s = group_stats(v, i, j, t0, t1);
			cJSON *c = cJSON_CreateObject();

			cJSON_AddItemToArray(zones, c);
			cJSON_AddNumberToObject(c, "id", v[i].key);
			cJSON_AddStringToObject(c, "type", zone_name(t, seed, v[i].key));
			cJSON_AddNumberToObject(c, "min_c", s.min / 1000.0);
			cJSON_AddNumberToObject(c, "mean_c", s.mean / 1000.0);
			cJSON_AddNumberToObject(c, "max_c", s.max / 1000.0);
			cJSON_AddNumberToObject(c, "readings", (double)s.n);
			cJSON_AddArrayToObject(c, "trips");
		}
		i = j;
	}
	crossed = cJSON_AddArrayToObject(o, "trips_crossed");
	cdevs = cJSON_AddArrayToObject(o, "cooling_devices");
	for (size_t i = 0; i < t->n; i++) {
		const struct thr_event *e = &t->ev[i];
		cJSON *x;

		if (e->type == THR_EV_TRIP_CROSSED) {
			x = cJSON_CreateObject();
			cJSON_AddItemToArray(crossed, x);
			cJSON_AddNumberToObject(x, "t_s", rel_s(e->ts_ns, t0));
			cJSON_AddNumberToObject(x, "zone_id", e->id);
			cJSON_AddStringToObject(x, "zone", zone_name(t, seed, e->id));
			cJSON_AddNumberToObject(x, "trip", e->idx);
			cJSON_AddStringToObject(x, "trip_type", trip_type_name(e->trip_type));
		} else if (e->type == THR_EV_CDEV) {
			cJSON *it = NULL, *found = NULL;

			cJSON_ArrayForEach(it, cdevs)
			{
				cJSON *nm = cJSON_GetObjectItem(it, "type");

				if (nm && cJSON_IsString(nm) && !strcmp(nm->valuestring, e->name))
					found = it;
			}
			if (!found) {
				found = cJSON_CreateObject();
				cJSON_AddItemToArray(cdevs, found);
				cJSON_AddStringToObject(found, "type", e->name);
				cJSON_AddBoolToObject(found, "fan", thr_cdev_is_fan(e->name));
				cJSON_AddNumberToObject(found, "max_state_seen", (double)e->a);
				cJSON_AddNumberToObject(found, "updates", 0);
			}
			cJSON *mx = cJSON_GetObjectItem(found, "max_state_seen");
			cJSON *up = cJSON_GetObjectItem(found, "updates");

			if (e->a > mx->valuedouble)
				cJSON_SetNumberValue(mx, (double)e->a);
			if (e->ts_ns)
				cJSON_SetNumberValue(up, up->valuedouble + 1);
		}
	}
	free(v);
	return 0;
}

static int throttling_json(const struct thermal_tl *t, const struct thr_result *r, uint64_t t0,
			   cJSON *root)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} inputs[] = {
		{ THR_IN_FREQ, "cpufreq" },
		{ THR_IN_BUSY, "cpu_busy" },
		{ THR_IN_ZONES, "thermal_zones" },
		{ THR_IN_COOLING, "cooling_devices" },
		{ THR_IN_COUNTERS, "thermal_throttle_counters" },
		{ THR_IN_EXTERNAL, "jetson" },
	};
	cJSON *o = cJSON_AddObjectToObject(root, "throttling"), *a, *eps;

	if (!o)
		return -ENOMEM;
	cJSON_AddStringToObject(o, "verdict", thr_verdict_name(r->verdict));
	if (r->verdict == THR_VERDICT_UNKNOWN)
		cJSON_AddStringToObject(o, "reason",
					"nothing to judge by: no cpufreq with busy data, no "
					"thermal zones, cooling devices or throttle counters");
	cJSON_AddNumberToObject(o, "throttled_share", r->share);
	cJSON_AddNumberToObject(o, "throttled_s", (double)r->throttled_ns / 1e9);
	cJSON_AddNumberToObject(o, "run_s", (double)r->run_ns / 1e9);
	a = cJSON_AddArrayToObject(o, "inputs");
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		if (r->inputs & inputs[i].bit)
			cJSON_AddItemToArray(a, cJSON_CreateString(inputs[i].name));
	a = cJSON_AddArrayToObject(o, "causes");
	for (int b = 0; b < THR_NCAUSES; b++)
		if (r->causes & (1u << b))
			cJSON_AddItemToArray(a, cJSON_CreateString(thr_cause_name(1u << b)));
	eps = cJSON_AddArrayToObject(o, "episodes");
	for (size_t i = 0; i < r->nepisodes; i++) {
		const struct thr_episode *ep = &r->episodes[i];
		cJSON *x = cJSON_CreateObject(), *c, *cpus, *zones, *cd, *src;

		cJSON_AddItemToArray(eps, x);
		cJSON_AddNumberToObject(x, "start_s", rel_s(ep->start_ns, t0));
		cJSON_AddNumberToObject(x, "end_s", rel_s(ep->end_ns, t0));
		cJSON_AddNumberToObject(x, "duration_s", (double)(ep->end_ns - ep->start_ns) / 1e9);
		c = cJSON_AddArrayToObject(x, "causes");
		for (int b = 0; b < THR_NCAUSES; b++)
			if (ep->causes & (1u << b))
				cJSON_AddItemToArray(c,
						     cJSON_CreateString(thr_cause_name(1u << b)));
		cpus = cJSON_AddArrayToObject(x, "cpus");
		zones = cJSON_AddArrayToObject(x, "zones");
		cd = cJSON_AddArrayToObject(x, "cooling_devices");
		src = cJSON_AddArrayToObject(x, "sources");
		for (size_t k = 0; k < ep->naffected; k++) {
			const struct thr_entity *en = &ep->affected[k];

			switch (en->kind) {
			case THR_ENT_CPU:
				cJSON_AddItemToArray(cpus, cJSON_CreateNumber(en->id));
				break;
			case THR_ENT_ZONE:
				cJSON_AddItemToArray(zones, cJSON_CreateString(en->name));
				break;
			case THR_ENT_CDEV:
				cJSON_AddItemToArray(cd, cJSON_CreateString(en->name));
				break;
			default:
				cJSON_AddItemToArray(src, cJSON_CreateString(en->name));
			}
		}
		cJSON_AddNumberToObject(x, "affected_not_listed", (double)ep->affected_dropped);
	}
	cJSON_AddNumberToObject(o, "ignored_events", (double)r->ignored);
	cJSON_AddNumberToObject(o, "events_dropped", (double)t->dropped);
	return 0;
}

int thermal_report_json(const struct thermal_tl *t, const struct sysfs_seed *seed,
			const struct thr_result *res, uint64_t t0, uint64_t t1, cJSON *root)
{
	int err = cpufreq_json(t, seed, t0, t1, root);

	if (!err)
		err = thermal_json(t, seed, t0, t1, root);
	if (!err)
		err = throttling_json(t, res, t0, root);
	return err;
}

bool thermal_has_trace(const struct thermal_tl *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].type == THR_EV_FREQ || t->ev[i].type == THR_EV_TEMP)
			return true;
	return false;
}

int thermal_trace_events(const struct thermal_tl *t, uint32_t pid, FILE *out, bool *first)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct thr_event *e = &t->ev[i];

		if (e->type != THR_EV_FREQ && e->type != THR_EV_TEMP)
			continue;
		if (!e->ts_ns) /* seeded values carry no time of their own */
			continue;
		if (!*first)
			fputc(',', out);
		*first = false;
		if (e->type == THR_EV_FREQ) {
			fprintf(out, "{\"name\":\"cpu%d MHz\",\"cat\":\"cpufreq\",\"ph\":\"C\",",
				e->cpu);
			fprintf(out, "\"ts\":%.3f,\"pid\":%" PRIu32 ",\"args\":{\"value\":%.3f}}\n",
				(double)e->ts_ns / 1000.0, pid, (double)e->a / 1000.0);
		} else {
			char name[THR_NAME_LEN + 24];

			snprintf(name, sizeof(name), "zone%d %s C", e->id, e->name);
			fputs("{\"name\":", out);
			json_write_str(out, name);
			fprintf(out,
				",\"cat\":\"thermal\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%" PRIu32
				",\"args\":{\"value\":%.3f}}\n",
				(double)e->ts_ns / 1000.0, pid, (double)e->a / 1000.0);
		}
	}
	return ferror(out) ? -EIO : 0;
}
