// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/vec.h"

struct frame_key {
	const char *name;
	const char *module;
	bool kernel;
};

struct stack_key {
	const uint32_t *frames;
	uint32_t depth;
	uint32_t nkernel;
};

struct thread_key {
	uint32_t pid, tid;
};

int profile_init(struct profile *p, uint32_t freq_hz)
{
	memset(p, 0, sizeof(*p));
	if (!freq_hz)
		return -EINVAL;
	p->freq_hz = freq_hz;
	p->period_ns = 1000000000ULL / freq_hz;
	struct hashmap *maps = calloc(3, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	for (int i = 0; i < 3; i++)
		ep_hashmap_init(&maps[i]);
	/* One allocation for the three indexes: frame_index owns it. */
	p->frame_index = &maps[0];
	p->stack_index = &maps[1];
	p->thread_index = &maps[2];
	return 0;
}

void profile_free(struct profile *p)
{
	for (size_t i = 0; i < p->nframes; i++) {
		free(p->frames[i].name);
		free(p->frames[i].module);
	}
	free(p->frames);
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->stacks);
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].runs);
	free(p->threads);
	if (p->frame_index) {
		struct hashmap *maps = p->frame_index;
		for (int i = 0; i < 3; i++)
			ep_hashmap_free(&maps[i]);
		free(maps);
	}
	free(p->frame_memo);
	memset(p, 0, sizeof(*p));
}

static bool str_eq_nullable(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool frame_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct profile *p = ctx;
	const struct frame_key *k = key;
	const struct prof_frame *f = &p->frames[idx];
	return f->kernel == k->kernel && strcmp(f->name, k->name) == 0 &&
	       str_eq_nullable(f->module, k->module);
}

static uint64_t hash_frame(const struct frame_key *k)
{
	uint64_t h = ep_hashmap_hash_bytes(k->name, strlen(k->name) + 1, HASHMAP_SEED);
	/* A NULL module hashes differently from "" by its marker byte. */
	unsigned char tag = (k->module ? 1 : 0) | (k->kernel ? 2 : 0);
	h = ep_hashmap_hash_bytes(&tag, 1, h);
	if (k->module)
		h = ep_hashmap_hash_bytes(k->module, strlen(k->module), h);
	return ep_hashmap_hash_finish(h);
}

int64_t profile_intern_frame(struct profile *p, const char *name, const char *module, bool kernel)
{
	struct frame_key k = { name ? name : "[unknown]", module, kernel };
	uint64_t h = hash_frame(&k);
	int64_t idx = ep_hashmap_find(p->frame_index, h, &k, frame_eq, p);
	if (idx >= 0)
		return idx;
	if (p->nframes >= UINT32_MAX - 1)
		return -ENOMEM;
	if (ep_vec_grow((void **)&p->frames, &p->cap_frames, p->nframes + 1, sizeof(*p->frames)))
		return -ENOMEM;
	struct prof_frame *f = &p->frames[p->nframes];
	f->name = strdup(k.name);
	f->module = module ? strdup(module) : NULL;
	f->kernel = kernel;
	if (!f->name || (module && !f->module))
		goto nomem;
	if (ep_hashmap_insert(p->frame_index, h, (uint32_t)p->nframes))
		goto nomem;
	return (int64_t)p->nframes++;
nomem:
	free(f->name);
	free(f->module);
	return -ENOMEM;
}

/* Direct-mapped: a collision evicts, which costs one profile_intern_frame.
 * 4096 entries hold the distinct frames of a typical run (~1-3k). */
#define FRAME_MEMO_SIZE 4096

struct frame_memo {
	const char *name, *module;
	uint32_t idx;
	bool kernel, used;
};

