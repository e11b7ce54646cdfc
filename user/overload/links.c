// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overload/links.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* Every link's wait at once: the tracepoints' grace periods overlap. A
 * perf-event uprobe's detach does not gain as much: the kernel (6.18)
 * holds event_mutex across its three waits (rcu_sync for the mm walk,
 * RCU tasks-trace, SRCU: perf_uprobe_destroy), so those serialize whatever
 * the threads; 31 probe links took 3.0 s at load 11-16 (4.2 s in batches
 * of 16 at load 16; issue 22, docs/performance.md). */
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
