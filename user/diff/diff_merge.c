// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Several runs per side for `ebpf-prof diff` (diff_load.h, dl_merge_roots):
 * one report tree that stands for all of them, so that the comparison, the
 * call paths and the page read one profile per side. Counts (samples,
 * stacks, functions, probe calls, SQL executions) are summed; cycles are
 * concatenated; whole-run figures (duration, on- and off-CPU time, RSS,
 * tokens/s, energy) are the runs' mean. The comparison divides the summed
 * counts by the number of runs (dl_run.nruns). Each input tree was checked
 * by report_read; what is built here keeps within its limits.
 */
#include "diff/diff_load.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/* report_read's bound for counts: sums stop here instead of leaving it. */
#define DM_MAX_COUNT 18446744073709549568.0

static cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* Sets o.k to v (replacing), or to null when v is not finite. */
static int set_num(cJSON *o, const char *k, double v)
{
	cJSON *n;

	if (!cJSON_IsObject(o))
		return 0;
	n = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
	if (!n)
		return -ENOMEM;
	if (get(o, k)) {
		if (!cJSON_ReplaceItemInObjectCaseSensitive(o, k, n)) {
			cJSON_Delete(n);
			return -ENOMEM;
		}
		return 0;
	}
	if (!cJSON_AddItemToObject(o, k, n)) {
		cJSON_Delete(n);
		return -ENOMEM;
	}
	return 0;
}

static double add_count(double a, double b)
{
	double s = (isfinite(a) ? a : 0) + (isfinite(b) ? b : 0);

	return s > DM_MAX_COUNT ? DM_MAX_COUNT : s;
}

/* The object at a path of up to three keys (NULL ends it). */
static cJSON *at(const cJSON *root, const char *a, const char *b, const char *c)
{
	const cJSON *o = get(root, a);

	if (b)
		o = get(o, b);
	if (c)
		o = get(o, c);
	return (cJSON *)o;
}

/* m.path.key: the mean (or the sum) of the runs' values where present. */
static int combine_at(cJSON *m, cJSON *const *roots, size_t k, const char *a, const char *b,
		      const char *key, bool sum)
{
	double s = 0;
	size_t n = 0;

	for (size_t i = 0; i < k; i++) {
		double v = num(at(roots[i], a, b, NULL), key);

		if (isfinite(v)) {
			s = sum ? add_count(s, v) : s + v;
			n++;
		}
	}
	if (!n || !get(at(m, a, b, NULL), key))
		return 0;
	return set_num(at(m, a, b, NULL), key, sum ? s : s / (double)n);
}

/* ---- keyed sums of list entries (functions, probes, statements) ---- */

struct keyed {
	char **keys;
	cJSON **items;
	size_t n, cap;
	struct hashmap map;
};

static bool keyed_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct keyed *kd = ctx;

	return !strcmp(kd->keys[idx], key);
}

