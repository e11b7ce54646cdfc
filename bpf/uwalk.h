/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * In-kernel user stack walker (--unwind cfi-kernel, docs/unwinding.md): from
 * the user registers, frame by frame, with the CFI rows the collector
 * compiled from each object's .eh_frame (user/unwind/ktables.c), frame
 * pointers where an object has no rows, and the uretprobe trampoline's
 * return addresses put back on the way. Emits addresses only (no stack
 * copy), leaf first, return addresses minus 1 (the call), into the per-CPU
 * uw_out_buf. Included by the programs that take user stacks; the maps are
 * shared between their objects (the collector reuses the sampler's fds).
 */
#ifndef EBPF_PROF_UWALK_H
#define EBPF_PROF_UWALK_H

#include "events/unwind.h"

struct uw_rows_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	/* Each object's array is sized to its own rows. */
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(key_size, sizeof(__u32));
	/* A size, not a type: the type of a nested definition reaches BTF
	 * only as a forward declaration. */
	__uint(value_size, sizeof(struct ep_uw_block));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, EP_UW_MAX_SHARDS);
	__type(key, __u32);
	__array(values, struct uw_rows_inner);
} uw_objs SEC(".maps");

/* First row pc of every block of every object (the level above the rows). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EP_UW_MAX_BLOCKS);
	__type(key, __u32);
	__type(value, __u32);
} uw_blk_pc SEC(".maps");

/* tgid -> its executable mappings. Not preallocated: 20 KiB per process,
 * only for the processes traced. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_MAX_TARGETS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct ep_uw_proc);
} uw_procs SEC(".maps");

/* The stack window: one read of UW_WIN_WORDS words at the first slot a
 * frame needs, the next frames' slots served from it while they fall
 * inside. A frame's own read costs more than its lookup (the helper call
 * and the user-access entry), and most frames are far smaller than the
 * window; a frame larger than it refills at its own slot. */
#define UW_WIN_WORDS 64
struct uw_out {
	__u64 ips[EP_UW_MAX_FRAMES];
	__u64 win[UW_WIN_WORDS + 1]; /* + 1: a pair read at the last word */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_out);
} uw_out_buf SEC(".maps");

/* Rows found recently, per CPU, direct-mapped by (object, pc): samples
 * repeat the same return addresses, and a hit saves the two binary searches
 * (about 35 steps) of a frame. Objects' rows never change while loaded and
 * their global block numbers are never reused, so entries stay valid. One
 * array, UW_ROW_CACHE entries per CPU (key cpu << 12 | hash: a per-CPU map's
 * value cannot hold 80 KiB), sized by the collector to the CPUs. */
#define UW_ROW_CACHE_BITS 12
#define UW_ROW_CACHE	  (1u << UW_ROW_CACHE_BITS)
struct uw_row_cache_ent {
	__u32 rel;
	__u32 blk_lo; /* the object's identity: its first global block + 1 */
	struct ep_uw_row row;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UW_ROW_CACHE);
	__type(key, __u32);
	__type(value, struct uw_row_cache_ent);
} uw_rcache SEC(".maps");

/* The walk's registers: EP_UREG_IP/SP/FP (events/common.h), and arm64's link
 * register, which holds a leaf's return address until its prologue saves
 * it (0 on x86_64). */
#define UW_REG_LR 3
#define UW_NREGS  4

struct uw_walk {
	__u64 pc, sp, fp;
	__u64 lr;    /* arm64: the link register while known (the leaf, after a signal), else 0 */
	__u64 tramp; /* uprobes trampoline address, 0 when none */
	__u64 ri;    /* next struct return_instance * to match, newest first */
	__u32 has_proc; /* the process has tables */
	__u32 n;
	__u32 last_map; /* index of the previous frame's mapping: usually this one's */
	__u32 end;	/* enum ep_uw_end */
	__u64 win_lo;	/* user address of uw_out.win[0] */
	__u32 win_n;	/* valid words in uw_out.win, 0: none */
	__u8 exact;	/* pc is not a return address: the leaf, after a signal */
	__u8 fixed;	/* a trampoline address was replaced */
	__u8 jit;	/* a JIT frame was walked */
	__u8 sp_low;	/* arm64, after a frame-pointer step: sp is only a lower bound */
};

