/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the preloaded allocation sampler (preload/ep_alloc_preload.c) hands
 * to the profiler, shared with bpf/alloc.bpf.c and user/alloc/: the one
 * probed function's argument and the environment that configures it.
 * Fixed-width types only: the BPF side includes it too.
 */
#ifndef EBPF_PROF_EVENTS_ALLOC_PRELOAD_H
#define EBPF_PROF_EVENTS_ALLOC_PRELOAD_H

#include "common.h"

/* The library's file name and its probed function. */
#define EP_PRELOAD_LIB	"libebpf-prof-alloc.so"
#define EP_PRELOAD_FUNC "ebpf_prof_alloc_event"
/* Environment: mean bytes between samples (absent or 0: the library only
 * forwards), and an optional seed for the draws (tests). */
#define EP_PRELOAD_ENV_RATE "EBPF_PROF_ALLOC_RATE"
#define EP_PRELOAD_ENV_SEED "EBPF_PROF_ALLOC_SEED"

/* What ebpf_prof_alloc_event(const struct ep_preload_call *) says. */
enum ep_preload_op {
	EP_PL_COUNTS = 0, /* only the counts below (thread start, exit, fork) */
	EP_PL_SAMPLE = 1, /* addr, size: a sampled block, kind: enum ep_alloc_kind */
	EP_PL_FREE = 2,	  /* addr: a sampled block is being freed */
};
#define EP_PL_F_UNTRACKED 1u /* the in-process set was full: its free is not seen */

struct ep_preload_call {
	__u64 addr;
	__u64 size;
	__u32 op;   /* enum ep_preload_op */
	__u32 kind; /* enum ep_alloc_kind (EP_PL_SAMPLE) */
	__u32 flags;
	__u32 _pad;
	/* Offset of the thread's in-allocator flag (a __u32, non-zero while
	 * the library is inside the real allocator) from the thread pointer:
	 * lets the mmap tracepoint leave out the allocator's own mappings. */
	__s64 tls_off;
	/* The thread's calls since its previous event (not sampled ones too). */
	__u64 calls, frees, bytes;
};

#endif
