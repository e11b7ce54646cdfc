/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * In-kernel CFI unwinding (bpf/uwalk.h, user/unwind/): the unwind rows the
 * collector compiles, the walker's maps, and why a walk ended.
 */
#ifndef EBPF_PROF_EVENTS_UNWIND_H
#define EBPF_PROF_EVENTS_UNWIND_H

#include "common.h"

/* How the canonical frame address (CFA: the caller's stack pointer after
 * the call returns) is found at a pc. One value per row. */
enum ep_uw_cfa {
	/* No CFI covers this pc (a gap between FDEs, or code without an FDE):
	 * this frame is walked by frame pointers. */
	EP_UW_CFA_NONE = 0,
	EP_UW_CFA_SP = 1, /* CFA = sp + cfa_off */
	EP_UW_CFA_FP = 2, /* CFA = fp + cfa_off (x86_64 rbp, arm64 x29) */
	/* x86_64 .plt stub expression: CFA = sp + cfa_off, plus 8 when
	 * (pc & 15) >= fp_off8: 11 in binutils' lazy PLT, 9 or 10 (by
	 * binutils version) in its IBT PLT, endbr64 first. The stubs never
	 * touch the frame pointer (fp is EP_UW_REG_SAME), so fp_off8 is free
	 * to carry the threshold. */
	EP_UW_CFA_PLT = 3,
	/* Signal trampoline (__restore_rt): the interrupted registers are in
	 * the ucontext at sp. */
	EP_UW_CFA_SIGNAL = 4,
	/* Return address undefined: the outermost frame (_start, clone's
	 * thread entry); the walk is complete. */
	EP_UW_CFA_END = 5,
	/* CFI whose rule the walker cannot evaluate (other expressions, CFA
	 * from another register): the walk ends here, counted. */
	EP_UW_CFA_UNSUPPORTED = 6,
	/* CFA = *(u64 *)(fp + cfa_off): gcc's stack realignment (DRAP) in
	 * functions with over-aligned locals, e.g. ggml's AVX kernels
	 * (DW_OP_breg6 (rbp) off; DW_OP_deref). */
	EP_UW_CFA_FP_DEREF = 7,
};

/* How a caller's register (frame pointer, return address) is recovered. */
enum ep_uw_reg {
	/* Unchanged: the callee did not touch it (for the return address on
	 * arm64: it is still in the link register). */
	EP_UW_REG_SAME = 0,
	EP_UW_REG_AT_CFA = 1, /* saved in memory at CFA + 8 * off8 */
	EP_UW_REG_UNDEF = 2,  /* not recoverable (the frame pointer then reads 0) */
	/* Saved in memory at fp + 8 * off8, fp being this frame's own frame
	 * pointer register (with EP_UW_CFA_FP_DEREF: DW_OP_breg6 (rbp) 0). */
	EP_UW_REG_AT_FP = 3,
	/* arm64, with an sp-based CFA: the frame pointer saved at sp + 8 *
	 * fp_off8 (unchanged when fp_off8 < 0: slots above sp are never below
	 * it) and the return address at sp + 8 * ra_off8, sp being this
	 * frame's own. gcc puts the frame record at the bottom of frames of up
	 * to a few KiB (stp x29, x30, [sp] after sub sp), too far from the CFA
	 * for an 8-bit offset, not from sp. */
	EP_UW_REG_AT_SP = 4,
};

/* One row of an object's unwind table: the rules in force from pc up to the
 * next row's pc. Rows are sorted by pc and keyed by ELF virtual address
 * (the link-time address .eh_frame speaks in; the walker subtracts the
 * mapping's load bias). Consecutive rows with the same rules are merged,
 * and rules for registers the walker does not restore (rbx, r12-r15, ...)
 * are dropped, so one row per CFA change is typical. 12 bytes. */
struct ep_uw_row {
	__u32 pc;
	__s32 cfa_off;
	__u8 cfa; /* enum ep_uw_cfa */
	__u8 fp;  /* enum ep_uw_reg for the caller's frame pointer */
	/* EP_UW_REG_AT_CFA/AT_FP: the saved frame pointer's offset / 8;
	 * EP_UW_CFA_PLT rows: the pc & 15 threshold. */
	__s8 fp_off8;
	/* The return address: saved at CFA + 8 * ra_off8 when non-zero (x86_64:
	 * always -1; sp + 8 * ra_off8 with EP_UW_REG_AT_SP); 0 = still in the
	 * link register (arm64 leaf code). */
	__s8 ra_off8;
};

