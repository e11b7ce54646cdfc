// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.json cycles/findings/flame sections and their readers. */
#include "cycles/cycles_json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycle_agg.h"
#include "util/json_write.h"
#include "profile/profile.h"

/* ---- writers ---- */

static bool add_u64(cJSON *o, const char *k, uint64_t v)
{
	/* JSON numbers are doubles: exact up to 2^53 ns (104 days). */
	return cJSON_AddNumberToObject(o, k, (double)v) != NULL;
}

static bool add_str(cJSON *o, const char *k, const char *s)
{
	if (!s)
		return cJSON_AddNullToObject(o, k) != NULL;
	/* Names and SQL come from the profiled process: any bytes. */
	char *clean = utf8_sanitize(s);
	if (!clean)
		return false;
	bool ok = cJSON_AddStringToObject(o, k, clean) != NULL;
	free(clean);
	return ok;
}

static bool add_num_or_null(cJSON *o, const char *k, bool has, double v)
{
	if (!has || !isfinite(v))
		return cJSON_AddNullToObject(o, k) != NULL;
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_ms_or_null(cJSON *o, const char *k, bool has, uint64_t ns)
{
	return add_num_or_null(o, k, has, (double)ns / 1e6);
}

/* cycles[].llm: null without a decode whose batch was read. */
static bool llm_json(cJSON *o, const struct cycle_llm *l)
{
	cJSON *x;

	if (!l->has)
		return cJSON_AddNullToObject(o, "llm") != NULL;
	x = cJSON_AddObjectToObject(o, "llm");
	return x && add_u64(x, "prompt_tokens", l->prompt_tokens) &&
	       add_u64(x, "generated_tokens", l->generated_tokens) &&
	       add_ms_or_null(x, "prefill_ms", true, l->prefill_ns) &&
	       add_ms_or_null(x, "decode_ms", true, l->decode_ns) &&
	       add_ms_or_null(x, "ttft_ms", l->has_ttft, l->ttft_ns) &&
	       add_ms_or_null(x, "itl_p50_ms", l->has_itl, l->itl_p50_ns) &&
	       add_ms_or_null(x, "itl_p99_ms", l->has_itl, l->itl_p99_ns) &&
	       add_num_or_null(x, "kv_used", l->kv_used >= 0, (double)l->kv_used) &&
	       add_num_or_null(x, "kv_size", l->kv_size > 0, (double)l->kv_size);
}

static cJSON *row_json(const struct cycle_row *r)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool ok = add_u64(o, "index", r->index) && add_u64(o, "tid", r->tid) &&
		  add_u64(o, "start_ns", r->start_ns) && add_u64(o, "end_ns", r->end_ns) &&
		  add_u64(o, "wall_ns", r->wall_ns) &&
		  cJSON_AddBoolToObject(o, "truncated", r->truncated) &&
		  cJSON_AddBoolToObject(o, "partial", r->partial) &&
		  add_u64(o, "samples", r->samples) && add_u64(o, "on_cpu_ns", r->on_cpu_ns) &&
		  add_u64(o, "off_cpu_ns", r->off_cpu_total_ns);
	cJSON *by = ok ? cJSON_AddObjectToObject(o, "off_cpu_by_reason") : NULL;
	for (unsigned k = 0; by && k < CYC_OFF_REASONS; k++)
		ok = ok && add_u64(by, cycles_off_reason_name(k), r->off_cpu_ns[k]);
	ok = ok && by && add_u64(o, "inference_ns", r->inference_ns) &&
	     add_u64(o, "inference_calls", r->inference_calls) && add_u64(o, "tokens", r->tokens) &&
	     cJSON_AddNumberToObject(o, "tokens_per_s", r->tokens_per_s) &&
	     add_u64(o, "sql_ns", r->sql_ns) && add_u64(o, "sql_count", r->sql_count) &&
	     add_u64(o, "sql_slowest_ns", r->sql_slowest_ns) &&
	     add_str(o, "sql_slowest", r->sql_slowest) &&
	     add_u64(o, "probe_other_ns", r->probe_other_ns) &&
	     add_u64(o, "probe_other_calls", r->probe_other_calls) &&
	     add_u64(o, "gc_ns", r->gc_ns) && add_u64(o, "gc_count", r->gc_count) &&
	     add_u64(o, "incomplete_spans", r->incomplete_spans) &&
	     add_u64(o, "other_ns", r->other_ns) && llm_json(o, &r->llm);
	cJSON *b = ok ? cJSON_AddObjectToObject(o, "breakdown") : NULL;
	ok = ok && b && add_u64(b, "gc_ns", r->part_gc_ns) &&
	     add_u64(b, "sql_ns", r->part_sql_ns) &&
	     add_u64(b, "inference_ns", r->part_inference_ns) &&
	     add_u64(b, "probes_ns", r->part_probe_ns);
	cJSON *bo = ok ? cJSON_AddObjectToObject(b, "off_cpu_ns") : NULL;
	for (unsigned k = 0; bo && k < CYC_OFF_REASONS; k++)
		ok = ok && add_u64(bo, cycles_off_reason_name(k), r->part_off_cpu_ns[k]);
	ok = ok && bo && add_u64(b, "other_ns", r->other_ns);
	ok = ok && add_num_or_null(o, "rss_end_bytes", r->has_rss, (double)r->rss_end_bytes) &&
	     add_num_or_null(o, "rss_delta_bytes", r->has_rss, (double)r->rss_delta_bytes) &&
	     add_num_or_null(o, "cpu_mhz_mean", r->has_freq, r->mhz_mean) &&
	     add_num_or_null(o, "cpu_mhz_min", r->has_freq, r->mhz_min) &&
	     cJSON_AddNumberToObject(o, "throttled_share", r->throttled_share);
	if (ok && r->has_gpu) {
		cJSON *g = cJSON_AddObjectToObject(o, "gpu");
		ok = g && cJSON_AddNumberToObject(g, "load_pct", r->gpu_load_pct) &&
		     cJSON_AddNumberToObject(g, "power_mw", r->gpu_power_mw) &&
		     cJSON_AddNumberToObject(g, "temp_c", r->gpu_temp_c) &&
		     cJSON_AddNumberToObject(g, "energy_mj", r->gpu_energy_mj);
	} else if (ok) {
		ok = cJSON_AddNullToObject(o, "gpu") != NULL;
	}
	cJSON *top = ok ? cJSON_AddArrayToObject(o, "top_functions") : NULL;
	for (uint32_t k = 0; top && k < r->n_top; k++) {
		cJSON *f = cJSON_CreateObject();
		if (!f || !cJSON_AddItemToArray(top, f)) {
			cJSON_Delete(f);
			ok = false;
			break;
		}
		ok = ok && add_str(f, "name", r->top[k].name) &&
		     add_u64(f, "samples", r->top[k].samples);
	}
	if (!ok || !top) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *cycles_to_json(const struct cycle_table *t)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < t->n; i++) {
		cJSON *r = row_json(&t->rows[i]);
		if (!r || !cJSON_AddItemToArray(a, r)) {
			cJSON_Delete(r);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

cJSON *findings_to_json(const struct findings *f)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < f->n; i++) {
		const struct finding *x = &f->v[i];
		cJSON *o = cJSON_CreateObject();
		bool ok = o && cJSON_AddItemToArray(a, o);
		if (!ok) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			return NULL;
		}
		ok = add_str(o, "rule", x->rule) &&
		     add_str(o, "severity", finding_severity_name(x->severity)) &&
		     add_str(o, "title", x->title) && add_str(o, "evidence", x->evidence) &&
		     add_str(o, "recommendation", x->recommendation) &&
		     add_num_or_null(o, "value", true, x->value) &&
		     add_num_or_null(o, "threshold", true, x->threshold);
		cJSON *c = ok ? cJSON_AddArrayToObject(o, "cycles") : NULL;
		for (size_t k = 0; c && k < x->ncycles; k++) {
			cJSON *n = cJSON_CreateNumber(x->cycles[k]);
			if (!n || !cJSON_AddItemToArray(c, n)) {
				cJSON_Delete(n);
				c = NULL;
			}
		}
		if (!c) {
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

/* Indexes by their count in ctx, largest first, then by index. */
static int cmp_count_desc(const void *a, const void *b, void *ctx)
{
	const uint64_t *c = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (c[i] != c[j])
		return c[i] < c[j] ? 1 : -1;
	return i < j ? -1 : i > j;
}

static int cmp_thread_desc(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct prof_thread *x = &p->threads[*(const uint32_t *)a],
				 *y = &p->threads[*(const uint32_t *)b];
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The counts per stack of the threads order[lo..hi) into c. */
static void entry_counts(const struct profile *p, const uint32_t *order, size_t lo, size_t hi,
			 uint64_t *c)
{
	memset(c, 0, (p->nstacks ? p->nstacks : 1) * sizeof(*c));
	for (size_t k = lo; k < hi; k++) {
		const struct prof_thread *t = &p->threads[order[k]];

		for (size_t r = 0; r < t->nruns; r++)
			if (t->runs[r].stack < p->nstacks)
				c[t->runs[r].stack] += t->runs[r].count;
	}
}

struct flame_sel {
	uint32_t *torder; /* threads with a count, heaviest first */
	size_t nt, listed;
	uint32_t *keep; /* kept stacks, heaviest first */
	size_t nkeep;
	uint64_t *cnt; /* scratch, one per stack */
};

/* Which stacks the section keeps: the heaviest max_stacks of the run, then
 * each listed thread's heaviest per_thread among those not kept yet, so
 * that a thread whose stacks are all light still has its own in the
 * picker's view. */
static int flame_select(const struct profile *p, size_t max_stacks, size_t max_threads,
			size_t per_thread, struct flame_sel *fs)
{
	size_t ns = p->nstacks, a = ns ? ns : 1;
	uint32_t *tmp = malloc(a * sizeof(*tmp));
	bool *kept = calloc(a, sizeof(*kept));
	int err = -ENOMEM;

	memset(fs, 0, sizeof(*fs));
	fs->torder = malloc((p->nthreads ? p->nthreads : 1) * sizeof(*fs->torder));
	fs->keep = malloc(a * sizeof(*fs->keep));
	fs->cnt = malloc(a * sizeof(*fs->cnt));
	if (!tmp || !kept || !fs->torder || !fs->keep || !fs->cnt)
		goto out;
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].samples)
			fs->torder[fs->nt++] = (uint32_t)i;
	qsort_r(fs->torder, fs->nt, sizeof(*fs->torder), cmp_thread_desc, (void *)p);
	fs->listed = fs->nt < max_threads ? fs->nt : max_threads;
	for (size_t i = 0; i < ns; i++) {
		tmp[i] = (uint32_t)i;
		fs->cnt[i] = p->stacks[i].count;
	}
	qsort_r(tmp, ns, sizeof(*tmp), cmp_count_desc, fs->cnt);
	for (size_t i = 0; i < ns && i < max_stacks; i++) {
		fs->keep[fs->nkeep++] = tmp[i];
		kept[tmp[i]] = true;
	}
	for (size_t e = 0; e < fs->listed && per_thread; e++) {
		size_t nc = 0;

		entry_counts(p, fs->torder, e, e + 1, fs->cnt);
		for (size_t i = 0; i < ns; i++)
			if (fs->cnt[i] && !kept[i])
				tmp[nc++] = (uint32_t)i;
		qsort_r(tmp, nc, sizeof(*tmp), cmp_count_desc, fs->cnt);
		for (size_t i = 0; i < nc && i < per_thread; i++) {
			fs->keep[fs->nkeep++] = tmp[i];
			kept[tmp[i]] = true;
		}
	}
	for (size_t i = 0; i < ns; i++)
		fs->cnt[i] = p->stacks[i].count;
	qsort_r(fs->keep, fs->nkeep, sizeof(*fs->keep), cmp_count_desc, fs->cnt);
	err = 0;
out:
	free(tmp);
	free(kept);
	return err;
}

static void flame_sel_free(struct flame_sel *fs)
{
	free(fs->torder);
	free(fs->keep);
	free(fs->cnt);
}

/* flame.threads and each kept stack's "t": [[thread entry, n], ...]. The
 * heaviest threads get an entry each, the others share one ("other
 * threads"), so the page's thread picker stays bounded whatever the thread
 * count. tarr[k] is the "t" array of fs->keep[k]. */
static bool flame_threads(const struct profile *p, struct flame_sel *fs, cJSON **tarr, cJSON *o)
{
	cJSON *threads = cJSON_AddArrayToObject(o, "threads");
	size_t listed = fs->listed, nt = fs->nt;
	bool ok = threads != NULL;

	/* Entry e covers torder[e] (e < listed), or all of torder[listed..]. */
	for (size_t e = 0; ok && e <= listed && (e < listed || nt > listed); e++) {
		size_t hi = e < listed ? e + 1 : nt;
		uint64_t n = 0;
		cJSON *to = cJSON_CreateObject();

		if (!to || !cJSON_AddItemToArray(threads, to)) {
			cJSON_Delete(to);
			return false;
		}
		entry_counts(p, fs->torder, e, hi, fs->cnt);
		for (size_t k = e; k < hi; k++)
			n += p->threads[fs->torder[k]].samples;
		if (e < listed) {
			const struct prof_thread *t = &p->threads[fs->torder[e]];

			ok = add_u64(to, "pid", t->pid) && add_u64(to, "tid", t->tid) &&
			     add_str(to, "comm", t->comm) && add_u64(to, "n", n);
		} else {
			ok = add_u64(to, "pid", 0) && add_u64(to, "tid", 0) &&
			     add_str(to, "comm", "other threads") && add_u64(to, "n", n) &&
			     add_u64(to, "merged", nt - listed);
		}
		for (size_t k = 0; ok && k < fs->nkeep; k++) {
			uint64_t c = fs->cnt[fs->keep[k]];
			cJSON *pair;

			if (!c)
				continue;
			pair = cJSON_CreateArray();
			if (!pair || !cJSON_AddItemToArray(tarr[k], pair)) {
				cJSON_Delete(pair);
				return false;
			}
			/* cJSON_AddItemToArray refuses a NULL item (failed create). */
			ok = cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)e)) &&
			     cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)c));
		}
	}
	return ok;
}