int64_t profile_intern_frame_stable(struct profile *p, const char *name, const char *module,
				    bool kernel)
{
	struct frame_memo *m = p->frame_memo, *e;
	uint64_t h;
	int64_t idx;

	if (!m && name) {
		m = p->frame_memo = calloc(FRAME_MEMO_SIZE, sizeof(*m));
	}
	if (!m || !name)
		return profile_intern_frame(p, name, module, kernel);
	h = ((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) ^
	    ((uint64_t)(uintptr_t)module * 0xc2b2ae3d27d4eb4full) ^ (kernel ? 1 : 0);
	e = &m[(h >> 40) & (FRAME_MEMO_SIZE - 1)];
	if (e->used && e->name == name && e->module == module && e->kernel == kernel)
		return e->idx;
	idx = profile_intern_frame(p, name, module, kernel);
	if (idx >= 0)
		*e = (struct frame_memo){ name, module, (uint32_t)idx, kernel, true };
	return idx;
}

static bool thread_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct profile *p = ctx;
	const struct thread_key *k = key;
	return p->threads[idx].pid == k->pid && p->threads[idx].tid == k->tid;
}

static void set_comm(struct prof_thread *t, const char *comm)
{
	/* comm from the kernel is not guaranteed NUL-terminated. */
	size_t n = strnlen(comm, PROF_COMM_LEN - 1);
	memcpy(t->comm, comm, n);
	t->comm[n] = '\0';
}

int64_t profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	struct thread_key k = { pid, tid };
	uint64_t h = ep_hashmap_hash_finish(ep_hashmap_hash_bytes(&k, sizeof(k), HASHMAP_SEED));
	int64_t idx = ep_hashmap_find(p->thread_index, h, &k, thread_eq, p);
	if (idx >= 0) {
		if (comm)
			set_comm(&p->threads[idx], comm);
		return idx;
	}
	if (p->nthreads >= UINT32_MAX - 1)
		return -ENOMEM;
	if (ep_vec_grow((void **)&p->threads, &p->cap_threads, p->nthreads + 1,
			sizeof(*p->threads)))
		return -ENOMEM;
	struct prof_thread *t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	if (comm)
		set_comm(t, comm);
	if (ep_hashmap_insert(p->thread_index, h, (uint32_t)p->nthreads))
		return -ENOMEM;
	return (int64_t)p->nthreads++;
}

static bool stack_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct profile *p = ctx;
	const struct stack_key *k = key;
	const struct prof_stack *s = &p->stacks[idx];
	return s->depth == k->depth && s->nkernel == k->nkernel &&
	       (k->depth == 0 || memcmp(s->frames, k->frames, k->depth * sizeof(uint32_t)) == 0);
}

static int64_t intern_stack(struct profile *p, const struct stack_key *k)
{
	uint64_t h = ep_hashmap_hash_bytes(&k->nkernel, sizeof(k->nkernel), HASHMAP_SEED);
	if (k->depth)
		h = ep_hashmap_hash_bytes(k->frames, k->depth * sizeof(uint32_t), h);
	h = ep_hashmap_hash_finish(h);
	int64_t idx = ep_hashmap_find(p->stack_index, h, k, stack_eq, p);
	if (idx >= 0)
		return idx;
	if (p->nstacks >= UINT32_MAX - 1)
		return -ENOMEM;
	if (ep_vec_grow((void **)&p->stacks, &p->cap_stacks, p->nstacks + 1, sizeof(*p->stacks)))
		return -ENOMEM;
	struct prof_stack *s = &p->stacks[p->nstacks];
	s->frames = malloc((k->depth ? k->depth : 1) * sizeof(uint32_t));
	if (!s->frames)
		return -ENOMEM;
	if (k->depth)
		memcpy(s->frames, k->frames, k->depth * sizeof(uint32_t));
	s->depth = k->depth;
	s->nkernel = k->nkernel;
	s->count = 0;
	if (ep_hashmap_insert(p->stack_index, h, (uint32_t)p->nstacks)) {
		free(s->frames);
		return -ENOMEM;
	}
	return (int64_t)p->nstacks++;
}

/* ---- the timeline's bound (profile.h, max_runs) ---- */