/* Index of key, added (taking a copy of item) when new; -ENOMEM. */
static int64_t keyed_get(struct keyed *kd, const char *key, const cJSON *item, bool *added)
{
	uint64_t h = ep_hashmap_hash_bytes(key, strlen(key), HASHMAP_SEED);
	int64_t at = ep_hashmap_find(&kd->map, h, key, keyed_eq, kd);

	*added = false;
	if (at >= 0)
		return at;
	if (kd->n == kd->cap) {
		size_t nc = kd->cap ? kd->cap * 2 : 64;
		char **nk = realloc(kd->keys, nc * sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		kd->keys = nk;
		cJSON **ni = realloc(kd->items, nc * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		kd->items = ni;
		kd->cap = nc;
	}
	kd->keys[kd->n] = strdup(key);
	kd->items[kd->n] = item ? cJSON_Duplicate(item, 1) : cJSON_CreateObject();
	if (!kd->keys[kd->n] || !kd->items[kd->n] ||
	    ep_hashmap_insert(&kd->map, h, (uint32_t)kd->n)) {
		free(kd->keys[kd->n]);
		cJSON_Delete(kd->items[kd->n]);
		return -ENOMEM;
	}
	*added = true;
	return (int64_t)kd->n++;
}

static void keyed_free(struct keyed *kd)
{
	for (size_t i = 0; i < kd->n; i++) {
		free(kd->keys[i]);
		cJSON_Delete(kd->items[i]);
	}
	free(kd->keys);
	free(kd->items);
	ep_hashmap_free(&kd->map);
}

/* Moves the entries into a new array (kd keeps none). */
static cJSON *keyed_array(struct keyed *kd, size_t max)
{
	cJSON *a = cJSON_CreateArray();

	if (!a)
		return NULL;
	for (size_t i = 0; i < kd->n; i++) {
		if (i >= max || !cJSON_AddItemToArray(a, kd->items[i])) {
			cJSON_Delete(kd->items[i]);
			kd->items[i] = NULL;
			if (i < max) {
				cJSON_Delete(a);
				a = NULL;
			}
			continue;
		}
		kd->items[i] = NULL;
	}
	return a;
}

/* Sums the listed fields of entries that share a key; others taken from
 * the first run that has the entry, and drop removed (percentiles of one
 * run do not combine). list(root) finds the array, keyf builds the key. */
static int merge_list(cJSON *m, cJSON *const *roots, size_t k, cJSON *(*list)(const cJSON *),
		      char *(*keyf)(const cJSON *), const char *const *sums,
		      const char *const *drop, size_t max)
{
	struct keyed kd = { 0 };
	cJSON *dst = list(m), *x;
	int e = 0;

	if (!dst)
		return 0;
	ep_hashmap_init(&kd.map);
	for (size_t i = 0; i < k && !e; i++) {
		cJSON_ArrayForEach(x, list(roots[i]))
		{
			char *key = keyf(x);
			bool added;
			int64_t at;

			if (!key)
				continue;
			at = keyed_get(&kd, key, x, &added);
			free(key);
			if (at < 0) {
				e = (int)at;
				break;
			}
			cJSON *it = kd.items[at];
			for (size_t d = 0; added && drop[d]; d++)
				cJSON_DeleteItemFromObjectCaseSensitive(it, drop[d]);
			for (size_t s = 0; !added && sums[s] && !e; s++)
				if (isfinite(num(x, sums[s])))
					e = set_num(it, sums[s],
						    add_count(num(it, sums[s]), num(x, sums[s])));
		}
	}
	if (!e) {
		cJSON *a = keyed_array(&kd, max);

		/* dst is the array itself: replaced in its parent by the
		 * caller's list() path, so swap the contents instead. */
		if (!a) {
			e = -ENOMEM;
		} else {
			while (cJSON_GetArraySize(dst) > 0)
				cJSON_DeleteItemFromArray(dst, 0);
			while (cJSON_GetArraySize(a) > 0)
				cJSON_AddItemToArray(dst, cJSON_DetachItemFromArray(a, 0));
			cJSON_Delete(a);
		}
	}
	keyed_free(&kd);
	return e;
}

static cJSON *top_list(const cJSON *r)
{
	cJSON *a = get(r, "top_functions");

	return cJSON_IsArray(a) ? a : NULL;
}

static cJSON *probe_list(const cJSON *r)
{
	cJSON *a = get(get(r, "probes"), "list");

	return cJSON_IsArray(a) ? a : NULL;
}

static cJSON *stmt_list(const cJSON *r)
{
	cJSON *a = get(get(r, "sql"), "statements");

	return cJSON_IsArray(a) ? a : NULL;
}

static char *func_key(const cJSON *f)
{
	char *key;
	const char *mod = str(f, "module");

	if (asprintf(&key, "%c\x1f%s\x1f%s", cJSON_IsTrue(get(f, "kernel")) ? 'k' : 'u',
		     str(f, "name") ? str(f, "name") : "?", mod ? mod : "") < 0)
		return NULL;
	return key;
}

static char *probe_key(const cJSON *p)
{
	const char *label = str(p, "label") ? str(p, "label") : str(p, "symbol");
	const char *lib = str(p, "library");
	char *key;

	if (!label)
		return NULL;
	if (asprintf(&key, "%s\x1f%s", label, lib ? lib : "") < 0)
		return NULL;
	return key;
}

static char *stmt_key(const cJSON *s)
{
	return str(s, "text") ? strdup(str(s, "text")) : NULL;
}

/* ---- flame stacks ---- */

static int merge_flame(cJSON *m, cJSON *const *roots, size_t k)
{
	struct keyed kd = { 0 };
	cJSON *frames = cJSON_CreateArray(), *stacks = cJSON_CreateArray(), *fl = get(m, "flame");
	double total = 0;
	int e = 0;

	ep_hashmap_init(&kd.map);
	if (!frames || !stacks)
		e = -ENOMEM;
	for (size_t i = 0; i < k && !e; i++) {
		const cJSON *f = get(roots[i], "flame"), *fr = get(f, "frames"), *st;
		int nf = cJSON_GetArraySize(fr), j = 0;
		int64_t *map = malloc((size_t)(nf > 0 ? nf : 1) * sizeof(*map));

		if (!map) {
			e = -ENOMEM;
			break;
		}
		total = add_count(total, num(f, "total"));
		cJSON_ArrayForEach(st, fr)
		{
			char *key = func_key(st);
			bool added;
			int64_t at = key ? keyed_get(&kd, key, st, &added) : -ENOMEM;

			free(key);
			if (at < 0) {
				e = (int)at;
				break;
			}
			map[j++] = at;
		}
		cJSON_ArrayForEach(st, get(f, "stacks"))
		{
			const cJSON *fa = get(st, "f"), *x;

			if (e)
				break;
			cJSON *ns = cJSON_CreateObject(), *na;

			if (!ns || !cJSON_AddItemToArray(stacks, ns)) {
				cJSON_Delete(ns);
				e = -ENOMEM;
				break;
			}
			if (!(na = cJSON_AddArrayToObject(ns, "f")) ||
			    set_num(ns, "n", isfinite(num(st, "n")) ? num(st, "n") : 0)) {
				e = -ENOMEM;
				break;
			}
			cJSON_ArrayForEach(x, fa)
			{
				cJSON *v;

				if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) ||
				    x->valuedouble >= nf)
					continue;
				v = cJSON_CreateNumber((double)map[(int)x->valuedouble]);
				if (!v || !cJSON_AddItemToArray(na, v)) {
					cJSON_Delete(v);
					e = -ENOMEM;
					break;
				}
			}
		}
		free(map);
	}
	if (!e) {
		cJSON *a = keyed_array(&kd, SIZE_MAX);

		if (!a)
			e = -ENOMEM;
		else {
			cJSON_Delete(frames);
			frames = a;
		}
	}
	if (!e) {
		if (cJSON_ReplaceItemInObjectCaseSensitive(fl, "frames", frames))
			frames = NULL;
		else
			e = -ENOMEM;
	}
	if (!e) {
		if (cJSON_ReplaceItemInObjectCaseSensitive(fl, "stacks", stacks))
			stacks = NULL;
		else
			e = -ENOMEM;
	}
	if (!e)
		e = set_num(fl, "total", total);
	/* Per-thread views of one run do not combine. */
	if (!e)
		cJSON_DeleteItemFromObjectCaseSensitive(fl, "threads");
	cJSON_Delete(frames);
	cJSON_Delete(stacks);
	keyed_free(&kd);
	return e;
}