cJSON *flame_to_json(const struct profile *p, const char *unit, size_t max_stacks,
		     size_t max_threads, size_t per_thread)
{
	struct flame_sel fs;
	cJSON *o = cJSON_CreateObject();
	int32_t *remap = malloc((p->nframes ? p->nframes : 1) * sizeof(*remap));
	cJSON **tarr = NULL;
	cJSON *frames = NULL, *stacks = NULL;
	bool ok = flame_select(p, max_stacks, max_threads, per_thread, &fs) == 0 && o && remap &&
		  (tarr = calloc(fs.nkeep ? fs.nkeep : 1, sizeof(*tarr))) &&
		  cJSON_AddStringToObject(o, "unit", unit) &&
		  add_u64(o, "total", p->total_samples) &&
		  (frames = cJSON_AddArrayToObject(o, "frames")) &&
		  (stacks = cJSON_AddArrayToObject(o, "stacks"));
	if (!ok)
		goto fail;
	for (size_t i = 0; i < p->nframes; i++)
		remap[i] = -1;
	int32_t nf = 0;
	for (size_t i = 0; i < fs.nkeep; i++) {
		const struct prof_stack *s = &p->stacks[fs.keep[i]];
		cJSON *so = cJSON_CreateObject();
		if (!so || !cJSON_AddItemToArray(stacks, so)) {
			cJSON_Delete(so);
			goto fail;
		}
		cJSON *fa = cJSON_AddArrayToObject(so, "f");
		if (!fa || !add_u64(so, "n", s->count) ||
		    !(tarr[i] = cJSON_AddArrayToObject(so, "t")))
			goto fail;
		for (uint32_t d = 0; d < s->depth; d++) {
			uint32_t fi = s->frames[d];
			if (fi >= p->nframes)
				continue;
			if (remap[fi] < 0) {
				cJSON *nm = cJSON_CreateObject();
				if (!nm || !cJSON_AddItemToArray(frames, nm)) {
					cJSON_Delete(nm);
					goto fail;
				}
				/* module: ebpf-prof diff matches frames by name and module. */
				if (!add_str(nm, "name", p->frames[fi].name) ||
				    !add_str(nm, "module", p->frames[fi].module) ||
				    !cJSON_AddBoolToObject(nm, "kernel", p->frames[fi].kernel))
					goto fail;
				remap[fi] = nf++;
			}
			cJSON *n = cJSON_CreateNumber(remap[fi]);
			if (!n || !cJSON_AddItemToArray(fa, n)) {
				cJSON_Delete(n);
				goto fail;
			}
		}
	}
	if (!flame_threads(p, &fs, tarr, o))
		goto fail;
	flame_sel_free(&fs);
	free(remap);
	free(tarr);
	return o;
fail:
	flame_sel_free(&fs);
	free(remap);
	free(tarr);
	cJSON_Delete(o);
	return NULL;
}

