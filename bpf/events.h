/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records shared by the BPF programs and the collector. This is the only
 * place these layouts are defined; both sides include it.
 */
#ifndef EBPF_PROF_EVENTS_H
#define EBPF_PROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* 127 is the kernel's default perf_event_max_stack; deeper stacks are cut
 * by the kernel anyway, so a larger buffer would only waste ring space. */
#define EP_MAX_STACK_DEPTH 127
#define EP_COMM_LEN 16

/* Sizes the target filter: one entry per traced process (not thread). */
#define EP_MAX_TARGETS 4096

enum ep_event_type {
	EP_EV_SAMPLE = 1,
	EP_EV_FORK = 2, /* a traced process created a new process */
	EP_EV_EXIT = 3, /* the last thread of a traced process exited */
};

/* Why a sample, or part of it, was lost. Indexes the per-CPU drop counters. */
enum ep_drop_reason {
	EP_DROP_RINGBUF_FULL = 0,   /* sample not delivered at all */
	EP_DROP_USER_STACK_ERR = 1, /* delivered without user frames */
	EP_DROP_KERN_STACK_ERR = 2, /* delivered without kernel frames */
	EP_DROP_TARGET_MAP_FULL = 3, /* forked child could not be followed */
	EP_DROP_EVENT_RINGBUF_FULL = 4, /* fork/exit notice lost */
	EP_DROP__COUNT
};

struct ep_event_hdr {
	__u32 type; /* enum ep_event_type */
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

struct ep_sample {
	struct ep_event_hdr hdr;
	char comm[EP_COMM_LEN];
	/* Bytes written by bpf_get_stack, or a negative errno. */
	__s32 kstack_sz;
	__s32 ustack_sz;
	__u32 flags; /* EP_SAMPLE_F_* */
	__u32 _pad;
	__u64 kstack[EP_MAX_STACK_DEPTH];
	__u64 ustack[EP_MAX_STACK_DEPTH];
};

#define EP_SAMPLE_F_USER_MODE 1u /* interrupted in user mode */

struct ep_task_event {
	struct ep_event_hdr hdr;
	__u32 parent_pid; /* EP_EV_FORK: the traced parent's tgid */
	__s32 exit_code;  /* EP_EV_EXIT: task->exit_code */
	char comm[EP_COMM_LEN];
};

#endif
