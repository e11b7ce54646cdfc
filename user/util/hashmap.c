// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/hashmap.h"

#include <errno.h>
#include <stdlib.h>

void ep_hashmap_init(struct hashmap *h)
{
	h->hashes = NULL;
	h->slots = NULL;
	h->cap = 0;
	h->len = 0;
}

void ep_hashmap_free(struct hashmap *h)
{
	free(h->hashes);
	free(h->slots);
	ep_hashmap_init(h);
}

int64_t ep_hashmap_find(const struct hashmap *h, uint64_t hash, const void *key,
			ep_hashmap_eq_fn eq, const void *ctx)
{
	if (!h->cap)
		return -1;
	size_t mask = h->cap - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		uint32_t s = h->slots[i];
		if (!s)
			return -1;
		if (h->hashes[i] == hash && eq(s - 1, key, ctx))
			return s - 1;
	}
}

static void place(uint64_t *hashes, uint32_t *slots, size_t cap, uint64_t hash, uint32_t slot)
{
	size_t mask = cap - 1;
	size_t i = hash & mask;
	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = slot;
	hashes[i] = hash;
}

static int grow(struct hashmap *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 64;
	if (ncap > ((size_t)1 << 40))
		return -ENOMEM;
	uint64_t *nh = calloc(ncap, sizeof(*nh));
	uint32_t *ns = calloc(ncap, sizeof(*ns));
	if (!nh || !ns) {
		free(nh);
		free(ns);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++)
		if (h->slots[i])
			place(nh, ns, ncap, h->hashes[i], h->slots[i]);
	free(h->hashes);
	free(h->slots);
	h->hashes = nh;
	h->slots = ns;
	h->cap = ncap;
	return 0;
}

int ep_hashmap_insert(struct hashmap *h, uint64_t hash, uint32_t idx)
{
	if (idx == UINT32_MAX)
		return -ENOMEM;
	/* Keep the load below 3/4 so probe sequences stay short. */
	if ((h->len + 1) * 4 > h->cap * 3) {
		int err = grow(h);
		if (err)
			return err;
	}
	place(h->hashes, h->slots, h->cap, hash, idx + 1);
	h->len++;
	return 0;
}

uint64_t ep_hashmap_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t ep_hashmap_hash_finish(uint64_t h)
{
	/* FNV's low bits are weak and we index by the low bits. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}