/* ---- readers ---- */

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
						      ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Largest double below 2^64: anything above does not fit a u64. */
#define U64_LIMIT 18446744073709549568.0

/* Reads an optional (absent or null -> *v unchanged, *present false) or
 * required non-negative integer field. */
static int get_u64(const cJSON *o, const char *k, bool required, uint64_t max, uint64_t *v,
		   bool *present, size_t idx, char *err, size_t errlen)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	if (present)
		*present = false;
	if (!x || cJSON_IsNull(x)) {
		if (required)
			return fail(err, errlen, "cycles[%zu].%s: missing", idx, k);
		return 0;
	}
	if (!cJSON_IsNumber(x))
		return fail(err, errlen, "cycles[%zu].%s: not a number", idx, k);
	double d = x->valuedouble;
	if (!isfinite(d) || d < 0 || d > U64_LIMIT || d > (double)max)
		return fail(err, errlen, "cycles[%zu].%s: %g out of range", idx, k, d);
	*v = (uint64_t)d;
	if (present)
		*present = true;
	return 0;
}

static int get_dbl(const cJSON *o, const char *k, double lo, double hi, double *v, bool *present,
		   size_t idx, char *err, size_t errlen)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	if (present)
		*present = false;
	if (!x || cJSON_IsNull(x))
		return 0;
	if (!cJSON_IsNumber(x))
		return fail(err, errlen, "cycles[%zu].%s: not a number", idx, k);
	double d = x->valuedouble;
	if (!isfinite(d) || d < lo || d > hi)
		return fail(err, errlen, "cycles[%zu].%s: %g out of range", idx, k, d);
	*v = d;
	if (present)
		*present = true;
	return 0;
}