static bool has_stacks(const cJSON *r)
{
	return cJSON_GetArraySize(get(get(r, "flame"), "stacks")) > 0 &&
	       cJSON_IsArray(get(get(r, "flame"), "frames"));
}

static bool has_cycles(const cJSON *r)
{
	return cJSON_GetArraySize(get(r, "cycles")) > 0 &&
	       !cJSON_IsTrue(get(r, "cycles_whole_run"));
}

__attribute__((format(printf, 3, 4))) static void seterr(char *err, size_t len, const char *fmt,
							 ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

int dl_merge_roots(cJSON *const *roots, const char *const *dirs, size_t k, cJSON **out, char *err,
		   size_t errlen)
{
	static const char *const func_sums[] = { "self", "total", NULL },
				 *const func_drop[] = { "self_pct", "total_pct", NULL },
				 *const probe_sums[] = { "count", "total_ns", NULL },
				 *const stmt_sums[] = { "count", "rows", "total_ns", NULL },
				 *const pct_drop[] = { "p50_ns", "p99_ns", "mean_ns", NULL };
	double period = num(get(roots[0], "sampling"), "period_ns");
	bool all_stacks = true;
	cJSON *m;
	int e = 0;

	*out = NULL;
	for (size_t i = 1; i < k; i++) {
		double p = num(get(roots[i], "sampling"), "period_ns");

		if (p != period) {
			seterr(err, errlen,
			       "%s/report.json and %s/report.json: sampling periods differ (%.0f "
			       "ns, %.0f ns): runs of one side must be recorded with the same -F",
			       dirs[0], dirs[i], period, p);
			return -EINVAL;
		}
		if (has_cycles(roots[i]) != has_cycles(roots[0])) {
			seterr(err, errlen,
			       "%s/report.json and %s/report.json: one has cycles, the other not: "
			       "runs of one side must be recorded alike",
			       dirs[0], dirs[i]);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < k; i++)
		all_stacks &= has_stacks(roots[i]);
	if (!(m = cJSON_Duplicate(roots[0], 1)))
		return -ENOMEM;
	e = combine_at(m, roots, k, "samples", NULL, "total", true);
	/* Whole-run figures: one run's worth, the mean. */
	e = e ?: combine_at(m, roots, k, "time", NULL, "duration_ns", false);
	e = e ?: combine_at(m, roots, k, "sched", NULL, "on_cpu_ns", false);
	e = e ?: combine_at(m, roots, k, "sched", NULL, "off_cpu_ns", false);
	e = e ?: combine_at(m, roots, k, "memory", NULL, "peak_rss_bytes", false);
	e = e ?: combine_at(m, roots, k, "throttling", NULL, "throttled_share", false);
	e = e ?: combine_at(m, roots, k, "gpu", NULL, "energy_j", false);
	e = e ?: combine_at(m, roots, k, "probes", "tokens", "tokens_per_s", false);
	if (!e) {
		/* gpu.metrics.total_mw.mean: three keys deep. */
		double s = 0;
		size_t n = 0;

		for (size_t i = 0; i < k; i++) {
			double v = num(at(roots[i], "gpu", "metrics", "total_mw"), "mean");

			if (isfinite(v)) {
				s += v;
				n++;
			}
		}
		if (n && get(at(m, "gpu", "metrics", "total_mw"), "mean"))
			e = set_num(at(m, "gpu", "metrics", "total_mw"), "mean", s / (double)n);
	}
	/* The same work only when every run of the side ran the same command
	 * line (after the program's name, which may be another path) to
	 * completion: else the side's exit status is unknown. */
	for (size_t i = 1; !e && i < k; i++) {
		const cJSON *t0 = get(roots[0], "target"), *ti = get(roots[i], "target");
		const char *c0 = str(t0, "command"), *ci = str(ti, "command");

		if (!c0 || !ci || strcmp(c0 + strcspn(c0, " "), ci + strcspn(ci, " ")) ||
		    num(ti, "exit_status") != 0 || !cJSON_IsTrue(get(ti, "launched")))
			e = set_num(get(m, "target"), "exit_status", NAN);
	}
	if (!e && all_stacks)
		e = merge_flame(m, roots, k);
	else if (!e) {
		/* Functions from top_functions, summed. */
		cJSON_DeleteItemFromObjectCaseSensitive(m, "flame");
		e = merge_list(m, roots, k, top_list, func_key, func_sums, func_drop, SIZE_MAX);
	}
	e = e ?: merge_list(m, roots, k, probe_list, probe_key, probe_sums, pct_drop, DL_MAX_LIST);
	e = e ?: merge_list(m, roots, k, stmt_list, stmt_key, stmt_sums, pct_drop, DL_MAX_LIST);
	if (!e && has_cycles(roots[0])) {
		cJSON *cy = cJSON_CreateArray(), *c;
		size_t n = 0;

		if (!cy)
			e = -ENOMEM;
		for (size_t i = 0; i < k && !e; i++)
			cJSON_ArrayForEach(c, get(roots[i], "cycles"))
			{
				cJSON *d;

				if (n >= DL_MAX_CYCLES)
					break;
				if (!(d = cJSON_Duplicate(c, 1)) || !cJSON_AddItemToArray(cy, d)) {
					cJSON_Delete(d);
					e = -ENOMEM;
					break;
				}
				n++;
			}
		if (!e && !cJSON_ReplaceItemInObjectCaseSensitive(m, "cycles", cy))
			e = -ENOMEM;
		if (e)
			cJSON_Delete(cy);
	}
	if (e) {
		cJSON_Delete(m);
		return e;
	}
	*out = m;
	return 0;
}
