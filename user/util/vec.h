/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Appending to a growable array of fixed-size elements, shared by the
 * modules that collect attach lists (probes, cycles, alloc). */
#ifndef EBPF_PROF_UTIL_VEC_H
#define EBPF_PROF_UTIL_VEC_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Appends the elem-byte value v to *arr (n used of cap), doubling it when
 * full. 0 or -ENOMEM (the array is then unchanged). */
static inline int ep_vec_push(void **arr, size_t *n, size_t *cap, size_t elem, const void *v)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		void *p = realloc(*arr, nc * elem);

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = nc;
	}
	memcpy((char *)*arr + *n * elem, v, elem);
	(*n)++;
	return 0;
}

#endif