static int get_str(const cJSON *o, const char *k, char **v, size_t idx, char *err, size_t errlen)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	*v = NULL;
	if (!x || cJSON_IsNull(x))
		return 0;
	if (!cJSON_IsString(x) || !x->valuestring)
		return fail(err, errlen, "cycles[%zu].%s: not a string", idx, k);
	*v = strdup(x->valuestring);
	return *v ? 0 : -ENOMEM;
}

#define U32M UINT32_MAX
#define U64M UINT64_MAX

/* A time in ms (null: unknown) to ns. */
static int get_ms(const cJSON *o, const char *k, uint64_t *ns, bool *has, size_t i, char *err,
		  size_t el)
{
	double d = 0;
	bool h = false;
	int e = get_dbl(o, k, 0, 1.8e13, &d, &h, i, err, el);

	*ns = h ? (uint64_t)(d * 1e6 + 0.5) : 0;
	if (has)
		*has = h;
	return e;
}

static int llm_fields(const cJSON *x, struct cycle_llm *l, size_t i, char *err, size_t el)
{
	uint64_t v = 0;
	bool h = false;
	int e;

	if ((e = get_u64(x, "prompt_tokens", true, U64M, &l->prompt_tokens, NULL, i, err, el)) ||
	    (e = get_u64(x, "generated_tokens", true, U64M, &l->generated_tokens, NULL, i, err,
			 el)) ||
	    (e = get_ms(x, "prefill_ms", &l->prefill_ns, NULL, i, err, el)) ||
	    (e = get_ms(x, "decode_ms", &l->decode_ns, NULL, i, err, el)) ||
	    (e = get_ms(x, "ttft_ms", &l->ttft_ns, &l->has_ttft, i, err, el)) ||
	    (e = get_ms(x, "itl_p50_ms", &l->itl_p50_ns, &l->has_itl, i, err, el)) ||
	    (e = get_ms(x, "itl_p99_ms", &l->itl_p99_ns, NULL, i, err, el)) ||
	    (e = get_u64(x, "kv_used", false, INT64_MAX, &v, &h, i, err, el)))
		return e;
	l->kv_used = h ? (int64_t)v : -1;
	v = 0;
	if ((e = get_u64(x, "kv_size", false, U32M, &v, NULL, i, err, el)))
		return e;
	l->kv_size = (uint32_t)v;
	return 0;
}

