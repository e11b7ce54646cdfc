/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPU sampling (bpf/profile.bpf.c, user/profile/): the samples and the
 * traced processes' fork, exec, exit and executable mappings, on one ring.
 */
#ifndef EBPF_PROF_EVENTS_PROFILE_H
#define EBPF_PROF_EVENTS_PROFILE_H

#include "common.h"

enum ep_event_type {
	EP_EV_SAMPLE = 1,
	EP_EV_FORK = 2, /* a traced process created a new process */
	EP_EV_EXIT = 3, /* the last thread of a traced process exited */
	EP_EV_EXEC = 4, /* a traced process replaced its image: new maps, new comm */
	/* A traced process mapped executable file pages (dlopen): --unwind
	 * cfi-kernel loads their tables now rather than at the first miss. */
	EP_EV_MMAP_EXEC = 5,
};

/* Why a sample, or part of it, was lost. Indexes the per-CPU drop counters. */
enum ep_drop_reason {
	EP_DROP_RINGBUF_FULL = 0,	/* sample not delivered at all */
	EP_DROP_USER_STACK_ERR = 1,	/* delivered without user frames */
	EP_DROP_KERN_STACK_ERR = 2,	/* delivered without kernel frames */
	EP_DROP_TARGET_MAP_FULL = 3,	/* forked child could not be followed */
	EP_DROP_EVENT_RINGBUF_FULL = 4, /* fork/exit notice lost */
	EP_DROP_USTACK_COPY_ERR = 5,	/* window for CFI unwinding not copied */
	EP_DROP_UREGS_ERR = 6,		/* no user registers: no CFI unwinding */
	EP_DROP__COUNT
};

/* Largest user-stack window a sample may carry (--stack-bytes). Bounded by
 * the per-CPU scratch value (the kernel caps those at 32 KiB) and by ring
 * traffic: 16 KiB at 999 Hz on 2 CPUs is 32 MB/s. perf's default is 8 KiB. */
#define EP_MAX_STACK_BYTES 16384
/* The window is copied in chunks of this size; a chunk that cannot be read
 * (the top of the stack mapping) is retried in EP_STACK_SUBCHUNK pieces, so
 * a window crossing the end of the stack keeps all but < 64 readable bytes. */
#define EP_STACK_CHUNK	  1024
#define EP_STACK_SUBCHUNK 64

struct ep_sample {
	struct ep_event_hdr hdr;
	char comm[EP_COMM_LEN];
	/* Bytes written by bpf_get_stack, or a negative errno. */
	__s32 kstack_sz;
	__s32 ustack_sz;
	__u32 flags; /* EP_SAMPLE_F_* */
	/* Bytes of user stack copied from uregs[EP_UREG_SP] upward; they
	 * follow the user frames in stack[]. 0 without a window. */
	__u32 ustack_copy;
	__u64 uregs[EP_UREG__COUNT]; /* valid with EP_SAMPLE_F_UREGS */
	/* Kernel frames (kstack_sz bytes, leaf first), then user frames
	 * (ustack_sz bytes, leaf first), then ustack_copy bytes of user stack.
	 * Only the used part travels through the ring: a frame-pointer sample
	 * is a few hundred bytes, not 18 KiB. */
	__u64 stack[2 * EP_MAX_STACK_DEPTH + EP_MAX_STACK_BYTES / 8];
};
#define EP_SAMPLE_HDR_SIZE ((unsigned long)&((struct ep_sample *)0)->stack)

#define EP_SAMPLE_F_USER_MODE 1u /* interrupted in user mode */
#define EP_SAMPLE_F_UREGS     2u /* uregs hold the user registers */
/* A uretprobe trampoline address in the window (or ip) was replaced by the
 * original return address. */
#define EP_SAMPLE_F_URETPROBE_FIXED 4u
/* User frames come from the in-kernel CFI walker (bpf/uwalk.h): return
 * addresses already point at their call (minus 1), ustack_copy is 0, and
 * bits 8-15 of flags say why the walk ended (enum ep_uw_end). */
#define EP_SAMPLE_F_KWALK	8u
#define EP_SAMPLE_UW_END_SHIFT	8
#define EP_SAMPLE_UW_END(flags) (((flags) >> EP_SAMPLE_UW_END_SHIFT) & 0xff)

struct ep_task_event {
	struct ep_event_hdr hdr;
	__u32 parent_pid; /* EP_EV_FORK: the traced parent's tgid */
	__s32 exit_code;  /* EP_EV_EXIT: task->exit_code */
	char comm[EP_COMM_LEN];
};

#endif
