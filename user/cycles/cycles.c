// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-cycle attribution (see cycles.h). Pure: no I/O, no clocks. */
#include "cycles/cycles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycle_facts.h"
#include "llama/llm_track.h"

struct bev {
	uint64_t ts;
	uint32_t tid;
	uint32_t is_end;
};

struct cycles_input {
	EP_VEC(struct bev) bevs;
	EP_VEC(struct bev) entries;
	struct cycle_facts facts; /* names: a name that cannot be kept fails its fact */
};

struct cycles_input *cycles_input_new(void)
{
	struct cycles_input *in = calloc(1, sizeof(*in));
	if (in)
		cycle_facts_init(&in->facts, 0, false);
	return in;
}

void cycles_input_clear(struct cycles_input *in)
{
	in->bevs.n = in->entries.n = 0;
	cycle_facts_clear(&in->facts);
}

void cycles_input_free(struct cycles_input *in)
{
	if (!in)
		return;
	free(in->bevs.v);
	free(in->entries.v);
	cycle_facts_free(&in->facts);
	free(in);
}

static const char *str_of(const struct cycles_input *in, uint32_t id)
{
	return cycle_facts_str(&in->facts, id);
}

int cycles_add_begin(struct cycles_input *in, uint64_t ts_ns, uint32_t tid)
{
	return EP_VEC_PUSH(in->bevs, ((struct bev){ ts_ns, tid, 0 }));
}

int cycles_add_end(struct cycles_input *in, uint64_t ts_ns, uint32_t tid)
{
	return EP_VEC_PUSH(in->bevs, ((struct bev){ ts_ns, tid, 1 }));
}

int cycles_add_entry(struct cycles_input *in, uint64_t ts_ns, uint32_t tid)
{
	return EP_VEC_PUSH(in->entries, ((struct bev){ ts_ns, tid, 0 }));
}

struct cycle_facts *cycles_input_facts(struct cycles_input *in)
{
	return &in->facts;
}

/* ---- sorting helpers ---- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_bev(const void *a, const void *b)
{
	const struct bev *x = a, *y = b;
	int c = cmp_u64(x->ts, y->ts);
	if (c)
		return c;
	/* At the same instant an end closes the old cycle before a begin opens
	 * the next one. */
	return (int)y->is_end - (int)x->is_end;
}

/* A total order over the span's contents (not over the insertion order or
 * string ids), so ties such as "slowest statement" are decided the same
 * way whatever order the facts arrived in. */
static int cmp_span(const void *a, const void *b, void *ctx)
{
	const struct cycles_input *in = ctx;
	const struct cf_span *x = a, *y = b;
	int c = cmp_u64(x->start, y->start);
	if (!c)
		c = cmp_u64(x->end, y->end);
	if (!c)
		c = cmp_u64(x->tid, y->tid);
	if (!c)
		c = cmp_u64(x->kind, y->kind);
	if (!c)
		c = cmp_u64(x->tokens, y->tokens);
	if (!c)
		c = cmp_u64(x->llm_flags, y->llm_flags);
	if (!c)
		c = cmp_u64(x->llm_tokens, y->llm_tokens);
	if (!c)
		c = cmp_u64((uint64_t)x->kv_after, (uint64_t)y->kv_after);
	if (!c && x->detail != y->detail) {
		const char *dx = str_of(in, x->detail), *dy = str_of(in, y->detail);
		c = !dx ? -1 : !dy ? 1 : strcmp(dx, dy);
	}
	return c;
}

static int cmp_sample(const void *a, const void *b)
{
	return cmp_u64(((const struct cf_sample *)a)->ts, ((const struct cf_sample *)b)->ts);
}

static int cmp_off(const void *a, const void *b)
{
	return cmp_u64(((const struct cf_off *)a)->start, ((const struct cf_off *)b)->start);
}

static int cmp_point(const void *a, const void *b)
{
	const struct cf_point *x = a, *y = b;
	int c = cmp_u64(x->ts, y->ts);
	/* Two readings at one instant: the larger counts as the later one. */
	return c ? c : (x->v > y->v) - (x->v < y->v);
}