/* Binary searches step in bpf_loop callbacks: an unrolled search's paths
 * multiply in the verifier (each halving's outcome is a branch it keeps
 * apart), a callback is checked once. Each finds the last entry whose key
 * is <= key in [lo, hi). */
struct uw_bs {
	__u64 key;
	__u32 lo, hi;
	__u32 base; /* uw_blk_pc: the object's first block */
	__u32 _pad;
	struct ep_uw_proc *p;
	struct ep_uw_block *blk;
};

static long uw_bs_map(__u32 i, struct uw_bs *b)
{
	struct ep_uw_proc *p = b->p;
	__u32 mid;

	if (!p || b->lo + 1 >= b->hi)
		return 1;
	mid = (b->lo + b->hi) / 2;
	if (p->m[mid & (EP_UW_MAX_MAPS - 1)].start <= b->key)
		b->lo = mid;
	else
		b->hi = mid;
	return 0;
}

static long uw_bs_blk(__u32 i, struct uw_bs *b)
{
	__u32 mid, key, *first;

	if (b->lo + 1 >= b->hi)
		return 1;
	mid = (b->lo + b->hi) / 2;
	key = b->base + mid;
	first = bpf_map_lookup_elem(&uw_blk_pc, &key);
	if (!first)
		return 1;
	if (*first <= b->key)
		b->lo = mid;
	else
		b->hi = mid;
	return 0;
}

static long uw_bs_row(__u32 i, struct uw_bs *b)
{
	struct ep_uw_block *blk = b->blk;
	__u32 mid;

	if (!blk || b->lo + 1 >= b->hi)
		return 1;
	mid = (b->lo + b->hi) / 2;
	if (blk->rows[mid & EP_UW_BLOCK_MASK].pc <= b->key)
		b->lo = mid;
	else
		b->hi = mid;
	return 0;
}

/* Index of the mapping holding pc in p, or -1. */
static __always_inline int uw_map_index(struct ep_uw_proc *p, __u64 pc)
{
	struct uw_bs b = { .key = pc, .hi = p->n };
	__u32 lo;

	if (b.hi > EP_UW_MAX_MAPS)
		b.hi = EP_UW_MAX_MAPS;
	if (!b.hi)
		return -1;
	b.p = p;
	bpf_loop(12, uw_bs_map, &b, 0);
	lo = b.lo & (EP_UW_MAX_MAPS - 1);
	if (pc < p->m[lo].start || pc >= p->m[lo].end)
		return -1;
	return (int)lo;
}

/* The row in force at rel (object vaddr) into *out; false when no row
 * covers it. */
static __always_inline bool uw_find_row(const struct ep_uw_map *m, __u64 rel, struct ep_uw_row *out)
{
	struct uw_bs b = { .key = rel, .hi = m->nblk, .base = m->blk_lo };
	__u32 shard = m->shard, nblk = m->nblk, sblk = m->sblk;
	struct ep_uw_block *blk;
	__u32 lo;
	void *rows;

	if (!nblk || rel >= 0xffffffffull)
		return false;
	bpf_loop(18, uw_bs_blk, &b, 0);
	lo = sblk + b.lo;
	rows = bpf_map_lookup_elem(&uw_objs, &shard);
	if (!rows)
		return false;
	blk = bpf_map_lookup_elem(rows, &lo);
	if (!blk)
		return false;
	if (blk->rows[0].pc > rel)
		return false;
	b.lo = 0;
	b.hi = EP_UW_BLOCK_ROWS;
	b.blk = blk;
	bpf_loop(9, uw_bs_row, &b, 0);
	*out = blk->rows[b.lo & EP_UW_BLOCK_MASK];
	return true;
}

/* A return address that is the uprobes trampoline: the original, from the
 * thread's return instances (newest first, so they are met in the order the
 * walk climbs the stack). 0 when none matches. slot is what the kernel kept
 * in the instance's stack: the sp at the probed function's entry, which on
 * x86_64 is where the call pushed the return address (the slot it is read
 * from) and on arm64 is the frame's CFA (the kernel hijacked the link
 * register, which the function may have saved anywhere in its frame). */
