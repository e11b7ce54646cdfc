// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/interner.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

/* Ids are the hash index's 32-bit entries. */
#define MAX_IDS (UINT32_MAX - 1u)

void interner_init(struct interner *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	ep_hashmap_init(&t->idx);
}

void interner_free(struct interner *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	ep_hashmap_free(&t->idx);
	t->s = NULL;
	t->n = t->cap = 0;
}

static bool same(uint32_t id, const void *key, const void *ctx)
{
	const struct interner *t = ctx;

	return !strcmp(t->s[id], key);
}

int64_t interner_add(struct interner *t, const char *s)
{
	uint64_t h = ep_hashmap_hash_finish(ep_hashmap_hash_bytes(s, strlen(s), HASHMAP_SEED));
	int64_t id = ep_hashmap_find(&t->idx, h, s, same, t);
	char *c;

	if (id >= 0)
		return id;
	if (t->n >= (t->max && t->max < MAX_IDS ? t->max : MAX_IDS))
		return -ENOSPC;
	if (ep_vec_grow((void **)&t->s, &t->cap, t->n + 1, sizeof(*t->s)) || !(c = strdup(s)))
		return -ENOMEM;
	if (ep_hashmap_insert(&t->idx, h, (uint32_t)t->n)) {
		free(c);
		return -ENOMEM;
	}
	t->s[t->n] = c;
	return (int64_t)t->n++;
}
