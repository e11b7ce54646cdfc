// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Start-of-run cpufreq / thermal / thermal_throttle state (see sysfs_seed.h). */
#include "sysmon/sysfs_seed.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jetson/jetson_fs.h"

/* Plausibility bounds: anything outside is a broken or hostile file. */
#define MAX_KHZ	       100000000LL /* 100 GHz */
#define MIN_MC	       (-274000LL) /* below absolute zero */
#define MAX_MC	       1000000LL   /* 1000 C */
#define MAX_COUNTER    (1LL << 62)
#define MAX_CDEV_STATE 1000000LL

static void read_val(const struct jfs *fs, const char *path, long long lo, long long hi,
		     struct seed_val *v)
{
	long long x;
	int err = jfs_read_ll(fs, path, &x);

	memset(v, 0, sizeof(*v));
	if (!err && (x < lo || x > hi))
		err = -ERANGE;
	v->ok = !err;
	v->err = err;
	v->v = err ? 0 : x;
}

/* A printable one-line name, or "" if absent or garbage. */
static void read_name(const struct jfs *fs, const char *path, char *out, size_t len)
{
	char buf[256];
	int n = jfs_read(fs, path, buf, sizeof(buf));

	out[0] = '\0';
	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		if (!isprint((unsigned char)buf[i]))
			return;
	n = (int)strnlen(buf, len - 1);
	memcpy(out, buf, (size_t)n);
	out[n] = '\0';
}

