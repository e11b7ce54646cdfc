/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The collector's clock: CLOCK_MONOTONIC in nanoseconds, the clock of the
 * BPF events' timestamps (bpf_ktime_get_ns), so times from every source
 * compare. */
#ifndef EBPF_PROF_UTIL_CLOCK_H
#define EBPF_PROF_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
