/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allocations (bpf/alloc.bpf.c, user/alloc/): --alloc.
 */
#ifndef EBPF_PROF_EVENTS_ALLOC_H
#define EBPF_PROF_EVENTS_ALLOC_H

#include "common.h"

/* Frames kept per sampled allocation (deeper stacks are cut at the root). */
#define EP_ALLOC_MAX_FRAMES 127
/* Entries of the exponential draw table (quantiles of Exp(rate), filled by
 * the collector): a power of two, indexed by a random number. */
#define EP_ALLOC_DRAWS 4096
/* Sampled blocks tracked until freed, default (--alloc-max-live); more are
 * counted in dropped (live_full) and stay in alloc, not inuse. */
#define EP_ALLOC_MAX_LIVE 65536

/* What the entry probe was attached to: the attach cookie. */
enum ep_alloc_kind {
	EP_AK_NONE = 0,
	EP_AK_MALLOC = 1,	  /* malloc(size) */
	EP_AK_CALLOC = 2,	  /* calloc(n, size) */
	EP_AK_REALLOC = 3,	  /* realloc(ptr, size) */
	EP_AK_MEMALIGN = 4,	  /* memalign/aligned_alloc(align, size) */
	EP_AK_POSIX_MEMALIGN = 5, /* posix_memalign(&ptr, align, size) */
	EP_AK_VALLOC = 6,	  /* valloc/pvalloc(size) */
	EP_AK_MMAP = 7,		  /* an anonymous private mmap by the program (syscall) */
	EP_AK__COUNT
};

enum ep_alloc_event_type {
	EP_EV_ALLOC = 80, /* struct ep_alloc_event: a sampled allocation */
	EP_EV_FREE = 81,  /* struct ep_alloc_free: a tracked block was freed */
};

/* A sampled allocation; hdr.ts_ns is its return. Only the used frames
 * travel when the ring has room: offsetof(ips) + ustack_sz bytes. */
struct ep_alloc_event {
	struct ep_event_hdr hdr;
	__u64 addr;
	__u64 size;
	__u32 kind;	 /* enum ep_alloc_kind */
	__u32 flags;	 /* EP_ALLOC_F_* */
	__s32 ustack_sz; /* bytes of frames in ips (leaf first), or negative errno */
	__u32 _pad;
	__u64 ips[EP_ALLOC_MAX_FRAMES];
};
#define EP_ALLOC_F_KWALK     1u /* frames from bpf/uwalk.h: return addresses already - 1 */
#define EP_ALLOC_F_UNTRACKED 2u /* the live table was full: its free will not be seen */

/* A tracked block freed (free, or realloc that moved or shrank it to 0). */
struct ep_alloc_free {
	struct ep_event_hdr hdr;
	__u64 addr;
	__u64 alloc_ts_ns; /* the sampled allocation's hdr.ts_ns: tells reuses apart */
};

struct ep_alloc_key {
	__u32 tgid;
	__u32 _pad;
	__u64 addr;
};

struct ep_alloc_block {
	__u64 size;
	__u64 ts_ns;
	__u64 addr0; /* a mapping whose head was unmapped: its start when sampled, else 0 */
};

/* Per-thread state (task storage). */
struct ep_alloc_thread {
	__s64 countdown;  /* bytes to allocate before the next sample */
	__u64 pend_size;  /* the call in flight: its size, */
	__u64 pend_old;	  /* realloc's old block (tracked), */
	__u64 pend_ptr;	  /* posix_memalign's result pointer */
	__u32 pend_kind;  /* enum ep_alloc_kind, 0: none in flight */
	__u32 pend_flags; /* EP_ALLOC_P_* */
	__u32 init;
	__u32 mmap_sample; /* the mmap in flight was sampled */
	__u64 mmap_len;	   /* its length, pages rounded */
	__u64 alloc_sp;	   /* user SP at the last allocator entry, */
	__u64 alloc_ra;	   /* and the return address found there */
	__u32 depth;	   /* allocation calls in flight whose return is awaited */
	__u32 _pad2;
};
#define EP_ALLOC_P_SAMPLE   1u
#define EP_ALLOC_P_FREE_OLD 2u

/* Per-CPU counters. */
enum ep_alloc_stat {
	EP_AST_CALLS = 0,	   /* allocation calls (every kind) */
	EP_AST_BYTES = 1,	   /* bytes asked for */
	EP_AST_FREES = 2,	   /* free calls */
	EP_AST_SAMPLED = 3,	   /* allocations sampled */
	EP_AST_TRACKED_FREES = 4,  /* frees of sampled blocks */
	EP_AST_DROP_LIVE_FULL = 5, /* sampled, not tracked: live table full */
	EP_AST_DROP_RINGBUF = 6,   /* sample or free not delivered */
	EP_AST_DROP_NO_THREAD = 7, /* no per-thread state: call not counted */
	EP_AST_STACK_ERR = 8,	   /* sample delivered without user frames */
	EP_AST_SAMPLE_NS = 9,	   /* time in the sampled path (stack, map, ring) */
	EP_AST_NESTED = 10,	   /* an entry while a call was in flight */
	EP_AST_MMAPS = 11,	   /* anonymous private mmaps by the program */
	EP_AST_MMAP_BYTES = 12,	   /* their bytes (pages rounded) */
	EP_AST_MMAP_IN_ALLOC = 13, /* anonymous mmaps inside a probed allocator: left out */
	EP_AST_MUNMAP_PART = 14,   /* munmap of a tracked mapping's head only */
	EP_AST__COUNT
};

#endif