/* ---- the in-kernel walker's maps (bpf/uwalk.h, user/unwind/ktables.c) ----
 * Rows live in blocks of EP_UW_BLOCK_ROWS in shards: BPF arrays (inner maps
 * of an array-of-maps) created as tables are loaded, each sized to the
 * objects of one maps scan plus room for later dlopens. Not one array per
 * object: every insertion into an array-of-maps waits for an RCU grace
 * period (12-20 ms here), 2 s for a process with 100 libraries. A frame
 * costs one helper lookup into a shard plus searches in memory: over
 * per-block first pcs (a global array the verifier inlines), then inside
 * the block. Unused tail rows of a block have pc ~0. */
#define EP_UW_BLOCK_ROWS 256
#define EP_UW_BLOCK_MASK (EP_UW_BLOCK_ROWS - 1)
struct ep_uw_block {
	struct ep_uw_row rows[EP_UW_BLOCK_ROWS];
};
/* Shards of rows at once. */
#define EP_UW_MAX_SHARDS 1024
/* Blocks of all objects: 2^16 * 256 rows = 16.7 M rows (200 MB), far more
 * than the memory budget allows; the index itself is 256 KiB. */
#define EP_UW_MAX_BLOCKS (1u << 16)
/* Executable mappings per process the walker knows; more are counted and
 * walked as unknown. Python with many extension modules stays below. */
#define EP_UW_MAX_MAPS 512
/* Frames one walk emits: deeper stacks end with EP_UW_END_DEPTH. */
#define EP_UW_MAX_FRAMES 512

enum ep_uw_kind {
	EP_UW_MAP_CFI = 1, /* file with a table: rows, frame pointers in gaps */
	EP_UW_MAP_FP = 2,  /* file without CFI (or over budget): frame pointers */
	EP_UW_MAP_JIT = 3, /* anonymous executable memory: frame pointers, marked */
};

/* One executable mapping of a process; pc - bias is the object's ELF
 * virtual address. Sorted by start in struct ep_uw_proc. */
struct ep_uw_map {
	__u64 start, end;
	__u64 bias;
	__u32 shard;  /* index in the array-of-maps (EP_UW_MAP_CFI) */
	__u32 blk_lo; /* first block in the global block index */
	__u32 nblk;   /* blocks of the object */
	__u32 sblk;   /* first block in the shard */
	__u32 kind;   /* enum ep_uw_kind */
	__u32 _pad;
};

struct ep_uw_proc {
	__u32 n; /* maps in use */
	__u32 _pad;
	struct ep_uw_map m[EP_UW_MAX_MAPS];
};

/* Why a walk ended (bits 8-15 of ep_sample.flags). */
enum ep_uw_end {
	EP_UW_END_NONE = 0,	   /* not walked in the kernel */
	EP_UW_END_ROOT = 1,	   /* outermost frame reached (CFI: return address undefined) */
	EP_UW_END_FP_ROOT = 2,	   /* frame-pointer chain ended (fp 0) */
	EP_UW_END_DEPTH = 3,	   /* EP_UW_MAX_FRAMES frames emitted */
	EP_UW_END_JIT = 4,	   /* in JIT/anonymous code whose frame chain is unusable */
	EP_UW_END_UNKNOWN = 5,	   /* pc in no known mapping (dlopen since the scan?) */
	EP_UW_END_NO_TABLES = 6,   /* process without tables: frame-pointer walk */
	EP_UW_END_READ = 7,	   /* user stack unreadable */
	EP_UW_END_BAD = 8,	   /* CFA not above sp, pc 0: inconsistent state */
	EP_UW_END_UNSUPPORTED = 9, /* CFI rule the walker cannot evaluate */
	EP_UW_END_NO_REGS = 10,	   /* no user registers */
	EP_UW_END_URETPROBE = 11,  /* trampoline return address with no matching instance */
	EP_UW_END__COUNT
};

#endif