static __always_inline __u64 uw_fix_ret(struct uw_walk *w, __u64 slot)
{
	struct return_instance *ri;
	__u64 st;

	for (int k = 0; k < 8; k++) {
		ri = (struct return_instance *)w->ri;
		if (!ri)
			return 0;
		st = BPF_CORE_READ(ri, stack);
		w->ri = (__u64)BPF_CORE_READ(ri, next);
		if (st == slot) {
			w->fixed = 1;
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		}
		if (st > slot) {
			/* Above this frame: keep it for the frames further up. */
			w->ri = (__u64)ri;
			return 0;
		}
	}
	return 0;
}

/* Reads nw (1 or 2) words at the user address a, from the window when it
 * holds them, else refilling it at a. Non-zero on a fault. */
static __always_inline int uw_read(struct uw_walk *w, struct uw_out *o, __u64 a, __u64 *dst,
				   __u32 nw)
{
	__u64 d = a - w->win_lo, k;
	__u32 n;

	if (!(d & 7) && a >= w->win_lo && (d >> 3) + nw <= w->win_n) {
		k = (d >> 3) & (UW_WIN_WORDS - 1);
		dst[0] = o->win[k];
		if (nw > 1)
			dst[1] = o->win[k + 1];
		return 0;
	}
	w->win_n = 0;
	if (a & 7)
		return bpf_probe_read_user(dst, nw * 8, (void *)a);
	/* Not past the page's end: the stack may end there (the top of a
	 * thread's stack, or a guard below a signal stack). */
	n = (4096 - (a & 4095)) >> 3;
	if (n > UW_WIN_WORDS)
		n = UW_WIN_WORDS;
	if (n < nw)
		return bpf_probe_read_user(dst, nw * 8, (void *)a);
	if (bpf_probe_read_user(o->win, n * 8, (void *)a))
		return bpf_probe_read_user(dst, nw * 8, (void *)a);
	w->win_lo = a;
	w->win_n = n;
	dst[0] = o->win[0];
	if (nw > 1)
		dst[1] = o->win[1];
	return 0;
}

enum { UW_LK_FP = 0, UW_LK_ROW = 1, UW_LK_JIT = 2 };

/* What covers pc in p: UW_LK_ROW with the row in *out, UW_LK_FP (no CFI:
 * frame pointers), UW_LK_JIT, or -1 (no mapping). *last is the previous
 * frame's mapping, tried first. A global function: the verifier checks it
 * once, apart from the walk's paths. */
static __always_inline int uw_lookup(struct ep_uw_proc *p, __u64 look, __u32 *last,
				     struct ep_uw_row *out)
{
	struct uw_row_cache_ent *ce = NULL;
	const struct ep_uw_map *m;
	__u32 mi, rel, h;
	__u64 r;

	if (!p || !last || !out)
		return -1;
	mi = *last & (EP_UW_MAX_MAPS - 1);
	m = &p->m[mi];
	if (look < m->start || look >= m->end) {
		int i = uw_map_index(p, look);

		if (i < 0)
			return -1;
		*last = i;
		m = &p->m[i & (EP_UW_MAX_MAPS - 1)];
	}
	if (m->kind == EP_UW_MAP_JIT)
		return UW_LK_JIT;
	if (m->kind != EP_UW_MAP_CFI)
		return UW_LK_FP;
	r = look - m->bias;
	if (r >= 0xffffffffull)
		return UW_LK_FP;
	rel = (__u32)r;
	h = (rel ^ (rel >> 12) ^ (m->blk_lo * 0x9e3779b1u)) & (UW_ROW_CACHE - 1);
	h |= bpf_get_smp_processor_id() << UW_ROW_CACHE_BITS;
	ce = bpf_map_lookup_elem(&uw_rcache, &h);
	if (ce && ce->rel == rel && ce->blk_lo == m->blk_lo + 1) {
		*out = ce->row;
		return UW_LK_ROW;
	}
	if (!uw_find_row(m, r, out))
		return UW_LK_FP;
	if (ce) {
		ce->rel = rel;
		ce->blk_lo = m->blk_lo + 1;
		ce->row = *out;
	}
	return UW_LK_ROW;
}

