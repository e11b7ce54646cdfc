/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Open-addressing hash index over an external array. The map stores only
 * 32-bit indices into the caller's array plus each entry's hash, so growing
 * never needs the keys; lookups compare keys through a caller callback.
 */
#ifndef EBPF_PROF_HASHMAP_H
#define EBPF_PROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap {
	uint64_t *hashes;
	uint32_t *slots; /* index + 1; 0 = empty */
	size_t cap;	 /* power of two, or 0 */
	size_t len;
};

/* Is the entry at idx equal to key? */
typedef bool (*ep_hashmap_eq_fn)(uint32_t idx, const void *key, const void *ctx);

void ep_hashmap_init(struct hashmap *h);
void ep_hashmap_free(struct hashmap *h);

/* Returns the stored index equal to key, or -1. */
int64_t ep_hashmap_find(const struct hashmap *h, uint64_t hash, const void *key,
			ep_hashmap_eq_fn eq, const void *ctx);

/* Adds idx under hash (no duplicate check). Returns 0 or -ENOMEM. */
int ep_hashmap_insert(struct hashmap *h, uint64_t hash, uint32_t idx);

/* FNV-1a with a final avalanche; chain calls by passing the previous
 * result as seed. Use HASHMAP_SEED for the first call. */
#define HASHMAP_SEED 0xcbf29ce484222325ULL
uint64_t ep_hashmap_hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t ep_hashmap_hash_finish(uint64_t h);

#endif