/* "cpu12" -> 12 with prefix "cpu"; -1 unless the rest is all digits and small. */
static int parse_index(const char *name, const char *prefix, int max)
{
	size_t pl = strlen(prefix);
	long v = 0;

	if (strncmp(name, prefix, pl) != 0 || !name[pl] || strlen(name + pl) > 6)
		return -1;
	for (const char *p = name + pl; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v < max ? (int)v : -1;
}

int seed_trip_type(const char *s)
{
	if (!strcmp(s, "active"))
		return THR_TRIP_ACTIVE;
	if (!strcmp(s, "passive"))
		return THR_TRIP_PASSIVE;
	if (!strcmp(s, "hot"))
		return THR_TRIP_HOT;
	if (!strcmp(s, "critical"))
		return THR_TRIP_CRITICAL;
	return -1;
}

static const char *const counter_files[SEED_NCOUNTERS] = {
	"core_throttle_count",
	"package_throttle_count",
	"core_power_limit_count",
	"package_power_limit_count",
};

static void read_counters(const struct jfs *fs, struct seed_cpu *c)
{
	char p[128];

	for (int k = 0; k < SEED_NCOUNTERS; k++) {
		jfs_path(p, sizeof(p), "sys/devices/system/cpu/cpu%d/thermal_throttle/%s", c->cpu,
			 counter_files[k]);
		read_val(fs, p, 0, MAX_COUNTER, &c->counters[k]);
	}
}

static void read_cpu(const struct jfs *fs, struct seed_cpu *c)
{
	char p[128], d[96];
	char **names = NULL;
	size_t n = 0;

	jfs_path(d, sizeof(d), "sys/devices/system/cpu/cpu%d/cpufreq", c->cpu);
	if (jfs_list(fs, d, &names, &n) == 0) {
		c->has_cpufreq = true;
		jfs_free_list(names, n);
		jfs_path(p, sizeof(p), "%s/scaling_cur_freq", d);
		read_val(fs, p, 1, MAX_KHZ, &c->cur_khz);
		jfs_path(p, sizeof(p), "%s/scaling_min_freq", d);
		read_val(fs, p, 1, MAX_KHZ, &c->min_khz);
		jfs_path(p, sizeof(p), "%s/scaling_max_freq", d);
		read_val(fs, p, 1, MAX_KHZ, &c->max_khz);
		jfs_path(p, sizeof(p), "%s/cpuinfo_min_freq", d);
		read_val(fs, p, 1, MAX_KHZ, &c->hw_min_khz);
		jfs_path(p, sizeof(p), "%s/cpuinfo_max_freq", d);
		read_val(fs, p, 1, MAX_KHZ, &c->hw_max_khz);
		jfs_path(p, sizeof(p), "%s/scaling_governor", d);
		read_name(fs, p, c->governor, sizeof(c->governor));
		jfs_path(p, sizeof(p), "%s/scaling_driver", d);
		read_name(fs, p, c->driver, sizeof(c->driver));
	}
	jfs_path(d, sizeof(d), "sys/devices/system/cpu/cpu%d/thermal_throttle", c->cpu);
	if (jfs_list(fs, d, &names, &n) == 0) {
		c->has_throttle = true;
		jfs_free_list(names, n);
		read_counters(fs, c);
	}
}

static void read_zone(const struct jfs *fs, struct seed_zone *z)
{
	char d[64], p[128];

	jfs_path(d, sizeof(d), "sys/class/thermal/thermal_zone%d", z->id);
	jfs_path(p, sizeof(p), "%s/type", d);
	read_name(fs, p, z->type, sizeof(z->type));
	jfs_path(p, sizeof(p), "%s/temp", d);
	read_val(fs, p, MIN_MC, MAX_MC, &z->temp_mc);
	for (int i = 0; i < SEED_MAX_TRIPS; i++) {
		struct seed_trip *t = &z->trips[z->ntrips];

		memset(t, 0, sizeof(*t));
		t->idx = i;
		jfs_path(p, sizeof(p), "%s/trip_point_%d_temp", d, i);
		read_val(fs, p, MIN_MC, MAX_MC, &t->temp_mc);
		if (!t->temp_mc.ok && t->temp_mc.err == -ENOENT)
			continue; /* trips may be sparse on broken trees; keep looking */
		jfs_path(p, sizeof(p), "%s/trip_point_%d_hyst", d, i);
		read_val(fs, p, 0, MAX_MC, &t->hyst_mc);
		jfs_path(p, sizeof(p), "%s/trip_point_%d_type", d, i);
		read_name(fs, p, t->type, sizeof(t->type));
		t->ttype = seed_trip_type(t->type);
		z->ntrips++;
	}
}

static void read_cdev(const struct jfs *fs, struct seed_cdev *c)
{
	char p[128];

	jfs_path(p, sizeof(p), "sys/class/thermal/cooling_device%d/type", c->id);
	read_name(fs, p, c->type, sizeof(c->type));
	jfs_path(p, sizeof(p), "sys/class/thermal/cooling_device%d/cur_state", c->id);
	read_val(fs, p, 0, MAX_CDEV_STATE, &c->cur_state);
	jfs_path(p, sizeof(p), "sys/class/thermal/cooling_device%d/max_state", c->id);
	read_val(fs, p, 0, MAX_CDEV_STATE, &c->max_state);
}

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Indexes of dir entries named prefixN, sorted, deduplicated, bounded. */
static int list_indexes(const struct jfs *fs, const char *dir, const char *prefix, int max,
			int **out, size_t *nout, size_t *skipped)
{
	char **names = NULL;
	size_t n = 0, k = 0;
	int *v;

	*out = NULL;
	*nout = 0;
	if (jfs_list(fs, dir, &names, &n))
		return 0; /* absent: the family is unavailable */
	v = calloc(n + 1, sizeof(*v));
	if (!v) {
		jfs_free_list(names, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int x = parse_index(names[i], prefix, max);

		if (x >= 0)
			v[k++] = x;
		else if (!strncmp(names[i], prefix, strlen(prefix)) &&
			 isdigit((unsigned char)names[i][strlen(prefix)]))
			(*skipped)++;
	}
	jfs_free_list(names, n);
	qsort(v, k, sizeof(*v), cmp_int);
	size_t m = 0;

	for (size_t i = 0; i < k; i++)
		if (!m || v[m - 1] != v[i])
			v[m++] = v[i];
	*out = v;
	*nout = m;
	return 0;
}

int sysfs_seed_read(const char *root, struct sysfs_seed *s)
{
	struct jfs fs;
	int *idx = NULL;
	size_t n = 0;
	int err;

	memset(s, 0, sizeof(*s));
	err = jfs_open(&fs, root);
	if (err)
		return err;
	err = list_indexes(&fs, "sys/devices/system/cpu", "cpu", SEED_MAX_CPUS, &idx, &n,
			   &s->skipped);
	if (!err && n) {
		s->cpus = calloc(n, sizeof(*s->cpus));
		if (!s->cpus)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < n; i++) {
			struct seed_cpu *c = &s->cpus[s->ncpus++];

			c->cpu = idx[i];
			read_cpu(&fs, c);
			s->cpufreq_available |= c->cur_khz.ok || c->max_khz.ok;
			s->throttle_counters_available |= c->has_throttle;
		}
	}
	free(idx);
	idx = NULL;
	if (!err)
		err = list_indexes(&fs, "sys/class/thermal", "thermal_zone", SEED_MAX_ZONES, &idx,
				   &n, &s->skipped);
	if (!err && n) {
		s->zones = calloc(n, sizeof(*s->zones));
		if (!s->zones)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < n; i++) {
			s->zones[s->nzones].id = idx[i];
			read_zone(&fs, &s->zones[s->nzones++]);
		}
		s->thermal_available = s->nzones > 0;
	}
	free(idx);
	idx = NULL;
	if (!err)
		err = list_indexes(&fs, "sys/class/thermal", "cooling_device", SEED_MAX_CDEVS, &idx,
				   &n, &s->skipped);
	if (!err && n) {
		s->cdevs = calloc(n, sizeof(*s->cdevs));
		if (!s->cdevs)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < n; i++) {
			s->cdevs[s->ncdevs].id = idx[i];
			read_cdev(&fs, &s->cdevs[s->ncdevs++]);
		}
	}
	free(idx);
	jfs_close(&fs);
	if (err)
		sysfs_seed_free(s);
	return err;
}

