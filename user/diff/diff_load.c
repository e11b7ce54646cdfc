// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.json loader for `ebpf-prof diff` (see diff_load.h). */
#include "diff/diff_load.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_read.h"
#include "util/hashmap.h"
#include "util/json_write.h"
#include "util/satmath.h"

/* report_read checked every field read here: a number is finite and
 * within this, a string clean. What it left out is absent. */
#define DL_MAX_VALUE 18446744073709549568.0

__attribute__((format(printf, 3, 4))) static int seterr(char *err, size_t errlen, const char *fmt,
							...)
{
	va_list ap;

	if (!err || !errlen)
		return 0;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 0;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* A finite number within [lo, hi], else NAN. */
static double num_in(const cJSON *o, const char *k, double lo, double hi)
{
	const cJSON *v = get(o, k);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return NAN;
	return v->valuedouble;
}

static double num(const cJSON *o, const char *k)
{
	return num_in(o, k, 0, DL_MAX_VALUE);
}

static uint64_t count(const cJSON *o, const char *k)
{
	double v = num(o, k);

	return isnan(v) ? 0 : (uint64_t)v;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* The tree's strings are clean already (report_read.h); copied through
 * the same cleaning for names built from parts of them. */
static char *dup_clean(const char *s)
{
	return s ? report_clean_text(s) : NULL;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

/* "[unknown] /usr/lib/libx.so+0x1a2b" -> "[unknown] libx.so": the offset
 * changes with every build, so unknown code is matched per module. Other
 * names are copied. NULL on ENOMEM. */
static char *norm_name(const char *name)
{
	char *nm = NULL;

	if (!name)
		name = "?";
	if (strncmp(name, "[unknown] ", 10))
		return strdup(name);
	const char *path = name + 10, *plus = strrchr(path, '+');
	size_t len = plus && !strncmp(plus, "+0x", 3) ? (size_t)(plus - path) : strlen(path);
	char *p = strndup(path, len);

	if (!p)
		return NULL;
	if (asprintf(&nm, "[unknown] %s", base_name(p)) < 0)
		nm = NULL;
	free(p);
	return nm;
}

char *dl_func_key(const char *name, const char *module, bool kernel)
{
	const char *mod = base_name(module);
	char *nm = norm_name(name), *key = NULL;

	if (!nm)
		return NULL;
	if (asprintf(&key, "%c|%s|%s", kernel ? 'k' : 'u', nm, mod ? mod : "") < 0)
		key = NULL;
	free(nm);
	return key;
}

struct func_index {
	struct dl_run *r;
	size_t cap;
};

static bool func_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct dl_run *r = ctx;

	return !strcmp(r->funcs[idx].key, key);
}

const struct dl_func *dl_find_func(const struct dl_run *r, const char *key)
{
	uint64_t h = ep_hashmap_hash_bytes(key, strlen(key), HASHMAP_SEED);
	int64_t at = ep_hashmap_find(&r->func_map, h, key, func_eq, r);

	return at >= 0 ? &r->funcs[at] : NULL;
}

/* Index of the function with this name/module, added if new; -ENOMEM. */
static int64_t func_get(struct func_index *fi, const char *name, const char *module, bool kernel)
{
	struct dl_run *r = fi->r;
	char *key = dl_func_key(name, module, kernel);

	if (!key)
		return -ENOMEM;
	uint64_t h = ep_hashmap_hash_bytes(key, strlen(key), HASHMAP_SEED);
	int64_t at = ep_hashmap_find(&r->func_map, h, key, func_eq, r);
	if (at >= 0) {
		free(key);
		return at;
	}
	if (r->nfuncs == fi->cap) {
		size_t nc = fi->cap ? fi->cap * 2 : 64;
		struct dl_func *nf = realloc(r->funcs, nc * sizeof(*nf));

		if (!nf) {
			free(key);
			return -ENOMEM;
		}
		r->funcs = nf;
		fi->cap = nc;
	}
	struct dl_func *f = &r->funcs[r->nfuncs];
	memset(f, 0, sizeof(*f));
	f->key = key;
	{
		char *nm = norm_name(name);

		f->name = nm ? dup_clean(nm) : NULL;
		free(nm);
	}
	f->module = dup_clean(module);
	f->kernel = kernel;
	if (!f->name || (module && !f->module) ||
	    ep_hashmap_insert(&r->func_map, h, (uint32_t)r->nfuncs)) {
		free(f->key);
		free(f->name);
		free(f->module);
		return -ENOMEM;
	}
	return (int64_t)r->nfuncs++;
}

/* Function counts from the flame section's stacks: complete up to the
 * heaviest 3000 stacks, where top_functions stops at 50 functions. */
static int funcs_from_flame(struct dl_run *r, const cJSON *flame, struct func_index *fi)
{
	const cJSON *frames = get(flame, "frames"), *stacks = get(flame, "stacks"), *fr, *st;
	int nf = cJSON_GetArraySize(frames), e = 0;
	int64_t *map;
	uint64_t *stamp = NULL, sid = 0;

	if (!cJSON_IsArray(frames) || !cJSON_IsArray(stacks))
		return -EINVAL;
	map = malloc((size_t)(nf ? nf : 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	int i = 0;
	cJSON_ArrayForEach(fr, frames)
	{
		const cJSON *k = get(fr, "kernel");
		int64_t at = func_get(fi, str(fr, "name"), str(fr, "module"), cJSON_IsTrue(k));

		if (at < 0) {
			e = (int)at;
			goto out;
		}
		map[i++] = at;
	}
	stamp = calloc(r->nfuncs ? r->nfuncs : 1, sizeof(*stamp));
	if (!stamp) {
		e = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(st, stacks)
	{
		const cJSON *f = get(st, "f"), *x;
		uint64_t n = count(st, "n");
		int64_t leaf = -1;

		if (!cJSON_IsArray(f) || !n)
			continue;
		sid++;
		cJSON_ArrayForEach(x, f)
		{
			if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble >= nf)
				continue;
			int64_t fn = map[(int)x->valuedouble];
			leaf = fn;
			if (stamp[fn] != sid) {
				stamp[fn] = sid;
				r->funcs[fn].total = sat_add_u64(r->funcs[fn].total, n);
			}
		}
		/* Counts from the file: sums stop at 2^64 - 1, never wrap. */
		if (leaf >= 0)
			r->funcs[leaf].self = sat_add_u64(r->funcs[leaf].self, n);
		r->func_samples = sat_add_u64(r->func_samples, n);
	}
	r->funcs_from_flame = true;
	/* The stacks left out are the lightest: out of the flame's total, so
	 * shares stay shares of all samples. */
	uint64_t tot = count(flame, "total");
	if (tot > r->func_samples)
		r->func_samples = tot;
out:
	free(map);
	free(stamp);
	return e;
}

static int funcs_from_top(struct dl_run *r, const cJSON *top, struct func_index *fi)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, top)
	{
		int64_t at = func_get(fi, str(t, "name"), str(t, "module"),
				      cJSON_IsTrue(get(t, "kernel")));

		if (at < 0)
			return (int)at;
		r->funcs[at].self = sat_add_u64(r->funcs[at].self, count(t, "self"));
		r->funcs[at].total = sat_add_u64(r->funcs[at].total, count(t, "total"));
	}
	r->func_samples = r->samples;
	return 0;
}

static int load_funcs(struct dl_run *r)
{
	struct func_index fi = { .r = r };
	const cJSON *flame = get(r->root, "flame");
	int e;

	if (cJSON_IsObject(flame) && cJSON_GetArraySize(get(flame, "stacks")) > 0)
		e = funcs_from_flame(r, flame, &fi);
	else
		e = funcs_from_top(r, get(r->root, "top_functions"), &fi);
	/* A function can not be in more samples than there are. */
	for (size_t i = 0; i < r->nfuncs; i++) {
		r->has_modules |= r->funcs[i].module != NULL;
		if (r->funcs[i].total > r->func_samples)
			r->funcs[i].total = r->func_samples;
		if (r->funcs[i].self > r->funcs[i].total)
			r->funcs[i].self = r->funcs[i].total;
	}
	return e == -EINVAL ? 0 : e;
}

static int load_probes(struct dl_run *r)
{
	const cJSON *list = get(get(r->root, "probes"), "list"), *p;
	int n = cJSON_GetArraySize(list);

	if (!cJSON_IsArray(list) || n <= 0)
		return 0;
	if (n > DL_MAX_LIST)
		n = DL_MAX_LIST;
	r->probes = calloc((size_t)n, sizeof(*r->probes));
	if (!r->probes)
		return -ENOMEM;
	cJSON_ArrayForEach(p, list)
	{
		const char *label = str(p, "label"), *sym = str(p, "symbol"),
			   *lib = str(p, "library");
		struct dl_probe *d = &r->probes[r->nprobes];

		if (!label)
			label = sym;
		if (!label)
			continue;
		if (r->nprobes == (size_t)n)
			break;
		d->label = dup_clean(label);
		d->library = dup_clean(base_name(lib) ? base_name(lib) : "");
		if (!d->label || !d->library ||
		    asprintf(&d->key, "%s|%s", d->label, d->library) < 0) {
			d->key = NULL;
			free(d->label);
			free(d->library);
			return -ENOMEM;
		}
		d->count = count(p, "count");
		d->total_ns = num(p, "total_ns");
		d->p50_ns = num(p, "p50_ns");
		d->p99_ns = num(p, "p99_ns");
		r->nprobes++;
	}
	return 0;
}

static int load_stmts(struct dl_run *r)
{
	const cJSON *list = get(get(r->root, "sql"), "statements"), *s;
	int n = cJSON_GetArraySize(list);

	if (!cJSON_IsArray(list) || n <= 0)
		return 0;
	if (n > DL_MAX_LIST)
		n = DL_MAX_LIST;
	r->stmts = calloc((size_t)n, sizeof(*r->stmts));
	if (!r->stmts)
		return -ENOMEM;
	cJSON_ArrayForEach(s, list)
	{
		const char *text = str(s, "text");
		struct dl_stmt *d = &r->stmts[r->nstmts];

		if (!text)
			continue;
		if (r->nstmts == (size_t)n)
			break;
		d->text = dup_clean(text);
		if (!d->text)
			return -ENOMEM;
		d->count = count(s, "count");
		d->rows = count(s, "rows");
		d->total_ns = num(s, "total_ns");
		d->p50_ns = num(s, "p50_ns");
		d->p99_ns = num(s, "p99_ns");
		r->nstmts++;
	}
	return 0;
}

/* A time of cycles[].llm, in ms there, as ns; NAN when the cycle has no
 * llm or the value is null. */
static double llm_ms(const cJSON *c, const char *k)
{
	const cJSON *l = get(c, "llm");
	double v = num_in(l, k, 0, DL_MAX_VALUE / 1e6);

	return cJSON_IsObject(l) && isfinite(v) ? v * 1e6 : NAN;
}

static double cycle_value(const cJSON *c, enum dl_cyc k)
{
	const cJSON *off = get(c, "off_cpu_by_reason"), *gpu = get(c, "gpu");

	switch (k) {
	case DL_C_WALL:
		return num(c, "wall_ns");
	case DL_C_ON_CPU:
		return num(c, "on_cpu_ns");
	case DL_C_INFERENCE:
		return num(c, "inference_ns");
	case DL_C_SQL:
		return num(c, "sql_ns");
	case DL_C_GC:
		return num(c, "gc_ns");
	case DL_C_OFF_SLEEP:
		return num(off, "sleep");
	case DL_C_OFF_UNINT:
		return num(off, "uninterruptible");
	case DL_C_OFF_PREEMPTED:
		return num(off, "preempted");
	case DL_C_OFF_RUNQUEUE:
		return num(off, "runqueue");
	case DL_C_OFF_OTHER:
		return num(off, "other");
	case DL_C_OTHER:
		return num(c, "other_ns");
	case DL_C_TOKENS_PER_S:
		/* Only cycles that produced tokens have a rate. */
		return count(c, "tokens") ? num(c, "tokens_per_s") : NAN;
	case DL_C_PREFILL:
		/* Only cycles with llama_decode batches read have them. */
		return llm_ms(c, "prefill_ms");
	case DL_C_DECODE:
		return llm_ms(c, "decode_ms");
	case DL_C_TTFT:
		return llm_ms(c, "ttft_ms");
	case DL_C_RSS_DELTA:
		return num_in(c, "rss_delta_bytes", -DL_MAX_VALUE, DL_MAX_VALUE);
	case DL_C_THROTTLED:
		return num_in(c, "throttled_share", 0, 1);
	case DL_C_GPU_POWER:
		return num(gpu, "power_mw");
	case DL_C_GPU_ENERGY:
		return num(gpu, "energy_mj");
	case DL_C_SAMPLES:
		return num(c, "samples");
	case DL_C__COUNT:
		break;
	}
	return NAN;
}

static int load_cycles(struct dl_run *r)
{
	const cJSON *cyc = get(r->root, "cycles"), *c;
	int n = cJSON_GetArraySize(cyc);

	if (!cJSON_IsArray(cyc) || n <= 0)
		return 0;
	if (n > DL_MAX_CYCLES)
		n = DL_MAX_CYCLES;
	r->ncycles_all = (size_t)n;
	/* One cycle made of the whole run is not a distribution. */
	if (cJSON_IsTrue(get(r->root, "cycles_whole_run")))
		return 0;
	for (int k = 0; k < DL_C__COUNT; k++) {
		r->cyc[k] = malloc((size_t)n * sizeof(double));
		if (!r->cyc[k])
			return -ENOMEM;
	}
	size_t kept = 0, complete = 0;
	cJSON_ArrayForEach(c, cyc)
		complete += cJSON_IsObject(c) && !cJSON_IsTrue(get(c, "truncated"));
	cJSON_ArrayForEach(c, cyc)
	{
		if (kept == (size_t)n)
			break;
		if (!cJSON_IsObject(c) || isnan(num(c, "wall_ns")))
			continue;
		/* A cycle whose end was inferred is not a full cycle; unless no
		 * cycle is complete. */
		if (complete && cJSON_IsTrue(get(c, "truncated")))
			continue;
		for (int k = 0; k < DL_C__COUNT; k++)
			r->cyc[k][kept] = cycle_value(c, (enum dl_cyc)k);
		kept++;
	}
	r->ncycles = kept;
	return 0;
}

static void load_scalars(struct dl_run *r)
{
	const cJSON *root = r->root, *tgt = get(root, "target"), *procs = get(tgt, "processes");
	const cJSON *p0 = cJSON_GetArrayItem(procs, 0);
	const char *cmd = str(tgt, "command");

	if (!cmd)
		cmd = str(p0, "cmdline");
	r->launched = cJSON_IsTrue(get(tgt, "launched"));
	{
		double st = num_in(tgt, "exit_status", 0, 65535);

		r->exit_status = isnan(st) ? -1 : (int)st;
	}
	if (cmd) {
		size_t len = strcspn(cmd, " ");
		char *first = strndup(cmd, len);

		r->command = dup_clean(cmd);
		r->args = dup_clean(cmd[len] ? cmd + len + 1 : "");
		r->program = first ? dup_clean(base_name(first)) : NULL;
		free(first);
	} else if (str(p0, "comm")) {
		r->program = dup_clean(str(p0, "comm"));
	}
	r->samples = count(get(root, "samples"), "total");
	/* Present and positive: report_read requires it. */
	r->period_ns = num(get(root, "sampling"), "period_ns");
	r->duration_ns = num(get(root, "time"), "duration_ns");
	r->tokens_per_s = num(get(get(root, "probes"), "tokens"), "tokens_per_s");
	r->peak_rss = num(get(root, "memory"), "peak_rss_bytes");
	r->throttled_share = num_in(get(root, "throttling"), "throttled_share", 0, 1);
	r->gpu_energy_j = num(get(root, "gpu"), "energy_j");
	r->gpu_power_mw = num(get(get(get(root, "gpu"), "metrics"), "total_mw"), "mean");
	r->off_cpu_ns = num(get(root, "sched"), "off_cpu_ns");
	r->on_cpu_ns = num(get(root, "sched"), "on_cpu_ns");
}

/* The launched program's file among the functions' modules: the one
 * whose file name is the command's (the heaviest when several paths
 * share it). */
static int find_main_module(struct dl_run *r)
{
	const struct dl_func *best = NULL;

	for (size_t i = 0; i < r->nfuncs; i++) {
		const struct dl_func *f = &r->funcs[i];

		if (f->kernel || !f->module || strcmp(base_name(f->module), r->program))
			continue;
		if (!best || f->total > best->total)
			best = f;
	}
	if (best && !(r->main_module = strdup(best->module)))
		return -ENOMEM;
	return 0;
}

/* The build-id report.json's modules give for the program's file. */
static int find_build_id(struct dl_run *r)
{
	const cJSON *m;

	if (!r->main_module)
		return 0;
	cJSON_ArrayForEach(m, get(r->root, "modules"))
	{
		const char *path = str(m, "path"), *id = str(m, "build_id");

		if (path && id && *id && !strcmp(path, r->main_module))
			return (r->build_id = strdup(id)) ? 0 : -ENOMEM;
	}
	return 0;
}

/* The run's figures from a tree report_read checked (taken over). */
static int from_root(const char *dir, cJSON *root, struct dl_run *out, char *err, size_t errlen)
{
	int e;

	memset(out, 0, sizeof(*out));
	ep_hashmap_init(&out->func_map);
	out->root = root;
	out->dir = report_clean_text(dir ? dir : "?");
	if (!out->dir) {
		e = -ENOMEM;
		goto fail;
	}
	load_scalars(out);
	e = load_cycles(out);
	if (!e)
		e = load_funcs(out);
	if (!e)
		e = load_probes(out);
	if (!e)
		e = load_stmts(out);
	if (!e && !out->program)
		out->program = strdup("");
	if (!e && out->program && *out->program && out->launched)
		e = find_main_module(out);
	if (!e)
		e = find_build_id(out);
	out->nruns = 1;
	if (!e && !out->program)
		e = -ENOMEM;
	if (!e)
		return 0;
fail:
	seterr(err, errlen, "%s/report.json: %s", out->dir ? out->dir : "?", strerror(-e));
	dl_free(out);
	return e;
}

int dl_load_text(const char *dir, const char *text, size_t len, struct dl_run *out, char *err,
		 size_t errlen)
{
	char name[4096];
	cJSON *root;
	int e;

	memset(out, 0, sizeof(*out));
	snprintf(name, sizeof(name), "%s/report.json", dir ? dir : "?");
	e = report_parse(name, text, len, &root, err, errlen);
	return e ? e : from_root(dir, root, out, err, errlen);
}

int dl_load(const char *dir, struct dl_run *out, char *err, size_t errlen)
{
	cJSON *root;
	int e;

	memset(out, 0, sizeof(*out));
	e = report_read(dir, &root, err, errlen);
	return e ? e : from_root(dir, root, out, err, errlen);
}

/* One side from k checked trees (taken over, freed on error too). */
static int side_from_roots(const char *const *dirs, cJSON **roots, size_t k, struct dl_run *out,
			   char *err, size_t errlen)
{
	cJSON *m = NULL;
	char *label = NULL;
	size_t len = 0;
	int e;

	memset(out, 0, sizeof(*out));
	if (k == 1)
		return from_root(dirs[0], roots[0], out, err, errlen);
	e = dl_merge_roots(roots, dirs, k, &m, err, errlen);
	for (size_t i = 0; !e && i < k; i++)
		len += strlen(dirs[i]) + 3;
	if (!e && !(label = malloc(len + 1)))
		e = -ENOMEM;
	if (e) {
		for (size_t i = 0; i < k; i++)
			cJSON_Delete(roots[i]);
		if (e == -ENOMEM)
			seterr(err, errlen, "%s/report.json: %s", dirs[0], strerror(-e));
		return e;
	}
	label[0] = '\0';
	for (size_t i = 0; i < k; i++) {
		if (i)
			strcat(label, " + ");
		strcat(label, dirs[i]);
	}
	e = from_root(label, m, out, err, errlen);
	free(label);
	if (e) {
		for (size_t i = 0; i < k; i++)
			cJSON_Delete(roots[i]);
		return e;
	}
	out->nruns = k;
	out->runs = calloc(k, sizeof(*out->runs));
	if (!out->runs) {
		for (size_t i = 0; i < k; i++)
			cJSON_Delete(roots[i]);
		dl_free(out);
		return -ENOMEM;
	}
	size_t loaded = 0;
	for (; loaded < k && !e; loaded++)
		e = from_root(dirs[loaded], roots[loaded], &out->runs[loaded], err, errlen);
	if (e) {
		/* from_root freed the failed one's tree; the rest were not taken. */
		for (size_t i = loaded; i < k; i++)
			cJSON_Delete(roots[i]);
		out->nruns = loaded - 1;
		dl_free(out);
		return e;
	}
	/* The side's build-id: the runs' when they agree. */
	free(out->build_id);
	out->build_id = NULL;
	bool same_id = out->runs[0].build_id != NULL, same_work = true;
	for (size_t i = 1; i < k; i++) {
		const struct dl_run *a = &out->runs[0], *b = &out->runs[i];

		same_id &= b->build_id && !strcmp(a->build_id, b->build_id);
		same_work &= b->launched && b->exit_status == 0 && a->args && b->args &&
			     !strcmp(a->args, b->args);
	}
	same_work &= out->runs[0].launched && out->runs[0].exit_status == 0;
	if (same_id && !(out->build_id = strdup(out->runs[0].build_id)))
		e = -ENOMEM;
	bool any_id = false;
	for (size_t i = 0; i < k; i++)
		any_id |= out->runs[i].build_id != NULL;
	if (!e && (!same_work || (!same_id && any_id)) &&
	    asprintf(&out->side_note, "the runs of %s %s", out->dir,
		     !same_work
			     ? "did not all run the same command to completion: not compared as "
			       "the same work"
			     : "are of different builds of the program (build-ids differ)") < 0) {
		out->side_note = NULL;
		e = -ENOMEM;
	}
	if (e) {
		seterr(err, errlen, "%s/report.json: %s", dirs[0], strerror(-e));
		dl_free(out);
	}
	return e;
}

int dl_load_side(const char *const *dirs, size_t k, struct dl_run *out, char *err, size_t errlen)
{
	cJSON **roots = calloc(k ? k : 1, sizeof(*roots));
	int e = 0;

	memset(out, 0, sizeof(*out));
	if (!roots)
		return -ENOMEM;
	for (size_t i = 0; i < k && !e; i++)
		e = report_read(dirs[i], &roots[i], err, errlen);
	if (!e && !k)
		e = -EINVAL;
	if (!e)
		e = side_from_roots(dirs, roots, k, out, err, errlen);
	else
		for (size_t i = 0; i < k; i++)
			cJSON_Delete(roots[i]);
	free(roots);
	return e;
}

int dl_load_side_text(const char *const *dirs, const char *const *texts, const size_t *lens,
		      size_t k, struct dl_run *out, char *err, size_t errlen)
{
	cJSON **roots = calloc(k ? k : 1, sizeof(*roots));
	char name[4096];
	int e = 0;

	memset(out, 0, sizeof(*out));
	if (!roots)
		return -ENOMEM;
	for (size_t i = 0; i < k && !e; i++) {
		snprintf(name, sizeof(name), "%s/report.json", dirs[i] ? dirs[i] : "?");
		e = report_parse(name, texts[i], lens[i], &roots[i], err, errlen);
	}
	if (!e && !k)
		e = -EINVAL;
	if (!e)
		e = side_from_roots(dirs, roots, k, out, err, errlen);
	else
		for (size_t i = 0; i < k; i++)
			cJSON_Delete(roots[i]);
	free(roots);
	return e;
}

void dl_free(struct dl_run *r)
{
	for (size_t i = 0; r->runs && i < r->nruns; i++)
		dl_free(&r->runs[i]);
	free(r->runs);
	free(r->build_id);
	free(r->side_note);
	free(r->dir);
	cJSON_Delete(r->root);
	free(r->program);
	free(r->command);
	free(r->args);
	free(r->main_module);
	for (int k = 0; k < DL_C__COUNT; k++)
		free(r->cyc[k]);
	for (size_t i = 0; i < r->nfuncs; i++) {
		free(r->funcs[i].key);
		free(r->funcs[i].name);
		free(r->funcs[i].module);
	}
	free(r->funcs);
	ep_hashmap_free(&r->func_map);
	for (size_t i = 0; i < r->nprobes; i++) {
		free(r->probes[i].key);
		free(r->probes[i].label);
		free(r->probes[i].library);
	}
	free(r->probes);
	for (size_t i = 0; i < r->nstmts; i++)
		free(r->stmts[i].text);
	free(r->stmts);
	memset(r, 0, sizeof(*r));
}

const char *dl_key_module(const struct dl_run *r, const char *module)
{
	if (r->keys_without_module)
		return NULL;
	if (r->main_as_program && module && r->main_module && !strcmp(module, r->main_module))
		return DL_MAIN_MODULE;
	return module;
}

int dl_frame_funcs(const struct dl_run *r, int64_t **out, size_t *n)
{
	const cJSON *frames = get(get(r->root, "flame"), "frames"), *fr;
	int nf = cJSON_GetArraySize(frames);
	size_t i = 0;

	*out = NULL;
	*n = 0;
	if (!cJSON_IsArray(frames) || nf <= 0)
		return -ENOENT;
	int64_t *m = malloc((size_t)nf * sizeof(*m));
	if (!m)
		return -ENOMEM;
	cJSON_ArrayForEach(fr, frames)
	{
		char *key = dl_func_key(str(fr, "name"), dl_key_module(r, str(fr, "module")),
					cJSON_IsTrue(get(fr, "kernel")));
		const struct dl_func *f;

		if (!key) {
			free(m);
			return -ENOMEM;
		}
		f = dl_find_func(r, key);
		m[i++] = f ? f - r->funcs : -1;
		free(key);
	}
	*out = m;
	*n = i;
	return 0;
}

/* Recomputes every key under the rules in force (dl_key_module) and
 * merges the functions whose keys then coincide. */
static int rekey(struct dl_run *r)
{
	size_t w = 0;

	ep_hashmap_free(&r->func_map);
	ep_hashmap_init(&r->func_map);
	for (size_t i = 0; i < r->nfuncs; i++) {
		struct dl_func *f = &r->funcs[i];
		char *key = dl_func_key(f->name, dl_key_module(r, f->module), f->kernel);

		if (!key)
			return -ENOMEM;
		free(f->key);
		f->key = key;
		uint64_t h = ep_hashmap_hash_bytes(key, strlen(key), HASHMAP_SEED);
		int64_t at = ep_hashmap_find(&r->func_map, h, key, func_eq, r);
		if (at >= 0) {
			/* Same name in two modules: one function now. A sample
			 * with both on its stack counts twice in total: capped. */
			struct dl_func *g = &r->funcs[at];

			g->self = sat_add_u64(g->self, f->self);
			g->total = sat_add_u64(g->total, f->total);
			if (g->total > r->func_samples)
				g->total = r->func_samples;
			if (g->self > g->total)
				g->self = g->total;
			free(f->key);
			free(f->name);
			free(f->module);
			continue;
		}
		r->funcs[w] = *f;
		if (ep_hashmap_insert(&r->func_map, h, (uint32_t)w)) {
			/* Each function owned once for dl_free: the ones not
			 * seen yet follow the kept ones. */
			size_t rest = r->nfuncs - (i + 1);

			memmove(&r->funcs[w + 1], &r->funcs[i + 1], rest * sizeof(*r->funcs));
			r->nfuncs = w + 1 + rest;
			return -ENOMEM;
		}
		w++;
	}
	r->nfuncs = w;
	return 0;
}

int dl_align_keys(struct dl_run *a, struct dl_run *b)
{
	int e = 0;

	if (a->has_modules != b->has_modules) {
		a->keys_without_module = b->keys_without_module = true;
	} else if (a->main_module && b->main_module) {
		a->main_as_program = b->main_as_program = true;
	} else {
		return 0;
	}
	e = rekey(a);
	if (!e)
		e = rekey(b);
	/* Each run of a side keyed as the side is. */
	for (int s = 0; s < 2 && !e; s++) {
		struct dl_run *side = s ? b : a;

		for (size_t i = 0; side->runs && i < side->nruns && !e; i++) {
			struct dl_run *r = &side->runs[i];

			r->keys_without_module = side->keys_without_module;
			r->main_as_program = side->main_as_program && r->main_module;
			e = rekey(r);
		}
	}
	return e;
}