static int cmp_dbl(double a, double b)
{
	return (a > b) - (a < b);
}

static int cmp_gpu(const void *a, const void *b)
{
	const struct cyc_gpu_sample *x = a, *y = b;
	int c = cmp_u64(x->ts_ns, y->ts_ns);
	if (!c)
		c = cmp_dbl(x->load_pct, y->load_pct);
	if (!c)
		c = cmp_dbl(x->power_mw, y->power_mw);
	return c ? c : cmp_dbl(x->temp_c, y->temp_c);
}

static int cmp_row(const void *a, const void *b)
{
	const struct cycle_row *x = a, *y = b;
	int c = cmp_u64(x->start_ns, y->start_ns);
	return c ? c : (x->tid > y->tid) - (x->tid < y->tid);
}

static void *dup_sorted(const void *v, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	void *c = malloc(n ? n * sz : 1);
	if (!c)
		return NULL;
	if (n)
		memcpy(c, v, n * sz);
	qsort(c, n, sz, cmp);
	return c;
}

/* ---- cycle boundaries ---- */

struct open_cycle {
	uint32_t tid;
	uint64_t start;
};

static int push_row(struct cycle_table *t, size_t *cap, uint64_t s, uint64_t e, uint32_t tid,
		    bool trunc, bool partial)
{
	if (ep_vec_grow((void **)&t->rows, cap, t->n + 1, sizeof(*t->rows)))
		return -ENOMEM;
	struct cycle_row *r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	r->start_ns = s;
	r->end_ns = e < s ? s : e;
	r->wall_ns = r->end_ns - s;
	r->tid = tid;
	r->truncated = trunc || partial;
	r->partial = partial;
	return 0;
}

static int build_boundaries(const struct cycles_input *in, const struct cycles_cfg *cfg,
			    struct cycle_table *t)
{
	size_t cap = 0;
	int err = 0;

	if (in->entries.n) {
		struct bev *e = dup_sorted(in->entries.v, in->entries.n, sizeof(*e), cmp_bev);
		if (!e)
			return -ENOMEM;
		for (size_t i = 0; i < in->entries.n && !err; i++) {
			bool last = i + 1 == in->entries.n;
			uint64_t end = last ? cfg->run_end_ns : e[i + 1].ts;
			err = push_row(t, &cap, e[i].ts, end, e[i].tid, false, last);
		}
		free(e);
		return err;
	}
	if (in->bevs.n) {
		struct bev *b = dup_sorted(in->bevs.v, in->bevs.n, sizeof(*b), cmp_bev);
		struct open_cycle *open = calloc(in->bevs.n, sizeof(*open));
		size_t nopen = 0;
		if (!b || !open) {
			free(b);
			free(open);
			return -ENOMEM;
		}
		for (size_t i = 0; i < in->bevs.n && !err; i++) {
			size_t k = 0;
			while (k < nopen && open[k].tid != b[i].tid)
				k++;
			if (b[i].is_end) {
				if (k == nopen) {
					t->unmatched_ends++;
					continue;
				}
				err = push_row(t, &cap, open[k].start, b[i].ts, b[i].tid, false,
					       false);
				open[k] = open[--nopen];
				continue;
			}
			if (k < nopen) {
				/* Missing return: the new begin closes the old cycle. */
				err = push_row(t, &cap, open[k].start, b[i].ts, b[i].tid, true,
					       false);
				open[k].start = b[i].ts;
				continue;
			}
			open[nopen++] = (struct open_cycle){ b[i].tid, b[i].ts };
		}
		for (size_t k = 0; k < nopen && !err; k++) {
			uint64_t end = cfg->run_end_ns > open[k].start ? cfg->run_end_ns
								       : open[k].start;
			err = push_row(t, &cap, open[k].start, end, open[k].tid, true, true);
		}
		free(b);
		free(open);
		if (!err && t->n > 1)
			qsort(t->rows, t->n, sizeof(*t->rows), cmp_row);
		return err;
	}
	t->whole_run = true;
	return push_row(t, &cap, cfg->run_start_ns, cfg->run_end_ns, 0, false, false);
}