static int llm_from_json(const cJSON *o, struct cycle_llm *l, size_t i, char *err, size_t el)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "llm");
	char tmp[256] = "";
	int e;

	memset(l, 0, sizeof(*l));
	l->kv_used = -1;
	/* Absent in reports written before it existed. */
	if (!x || cJSON_IsNull(x))
		return 0;
	if (!cJSON_IsObject(x))
		return fail(err, el, "cycles[%zu].llm: not an object", i);
	l->has = true;
	/* The field readers say cycles[i].KEY: name it cycles[i].llm.KEY. */
	e = llm_fields(x, l, i, tmp, sizeof(tmp));
	if (e == -EINVAL) {
		const char *dot = strchr(tmp, '.');

		fail(err, el, "cycles[%zu].llm.%s", i, dot ? dot + 1 : tmp);
	}
	return e;
}

static int row_from_json(const cJSON *o, struct cycle_row *r, size_t i, char *err, size_t el)
{
	uint64_t v;
	int e;
	if (!cJSON_IsObject(o))
		return fail(err, el, "cycles[%zu]: not an object", i);
#define U(key, field, req, max)                                            \
	do {                                                               \
		v = 0;                                                     \
		if ((e = get_u64(o, key, req, max, &v, NULL, i, err, el))) \
			return e;                                          \
		r->field = v;                                              \
	} while (0)
	U("index", index, true, U32M);
	U("tid", tid, false, U32M);
	U("start_ns", start_ns, true, U64M);
	U("end_ns", end_ns, true, U64M);
	U("wall_ns", wall_ns, true, U64M);
	if (r->end_ns < r->start_ns || r->wall_ns != r->end_ns - r->start_ns)
		return fail(err, el, "cycles[%zu]: wall_ns is not end_ns - start_ns", i);
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "truncated");
	if (tr && !cJSON_IsBool(tr))
		return fail(err, el, "cycles[%zu].truncated: not a boolean", i);
	r->truncated = tr && cJSON_IsTrue(tr);
	/* Absent in reports written before it existed: complete. */
	const cJSON *pa = cJSON_GetObjectItemCaseSensitive(o, "partial");
	if (pa && !cJSON_IsBool(pa))
		return fail(err, el, "cycles[%zu].partial: not a boolean", i);
	r->partial = pa && cJSON_IsTrue(pa);
	U("samples", samples, false, U64M);
	U("on_cpu_ns", on_cpu_ns, false, U64M);
	U("off_cpu_ns", off_cpu_total_ns, false, U64M);
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "off_cpu_by_reason");
	if (by && !cJSON_IsObject(by))
		return fail(err, el, "cycles[%zu].off_cpu_by_reason: not an object", i);
	for (unsigned k = 0; by && k < CYC_OFF_REASONS; k++)
		if ((e = get_u64(by, cycles_off_reason_name(k), false, U64M, &r->off_cpu_ns[k],
				 NULL, i, err, el)))
			return e;
	U("inference_ns", inference_ns, false, U64M);
	U("inference_calls", inference_calls, false, U32M);
	U("tokens", tokens, false, U64M);
	if ((e = get_dbl(o, "tokens_per_s", 0, 1e15, &r->tokens_per_s, NULL, i, err, el)))
		return e;
	U("sql_ns", sql_ns, false, U64M);
	U("sql_count", sql_count, false, U32M);
	U("sql_slowest_ns", sql_slowest_ns, false, U64M);
	if ((e = get_str(o, "sql_slowest", &r->sql_slowest, i, err, el)))
		return e;
	U("probe_other_ns", probe_other_ns, false, U64M);
	U("probe_other_calls", probe_other_calls, false, U32M);
	U("gc_ns", gc_ns, false, U64M);
	U("gc_count", gc_count, false, U32M);
	U("incomplete_spans", incomplete_spans, false, U32M);
	U("other_ns", other_ns, false, U64M);
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "breakdown");
	if (b && !cJSON_IsObject(b))
		return fail(err, el, "cycles[%zu].breakdown: not an object", i);
	if (b) {
		const cJSON *save = o;
		o = b;
		U("gc_ns", part_gc_ns, false, U64M);
		U("sql_ns", part_sql_ns, false, U64M);
		U("inference_ns", part_inference_ns, false, U64M);
		U("probes_ns", part_probe_ns, false, U64M);
		const cJSON *bo = cJSON_GetObjectItemCaseSensitive(b, "off_cpu_ns");
		if (bo && !cJSON_IsObject(bo))
			return fail(err, el, "cycles[%zu].breakdown.off_cpu_ns: not an object", i);
		for (unsigned k = 0; bo && k < CYC_OFF_REASONS; k++)
			if ((e = get_u64(bo, cycles_off_reason_name(k), false, U64M,
					 &r->part_off_cpu_ns[k], NULL, i, err, el)))
				return e;
		o = save;
	}
	bool has;
	if ((e = get_u64(o, "rss_end_bytes", false, U64M, &r->rss_end_bytes, &r->has_rss, i, err,
			 el)))
		return e;
	double d = 0;
	if ((e = get_dbl(o, "rss_delta_bytes", -9.2e18, 9.2e18, &d, &has, i, err, el)))
		return e;
	r->rss_delta_bytes = (int64_t)d;
	if ((e = get_dbl(o, "cpu_mhz_mean", 0, 1e7, &r->mhz_mean, &r->has_freq, i, err, el)) ||
	    (e = get_dbl(o, "cpu_mhz_min", 0, 1e7, &r->mhz_min, NULL, i, err, el)) ||
	    (e = get_dbl(o, "throttled_share", 0, 1, &r->throttled_share, NULL, i, err, el)))
		return e;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "gpu");
	if (g && !cJSON_IsNull(g)) {
		if (!cJSON_IsObject(g))
			return fail(err, el, "cycles[%zu].gpu: not an object", i);
		r->has_gpu = true;
		if ((e = get_dbl(g, "load_pct", 0, 100, &r->gpu_load_pct, NULL, i, err, el)) ||
		    (e = get_dbl(g, "power_mw", 0, 1e9, &r->gpu_power_mw, NULL, i, err, el)) ||
		    (e = get_dbl(g, "temp_c", -300, 1000, &r->gpu_temp_c, NULL, i, err, el)) ||
		    (e = get_dbl(g, "energy_mj", 0, 1e15, &r->gpu_energy_mj, NULL, i, err, el)))
			return e;
	}
	if ((e = llm_from_json(o, &r->llm, i, err, el)))
		return e;
	const cJSON *top = cJSON_GetObjectItemCaseSensitive(o, "top_functions");
	if (top && !cJSON_IsArray(top))
		return fail(err, el, "cycles[%zu].top_functions: not an array", i);
	const cJSON *f;
	cJSON_ArrayForEach(f, top)
	{
		if (r->n_top >= CYC_TOP_FUNCS)
			break;
		if (!cJSON_IsObject(f))
			return fail(err, el, "cycles[%zu].top_functions: entry not an object", i);
		struct cycle_func cf = { 0 };
		if ((e = get_u64(f, "samples", true, U64M, &cf.samples, NULL, i, err, el)) ||
		    (e = get_str(f, "name", &cf.name, i, err, el)))
			return e;
		if (!cf.name)
			return fail(err, el, "cycles[%zu].top_functions: name missing", i);
		r->top[r->n_top++] = cf;
	}
