// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cycle marker (see ebpf_prof_cycle.h). */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "ebpf_prof_cycle.h"

/* The tracer increments these (in the .probes section, as sdt.h expects)
 * when it attaches; while they are 0 the probe sites are skipped. */
__extension__ unsigned short ebpf_prof_cycle_begin_semaphore
	__attribute__((unused, section(".probes"))) = 0;
__extension__ unsigned short ebpf_prof_cycle_end_semaphore
	__attribute__((unused, section(".probes"))) = 0;

/* noinline: one probe site per function, whatever the caller's inlining. */
__attribute__((noinline)) void ebpf_prof_cycle_begin(uint64_t id)
{
	if (__builtin_expect(ebpf_prof_cycle_begin_semaphore, 0))
		STAP_PROBE1(ebpf_prof, cycle_begin, id);
}

__attribute__((noinline)) void ebpf_prof_cycle_end(uint64_t id)
{
	if (__builtin_expect(ebpf_prof_cycle_end_semaphore, 0))
		STAP_PROBE1(ebpf_prof, cycle_end, id);
}

int ebpf_prof_cycle_traced(void)
{
	return ebpf_prof_cycle_begin_semaphore != 0;
}