#if defined(__TARGET_ARCH_arm64)
/* arm64 rt_sigframe at the vdso's __kernel_rt_sigreturn: sp points at the
 * frame: siginfo (128 bytes), then the ucontext, whose mcontext (struct
 * sigcontext, 16-aligned) starts 176 bytes in: fault_address, regs[31],
 * sp, pc. x29 and x30 are read together, then sp and pc. */
#define UW_SIG_FP (128 + 176 + 8 + 29 * 8)
#define UW_SIG_SP (128 + 176 + 8 + 31 * 8)
/* Return addresses may carry a pointer-authentication code (PAC) above the
 * 48-bit user address space (and a tag in the top byte): the address is
 * the low 48 bits. */
#define UW_ADDR_MASK ((1ull << 48) - 1)
#else
/* x86_64 rt_sigframe at __restore_rt: sp points at the ucontext; its
 * mcontext (struct sigcontext) starts 40 bytes in. */
#define UW_SIG_RBP   (40 + 10 * 8)
#define UW_SIG_RSP   (40 + 15 * 8)
#define UW_SIG_RIP   (40 + 16 * 8)
#define UW_ADDR_MASK (~0ull)
#endif

/* A signal frame: the trampoline at pc, the interrupted registers in the
 * rt_sigframe at sp. Returns 0 (the walk goes on) or 1 (it ends). */
static __always_inline int uw_sigframe(struct uw_walk *w, struct uw_out *o, __u32 i)
{
	__u64 regs[4];

	/* The trampoline's own address, not the byte before:
	 * nothing called it, and the frame is named for it. */
	o->ips[i & (EP_UW_MAX_FRAMES - 1)] = w->pc;

#if defined(__TARGET_ARCH_arm64)
	/* x29 and x30, then sp and pc: the interrupted
	 * function may be a leaf with its return address
	 * still in x30. */
	if (bpf_probe_read_user(&regs[0], 16, (void *)(w->sp + UW_SIG_FP)) ||
	    bpf_probe_read_user(&regs[2], 16, (void *)(w->sp + UW_SIG_SP))) {
		w->end = EP_UW_END_READ;
		return 1;
	}
	w->fp = regs[0];
	w->lr = regs[1];
	w->sp = regs[2];
	w->pc = regs[3];
#else
	/* rbp, then rsp and rip together. */
	if (bpf_probe_read_user(&regs[0], 8, (void *)(w->sp + UW_SIG_RBP)) ||
	    bpf_probe_read_user(&regs[1], 16, (void *)(w->sp + UW_SIG_RSP))) {
		w->end = EP_UW_END_READ;
		return 1;
	}
	w->fp = regs[0];
	w->sp = regs[1];
	w->pc = regs[2];
#endif
	w->exact = 1; /* the interrupted pc, not a return address */
	w->sp_low = 0;
	return 0;
}

/* One frame. Returns 1 when the walk ends. A global function, so the
 * verifier checks it once; as the body of the bpf_loop callback it was
 * checked again until the callback's states converged (over a second of
 * load time). */
