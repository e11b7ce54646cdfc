/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The set of traced processes, by tgid: userspace seeds it, the CPU
 * sampler's fork tracepoint adds children. One definition for every BPF
 * source. Weak, because the modules' sources are linked into one object
 * (bpftool gen object) where each of them declares it; the CPU sampler's
 * object creates the map and the modules' object reuses its descriptor
 * (bpf_map__reuse_fd), so every part follows the same processes.
 */
#ifndef EBPF_PROF_TARGETS_H
#define EBPF_PROF_TARGETS_H

#include "events/common.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets __weak SEC(".maps");

#endif
