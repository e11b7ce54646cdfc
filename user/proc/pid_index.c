// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "proc/pid_index.h"

#include <string.h>

struct pid_key {
	const struct pid_index *x;
	const void *base;
	uint32_t pid;
};

static uint64_t pid_hash(uint32_t pid)
{
	return ep_hashmap_hash_finish((uint64_t)pid * 0x9e3779b97f4a7c15ull);
}

static bool same_pid(uint32_t idx, const void *key, const void *ctx)
{
	const struct pid_key *k = key;
	uint32_t pid;

	(void)ctx;
	memcpy(&pid, (const char *)k->base + (size_t)idx * k->x->stride + k->x->pid_off,
	       sizeof(pid));
	return pid == k->pid;
}

void pid_index_init(struct pid_index *x, size_t stride, size_t pid_off)
{
	ep_hashmap_init(&x->h);
	x->stride = stride;
	x->pid_off = pid_off;
}

void pid_index_free(struct pid_index *x)
{
	ep_hashmap_free(&x->h);
}

int pid_index_add(struct pid_index *x, uint32_t pid, uint32_t idx)
{
	return ep_hashmap_insert(&x->h, pid_hash(pid), idx);
}

int64_t pid_index_find(const struct pid_index *x, const void *base, uint32_t pid)
{
	struct pid_key k = { x, base, pid };

	if (!base)
		return -1;
	return ep_hashmap_find(&x->h, pid_hash(pid), &k, same_pid, NULL);
}