#undef U
	return 0;
}

int cycles_from_json(const cJSON *arr, struct cycle_table *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!cJSON_IsArray(arr))
		return fail(err, errlen, "cycles: not an array");
	int n = cJSON_GetArraySize(arr);
	out->rows = calloc(n > 0 ? (size_t)n : 1, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	const cJSON *o;
	cJSON_ArrayForEach(o, arr)
	{
		/* Count the row first so a failure half-way frees its strings. */
		struct cycle_row *r = &out->rows[out->n++];
		int e = row_from_json(o, r, out->n - 1, err, errlen);
		if (e) {
			cycle_table_free(out);
			return e;
		}
	}
	return 0;
}

static const char *const known_rules[] = {
	"no_cycles",	     "inference_dominates", "database_overhead",
	"unattributed_time", "slow_cycles",	    "memory_pressure",
	"memory_growth",     "throttling",	    "cpu_oversubscription",
};

int findings_from_json(const cJSON *arr, struct findings *out, char *err, size_t errlen)
{
	out->v = NULL;
	out->n = 0;
	if (!cJSON_IsArray(arr))
		return fail(err, errlen, "findings: not an array");
	int n = cJSON_GetArraySize(arr);
	out->v = calloc(n > 0 ? (size_t)n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	const cJSON *o;
	int e = 0;
	cJSON_ArrayForEach(o, arr)
	{
		size_t i = out->n;
		struct finding *f = &out->v[out->n++];
		if (!cJSON_IsObject(o)) {
			e = fail(err, errlen, "findings[%zu]: not an object", i);
			break;
		}
		const cJSON *rule = cJSON_GetObjectItemCaseSensitive(o, "rule");
		const cJSON *sev = cJSON_GetObjectItemCaseSensitive(o, "severity");
		if (!cJSON_IsString(rule) || !cJSON_IsString(sev)) {
			e = fail(err, errlen, "findings[%zu]: rule/severity missing or not strings",
				 i);
			break;
		}
		f->rule = "unknown";
		for (size_t k = 0; k < sizeof(known_rules) / sizeof(known_rules[0]); k++)
			if (!strcmp(rule->valuestring, known_rules[k]))
				f->rule = known_rules[k];
		if (!strcmp(sev->valuestring, "critical"))
			f->severity = FIND_CRITICAL;
		else if (!strcmp(sev->valuestring, "warning"))
			f->severity = FIND_WARNING;
		else if (!strcmp(sev->valuestring, "info"))
			f->severity = FIND_INFO;
		else {
			e = fail(err, errlen, "findings[%zu].severity: unknown", i);
			break;
		}
		/* get_str's messages say "cycles[...]": findings use their own. */
		const char *keys[3] = { "title", "evidence", "recommendation" };
		char **dst[3] = { &f->title, &f->evidence, &f->recommendation };
		for (int k = 0; k < 3 && !e; k++) {
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
			if (!cJSON_IsString(s)) {
				e = fail(err, errlen, "findings[%zu].%s: missing or not a string",
					 i, keys[k]);
				break;
			}
			*dst[k] = strdup(s->valuestring);
			if (!*dst[k])
				e = -ENOMEM;
		}
		if (e)
			break;
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "value");
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "threshold");
		f->value = cJSON_IsNumber(v) ? v->valuedouble : 0;
		f->threshold = cJSON_IsNumber(t) ? t->valuedouble : 0;
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "cycles");
		if (c && !cJSON_IsArray(c)) {
			e = fail(err, errlen, "findings[%zu].cycles: not an array", i);
			break;
		}
		int nc = c ? cJSON_GetArraySize(c) : 0;
		if (nc > 0) {
			f->cycles = calloc((size_t)nc, sizeof(*f->cycles));
			if (!f->cycles) {
				e = -ENOMEM;
				break;
			}
		}
		const cJSON *x;
		cJSON_ArrayForEach(x, c)
		{
			if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0 ||
			    x->valuedouble > UINT32_MAX) {
				e = fail(err, errlen, "findings[%zu].cycles: bad cycle index", i);
				break;
			}
			f->cycles[f->ncycles++] = (uint32_t)x->valuedouble;
		}
		if (e)
			break;
	}
	if (e)
		findings_free(out);
	return e;
}