int sysfs_seed_read_counters(const char *root, struct sysfs_seed *s)
{
	struct jfs fs;
	int err = jfs_open(&fs, root);

	if (err)
		return err;
	for (size_t i = 0; i < s->ncpus; i++)
		if (s->cpus[i].has_throttle)
			read_counters(&fs, &s->cpus[i]);
	jfs_close(&fs);
	return 0;
}

void sysfs_seed_free(struct sysfs_seed *s)
{
	if (!s)
		return;
	free(s->cpus);
	free(s->zones);
	free(s->cdevs);
	memset(s, 0, sizeof(*s));
}

struct thr_event *thr_events_push(struct thr_event **ev, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		struct thr_event *nv = realloc(*ev, nc * sizeof(*nv));

		if (!nv)
			return NULL;
		*ev = nv;
		*cap = nc;
	}
	memset(&(*ev)[*n], 0, sizeof(**ev));
	return &(*ev)[(*n)++];
}

static struct thr_event *push(struct thr_event **ev, size_t *n, size_t *cap, uint64_t ts, int type)
{
	struct thr_event *e = thr_events_push(ev, n, cap);

	if (e) {
		e->ts_ns = ts;
		e->type = (uint16_t)type;
	}
	return e;
}

int sysfs_seed_counters_to_events(const struct sysfs_seed *s, uint64_t ts, struct thr_event **ev,
				  size_t *n, size_t *cap)
{
	size_t n0 = *n;
	static const uint32_t kinds[SEED_NCOUNTERS] = {
		THR_CNT_CORE_THROTTLE,
		THR_CNT_PKG_THROTTLE,
		THR_CNT_CORE_POWER_LIMIT,
		THR_CNT_PKG_POWER_LIMIT,
	};

	for (size_t i = 0; i < s->ncpus; i++) {
		for (int k = 0; k < SEED_NCOUNTERS; k++) {
			const struct seed_val *v = &s->cpus[i].counters[k];
			struct thr_event *e;

			if (!s->cpus[i].has_throttle || !v->ok)
				continue;
			e = push(ev, n, cap, ts, THR_EV_COUNTER);
			if (!e)
				return -ENOMEM;
			e->cpu = s->cpus[i].cpu;
			e->counter = kinds[k];
			e->a = v->v;
		}
	}
	return (int)(*n - n0);
}

int sysfs_seed_to_events(const struct sysfs_seed *s, uint64_t ts, struct thr_event **ev, size_t *n,
			 size_t *cap)
{
	size_t n0 = *n;
	struct thr_event *e;

	for (size_t i = 0; i < s->ncpus; i++) {
		const struct seed_cpu *c = &s->cpus[i];

		if (c->hw_max_khz.ok) {
			if (!(e = push(ev, n, cap, ts, THR_EV_HW_MAX)))
				return -ENOMEM;
			e->cpu = c->cpu;
			e->a = c->hw_max_khz.v;
		}
		if (c->max_khz.ok) {
			if (!(e = push(ev, n, cap, ts, THR_EV_FREQ_LIMITS)))
				return -ENOMEM;
			e->cpu = c->cpu;
			e->a = c->min_khz.ok ? c->min_khz.v : 0;
			e->b = c->max_khz.v;
		}
		if (c->cur_khz.ok) {
			if (!(e = push(ev, n, cap, ts, THR_EV_FREQ)))
				return -ENOMEM;
			e->cpu = c->cpu;
			e->a = c->cur_khz.v;
		}
	}
	for (size_t i = 0; i < s->nzones; i++) {
		const struct seed_zone *z = &s->zones[i];

		for (size_t k = 0; k < z->ntrips; k++) {
			const struct seed_trip *t = &z->trips[k];

			if (!t->temp_mc.ok || t->ttype < 0)
				continue;
			if (!(e = push(ev, n, cap, ts, THR_EV_TRIP_DEF)))
				return -ENOMEM;
			e->id = z->id;
			e->idx = t->idx;
			e->a = t->temp_mc.v;
			e->b = t->hyst_mc.ok ? t->hyst_mc.v : 0;
			e->trip_type = (uint16_t)t->ttype;
			snprintf(e->name, sizeof(e->name), "%s", z->type);
		}
		/* -256 C is how Tegra drivers say "sensor powered down". */
		if (z->temp_mc.ok && z->temp_mc.v != -256000) {
			if (!(e = push(ev, n, cap, ts, THR_EV_TEMP)))
				return -ENOMEM;
			e->id = z->id;
			e->a = z->temp_mc.v;
			snprintf(e->name, sizeof(e->name), "%s", z->type);
		}
	}
	for (size_t i = 0; i < s->ncdevs; i++) {
		const struct seed_cdev *c = &s->cdevs[i];

		if (!c->cur_state.ok || !c->type[0])
			continue;
		if (!(e = push(ev, n, cap, ts, THR_EV_CDEV)))
			return -ENOMEM;
		snprintf(e->name, sizeof(e->name), "%s", c->type);
		e->a = c->cur_state.v;
	}
	if (sysfs_seed_counters_to_events(s, ts, ev, n, cap) < 0)
		return -ENOMEM;
	return (int)(*n - n0);
}
