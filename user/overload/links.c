// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overload/links.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* More threads buy nothing: the grace periods overlap already. */
#define MAX_THREADS 16

static void *destroy_one(void *arg)
{
	bpf_link__destroy(arg);
	return NULL;
}

void links_destroy_parallel(struct bpf_link **links, size_t n)
{
	pthread_t th[MAX_THREADS];
	bool started[MAX_THREADS] = { false };
	size_t i = 0;

	while (i < n) {
		size_t batch = 0;

		for (; i < n && batch < MAX_THREADS; i++, batch++) {
			if (!links[i])
				continue;
			/* Inline when a thread cannot be had: slower, same result. */
			started[batch] = !pthread_create(&th[batch], NULL, destroy_one, links[i]);
			if (!started[batch])
				bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
		for (size_t b = 0; b < batch; b++) {
			if (started[b])
				pthread_join(th[b], NULL);
			started[b] = false;
		}
	}
}

void link_list_push(struct link_list *l, struct bpf_link *link)
{
	if (!link)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		void *p = realloc(l->v, cap * sizeof(*l->v));

		if (!p) {
			bpf_link__destroy(link);
			return;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = link;
}

struct links_reaper {
	pthread_t th;
	struct link_list l;
	uint64_t t0, t1;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *reap_main(void *arg)
{
	struct links_reaper *r = arg;

	links_destroy_parallel(r->l.v, r->l.n);
	r->t1 = mono_ns();
	return NULL;
}

struct links_reaper *links_reaper_start(struct link_list *l)
{
	struct links_reaper *r;

	if (!l->n) {
		free(l->v);
		*l = (struct link_list){ 0 };
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r) {
		r->l = *l;
		r->t0 = mono_ns();
		if (pthread_create(&r->th, NULL, reap_main, r)) {
			free(r);
			r = NULL;
		}
	}
	if (!r) {
		links_destroy_parallel(l->v, l->n);
		free(l->v);
	}
	*l = (struct link_list){ 0 };
	return r;
}

void links_reaper_join(struct links_reaper *r, double *ms)
{
	if (ms)
		*ms = 0;
	if (!r)
		return;
	pthread_join(r->th, NULL);
	if (ms)
		*ms = (double)(r->t1 - r->t0) / 1e6;
	free(r->l.v);
	free(r);
}
