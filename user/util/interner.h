/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * String interning: each distinct string copied once and known by a stable
 * id, its position in order of first appearance. The copies stay where they
 * are until interner_free, so a pointer to one is stable too. A zeroed
 * struct interner is an empty one without a bound.
 */
#ifndef EBPF_PROF_UTIL_INTERNER_H
#define EBPF_PROF_UTIL_INTERNER_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

struct interner {
	char **s; /* id -> string */
	size_t n, cap;
	size_t max; /* distinct strings at most; 0: as many as ids can number */
	struct hashmap idx;
};

/* max: distinct strings kept at most (0: as many as ids can number). */
void interner_init(struct interner *t, size_t max);
void interner_free(struct interner *t);

/* The id of s, copied in at its first sight: >= 0, or -ENOSPC (max strings
 * held, s not among them), or -ENOMEM. */
int64_t interner_add(struct interner *t, const char *s);

/* The string of id (< t->n). */
static inline const char *interner_str(const struct interner *t, size_t id)
{
	return t->s[id];
}

#endif
