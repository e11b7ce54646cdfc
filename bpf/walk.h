/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A user stack into a record, as the programs that take one do it (the
 * CPU sampler, the scheduler's off-CPU stacks, --alloc): the frames the
 * in-kernel CFI walk (bpf/uwalk.h) left in uw_out_buf copied into the
 * record, and frame pointers (bpf_get_stack) where nothing was walked.
 *
 * Inlined into each caller with its record's constant room: the verifier
 * checks the copy against that room. A caller built without bpf_loop
 * passes no frames (a constant 0), and its program then holds neither the
 * copy nor the walk.
 */
#ifndef EBPF_PROF_WALK_H
#define EBPF_PROF_WALK_H

#include "uwalk.h"

/* Copies the n frames the last walk left in uw_out_buf to dst, which has
 * room for cap bytes. Returns the bytes copied, 0 when none; sets *trunc
 * (when given) if the walk had more frames than fit. */
static __always_inline long uw_copy_frames(void *dst, __u32 n, const long cap, __u16 *trunc)
{
	__u32 zero = 0;
	struct uw_out *o;
	long sz = (long)n * 8;

	/* First: a caller without a walk (n 0 by construction) keeps no copy. */
	if (!n)
		return 0;
	if (sz > cap) {
		sz = cap;
		if (trunc)
			*trunc = 1;
	}
	/* Where the clamp also marks the truncation the compiler folds it
	 * into that branch, and the verifier (5.10) loses the bound: bounded
	 * again after a barrier. A plain clamp keeps its bound, and a barrier
	 * there would only cost the verifier states. */
	if (trunc)
		barrier_var(sz);
	o = bpf_map_lookup_elem(&uw_out_buf, &zero);
	if (!o || sz <= 0 || sz > cap || bpf_probe_read_kernel(dst, sz, o->ips))
		return 0;
	return sz;
}

/* The current task's user stack into dst (room for cap bytes): the n
 * frames a walk just left in uw_out_buf (uw_walk_user; 0 when the caller
 * did not walk), or, when there are none (a pc outside the known mappings,
 * no walk asked for), frame pointers from ctx, the program's context.
 * Returns the bytes written, or bpf_get_stack's negative errno; *walked
 * says whether the walk's frames are the ones written (their return
 * addresses are already minus 1). The walk itself stays with the caller:
 * its registers and its state's place differ by program, and a dst
 * computed after it is not held in a register across it. */
static __always_inline long uw_frames_or_fp(void *ctx, __u32 n, void *dst, const long cap,
					    __u16 *trunc, bool *walked)
{
	long sz = uw_copy_frames(dst, n, cap, trunc);

	*walked = sz > 0;
	if (sz > 0)
		return sz;
	return bpf_get_stack(ctx, dst, cap, BPF_F_USER_STACK);
}

#endif
