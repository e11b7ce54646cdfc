// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probe_nest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/* A counted interval: an outermost call so far, or (after a collapse)
 * several consecutive ones. */
struct nest_iv {
	uint64_t start, end;
	uint64_t ns, calls; /* counted time and calls it stands for */
};

struct nest_stack {
	struct nest_iv *v;
	size_t n, cap;
};

struct nest_thread {
	uint32_t tid;
	struct nest_stack cls[PROBE_NEST_CLASSES];
};

struct probe_nest {
	struct nest_thread *th;
	size_t nth, capth;
	struct hashmap idx;
	uint64_t ns[PROBE_NEST_CLASSES], calls[PROBE_NEST_CLASSES];
};

/* Intervals are held only while a probed call is open below them on their
 * thread; past this many (a call running thousands of probed calls of its
 * own class), the older half is merged into one interval. A later call
 * starting inside the merged range would count part of it twice: a call
 * open around thousands of calls that itself started among them cannot
 * nest (calls of one thread nest or are disjoint). */
#define NEST_MAX 4096

struct probe_nest *probe_nest_new(void)
{
	struct probe_nest *n = calloc(1, sizeof(*n));

	if (n)
		ep_hashmap_init(&n->idx);
	return n;
}

void probe_nest_free(struct probe_nest *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nth; i++)
		for (unsigned c = 0; c < PROBE_NEST_CLASSES; c++)
			free(n->th[i].cls[c].v);
	free(n->th);
	ep_hashmap_free(&n->idx);
	free(n);
}

static bool tid_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct probe_nest *n = ctx;

	return n->th[idx].tid == *(const uint32_t *)key;
}

static struct nest_thread *thread_of(struct probe_nest *n, uint32_t tid)
{
	uint64_t h = ep_hashmap_hash_finish(ep_hashmap_hash_bytes(&tid, sizeof(tid), HASHMAP_SEED));
	int64_t i = ep_hashmap_find(&n->idx, h, &tid, tid_eq, n);

	if (i >= 0)
		return &n->th[i];
	if (n->nth == n->capth) {
		size_t c = n->capth ? n->capth * 2 : 8;
		struct nest_thread *p = realloc(n->th, c * sizeof(*p));

		if (!p)
			return NULL;
		n->th = p;
		n->capth = c;
	}
	if (ep_hashmap_insert(&n->idx, h, (uint32_t)n->nth))
		return NULL;
	memset(&n->th[n->nth], 0, sizeof(n->th[n->nth]));
	n->th[n->nth].tid = tid;
	return &n->th[n->nth++];
}

static void collapse(struct nest_stack *s)
{
	size_t half = s->n / 2;
	struct nest_iv m = { s->v[0].start, s->v[half - 1].end, 0, 0 };

	for (size_t i = 0; i < half; i++) {
		m.ns += s->v[i].ns;
		m.calls += s->v[i].calls;
	}
	s->v[0] = m;
	memmove(&s->v[1], &s->v[half], (s->n - half) * sizeof(*s->v));
	s->n = s->n - half + 1;
}

int probe_nest_add(struct probe_nest *n, uint32_t tid, unsigned cls, uint64_t start_ns,
		   uint64_t end_ns, uint32_t depth)
{
	struct nest_thread *t;
	struct nest_stack *s;
	struct nest_iv iv = { start_ns, end_ns, end_ns - start_ns, 1 };

	if (!n || cls >= PROBE_NEST_CLASSES || end_ns < start_ns)
		return -EINVAL;
	t = thread_of(n, tid);
	if (!t) {
		n->ns[cls] += iv.ns;
		n->calls[cls]++;
		return -ENOMEM;
	}
	s = &t->cls[cls];
	/* Already inside a counted call (a return seen after its caller's:
	 * not in one thread's order, but cheap to stay exact). */
	if (s->n && s->v[s->n - 1].start <= start_ns && end_ns <= s->v[s->n - 1].end)
		return 0;
	/* Calls of this thread that ended before this one and started after
	 * it are inside it: their time is part of this call's. */
	while (s->n && s->v[s->n - 1].start >= start_ns) {
		s->n--;
		n->ns[cls] -= s->v[s->n].ns;
		n->calls[cls] -= s->v[s->n].calls;
	}
	n->ns[cls] += iv.ns;
	n->calls[cls]++;
	if (!depth) {
		/* Nothing is open below it: no later call can contain any of
		 * the thread's counted calls, of any class. */
		for (unsigned c = 0; c < PROBE_NEST_CLASSES; c++)
			t->cls[c].n = 0;
		return 0;
	}
	if (s->n == NEST_MAX)
		collapse(s);
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 8;
		struct nest_iv *p = realloc(s->v, c * sizeof(*p));

		if (!p)
			return -ENOMEM; /* counted; only its nesting is lost */
		s->v = p;
		s->cap = c;
	}
	s->v[s->n++] = iv;
	return 0;
}

uint64_t probe_nest_ns(const struct probe_nest *n, unsigned cls)
{
	return n && cls < PROBE_NEST_CLASSES ? n->ns[cls] : 0;
}

uint64_t probe_nest_calls(const struct probe_nest *n, unsigned cls)
{
	return n && cls < PROBE_NEST_CLASSES ? n->calls[cls] : 0;
}
