// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc/alloc_model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

int alloc_model_init(struct alloc_model *m, uint64_t rate, size_t max_samples)
{
	memset(m, 0, sizeof(*m));
	m->rate = rate;
	m->max_samples = max_samples;
	ep_hashmap_init(&m->stack_index);
	ep_hashmap_init(&m->sample_index);
	/* Period 1 ns: a count is a byte (alloc_model_profile). */
	return profile_init(&m->names, 1000000000u);
}

void alloc_model_free(struct alloc_model *m)
{
	profile_free(&m->names);
	free(m->pool);
	free(m->stacks);
	free(m->s);
	ep_hashmap_free(&m->stack_index);
	ep_hashmap_free(&m->sample_index);
	memset(m, 0, sizeof(*m));
}

struct stack_key {
	const uint32_t *frames;
	uint32_t depth;
};

static bool stack_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct alloc_model *m = ctx;
	const struct stack_key *k = key;
	const struct alloc_stack *s = &m->stacks[idx];

	return s->depth == k->depth &&
	       !memcmp(m->pool + s->off, k->frames, k->depth * sizeof(*k->frames));
}

int64_t alloc_model_stack(struct alloc_model *m, const uint32_t *frames, uint32_t depth)
{
	struct stack_key k = { frames, depth };
	uint64_t h = ep_hashmap_hash_finish(
		ep_hashmap_hash_bytes(frames, depth * sizeof(*frames), HASHMAP_SEED));
	int64_t i;

	if (depth && !frames)
		return -EINVAL;
	for (uint32_t d = 0; d < depth; d++)
		if (frames[d] >= m->names.nframes)
			return -EINVAL;
	i = ep_hashmap_find(&m->stack_index, h, &k, stack_eq, m);
	if (i >= 0)
		return i;
	if (m->nstacks >= UINT32_MAX || m->npool + depth >= UINT32_MAX ||
	    ep_vec_grow((void **)&m->pool, &m->cap_pool, m->npool + depth, sizeof(*m->pool)) ||
	    ep_vec_grow((void **)&m->stacks, &m->cap_stacks, m->nstacks + 1, sizeof(*m->stacks)))
		return -ENOMEM;
	if (depth)
		memcpy(m->pool + m->npool, frames, depth * sizeof(*frames));
	m->stacks[m->nstacks] = (struct alloc_stack){ (uint32_t)m->npool, depth };
	if (ep_hashmap_insert(&m->stack_index, h, (uint32_t)m->nstacks))
		return -ENOMEM;
	m->npool += depth;
	return (int64_t)m->nstacks++;
}

struct sample_key {
	uint32_t pid;
	uint64_t addr, ts;
};

static uint64_t sample_hash(uint32_t pid, uint64_t addr, uint64_t ts)
{
	uint64_t h = ep_hashmap_hash_bytes(&pid, sizeof(pid), HASHMAP_SEED);

	h = ep_hashmap_hash_bytes(&addr, sizeof(addr), h);
	h = ep_hashmap_hash_bytes(&ts, sizeof(ts), h);
	return ep_hashmap_hash_finish(h);
}

static bool sample_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct alloc_model *m = ctx;
	const struct sample_key *k = key;
	const struct alloc_sample *s = &m->s[idx];

	return s->pid == k->pid && s->addr == k->addr && s->ts_ns == k->ts;
}

int alloc_model_add(struct alloc_model *m, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack, bool tracked)
{
	struct alloc_sample *s;
	int64_t th;

	if (stack >= m->nstacks)
		return -EINVAL;
	if (m->n >= m->max_samples) {
		m->dropped_samples++;
		return -ENOSPC;
	}
	th = profile_thread(&m->names, pid, tid, comm);
	if (th < 0)
		return (int)th;
	if (ep_vec_grow((void **)&m->s, &m->cap, m->n + 1, sizeof(*m->s)))
		return -ENOMEM;
	if (tracked &&
	    ep_hashmap_insert(&m->sample_index, sample_hash(pid, addr, ts_ns), (uint32_t)m->n))
		return -ENOMEM;
	s = &m->s[m->n++];
	*s = (struct alloc_sample){ .ts_ns = ts_ns,
				    .addr = addr,
				    .size = size,
				    .bytes = alloc_weight_bytes(size, m->rate),
				    .count = alloc_weight_count(size, m->rate),
				    .pid = pid,
				    .tid = tid,
				    .thread = (uint32_t)th,
				    .stack = stack,
				    .tracked = tracked };
	return 0;
}

