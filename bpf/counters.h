/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-CPU counters: drops by reason and the programs' own statistics, each
 * in a BPF_MAP_TYPE_PERCPU_ARRAY of __u64 indexed by an enum of its
 * feature's header (bpf/events/), summed over the CPUs by the collector.
 * Per CPU: no atomic add on the hot path, and a program running on one CPU
 * at a time cannot lose an increment.
 *
 * A program names its drop counters EP_DROPS (a macro, defined next to the
 * map) and counts with count_drop(reason).
 */
#ifndef EBPF_PROF_COUNTERS_H
#define EBPF_PROF_COUNTERS_H

/* Adds n to counter key of counters (a per-CPU array of __u64). Inlined:
 * the map is a constant at every call, as if spelled there. */
static __always_inline void ep_count(void *counters, __u32 key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(counters, &key);

	if (v)
		*v += n;
}

/* One more loss of this reason in the program's drop counters (EP_DROPS). */
#define count_drop(reason) ep_count(&EP_DROPS, (reason), 1)

#endif
