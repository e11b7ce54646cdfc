// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overload/links.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

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