int alloc_model_free_block(struct alloc_model *m, uint32_t pid, uint64_t addr, uint64_t alloc_ts_ns,
			   uint64_t free_ns)
{
	struct sample_key k = { pid, addr, alloc_ts_ns };
	int64_t i = ep_hashmap_find(&m->sample_index, sample_hash(pid, addr, alloc_ts_ns), &k,
				    sample_eq, m);

	if (i < 0 || m->s[i].free_ns) {
		m->unmatched_frees++;
		return -ENOENT;
	}
	/* 0 means live: a free at time 0 (tests) still counts as freed. */
	m->s[i].free_ns = free_ns ? free_ns : 1;
	return 0;
}

static int cmp_by_stack(const void *a, const void *b)
{
	const struct alloc_by_stack *x = a, *y = b;

	if (x->alloc_bytes != y->alloc_bytes)
		return x->alloc_bytes < y->alloc_bytes ? 1 : -1;
	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes < y->inuse_bytes ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int alloc_model_by_stack(const struct alloc_model *m, struct alloc_by_stack **out, size_t *n)
{
	struct alloc_by_stack *v = calloc(m->nstacks ? m->nstacks : 1, sizeof(*v));
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m->nstacks; i++)
		v[i].stack = (uint32_t)i;
	for (size_t i = 0; i < m->n; i++) {
		const struct alloc_sample *s = &m->s[i];
		struct alloc_by_stack *b = &v[s->stack];
		double var = alloc_var_bytes(s->size, m->rate);

		b->samples++;
		b->alloc_bytes += s->bytes;
		b->alloc_count += s->count;
		b->alloc_bytes_var += var;
		if (!s->free_ns) {
			b->inuse_bytes += s->bytes;
			b->inuse_count += s->count;
			b->inuse_bytes_var += var;
		}
	}
	for (size_t i = 0; i < m->nstacks; i++)
		if (v[i].samples)
			v[k++] = v[i];
	qsort(v, k, sizeof(*v), cmp_by_stack);
	*out = v;
	*n = k;
	return 0;
}

void alloc_model_totals(const struct alloc_model *m, struct alloc_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < m->n; i++) {
		const struct alloc_sample *s = &m->s[i];
		double var = alloc_var_bytes(s->size, m->rate);

		t->samples++;
		t->alloc_bytes += s->bytes;
		t->alloc_count += s->count;
		t->alloc_bytes_var += var;
		if (!s->tracked)
			t->untracked++;
		if (!s->free_ns) {
			t->live_samples++;
			t->inuse_bytes += s->bytes;
			t->inuse_count += s->count;
			t->inuse_bytes_var += var;
		}
	}
}