__noinline int uw_frame(__u32 i, struct uw_walk *w, struct ep_uw_proc *p)
{
	__u32 zero = 0;
	struct uw_out *o = bpf_map_lookup_elem(&uw_out_buf, &zero);
	const struct ep_uw_row *row = NULL;
	bool is_jit = false;
	struct ep_uw_row rowv;
	__u64 look, cfa, ra = 0, fp, slot, key, fsp, pair[2];
	__u8 sp_low = 0;
	int ra8 = -1;

	if (!o || !w || !p)
		return 1;
	fp = w->fp;
	fsp = w->sp; /* this frame's sp: EP_UW_REG_AT_SP slots */
	/* The loop index, not w->n, counts frames: a counter in w that the
	 * verifier tracks exactly makes every iteration a new state, and the
	 * callback would be checked once per frame. */
	if (i >= EP_UW_MAX_FRAMES) {
		w->end = EP_UW_END_DEPTH;
		return 1;
	}
	if (!w->pc) {
		w->end = EP_UW_END_FP_ROOT;
		return 1;
	}
	look = w->exact ? w->pc : w->pc - 1;
	if (w->has_proc) {
		int kind = uw_lookup(p, look, &w->last_map, &rowv);

		if (kind < 0) {
			/* Kept: the collector reads the maps itself and can still
			 * name the frame (a library dlopen'ed before its table
			 * arrived), and drops it if it cannot. */
			w->n = i + 1;
			barrier_var(i);
			o->ips[i & (EP_UW_MAX_FRAMES - 1)] = look;
			w->end = EP_UW_END_UNKNOWN;
			return 1;
		}
		if (kind == UW_LK_ROW)
			row = &rowv;
		else if (kind == UW_LK_JIT)
			w->jit = 1;
		is_jit = kind == UW_LK_JIT;
	}
	w->n = i + 1;
	/* The mask stays: without the barrier the compiler drops it after the
	 * i < EP_UW_MAX_FRAMES test, which the verifier does not carry here. */
	barrier_var(i);
	o->ips[i & (EP_UW_MAX_FRAMES - 1)] = look;

	if (row && row->cfa != EP_UW_CFA_NONE) {
		switch (row->cfa) {
		case EP_UW_CFA_END:
			w->end = EP_UW_END_ROOT;
			return 1;
		case EP_UW_CFA_SP:
			/* Past a frame-pointer step on arm64 sp is not known,
			 * but a function that keeps a frame record points x29
			 * at it (AAPCS64), and the row says where the record
			 * lies from the CFA (or from sp). */
			if (w->sp_low && row->fp == EP_UW_REG_AT_SP && row->fp_off8 >= 0 &&
			    w->fp >= w->sp)
				fsp = w->fp - row->fp_off8 * 8;
			cfa = fsp + row->cfa_off;
			if (w->sp_low && row->fp == EP_UW_REG_AT_CFA && w->fp >= w->sp)
				cfa = w->fp - row->fp_off8 * 8;
			break;
		case EP_UW_CFA_FP:
			cfa = w->fp + row->cfa_off;
			break;
		case EP_UW_CFA_PLT:
			/* The threshold travels in fp_off8 (11 in the lazy PLT,
			 * 9 or 10 in the IBT one). */
			cfa = w->sp + row->cfa_off + ((__s64)(w->pc & 15) >= row->fp_off8 ? 8 : 0);
			break;
		case EP_UW_CFA_FP_DEREF:
			if (uw_read(w, o, w->fp + row->cfa_off, &cfa, 1)) {
				w->end = EP_UW_END_READ;
				return 1;
			}
			break;
		case EP_UW_CFA_SIGNAL:
			return uw_sigframe(w, o, i);
		default:
			w->end = EP_UW_END_UNSUPPORTED;
			return 1;
		}
		ra8 = row->ra_off8;
		/* The CFA is the caller's sp: above this frame's, or equal
		 * where nothing is pushed yet (arm64 at a function's entry,
		 * the return address still in the link register). */
		if (cfa < w->sp || (cfa == w->sp && ra8)) {
			w->end = EP_UW_END_BAD;
			return 1;
		}
		slot = (row->fp == EP_UW_REG_AT_SP ? fsp : cfa) + ra8 * 8;
		if (!ra8) {
			/* arm64: the return address is in x30, known only in
			 * the leaf (or the frame a signal interrupted); in a
			 * caller it would be its own pc again. */
			if (!w->lr) {
				w->end = EP_UW_END_BAD;
				return 1;
			}
			ra = w->lr;
			if (row->fp == EP_UW_REG_AT_CFA || row->fp == EP_UW_REG_AT_FP) {
				__u64 at = row->fp == EP_UW_REG_AT_CFA ? cfa : w->fp;

				if (uw_read(w, o, at + row->fp_off8 * 8, &fp, 1)) {
					w->end = EP_UW_END_READ;
					return 1;
				}
			} else if (row->fp == EP_UW_REG_UNDEF) {
				fp = 0;
			}
		} else if ((row->fp == EP_UW_REG_AT_CFA || row->fp == EP_UW_REG_AT_SP) &&
			   row->fp_off8 == ra8 - 1) {
			/* The usual push rbp frame: both in one read. */
			if (uw_read(w, o, slot - 8, pair, 2)) {
				w->end = EP_UW_END_READ;
				return 1;
			}
			fp = pair[0];
			ra = pair[1];
		} else {
			if (uw_read(w, o, slot, &ra, 1)) {
				w->end = EP_UW_END_READ;
				return 1;
			}
			if (row->fp == EP_UW_REG_AT_CFA || row->fp == EP_UW_REG_AT_FP ||
			    (row->fp == EP_UW_REG_AT_SP && row->fp_off8 >= 0)) {
				__u64 at = row->fp == EP_UW_REG_AT_CFA	? cfa
					   : row->fp == EP_UW_REG_AT_SP ? fsp
									: w->fp;

				if (uw_read(w, o, at + row->fp_off8 * 8, &fp, 1)) {
					w->end = EP_UW_END_READ;
					return 1;
				}
			} else if (row->fp == EP_UW_REG_UNDEF) {
				fp = 0;
			}
		}
	} else {
#if defined(__TARGET_ARCH_arm64)
		/* The vdso's __kernel_rt_sigreturn has no CFI in Debian's 6.1
		 * kernel: a frame that returns there is recognised by its two
		 * instructions (mov x8, #139; svc #0), as libgcc does. The frame
		 * record the kernel left at x29 holds the interrupted x29 and
		 * x30, not the interrupted pc: following it would drop the
		 * interrupted function. */
		if (!w->exact) {
			__u32 ins[2];

			if (!bpf_probe_read_user(ins, sizeof(ins), (void *)w->pc) &&
			    ins[0] == 0xd2801168 && ins[1] == 0xd4000001)
				return uw_sigframe(w, o, i);
		}
#endif
		/* No CFI here: the frame-pointer chain (rbp -> saved rbp, ra;
		 * arm64: the frame record x29 -> saved x29, x30). On arm64
		 * the record may sit anywhere in the caller's frame: fp + 16
		 * is only a lower bound of the caller's sp. */
		if (!w->fp) {
			w->end = is_jit ? EP_UW_END_JIT : EP_UW_END_FP_ROOT;
			return 1;
		}
		if (w->fp < w->sp || (w->fp & 7)) {
			w->end = is_jit ? EP_UW_END_JIT : EP_UW_END_BAD;
			return 1;
		}
		if (uw_read(w, o, w->fp, pair, 2)) {
			w->end = EP_UW_END_READ;
			return 1;
		}
		cfa = w->fp + 16;
		slot = w->fp + 8;
		fp = pair[0];
		ra = pair[1];
#if defined(__TARGET_ARCH_arm64)
		sp_low = 1;
#endif
	}
	ra &= UW_ADDR_MASK;
#if defined(__TARGET_ARCH_arm64)
	key = cfa;
#else
	key = slot;
#endif
	if (w->tramp && ra == w->tramp) {
		ra = uw_fix_ret(w, key);
		if (!ra) {
			w->end = EP_UW_END_URETPROBE;
			return 1;
		}
	}
	if (!ra) {
		w->end = EP_UW_END_FP_ROOT;
		return 1;
	}
	w->pc = ra;
	w->sp = cfa;
	w->fp = fp;
	w->lr = 0; /* the caller's x30 is this return address: no use */
	w->sp_low = sp_low;
	w->exact = 0;
	return 0;
}