/* all_cycles.llm: the cycles' LLM timing over the whole run. */
static int llm_agg_json(const struct cycle_agg_llm *l, cJSON *all)
{
	cJSON *o = cJSON_AddObjectToObject(all, "llm");
	bool ok =
		o && add_u64(o, "cycles", l->cycles) && add_u64(o, "prompts", l->prompts) &&
		add_u64(o, "prompt_tokens", l->prompt_tokens) &&
		add_u64(o, "generated_tokens", l->generated_tokens) &&
		add_ms_or_null(o, "prefill_ms", true, l->prefill_ns) &&
		add_ms_or_null(o, "decode_ms", true, l->decode_ns) &&
		add_num_or_null(o, "prompt_tokens_per_s", l->prefill_ns > 0,
				(double)l->prompt_tokens * 1e9 / (double)l->prefill_ns) &&
		add_num_or_null(o, "generation_tokens_per_s", l->decode_ns > 0,
				(double)l->generated_tokens * 1e9 / (double)l->decode_ns) &&
		add_ms_or_null(o, "ttft_median_ms", l->ttft.count, hist_quantile(&l->ttft, 0.5)) &&
		add_ms_or_null(o, "ttft_p99_ms", l->ttft.count, hist_quantile(&l->ttft, 0.99)) &&
		add_ms_or_null(o, "itl_p50_median_ms", l->itl_p50.count,
			       hist_quantile(&l->itl_p50, 0.5)) &&
		add_ms_or_null(o, "itl_p99_max_ms", l->itl_p50.count, l->itl_p99_max) &&
		add_num_or_null(o, "kv_used_max", l->kv_max >= 0, (double)l->kv_max) &&
		add_num_or_null(o, "kv_size", l->kv_size > 0, (double)l->kv_size);

	return ok ? 0 : -ENOMEM;
}

int cycles_agg_to_json(const struct cycle_agg *a, cJSON *meta)
{
	cJSON *o = cJSON_AddObjectToObject(meta, "all_cycles");
	const struct histogram *h = a->hist[CA_WALL].count ? &a->hist[CA_WALL]
							   : &a->hist_tr[CA_WALL];

	if (!o || !cJSON_AddNumberToObject(o, "count", (double)a->n) ||
	    !cJSON_AddNumberToObject(o, "truncated", (double)a->n_truncated) ||
	    !cJSON_AddNumberToObject(o, "wall_ns_sum", (double)a->sum[CA_WALL]) ||
	    !cJSON_AddNumberToObject(o, "wall_ns_median", (double)cycle_agg_median(a, CA_WALL)) ||
	    !cJSON_AddNumberToObject(o, "wall_ns_p95", (double)hist_quantile(h, 0.95)) ||
	    !cJSON_AddNumberToObject(o, "wall_ns_max", (double)h->max) ||
	    (a->nslowest &&
	     !cJSON_AddNumberToObject(o, "slowest_index", (double)a->slowest[0].index)))
		return -ENOMEM;
	return a->llm.cycles ? llm_agg_json(&a->llm, o) : 0;
}
