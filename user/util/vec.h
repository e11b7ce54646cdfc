/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Growable arrays of fixed-size elements: the one growth rule (the
 * capacity doubles) for every module's lists. */
#ifndef EBPF_PROF_UTIL_VEC_H
#define EBPF_PROF_UTIL_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The capacity of an array's first allocation, in elements. */
#define EP_VEC_FIRST_CAP 8

/* Makes room in *arr (capacity *cap elements of elem bytes) for need
 * elements: the capacity doubles, from EP_VEC_FIRST_CAP, until they fit.
 * 0 or -ENOMEM (*arr and *cap are then unchanged). The new room is not
 * initialized. */
static inline int ep_vec_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : EP_VEC_FIRST_CAP;
	void *p;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	if (nc > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, nc * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

/* ep_vec_grow, with the new room zeroed. */
static inline int ep_vec_grow_zeroed(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;
	int err = ep_vec_grow(arr, cap, need, elem);

	if (!err && *cap > old)
		memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
	return err;
}

/* Appends the elem-byte value v to *arr (n used of cap), doubling it when
 * full. 0 or -ENOMEM (the array is then unchanged). */
static inline int ep_vec_push(void **arr, size_t *n, size_t *cap, size_t elem, const void *v)
{
	if (ep_vec_grow(arr, cap, *n + 1, elem))
		return -ENOMEM;
	memcpy((char *)*arr + *n * elem, v, elem);
	(*n)++;
	return 0;
}

/* A typed growable array: v[0..n), room for cap. */
#define EP_VEC(T)              \
	struct {               \
		T *v;          \
		size_t n, cap; \
	}

/* Appends val to the EP_VEC vec: 0 or -ENOMEM (vec unchanged). */
#define EP_VEC_PUSH(vec, val)                                                             \
	({                                                                                \
		__typeof__(*(vec).v) ep_vec_val_ = (val);                                 \
		ep_vec_push((void **)&(vec).v, &(vec).n, &(vec).cap, sizeof(ep_vec_val_), \
			    &ep_vec_val_);                                                \
	})

#endif