static int cmp_bucket_stack(const void *a, const void *b, void *arg)
{
	const struct prof_run *x = a, *y = b;
	uint64_t w = *(const uint64_t *)arg, bx = x->first_ts_ns / w, by = y->first_ts_ns / w;

	if (bx != by)
		return bx < by ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->first_ts_ns < y->first_ts_ns ? -1 : x->first_ts_ns > y->first_ts_ns;
}

static int cmp_time(const void *a, const void *b)
{
	const struct prof_run *x = a, *y = b;

	if (x->first_ts_ns != y->first_ts_ns)
		return x->first_ts_ns < y->first_ts_ns ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Runs of t before cut merged into one per (bucket of w ns, stack), each
 * starting at its earliest sample; the runs from cut on kept as they are.
 * t's runs end in time order. Returns the runs left. */
static size_t merge_thread(struct prof_thread *t, uint64_t w, uint64_t cut)
{
	size_t n = 0, k = 0;

	if (t->nruns < 2)
		return t->nruns;
	/* Nearly in order already (the ring's order across CPUs is not
	 * strictly chronological). */
	qsort(t->runs, t->nruns, sizeof(*t->runs), cmp_time);
	while (k < t->nruns && t->runs[k].first_ts_ns < cut)
		k++;
	qsort_r(t->runs, k, sizeof(*t->runs), cmp_bucket_stack, &w);
	for (size_t i = 0; i < k; i++) {
		struct prof_run *last = n ? &t->runs[n - 1] : NULL;

		if (last && last->stack == t->runs[i].stack &&
		    last->first_ts_ns / w == t->runs[i].first_ts_ns / w &&
		    (uint64_t)last->count + t->runs[i].count <= UINT32_MAX)
			last->count += t->runs[i].count;
		else
			t->runs[n++] = t->runs[i];
	}
	qsort(t->runs, n, sizeof(*t->runs), cmp_time);
	memmove(&t->runs[n], &t->runs[k], (t->nruns - k) * sizeof(*t->runs));
	t->nruns = n + (t->nruns - k);
	return t->nruns;
}

/* The time before which a share (num/den) of all runs started, from a
 * histogram of their start times over [lo, hi]. */
static uint64_t runs_quantile(const struct profile *p, uint64_t lo, uint64_t hi, size_t num,
			      size_t den)
{
	enum { BINS = 1024 };
	size_t bins[BINS] = { 0 }, total = 0, want, acc = 0;
	uint64_t span = hi - lo + 1;

	for (size_t i = 0; i < p->nthreads; i++) {
		const struct prof_thread *t = &p->threads[i];

		for (size_t r = 0; r < t->nruns; r++) {
			uint64_t off = t->runs[r].first_ts_ns - lo;

			bins[(size_t)((unsigned __int128)off * BINS / span)]++;
			total++;
		}
	}
	want = total / den * num;
	for (size_t b = 0; b < BINS; b++) {
		acc += bins[b];
		if (acc >= want)
			return lo + (uint64_t)((unsigned __int128)(b + 1) * span / BINS);
	}
	return hi + 1;
}

/* Merges the older runs of every thread into time buckets, the newer half
 * kept exact: a long run's recent cycles keep their pprof labels and the
 * speedscope time order its last minutes. The bucket doubles, and the part
 * merged grows (half, then three quarters, then all), until the runs fit
 * in 3/4 of max; if even one run per (thread, stack) does not, the bound
 * doubles rather than merge again at every run. */
static void compact_runs(struct profile *p, size_t max)
{
	static const size_t parts[][2] = { { 1, 2 }, { 3, 4 }, { 1, 1 } };
	uint64_t lo = UINT64_MAX, hi = 0, w, cut = 0;
	size_t total = p->total_runs;

	for (size_t i = 0; i < p->nthreads; i++) {
		const struct prof_thread *t = &p->threads[i];

		for (size_t r = 0; r < t->nruns; r++) {
			if (t->runs[r].first_ts_ns < lo)
				lo = t->runs[r].first_ts_ns;
			if (t->runs[r].first_ts_ns > hi)
				hi = t->runs[r].first_ts_ns;
		}
	}
	/* From 16 sampling periods (1 ms at least): the first merge keeps the
	 * time order at a resolution finer than most cycles. */
	w = p->bucket_ns ? p->bucket_ns : 16 * p->period_ns;
	if (w < 1000000)
		w = 1000000;
	for (size_t k = 0; lo <= hi && k < sizeof(parts) / sizeof(parts[0]); k++) {
		cut = parts[k][0] == parts[k][1]
			      ? hi + 1
			      : runs_quantile(p, lo, hi, parts[k][0], parts[k][1]);
		for (;;) {
			total = 0;
			for (size_t i = 0; i < p->nthreads; i++)
				total += merge_thread(&p->threads[i], w, cut);
			if (total <= max / 4 * 3 || w > hi - lo || w > UINT64_MAX / 2)
				break;
			w *= 2;
		}
		if (total <= max / 4 * 3)
			break;
	}
	p->total_runs = total;
	p->bucket_ns = w;
	if (cut > p->merged_until_ns)
		p->merged_until_ns = cut;
	p->compactions++;
	if (total > max / 4 * 3)
		p->max_runs = max * 2;
}

static void run_added(struct profile *p)
{
	size_t max = p->max_runs ? p->max_runs : PROF_MAX_RUNS_DEFAULT;

	if (++p->total_runs >= max)
		compact_runs(p, max);
}

int profile_add_sample(struct profile *p, uint32_t thread, uint64_t ts_ns, const uint32_t *frames,
		       uint32_t depth, uint32_t nkernel, bool in_kernel)
{
	if (thread >= p->nthreads || nkernel > depth || (depth && !frames))
		return -EINVAL;
	for (uint32_t i = 0; i < depth; i++)
		if (frames[i] >= p->nframes)
			return -EINVAL;

	struct stack_key k = { frames, depth, nkernel };
	int64_t sid = intern_stack(p, &k);
	if (sid < 0)
		return (int)sid;

	struct prof_thread *t = &p->threads[thread];
	struct prof_run *last = t->nruns ? &t->runs[t->nruns - 1] : NULL;
	if (last && last->stack == (uint32_t)sid && last->count < UINT32_MAX &&
	    (!p->run_gap_ns || ts_ns <= t->last_ts_ns || ts_ns - t->last_ts_ns <= p->run_gap_ns)) {
		last->count++;
	} else {
		if (ep_vec_grow((void **)&t->runs, &t->cap_runs, t->nruns + 1, sizeof(*t->runs)))
			return -ENOMEM;
		t->runs[t->nruns++] = (struct prof_run){ .first_ts_ns = ts_ns,
							 .stack = (uint32_t)sid,
							 .count = 1 };
		run_added(p);
	}
	p->stacks[sid].count++;
	/* Ring-buffer order across CPUs is not strictly chronological. */
	if (!t->samples || ts_ns < t->first_ts_ns)
		t->first_ts_ns = ts_ns;
	if (!t->samples || ts_ns > t->last_ts_ns)
		t->last_ts_ns = ts_ns;
	t->samples++;
	p->total_samples++;
	if (in_kernel)
		p->kernel_samples++;
	else
		p->user_samples++;
	return 0;
}

int profile_add_weighted(struct profile *p, uint32_t thread, uint64_t ts_ns, const uint32_t *frames,
			 uint32_t depth, uint32_t nkernel, uint64_t weight)
{
	if (thread >= p->nthreads || nkernel > depth || (depth && !frames) || !weight)
		return -EINVAL;
	for (uint32_t i = 0; i < depth; i++)
		if (frames[i] >= p->nframes)
			return -EINVAL;

	struct stack_key k = { frames, depth, nkernel };
	int64_t sid = intern_stack(p, &k);
	if (sid < 0)
		return (int)sid;

	struct prof_thread *t = &p->threads[thread];
	uint64_t left = weight;
	/* A run counts in u32: a weight beyond it spills into further runs. */
	while (left) {
		struct prof_run *last = t->nruns ? &t->runs[t->nruns - 1] : NULL;
		uint64_t room = last && last->stack == (uint32_t)sid ? UINT32_MAX - last->count : 0;
		if (room) {
			uint64_t n = left < room ? left : room;
			last->count += (uint32_t)n;
			left -= n;
			continue;
		}
		if (ep_vec_grow((void **)&t->runs, &t->cap_runs, t->nruns + 1, sizeof(*t->runs)))
			return -ENOMEM;
		uint32_t n = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX;
		t->runs[t->nruns++] = (struct prof_run){ .first_ts_ns = ts_ns,
							 .stack = (uint32_t)sid,
							 .count = n };
		left -= n;
		run_added(p);
	}
	p->stacks[sid].count += weight;
	if (!t->samples || ts_ns < t->first_ts_ns)
		t->first_ts_ns = ts_ns;
	if (!t->samples || ts_ns > t->last_ts_ns)
		t->last_ts_ns = ts_ns;
	t->samples += weight;
	p->total_samples += weight;
	return 0;
}

static int cmp_stat(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	const struct prof_func_stat *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	int c = strcmp(p->frames[x->frame].name, p->frames[y->frame].name);
	if (c)
		return c;
	return x->frame < y->frame ? -1 : (x->frame > y->frame);
}

int profile_func_stats(const struct profile *p, struct prof_func_stat **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!p->nframes)
		return 0;
	uint64_t *self = calloc(p->nframes, sizeof(*self));
	uint64_t *total = calloc(p->nframes, sizeof(*total));
	/* seen[f] = stack index + 1 that last counted f: counts a recursive
	 * function once per sample in total. */
	uint32_t *seen = calloc(p->nframes, sizeof(*seen));
	int err = -ENOMEM;
	if (!self || !total || !seen)
		goto out;
	for (size_t s = 0; s < p->nstacks; s++) {
		const struct prof_stack *st = &p->stacks[s];
		if (!st->count || !st->depth)
			continue;
		self[st->frames[st->depth - 1]] += st->count;
		for (uint32_t i = 0; i < st->depth; i++) {
			uint32_t f = st->frames[i];
			if (seen[f] != s + 1) {
				seen[f] = (uint32_t)(s + 1);
				total[f] += st->count;
			}
		}
	}
	size_t cnt = 0;
	for (size_t f = 0; f < p->nframes; f++)
		cnt += total[f] != 0;
	err = 0;
	if (!cnt)
		goto out;
	struct prof_func_stat *res = malloc(cnt * sizeof(*res));
	if (!res) {
		err = -ENOMEM;
		goto out;
	}
	size_t j = 0;
	for (size_t f = 0; f < p->nframes; f++)
		if (total[f])
			res[j++] = (struct prof_func_stat){ (uint32_t)f, self[f], total[f] };
	qsort_r(res, cnt, sizeof(*res), cmp_stat, (void *)p);
	*out = res;
	*n = cnt;
out:
	free(self);
	free(total);
	free(seen);
	return err;
}

const char *profile_drop_name(enum prof_drop d)
{
	switch (d) {
	case PROF_DROP_RINGBUF_FULL:
		return "ringbuf_full";
	case PROF_DROP_USER_STACK:
		return "user_stack_error";
	case PROF_DROP_KERN_STACK:
		return "kernel_stack_error";
	case PROF_DROP_TARGET_MAP_FULL:
		return "target_map_full";
	case PROF_DROP_EVENT_LOST:
		return "event_lost";
	case PROF_DROP_COLLECTOR:
		return "collector";
	case PROF_DROP_UNREAD:
		return "unread_at_stop";
	case PROF_DROP_RATE_LIMITED:
		return "rate_limited";
	case PROF_DROP__COUNT:
		break;
	}
	return "unknown";
}