/* First cycle whose end is after ts (ends non-decreasing): n when none. */
static size_t first_end_after(const uint64_t *end, size_t n, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (end[mid] > ts)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Adds w to out[c] for every cycle c whose end the block lived across:
 * allocated before the end, not freed by it. diff has n + 1 entries. */
static void add_live(double *diff, const uint64_t *end, size_t n, const struct alloc_sample *s)
{
	size_t a = first_end_after(end, n, s->ts_ns);
	size_t b = s->free_ns ? first_end_after(end, n, s->free_ns - 1) : n;

	/* Freed exactly at a cycle's end: not live at it (end > free - 1
	 * holds for end == free, so b is that cycle: excluded). */
	if (a < b) {
		diff[a] += s->bytes;
		diff[b] -= s->bytes;
	}
}

int alloc_model_cycles(const struct alloc_model *m, const uint64_t *start, const uint64_t *end,
		       size_t ncycles, struct alloc_cycle *out)
{
	double *diff = calloc(ncycles + 1, sizeof(*diff)), run = 0;

	if (!diff)
		return -ENOMEM;
	memset(out, 0, ncycles * sizeof(*out));
	for (size_t i = 0; i < m->n; i++) {
		const struct alloc_sample *s = &m->s[i];
		size_t c = first_end_after(end, ncycles, s->ts_ns);

		add_live(diff, end, ncycles, s);
		/* The cycle that holds it: the first ending after it, if it
		 * had started (samples between cycles belong to none). */
		if (c < ncycles && s->ts_ns >= start[c]) {
			out[c].alloc_bytes += s->bytes;
			if (!s->free_ns)
				out[c].kept_bytes += s->bytes;
		}
	}
	for (size_t c = 0; c < ncycles; c++) {
		run += diff[c];
		out[c].live_at_end_bytes = run < 0 ? 0 : run;
	}
	free(diff);
	return 0;
}

void alloc_model_stack_series(const struct alloc_model *m, uint32_t stack, const uint64_t *end,
			      size_t ncycles, double *out)
{
	double run = 0;

	/* out doubles as the difference array: out[c] - out[c-1]. */
	memset(out, 0, ncycles * sizeof(*out));
	for (size_t i = 0; i < m->n; i++) {
		const struct alloc_sample *s = &m->s[i];
		size_t a, b;

		if (s->stack != stack)
			continue;
		a = first_end_after(end, ncycles, s->ts_ns);
		b = s->free_ns ? first_end_after(end, ncycles, s->free_ns - 1) : ncycles;
		if (a < b) {
			out[a] += s->bytes;
			if (b < ncycles)
				out[b] -= s->bytes;
		}
	}
	for (size_t c = 0; c < ncycles; c++) {
		run += out[c];
		out[c] = run < 0 ? 0 : run;
	}
}

void alloc_leak_default_cfg(struct alloc_leak_cfg *c)
{
	c->min_cycles = 4;
	c->min_t = 3;
	c->min_r2 = 0.5;
	c->min_growth_rate = 1;
	c->min_t_total = 2;
	c->min_kept_cycles = 2;
}

void alloc_leaks_free(struct alloc_leak *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i].series);
	free(l);
}