/* The walk's registers from the user state saved at kernel entry. */
static __always_inline void uw_regs_from_pt(struct pt_regs *r, __u64 *regs)
{
#if defined(__TARGET_ARCH_arm64)
	regs[EP_UREG_IP] = BPF_CORE_READ(r, pc);
	regs[EP_UREG_SP] = BPF_CORE_READ(r, sp);
	regs[EP_UREG_FP] = BPF_CORE_READ(r, regs[29]);
	regs[UW_REG_LR] = BPF_CORE_READ(r, regs[30]);
#else
	regs[EP_UREG_IP] = BPF_CORE_READ(r, ip);
	regs[EP_UREG_SP] = BPF_CORE_READ(r, sp);
	regs[EP_UREG_FP] = BPF_CORE_READ(r, bp);
	regs[UW_REG_LR] = 0;
#endif
}

/* Stands for a process without tables: a global function's pointer
 * argument cannot be NULL. Never written. */
struct ep_uw_proc uw_no_proc SEC(".bss");

/* The bpf_loop context: the process's mappings apart from the state the
 * global function gets (the verifier forgets the type of whatever memory
 * a global function was given, a map pointer in it included). */
struct uw_loop {
	struct uw_walk *w;
	struct ep_uw_proc *proc;
};

static long uw_step(__u32 i, struct uw_loop *l)
{
	struct ep_uw_proc *p = l->proc;
	struct uw_walk *w = l->w;

	if (!w)
		return 1;
	return uw_frame(i, w, p ? p : &uw_no_proc) ? 1 : 0;
}

