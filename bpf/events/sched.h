/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Scheduler (bpf/sched.bpf.c, user/sched/): on/off-CPU time, accounted in
 * the kernel per thread, and the long off-CPU episodes with their stacks.
 */
#ifndef EBPF_PROF_EVENTS_SCHED_H
#define EBPF_PROF_EVENTS_SCHED_H

#include "common.h"

/* Where an off-CPU interval of a thread goes. The per-thread off_ns[]
 * entries add up to the thread's whole off-CPU time. */
enum ep_off_reason {
	EP_OFF_SLEEP = 0,     /* TASK_INTERRUPTIBLE: waiting for an event, until woken */
	EP_OFF_BLOCKED = 1,   /* TASK_UNINTERRUPTIBLE (D): disk I/O, page-in, some locks */
	EP_OFF_PREEMPTED = 2, /* switched out while still runnable, until back on CPU */
	EP_OFF_RUNQ = 3,      /* woken (or new), waiting for a CPU */
	EP_OFF_OTHER = 4,     /* stopped, traced, parked, frozen */
	EP_OFF__COUNT
};

/* Run-queue latency per thread, in the kernel: log-linear buckets, 8 per
 * power of two (half a bucket = 6.25% error), values >= 2^36 ns (69 s) in
 * the last one; 272 u32 = 1088 bytes per thread. */
#define EP_SCHED_HIST_SUB_BITS 3
#define EP_SCHED_HIST_MAX_EXP  35
#define EP_SCHED_HIST_BUCKETS \
	((EP_SCHED_HIST_MAX_EXP - EP_SCHED_HIST_SUB_BITS + 2) << EP_SCHED_HIST_SUB_BITS)

/* Threads of traced processes followed at once (all processes together).
 * ML jobs run tens to a few hundred threads per process; full: counted. */
#define EP_SCHED_MAX_THREADS 8192

enum ep_sched_tstate {
	EP_TS_SEEDED = 0, /* entered by the collector from /proc before attach */
	EP_TS_ON = 1,
	EP_TS_OFF = 2,
	EP_TS_DEAD = 3, /* switched out for the last time */
};

struct ep_sched_thread {
	__u64 last_ts; /* start of the current on- or off-CPU interval */
	__u64 out_ts;  /* switch-out that began the current off-CPU episode */
	__u64 on_ns;
	__u64 off_ns[EP_OFF__COUNT];
	__u64 nvcsw;  /* switched out blocking (sleep, D, other) */
	__u64 nivcsw; /* switched out while runnable */
	__u64 rq_count, rq_sum_ns, rq_max_ns;
	__u64 episodes_long; /* off-CPU episodes >= the stack threshold */
	__u32 pid;	     /* tgid */
	__u8 state;	     /* enum ep_sched_tstate */
	__u8 reason;	     /* enum ep_off_reason of the current off interval */
	__u8 out_reason;     /* reason at the switch-out of the current episode */
	__u8 ustack_ok;	     /* the user stack slot holds this episode's stack */
	__u8 last_long;	     /* the last blocking episode was >= the stack threshold */
	__u8 walk_ctr;	     /* blocking switch-outs since the last sampled stack walk */
	__u8 out_site;	     /* wait site (ep_ustack_key >> 58) of the current episode */
	__u8 out_site2;	     /* the same site's second bit (key >> 52 & 63) */
	/* Switches the kernel did not report, inferred from the state (a
	 * switch-out of a thread believed off-CPU; see ep_acct_missed). */
	__u32 missed;
	/* The task's own run time (se.sum_exec_runtime) at its last event,
	 * plus 1; 0 when unknown. */
	__u64 rt_mark;
	/* Bit per wait site, under two hashes (a site is two bits, one in each
	 * pair): its last blocking episode was long; a stack was walked there. */
	__u64 long_sites, long_sites2;
	__u64 seen_sites, seen_sites2;
	__u64 ustack_key;	/* wait site of the stack in the thread's slot (0: none) */
	char comm[EP_COMM_LEN]; /* at creation, then at exit (the collector reads /proc for
				 * threads alive at the end) */
	__u32 rq_hist[EP_SCHED_HIST_BUCKETS];
};

/* User stack taken at a blocking switch-out, kept until the switch-in says
 * whether the episode was long enough to report. */
/* User frames kept per off-CPU stack: deeper than the sampler's 127 of
 * bpf_get_stack, since Python and Node block with deep native stacks (the
 * walker goes to EP_UW_MAX_FRAMES; what does not fit is marked truncated).
 * 2 KiB per thread that blocked, EP_SCHED_MAX_THREADS of them. */
#define EP_OFFCPU_USER_FRAMES 256

struct ep_sched_ustack {
	__s32 size;  /* bytes from bpf_get_stack, or negative errno */
	__u16 kwalk; /* walked by bpf/uwalk.h: return addresses are already - 1 */
	__u16 trunc; /* the walk had more frames than ips holds */
	__u64 ips[EP_OFFCPU_USER_FRAMES];
};

enum ep_sched_event_type {
	EP_EV_OFFCPU = 32, /* struct ep_offcpu */
};

/* One off-CPU episode >= the threshold; hdr.ts_ns is its switch-in. Only
 * the frames used are sent: the record is offsetof(ips) + the kernel and
 * user bytes (a few hundred bytes typically, not 2 KiB). */
struct ep_offcpu {
	struct ep_event_hdr hdr;
	__u64 dur_ns;	 /* switch-out to switch-in */
	__u32 reason;	 /* enum ep_off_reason at the switch-out */
	__s32 kstack_sz; /* bytes of kernel frames at ips[0], or negative errno */
	__s32 ustack_sz; /* bytes of user frames right after them, or negative errno */
	__u16 ukwalk;	 /* user frames from bpf/uwalk.h: return addresses already - 1 */
	__u16 utrunc;	 /* the user stack was deeper than EP_OFFCPU_USER_FRAMES */
	char comm[EP_COMM_LEN];
	__u64 ips[EP_MAX_STACK_DEPTH + EP_OFFCPU_USER_FRAMES]; /* leaf first, kernel then user */
};

enum ep_sched_drop {
	EP_SDROP_THREAD_MAP_FULL = 0, /* a thread could not be followed */
	EP_SDROP_RINGBUF_FULL = 1,    /* a long episode's stack not delivered */
	EP_SDROP_USER_STACK = 2,      /* episode delivered without user frames */
	EP_SDROP_KERN_STACK = 3,      /* episode delivered without kernel frames */
	EP_SDROP_USTACK_SLOT = 4,     /* no slot to keep the user stack in */
	EP_SDROP__COUNT
};

/* Not a drop (a designed trade-off, see docs/performance.md): a long episode
 * reported with its kernel stack only, because its user stack was not walked
 * at the switch-out (no long wait was predicted there, see ep_ustack_plan).
 * Same per-CPU array. */
#define EP_SSTAT_USTACK_SKIPPED EP_SDROP__COUNT
/* User stack walks made at blocking switch-outs (their cost, ~1 us each). */
#define EP_SSTAT_USTACK_WALKS (EP_SDROP__COUNT + 1)
#define EP_SCHED_COUNTERS     (EP_SDROP__COUNT + 2)

#endif
