/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Saturating arithmetic for counts read from outside input (report.json):
 * a sum or product that does not fit stops at the largest value instead of
 * wrapping into a small one. */
#ifndef EP_UTIL_SATMATH_H
#define EP_UTIL_SATMATH_H

#include <stdint.h>

static inline uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
	uint64_t s;

	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

static inline uint64_t sat_mul_u64(uint64_t a, uint64_t b)
{
	uint64_t p;

	return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}

static inline uint32_t sat_add_u32(uint32_t a, uint64_t b)
{
	uint64_t s = (uint64_t)a + (b > UINT32_MAX ? UINT32_MAX : b);

	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

#endif