/* Walks from regs (UW_NREGS: ip, sp, fp, lr) into uw_out_buf. Returns the
 * frame count; w->end and w->fixed say how it went. The walk's state is the
 * caller's w, on its stack or in a per-CPU map: the bpf_loop context must be
 * on the stack, and a program whose call chain is deep (the scheduler's,
 * through a Python walk) cannot also hold the state there within the
 * verifier's 512-byte combined stack. */
static __always_inline __u32 uw_walk_user(struct task_struct *task, __u32 tgid, const __u64 *regs,
					  struct uw_walk *w)
{
	struct uw_loop l = {};

	w->pc = regs[EP_UREG_IP];
	w->sp = regs[EP_UREG_SP];
	w->fp = regs[EP_UREG_FP];
	w->lr = regs[UW_REG_LR] & UW_ADDR_MASK;
	w->n = 0;
	w->last_map = 0;
	w->end = EP_UW_END_NONE;
	w->win_lo = 0;
	w->win_n = 0;
	w->exact = 1;
	w->fixed = 0;
	w->jit = 0;
	w->sp_low = 0;
	w->tramp = 0;
	w->ri = 0;
	struct ep_uw_proc *proc = bpf_map_lookup_elem(&uw_procs, &tgid);

	/* Stored only once null-checked: the walk's steps read it back. */
	l.proc = NULL;
	if (proc)
		l.proc = proc;
	l.w = w;
	w->has_proc = proc && proc->n;
	if (bpf_core_field_exists(task->utask)) {
		struct uprobe_task *ut = BPF_CORE_READ(task, utask);
		struct return_instance *ri = ut ? BPF_CORE_READ(ut, return_instances) : NULL;
		__u64 xol = ut ? BPF_CORE_READ(ut, xol_vaddr) : 0;

		if (ri) {
			w->ri = (__u64)ri;
			w->tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
		}
		/* Single-stepping a probed instruction out of line: the pc is
		 * in the uprobes page, the instruction belongs at vaddr. Past
		 * the slot's start the copy has run (the kernel moves the pc
		 * back afterwards): the same distance past vaddr, with sp
		 * already moved by a push. */
		if (xol && w->pc >= xol && w->pc < xol + 64)
			w->pc = BPF_CORE_READ(ut, vaddr) + (w->pc - xol);
	}
	/* Sampled on the trampoline itself: the probed function has returned,
	 * the thread resumes at the original return address with this sp. */
	/* The trampoline is slot 0 of the uprobes page (128 bytes): with the
	 * uretprobe syscall it runs a few instructions, pushing registers
	 * before its syscall, so sp is not where the function returned: the
	 * caller's sp is just above the hijacked slot. */
	/* arm64 (6.1): the trampoline is a breakpoint the kernel handles at
	 * once; the function has returned, sp is back at its entry value. */
	if (w->tramp && w->pc >= w->tramp && w->pc < w->tramp + 128) {
		struct return_instance *ri = (struct return_instance *)w->ri;

		w->pc = BPF_CORE_READ(ri, orig_ret_vaddr);
#if defined(__TARGET_ARCH_arm64)
		w->sp = BPF_CORE_READ(ri, stack);
#else
		w->sp = BPF_CORE_READ(ri, stack) + 8;
#endif
		w->ri = (__u64)BPF_CORE_READ(ri, next);
		w->fixed = 1;
	}
	bpf_loop(EP_UW_MAX_FRAMES + 1, uw_step, &l, 0);
	if (!w->has_proc && w->end != EP_UW_END_READ)
		w->end = EP_UW_END_NO_TABLES;
	if (w->end == EP_UW_END_NONE)
		w->end = EP_UW_END_DEPTH;
	return w->n;
}

#endif