static int cmp_leak(const void *a, const void *b)
{
	const struct alloc_leak *x = a, *y = b;

	if (x->fit.slope != y->fit.slope)
		return x->fit.slope < y->fit.slope ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int alloc_model_leaks(const struct alloc_model *m, const uint64_t *end, size_t ncycles,
		      const struct alloc_leak_cfg *cfg, size_t max_out, struct alloc_leak **out,
		      size_t *n)
{
	struct alloc_leak *v = NULL;
	size_t nv = 0, cap = 0;
	bool *cand = NULL;
	double *y = NULL, *cum = NULL;
	int err = -ENOMEM;

	*out = NULL;
	*n = 0;
	if (ncycles < cfg->min_cycles || ncycles < 3 || !m->nstacks)
		return 0;
	cand = calloc(m->nstacks, sizeof(*cand));
	/* cum[c]: the sum of the slope's coefficients of the cycles before c,
	 * so a block live at the ends of cycles [a, b) weighs cum[b] - cum[a]. */
	cum = calloc(ncycles + 1, sizeof(*cum));
	if (!cand || !cum)
		goto out;
	alloc_fit_coefs(ncycles, cum + 1);
	for (size_t c = 1; c <= ncycles; c++)
		cum[c] += cum[c - 1];
	/* Only stacks with blocks still live at the end can be leaking. */
	for (size_t i = 0; i < m->n; i++)
		if (!m->s[i].free_ns)
			cand[m->s[i].stack] = true;
	for (size_t st = 0; st < m->nstacks; st++) {
		struct alloc_fit fit;
		struct alloc_leak l = { .stack = (uint32_t)st };

		if (!cand[st])
			continue;
		if (!y && !(y = malloc(ncycles * sizeof(*y))))
			goto out;
		alloc_model_stack_series(m, (uint32_t)st, end, ncycles, y);
		if (alloc_fit_line(y, ncycles, &fit))
			continue;
		if (fit.slope <= 0 || fit.r2 < cfg->min_r2 ||
		    (fit.slope_se > 0 && fit.slope / fit.slope_se < cfg->min_t) ||
		    y[ncycles - 1] - y[0] < cfg->min_growth_rate * (double)m->rate)
			continue;
		l.fit = fit;
		l.live_end = y[ncycles - 1];
		l.first_cycle = UINT32_MAX;
		for (size_t i = 0; i < m->n; i++) {
			const struct alloc_sample *s = &m->s[i];
			size_t a, b;
			double var;

			if (s->stack != st)
				continue;
			/* The cycle ends it was live at: [a, b), as in the series. */
			a = first_end_after(end, ncycles, s->ts_ns);
			b = s->free_ns ? first_end_after(end, ncycles, s->free_ns - 1) : ncycles;
			if (a >= b)
				continue;
			var = alloc_var_bytes(s->size, m->rate);
			l.sampling_se += var * (cum[b] - cum[a]) * (cum[b] - cum[a]);
			if (b == ncycles)
				l.live_end_se += var;
		}
		l.sampling_se = sqrt(l.sampling_se);
		l.live_end_se = sqrt(l.live_end_se);
		l.se = sqrt(fit.slope_se * fit.slope_se + l.sampling_se * l.sampling_se);
		if (l.se > 0 && fit.slope / l.se < cfg->min_t_total)
			continue;
		l.last_cycle = 0;
		for (size_t i = 0; i < m->n; i++) {
			const struct alloc_sample *s = &m->s[i];
			size_t c;

			if (s->stack != st || s->free_ns)
				continue;
			c = first_end_after(end, ncycles, s->ts_ns);
			if (c >= ncycles)
				continue;
			if (c < l.first_cycle)
				l.first_cycle = (uint32_t)c;
			if (c > l.last_cycle)
				l.last_cycle = (uint32_t)c;
		}
		/* Growth needs blocks kept from two cycles at least: one large
		 * block kept once (sampled almost surely, so with no sampling
		 * error) makes a step the line fits well, not a leak. */
		if (l.first_cycle == UINT32_MAX ||
		    (size_t)(l.last_cycle - l.first_cycle) + 1 < cfg->min_kept_cycles)
			continue;
		l.series = y;
		y = NULL;
		if (ep_vec_grow((void **)&v, &cap, nv + 1, sizeof(*v))) {
			free(l.series);
			goto out;
		}
		v[nv++] = l;
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_leak);
	while (nv > max_out)
		free(v[--nv].series);
	*out = v;
	*n = nv;
	v = NULL;
	nv = 0;
	err = 0;
out:
	alloc_leaks_free(v, nv);
	free(cand);
	free(cum);
	free(y);
	return err;
}

const char *alloc_model_leaf(const struct alloc_model *m, uint32_t stack)
{
	const struct alloc_stack *s;

	if (stack >= m->nstacks || !m->stacks[stack].depth)
		return "[unknown]";
	s = &m->stacks[stack];
	return m->names.frames[m->pool[s->off + s->depth - 1]].name;
}

int alloc_model_profile(const struct alloc_model *m, bool inuse, struct profile *p)
{
	uint32_t *map = calloc(m->names.nframes ? m->names.nframes : 1, sizeof(*map));
	uint32_t *frames = NULL;
	size_t capf = 0;
	int err = 0;

	if (!map)
		return -ENOMEM;
	/* Frames are interned on first use: map holds index + 1. */
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct alloc_sample *s = &m->s[i];
		const struct alloc_stack *st = &m->stacks[s->stack];
		const struct prof_thread *th = &m->names.threads[s->thread];
		uint64_t w = (uint64_t)(s->bytes + 0.5);
		int64_t t;

		if ((inuse && s->free_ns) || !w)
			continue;
		if (ep_vec_grow((void **)&frames, &capf, st->depth + 1, sizeof(*frames))) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t d = 0; d < st->depth; d++) {
			uint32_t f = m->pool[st->off + d];

			if (!map[f]) {
				const struct prof_frame *pf = &m->names.frames[f];
				int64_t fi =
					profile_intern_frame(p, pf->name, pf->module, pf->kernel);

				if (fi < 0) {
					err = (int)fi;
					break;
				}
				map[f] = (uint32_t)fi + 1;
			}
			frames[d] = map[f] - 1;
		}
		if (err)
			break;
		t = profile_thread(p, th->pid, th->tid, th->comm);
		if (t < 0) {
			err = (int)t;
			break;
		}
		err = profile_add_weighted(p, (uint32_t)t, s->ts_ns, frames, st->depth, 0, w);
	}
	free(frames);
	free(map);
	return err;
}
