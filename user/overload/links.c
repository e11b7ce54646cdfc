// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/clock.h"
#include "overload/links.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Every link's wait at once: the tracepoints' grace periods overlap. A
 * perf-event uprobe's detach does not gain as much: the kernel (6.18)
 * holds event_mutex across its three waits (rcu_sync for the mm walk,
 * RCU tasks-trace, SRCU: perf_uprobe_destroy), so those serialize whatever
 * the threads; 31 probe links took 3.0 s at load 11-16 (4.2 s in batches
 * of 16 at load 16; docs/performance.md). */
#define MAX_THREADS 256
/* The threads only make one system call. */
#define THREAD_STACK (64u << 10)

static void *destroy_one(void *arg)
{
	bpf_link__destroy(arg);
	return NULL;
}

void links_destroy_parallel(struct bpf_link **links, size_t n)
{
	pthread_t *th = calloc(MAX_THREADS, sizeof(*th));
	bool *started = calloc(MAX_THREADS, sizeof(*started));
	pthread_attr_t attr;
	bool have_attr = !pthread_attr_init(&attr);
	size_t i = 0;

	if (!th || !started) { /* one after the other: slower, same result */
		for (; i < n; i++) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
		n = 0;
	}
	if (have_attr)
		pthread_attr_setstacksize(&attr, THREAD_STACK);
	while (i < n) {
		size_t batch = 0;

		for (; i < n && batch < MAX_THREADS; i++) {
			if (!links[i])
				continue;
			/* Inline when a thread cannot be had: slower, same result. */
			started[batch] = !pthread_create(&th[batch], have_attr ? &attr : NULL,
							 destroy_one, links[i]);
			if (!started[batch])
				bpf_link__destroy(links[i]);
			links[i] = NULL;
			batch++;
		}
		for (size_t b = 0; b < batch; b++) {
			if (started[b])
				pthread_join(th[b], NULL);
			started[b] = false;
		}
	}
	if (have_attr)
		pthread_attr_destroy(&attr);
	free(th);
	free(started);
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
	bool thread;
	pid_t pid; /* the releasing process, 0 if none */
	struct link_list l;
	uint64_t t0, t1;
};

static void *reap_main(void *arg)
{
	struct links_reaper *r = arg;

	links_destroy_parallel(r->l.v, r->l.n);
	r->t1 = mono_ns();
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* In the forked child: only async-signal-safe calls. Keeps fds[0..n) and
 * rfd, waits for the parent to drop its references (EOF on rfd), then
 * exits: the last references go, and the kernel's slow releases run here. */
/* fds[0..n) sorted, rfd among them. */
_Noreturn static void releaser_main(const int *fds, size_t n, int rfd)
{
	struct sched_param sp = { 0 };
	unsigned int next = 0;
	char c;

	/* Not at the recorder's real-time priority. */
	sched_setscheduler(0, SCHED_OTHER, &sp);
	setpriority(PRIO_PROCESS, 0, 0);
	for (size_t i = 0; i < n; i++) {
		int keep = fds[i];

		if (keep < 0 || (unsigned int)keep < next)
			continue;
		if ((unsigned int)keep > next)
			syscall(SYS_close_range, next, (unsigned int)keep - 1, 0);
		next = (unsigned int)keep + 1;
	}
	syscall(SYS_close_range, next, ~0u, 0);
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* The links' last references handed to a child process that drops them
 * once the parent has: the parent's own destroys are then mere reference
 * drops, and it exits without waiting for the kernel (0.1-6 s per perf
 * event link under load). Returns the child's pid, or 0 when it
 * could not be done (nothing changed). */
static pid_t release_in_child(struct link_list *l)
{
	int *fds = malloc((l->n + 1) * sizeof(*fds)), p[2];
	size_t n = 0;
	pid_t pid;

	if (!fds)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		int fd = bpf_link__fd(l->v[i]);

		if (fd >= 0)
			fds[n++] = fd;
	}
	if (pipe2(p, O_CLOEXEC)) {
		free(fds);
		return 0;
	}
	fds[n] = p[0];
	qsort(fds, n + 1, sizeof(*fds), cmp_int);
	pid = fork();
	if (pid == 0)
		releaser_main(fds, n + 1, p[0]);
	close(p[0]);
	free(fds);
	if (pid < 0) {
		close(p[1]);
		return 0;
	}
	for (size_t i = 0; i < l->n; i++)
		bpf_link__destroy(l->v[i]);
	close(p[1]);
	return pid;
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
		r->t0 = mono_ns();
		r->pid = release_in_child(l);
		r->t1 = mono_ns();
		if (r->pid > 0) {
			free(l->v);
			*l = (struct link_list){ 0 };
			return r;
		}
		r->l = *l;
		r->thread = !pthread_create(&r->th, NULL, reap_main, r);
		if (!r->thread) {
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

void links_reaper_join(struct links_reaper *r, double *ms, int *pid)
{
	if (ms)
		*ms = 0;
	if (pid)
		*pid = 0;
	if (!r)
		return;
	if (r->thread)
		pthread_join(r->th, NULL);
	if (ms)
		*ms = (double)(r->t1 - r->t0) / 1e6;
	if (pid)
		*pid = r->pid;
	free(r->l.v);
	free(r);
}