/* ---- interval sweep ---- */

struct cls_iv {
	uint64_t start, end;
	uint32_t cls;
};

struct edge {
	uint64_t ts;
	int32_t delta;
	uint32_t cls;
};

static int cmp_edge(const void *a, const void *b)
{
	return cmp_u64(((const struct edge *)a)->ts, ((const struct edge *)b)->ts);
}

#define SWEEP_MAX_CLS 16

/* Partitions [lo, hi) among the classes: each instant goes to the smallest
 * class covering it; out[ncls] gets what no class covers. */
static int sweep(const struct cls_iv *iv, size_t n, uint32_t ncls, uint64_t lo, uint64_t hi,
		 uint64_t *out)
{
	memset(out, 0, (ncls + 1) * sizeof(*out));
	if (hi <= lo)
		return 0;
	struct edge *e = malloc((2 * n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	size_t ne = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t s = iv[i].start < lo ? lo : iv[i].start;
		uint64_t f = iv[i].end > hi ? hi : iv[i].end;
		if (f <= s)
			continue;
		e[ne++] = (struct edge){ s, 1, iv[i].cls };
		e[ne++] = (struct edge){ f, -1, iv[i].cls };
	}
	qsort(e, ne, sizeof(*e), cmp_edge);
	int64_t cnt[SWEEP_MAX_CLS] = { 0 };
	uint64_t prev = lo;
	size_t i = 0;
	for (;;) {
		uint64_t next = i < ne ? e[i].ts : hi;
		if (next > prev) {
			uint32_t c = 0;
			while (c < ncls && cnt[c] <= 0)
				c++;
			out[c] += next - prev;
			prev = next;
		}
		if (i >= ne)
			break;
		for (; i < ne && e[i].ts == next; i++)
			cnt[e[i].cls] += e[i].delta;
	}
	free(e);
	return 0;
}

/* ---- per-cycle attribution ---- */

struct ctx {
	const struct cycles_input *in;
	const struct cycles_cfg *cfg;
	struct cf_span *spans; /* by start */
	uint64_t *span_maxend; /* prefix max of effective end */
	struct cf_sample *samples;
	struct cf_off *offs;
	uint64_t *off_maxend;
	struct cf_point *rss, *freq;
	struct cyc_gpu_sample *gpu;
	struct cls_iv *scratch; /* per-cycle partition intervals */
	size_t scratch_cap;
	uint64_t *func_count; /* per string id, reset per cycle */
	uint32_t *func_touched;
	uint64_t *gaps; /* per-cycle inter-token latencies */
	size_t gaps_cap;
};

/* First index whose key is >= v in a sorted array of n elements. */
#define LOWER_BOUND(arr, n, field, v)                      \
	({                                                 \
		size_t _lo = 0, _hi = (n);                 \
		while (_lo < _hi) {                        \
			size_t _m = _lo + (_hi - _lo) / 2; \
			if ((arr)[_m] field < (v))         \
				_lo = _m + 1;              \
			else                               \
				_hi = _m;                  \
		}                                          \
		_lo;                                       \
	})

/* First index whose prefix-max end exceeds t: every interval before it ended
 * at or before t. */
static size_t first_live(const uint64_t *maxend, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (maxend[m] <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static uint64_t overlap(uint64_t s, uint64_t e, uint64_t lo, uint64_t hi)
{
	uint64_t a = s > lo ? s : lo, b = e < hi ? e : hi;
	return b > a ? b - a : 0;
}

static int scratch_push(struct ctx *c, size_t *n, uint64_t s, uint64_t e, uint32_t cls)
{
	if (ep_vec_grow((void **)&c->scratch, &c->scratch_cap, *n + 1, sizeof(*c->scratch)))
		return -ENOMEM;
	c->scratch[(*n)++] = (struct cls_iv){ s, e, cls };
	return 0;
}

enum { P_GC, P_SQL, P_INF, P_PROBE, P_OFF0 };
#define P_COUNT (P_OFF0 + CYC_OFF_REASONS)

static int do_spans(struct ctx *c, struct cycle_row *r, size_t *np)
{
	const struct cycles_input *in = c->in;
	size_t n = in->facts.spans.n;
	size_t i = first_live(c->span_maxend, n, r->start_ns);
	for (; i < n && c->spans[i].start < r->end_ns; i++) {
		const struct cf_span *s = &c->spans[i];
		bool missing = s->end == 0;
		uint64_t end = missing ? r->end_ns : s->end;
		bool starts_here = s->start >= r->start_ns && s->start < r->end_ns;
		/* A span with no return only counts in the cycle it started in. */
		if (missing && !starts_here)
			continue;
		uint64_t ov = overlap(s->start, end, r->start_ns, r->end_ns);
		if (!ov && !starts_here)
			continue;
		if (missing)
			r->incomplete_spans++;
		switch (s->kind) {
		case CYC_SPAN_INFERENCE:
			r->inference_ns += ov;
			r->inference_calls += starts_here;
			/* Tokens are counted where the call returned (or started, when
			 * the return is missing). */
			if ((missing && starts_here) ||
			    (!missing && end > r->start_ns && end <= r->end_ns))
				r->tokens += s->tokens;
			break;
		case CYC_SPAN_SQL:
			r->sql_ns += ov;
			r->sql_count += starts_here;
			if (ov > r->sql_slowest_ns) {
				const char *d = str_of(in, s->detail);
				char *dup = d ? strdup(d) : NULL;
				if (d && !dup)
					return -ENOMEM;
				free(r->sql_slowest);
				r->sql_slowest = dup;
				r->sql_slowest_ns = ov;
			}
			break;
		case CYC_SPAN_GC:
			r->gc_ns += ov;
			r->gc_count += starts_here;
			break;
		default:
			r->probe_other_ns += ov;
			r->probe_other_calls += starts_here;
			break;
		}
		static const uint32_t prio[CYC_SPAN__COUNT] = { P_INF, P_SQL, P_PROBE, P_GC };
		if (ov && scratch_push(c, np, s->start, end, prio[s->kind]))
			return -ENOMEM;
	}
	if (r->inference_ns)
		r->tokens_per_s = (double)r->tokens * 1e9 / (double)r->inference_ns;
	return 0;
}

static int cmp_u64_asc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least pct% of n at or below. */
static uint64_t rank_pct(const uint64_t *v, size_t n, unsigned pct)
{
	size_t k = ((size_t)pct * n + 99) / 100;

	return v[k ? k - 1 : 0];
}

/* The cycle's LLM timing from the decodes that started in it, in start
 * order (a context's decodes run one after another): prefill and
 * generation tokens and time, the time from the cycle's start to the end
 * of the first generation step after its first prompt start, the gaps
 * between the ends of consecutive generation steps of a prompt, and the
 * KV-cache fill after its last decode. */
static int do_llm(struct ctx *c, struct cycle_row *r)
{
	struct cycle_llm *l = &r->llm;
	size_t n = c->in->facts.spans.n, ngaps = 0;
	bool prompt_seen = false, last_gen = false;
	uint64_t last_gen_end = 0;

	memset(l, 0, sizeof(*l));
	l->kv_used = -1;
	for (size_t i = LOWER_BOUND(c->spans, n, .start, r->start_ns);
	     i < n && c->spans[i].start < r->end_ns; i++) {
		const struct cf_span *s = &c->spans[i];
		uint64_t dur;

		if (!(s->llm_flags & LLM_D_KNOWN) || !s->end)
			continue;
		dur = s->end - s->start;
		l->has = true;
		if (s->llm_flags & LLM_D_PREFILL) {
			l->prompt_tokens += s->llm_tokens;
			l->prefill_ns += dur;
			if (s->llm_flags & LLM_D_PROMPT_START) {
				l->prompts++;
				prompt_seen = true;
			}
			last_gen = false;
		} else {
			l->generated_tokens += s->llm_tokens;
			l->decode_ns += dur;
			if (prompt_seen && !l->has_ttft && s->end > r->start_ns) {
				l->has_ttft = true;
				l->ttft_ns = s->end - r->start_ns;
			}
			if (last_gen && s->end >= last_gen_end) {
				if (ep_vec_grow((void **)&c->gaps, &c->gaps_cap, ngaps + 1,
						sizeof(*c->gaps)))
					return -ENOMEM;
				c->gaps[ngaps++] = s->end - last_gen_end;
			}
			last_gen = true;
			last_gen_end = s->end;
		}
		if (s->kv_after >= 0)
			l->kv_used = s->kv_after;
		if (s->kv_size)
			l->kv_size = s->kv_size;
	}
	if (ngaps) {
		qsort(c->gaps, ngaps, sizeof(*c->gaps), cmp_u64_asc);
		l->has_itl = true;
		l->itl_p50_ns = rank_pct(c->gaps, ngaps, 50);
		l->itl_p99_ns = rank_pct(c->gaps, ngaps, 99);
	}
	/* Tokens from the batches: also for programs that sample by
	 * themselves (node-llama-cpp), not through llama_sampler_sample. */
	if (l->has) {
		r->tokens = l->generated_tokens;
		r->tokens_per_s =
			r->inference_ns ? (double)r->tokens * 1e9 / (double)r->inference_ns : 0;
	}
	return 0;
}

static int do_offcpu(struct ctx *c, struct cycle_row *r, size_t *np)
{
	size_t n = c->in->facts.offs.n;
	uint32_t tid = r->tid ? r->tid : c->cfg->main_tid;
	for (size_t i = first_live(c->off_maxend, n, r->start_ns);
	     i < n && c->offs[i].start < r->end_ns; i++) {
		const struct cf_off *o = &c->offs[i];
		if (tid && o->tid != tid)
			continue;
		uint64_t ov = overlap(o->start, o->end, r->start_ns, r->end_ns);
		if (!ov)
			continue;
		r->off_cpu_ns[o->reason] += ov;
		r->off_cpu_total_ns += ov;
		/* Without a thread, a union of every thread's waits says nothing
		 * about where the cycle's time went. */
		if (tid && scratch_push(c, np, o->start, o->end, P_OFF0 + o->reason))
			return -ENOMEM;
	}
	return 0;
}

static int do_samples(struct ctx *c, struct cycle_row *r)
{
	size_t n = c->in->facts.samples.n;
	size_t ntouched = 0;
	for (size_t i = LOWER_BOUND(c->samples, n, .ts, r->start_ns);
	     i < n && c->samples[i].ts < r->end_ns; i++) {
		r->samples++;
		uint32_t f = c->samples[i].func;
		if (!f)
			continue;
		if (!c->func_count[f - 1]++)
			c->func_touched[ntouched++] = f - 1;
	}
	r->on_cpu_ns = r->samples * c->cfg->period_ns;
	for (size_t k = 0; k < ntouched; k++) {
		uint32_t id = c->func_touched[k];
		uint64_t cnt = c->func_count[id];
		c->func_count[id] = 0;
		/* Insert into the top list: by count, then name for stable output. */
		const char *name = cycle_facts_str(&c->in->facts, id + 1);
		uint32_t pos = r->n_top;
		while (pos > 0 &&
		       (r->top[pos - 1].samples < cnt ||
			(r->top[pos - 1].samples == cnt && strcmp(r->top[pos - 1].name, name) > 0)))
			pos--;
		if (pos >= CYC_TOP_FUNCS)
			continue;
		char *dup = strdup(name);
		if (!dup) {
			for (size_t j = k + 1; j < ntouched; j++)
				c->func_count[c->func_touched[j]] = 0;
			return -ENOMEM;
		}
		if (r->n_top == CYC_TOP_FUNCS)
			free(r->top[CYC_TOP_FUNCS - 1].name);
		else
			r->n_top++;
		memmove(&r->top[pos + 1], &r->top[pos], (r->n_top - 1 - pos) * sizeof(r->top[0]));
		r->top[pos] = (struct cycle_func){ dup, cnt };
	}
	return 0;
}

/* Mean and min of the points inside [lo, hi); without any, the last value
 * before lo (a frequency or GPU reading holds until the next one). */
static bool point_stats(const struct cf_point *p, size_t n, uint64_t lo, uint64_t hi, double *mean,
			double *min)
{
	size_t i = LOWER_BOUND(p, n, .ts, lo);
	double sum = 0, mn = 0;
	size_t cnt = 0;
	for (size_t k = i; k < n && p[k].ts < hi; k++) {
		if (!cnt || p[k].v < mn)
			mn = p[k].v;
		sum += p[k].v;
		cnt++;
	}
	if (!cnt) {
		if (i == 0)
			return false;
		*mean = *min = p[i - 1].v;
		return true;
	}
	*mean = sum / (double)cnt;
	*min = mn;
	return true;
}

static void do_rss(struct ctx *c, struct cycle_row *r)
{
	size_t n = c->in->facts.rss.n;
	if (!n)
		return;
	size_t e = LOWER_BOUND(c->rss, n, .ts, r->end_ns + 1); /* first > end */
	if (e == 0)
		return;
	size_t s = LOWER_BOUND(c->rss, n, .ts, r->start_ns + 1);
	/* Value at the start: last reading at or before it, else the first
	 * reading inside the cycle. */
	double start_v = s > 0 ? c->rss[s - 1].v : c->rss[0].v;
	double end_v = c->rss[e - 1].v;
	r->has_rss = true;
	r->rss_end_bytes = (uint64_t)end_v;
	r->rss_delta_bytes = (int64_t)end_v - (int64_t)start_v;
}

static void do_gpu(struct ctx *c, struct cycle_row *r)
{
	size_t n = c->in->facts.gpu.n;
	size_t i = LOWER_BOUND(c->gpu, n, .ts_ns, r->start_ns);
	double load = 0, pw = 0, temp = 0;
	size_t cnt = 0;
	for (size_t k = i; k < n && c->gpu[k].ts_ns < r->end_ns; k++, cnt++) {
		load += c->gpu[k].load_pct;
		pw += c->gpu[k].power_mw;
		temp += c->gpu[k].temp_c;
	}
	if (!cnt) {
		if (i == 0)
			return;
		load = c->gpu[i - 1].load_pct;
		pw = c->gpu[i - 1].power_mw;
		temp = c->gpu[i - 1].temp_c;
		cnt = 1;
	}
	r->has_gpu = true;
	r->gpu_load_pct = load / (double)cnt;
	r->gpu_power_mw = pw / (double)cnt;
	r->gpu_temp_c = temp / (double)cnt;
	r->gpu_energy_mj = r->gpu_power_mw * (double)r->wall_ns / 1e9;
}

static int do_throttle(struct ctx *c, struct cycle_row *r)
{
	const struct cycles_input *in = c->in;
	if (!in->facts.thr.n || !r->wall_ns)
		return 0;
	struct cls_iv *iv = malloc(in->facts.thr.n * sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	for (size_t i = 0; i < in->facts.thr.n; i++) {
		uint64_t e = in->facts.thr.v[i].end ? in->facts.thr.v[i].end : UINT64_MAX;
		iv[i] = (struct cls_iv){ in->facts.thr.v[i].start, e, 0 };
	}
	uint64_t out[2];
	int err = sweep(iv, in->facts.thr.n, 1, r->start_ns, r->end_ns, out);
	free(iv);
	if (!err)
		r->throttled_share = (double)out[0] / (double)r->wall_ns;
	return err;
}

static int attribute(struct ctx *c, struct cycle_row *r)
{
	size_t np = 0;
	int err = do_spans(c, r, &np);
	if (!err)
		err = do_llm(c, r);
	if (!err)
		err = do_offcpu(c, r, &np);
	if (!err)
		err = do_samples(c, r);
	if (!err)
		err = do_throttle(c, r);
	if (err)
		return err;
	uint64_t part[P_COUNT + 1];
	err = sweep(c->scratch, np, P_COUNT, r->start_ns, r->end_ns, part);
	if (err)
		return err;
	r->part_gc_ns = part[P_GC];
	r->part_sql_ns = part[P_SQL];
	r->part_inference_ns = part[P_INF];
	r->part_probe_ns = part[P_PROBE];
	for (int k = 0; k < CYC_OFF_REASONS; k++)
		r->part_off_cpu_ns[k] = part[P_OFF0 + k];
	r->other_ns = part[P_COUNT];
	double mn;
	r->has_freq = point_stats(c->freq, c->in->facts.freq.n, r->start_ns, r->end_ns,
				  &r->mhz_mean, &mn);
	if (r->has_freq)
		r->mhz_min = mn;
	do_rss(c, r);
	do_gpu(c, r);
	return 0;
}

static void free_ctx(struct ctx *c)
{
	free(c->spans);
	free(c->span_maxend);
	free(c->samples);
	free(c->offs);
	free(c->off_maxend);
	free(c->rss);
	free(c->freq);
	free(c->gpu);
	free(c->scratch);
	free(c->func_count);
	free(c->func_touched);
	free(c->gaps);
}

void cycle_table_free_rows(struct cycle_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->rows[i].sql_slowest);
		t->rows[i].sql_slowest = NULL;
		for (uint32_t k = 0; k < t->rows[i].n_top; k++)
			free(t->rows[i].top[k].name);
		t->rows[i].n_top = 0;
	}
}

void cycle_table_free(struct cycle_table *t)
{
	if (!t)
		return;
	cycle_table_free_rows(t);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* Effective end of a span for the live-interval index: a missing return
 * reaches at most the end of the run. */
static uint64_t span_end_bound(const struct cf_span *s, const struct cycles_cfg *cfg)
{
	if (s->end)
		return s->end;
	return cfg->run_end_ns > s->start ? cfg->run_end_ns : s->start;
}

int cycles_compute(const struct cycles_input *in, const struct cycles_cfg *cfg,
		   struct cycle_table *out)
{
	memset(out, 0, sizeof(*out));
	if (!in || !cfg)
		return -EINVAL;
	out->period_ns = cfg->period_ns;
	int err = build_boundaries(in, cfg, out);
	if (err) {
		cycle_table_free(out);
		return err;
	}

	struct ctx c = { .in = in, .cfg = cfg };
	size_t ns = in->facts.spans.n, no = in->facts.offs.n, nstr = cycle_facts_nnames(&in->facts);
	c.spans = malloc((ns ? ns : 1) * sizeof(*c.spans));
	if (c.spans) {
		if (ns)
			memcpy(c.spans, in->facts.spans.v, ns * sizeof(*c.spans));
		qsort_r(c.spans, ns, sizeof(*c.spans), cmp_span, (void *)in);
	}
	c.span_maxend = malloc((ns ? ns : 1) * sizeof(uint64_t));
	c.samples = dup_sorted(in->facts.samples.v, in->facts.samples.n, sizeof(*c.samples),
			       cmp_sample);
	c.offs = dup_sorted(in->facts.offs.v, no, sizeof(*c.offs), cmp_off);
	c.off_maxend = malloc((no ? no : 1) * sizeof(uint64_t));
	c.rss = dup_sorted(in->facts.rss.v, in->facts.rss.n, sizeof(*c.rss), cmp_point);
	c.freq = dup_sorted(in->facts.freq.v, in->facts.freq.n, sizeof(*c.freq), cmp_point);
	c.gpu = dup_sorted(in->facts.gpu.v, in->facts.gpu.n, sizeof(*c.gpu), cmp_gpu);
	c.func_count = calloc(nstr ? nstr : 1, sizeof(uint64_t));
	c.func_touched = calloc(nstr ? nstr : 1, sizeof(uint32_t));
	if (!c.spans || !c.span_maxend || !c.samples || !c.offs || !c.off_maxend || !c.rss ||
	    !c.freq || !c.gpu || !c.func_count || !c.func_touched) {
		err = -ENOMEM;
		goto out;
	}
	uint64_t m = 0;
	for (size_t i = 0; i < ns; i++) {
		uint64_t e = span_end_bound(&c.spans[i], cfg);
		m = e > m ? e : m;
		c.span_maxend[i] = m;
	}
	m = 0;
	for (size_t i = 0; i < no; i++) {
		m = c.offs[i].end > m ? c.offs[i].end : m;
		c.off_maxend[i] = m;
	}
	for (size_t i = 0; i < out->n && !err; i++) {
		out->rows[i].index = (uint32_t)i;
		err = attribute(&c, &out->rows[i]);
	}
out:
	free_ctx(&c);
	if (err)
		cycle_table_free(out);
	return err;
}

static int cmp_u64p(const void *a, const void *b)
{
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

uint64_t cycles_wall_percentile(const struct cycle_table *t, double pct)
{
	if (!t || !t->n)
		return 0;
	uint64_t *w = malloc(t->n * sizeof(*w));
	if (!w)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (!t->rows[i].partial)
			w[n++] = t->rows[i].wall_ns;
	if (!n) {
		free(w);
		return 0;
	}
	qsort(w, n, sizeof(*w), cmp_u64p);
	if (pct < 0)
		pct = 0;
	if (pct > 100)
		pct = 100;
	/* Nearest rank: the smallest value with at least pct% at or below it. */
	size_t rank = (size_t)((pct / 100.0) * (double)n + 0.999999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	uint64_t v = w[rank - 1];
	free(w);
	return v;
}

int cycles_complete_view(const struct cycle_table *t, struct cycle_table *view)
{
	size_t left_out = 0;

	*view = *t;
	view->rows = NULL;
	view->n = 0;
	if (!t->n)
		return 0;
	view->rows = malloc(t->n * sizeof(*view->rows));
	if (!view->rows)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		if (t->rows[i].partial)
			left_out++;
		else
			view->rows[view->n++] = t->rows[i];
	}
	return (int)(left_out > INT32_MAX ? INT32_MAX : left_out);
}

void cycles_view_free(struct cycle_table *view)
{
	/* Shallow rows: the strings belong to the viewed table. */
	free(view->rows);
	view->rows = NULL;
	view->n = 0;
}

size_t cycles_self_check(const struct cycle_table *t, uint32_t nthreads, char *why, size_t len)
{
	size_t bad = 0;

	if (why && len)
		why[0] = '\0';
	for (size_t i = 0; t && i < t->n; i++) {
		const struct cycle_row *r = &t->rows[i];
		uint64_t parts = r->part_gc_ns + r->part_sql_ns + r->part_inference_ns +
				 r->part_probe_ns + r->other_ns;
		const struct {
			const char *name;
			uint64_t v;
		} sums[] = { { "inference", r->inference_ns },
			     { "SQL", r->sql_ns },
			     { "other probes", r->probe_other_ns },
			     { "GC", r->gc_ns },
			     { "off-CPU", r->off_cpu_total_ns } };
		char one[160] = "";

		for (unsigned k = 0; k < CYC_OFF_REASONS; k++)
			parts += r->part_off_cpu_ns[k];
		if (parts != r->wall_ns)
			snprintf(one, sizeof(one),
				 "cycle %u: its parts sum to %.3f ms, its wall time is %.3f ms",
				 r->index, (double)parts / 1e6, (double)r->wall_ns / 1e6);
		for (size_t k = 0; !one[0] && nthreads && k < sizeof(sums) / sizeof(sums[0]); k++)
			/* 1% + 1 ms: the facts come from several clocks' edges
			 * (an off-CPU episode read at the run's start). */
			if ((double)sums[k].v > (double)r->wall_ns * nthreads * 1.01 + 1e6)
				snprintf(
					one, sizeof(one),
					"cycle %u: %s %.3f ms is more than its wall time %.3f ms x %u "
					"thread(s)",
					r->index, sums[k].name, (double)sums[k].v / 1e6,
					(double)r->wall_ns / 1e6, nthreads);
		if (!one[0])
			continue;
		if (!bad && why && len)
			snprintf(why, len, "%s", one);
		bad++;
	}
	return bad;
}

const char *cycles_off_reason_name(unsigned reason)
{
	static const char *const names[CYC_OFF_REASONS] = { "sleep", "uninterruptible", "preempted",
							    "runqueue", "other" };
	return reason < CYC_OFF_REASONS ? names[reason] : "unknown";
}
