/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records the BPF programs and the collector exchange, one header per
 * feature in bpf/events/, each included by its program and by the
 * collector's side: the only place these layouts are defined. This one
 * holds what the features share: the header every ring record starts
 * with, the limits several of them size by, and the user registers a stack
 * walk starts from.
 *
 * Record types (ep_event_hdr.type) are numbered apart by feature, so that
 * the records sharing a ring stay distinct: 1-5 profile.h, 16-20 probes.h,
 * 32 sched.h, 48 cycles.h, 64 python.h, 80-81 alloc.h.
 */
#ifndef EBPF_PROF_EVENTS_COMMON_H
#define EBPF_PROF_EVENTS_COMMON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* 127 is the kernel's default perf_event_max_stack; deeper stacks are cut
 * by the kernel anyway, so a larger buffer would only waste ring space. */
#define EP_MAX_STACK_DEPTH 127
#define EP_COMM_LEN	   16

/* Sizes the target filter: one entry per traced process (not thread). */
#define EP_MAX_TARGETS 4096

struct ep_event_hdr {
	__u32 type; /* EP_EV_* of the record's feature (numbers above) */
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

/* User registers a CFI unwinder starts from (x86_64: rip, rsp, rbp). */
enum { EP_UREG_IP = 0, EP_UREG_SP = 1, EP_UREG_FP = 2, EP_UREG__COUNT };

#endif
