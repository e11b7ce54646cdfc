// SPDX-License-Identifier: Dual BSD/GPL
/*
 * Allocation sampling (--alloc, docs/alloc.md): uprobes on the allocator's
 * entry points, sampled by bytes as tcmalloc does in-process. Each thread
 * counts down a distance drawn from an exponential distribution of mean
 * alloc_rate bytes; an allocation that reaches it is sampled (its stack is
 * walked at the return, the block is tracked until freed), the others only
 * subtract their size. Because the draws are memoryless, an allocation of
 * s bytes is sampled with probability 1 - exp(-s/rate) whatever came
 * before, which is what lets the collector weight each sample without bias.
 *
 * A separate object from the recording modules': it includes the stack
 * walker (uwalk.h) as sched.bpf.c does, and loads only under --alloc.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events/alloc.h"
#include "counters.h"
#include "targets.h"
#include "walk.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Linux 7.2 gave the kfunc the program's context as an argument; libbpf
 * refuses a whole object whose kfunc prototype differs from the kernel's,
 * so the object is built twice (CMakeLists.txt: alloc and alloc_ctx) and
 * the collector loads the one that matches (user/alloc/alloc_module.c). */
#ifdef EP_SESSION_CTX
extern bool bpf_session_is_return(void *ctx) __ksym __weak;
#define ep_session_is_return(ctx) bpf_session_is_return(ctx)
#else
extern bool bpf_session_is_return(void) __ksym __weak;
#define ep_session_is_return(ctx) bpf_session_is_return()
#endif

/* Set by the collector before load. */
const volatile bool alloc_kwalk = false;
/* No uprobe sessions: every allocation call takes a return probe. */
const volatile bool alloc_every_return = false;
/* Quantiles of Exp(alloc_rate) in bytes, mean exactly alloc_rate. */
const volatile __u64 alloc_draw[EP_ALLOC_DRAWS] = {};

/* Sampled allocations and frees of sampled blocks: at the default rate a
 * few thousand records per second for a target allocating 1 GB/s. 1 MiB
 * holds ~7,000 samples of 10 frames (~950 of full depth); the collector
 * drains every 10 ms. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} alloc_events SEC(".maps");

/* Python frames of a sampled allocation (bpf/pyframes.bpf.h), walked as a
 * CPU sample's are, with the CPU sampler's process and thread-state maps:
 * the record goes into this ring right before its sample, which the
 * collector pairs it with. Off (py_enabled) without --python or bpf_loop. */
#define PYFRAMES_RING  alloc_events
#define PY_WALK_STATIC 1
#include "pyframes.bpf.h"

/* (tgid, address) of every sampled block not yet freed. Sized by the
 * collector (--alloc-max-live); a full table is counted, not fatal. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_ALLOC_MAX_LIVE);
	__type(key, struct ep_alloc_key);
	__type(value, struct ep_alloc_block);
} alloc_live SEC(".maps");

/* The countdown and the call in flight, per thread: task storage is found
 * from the task pointer (no hash of the tid) and freed with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ep_alloc_thread);
} alloc_tls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_AST__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} alloc_stats SEC(".maps");

static __always_inline void stat_add(__u32 i, __u64 n)
{
	ep_count(&alloc_stats, i, n);
}

static __always_inline __s64 draw(void)
{
	__u32 i = bpf_get_prandom_u32() & (EP_ALLOC_DRAWS - 1);

	return (__s64)alloc_draw[i];
}

/* The entry of an allocation call of this kind. Returns whether its return
 * must be seen: sampled, or a realloc of a tracked block. */
static __always_inline bool on_entry(struct pt_regs *ctx, __u32 kind)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ep_alloc_thread *t;
	__u64 size = 0, old = 0, ptr = 0;

	switch (kind) {
	case EP_AK_MALLOC:
	case EP_AK_VALLOC:
		size = PT_REGS_PARM1(ctx);
		break;
	case EP_AK_CALLOC:
		size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
		break;
	case EP_AK_REALLOC:
		old = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx);
		break;
	case EP_AK_MEMALIGN:
		size = PT_REGS_PARM2(ctx);
		break;
	case EP_AK_POSIX_MEMALIGN:
		ptr = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM3(ctx);
		break;
	default:
		return false;
	}
	t = bpf_task_storage_get(&alloc_tls, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		stat_add(EP_AST_DROP_NO_THREAD, 1);
		return false;
	}
	if (!t->init) {
		t->countdown = draw();
		t->init = 1;
	}
	/* Where this call returns to: an mmap made below this frame while the
	 * return address is still there is the allocator's own (on_mmap_enter).
	 * The slot was just written by the call: the read does not fault. */
	t->alloc_sp = PT_REGS_SP(ctx);
	if (bpf_probe_read_user(&t->alloc_ra, sizeof(t->alloc_ra), (void *)t->alloc_sp))
		t->alloc_ra = 0;
	stat_add(EP_AST_CALLS, 1);
	stat_add(EP_AST_BYTES, size);
	if (t->pend_kind)
		stat_add(EP_AST_NESTED, 1);
	t->pend_kind = kind;
	t->pend_flags = 0;
	t->pend_size = size;
	t->pend_ptr = ptr;
	if (old) {
		struct ep_alloc_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .addr = old };

		if (bpf_map_lookup_elem(&alloc_live, &k)) {
			t->pend_old = old;
			t->pend_flags = EP_ALLOC_P_FREE_OLD;
		}
	}
	/* size is unsigned: a huge request (calloc overflow) samples. */
	if (size && (__s64)size >= t->countdown) {
		t->pend_flags |= EP_ALLOC_P_SAMPLE;
		t->countdown = draw();
	} else {
		t->countdown -= (__s64)size;
	}
	if (!t->pend_flags)
		t->pend_kind = 0;
	if (alloc_every_return || t->pend_flags)
		t->depth++;
	return t->pend_flags != 0;
}

SEC("uprobe")
int alloc_entry(struct pt_regs *ctx)
{
	on_entry(ctx, (__u32)bpf_get_attach_cookie(ctx));
	return 0;
}

static __always_inline void emit_free(__u32 tgid, __u64 addr)
{
	struct ep_alloc_key k = { .tgid = tgid, .addr = addr };
	struct ep_alloc_block *b = bpf_map_lookup_elem(&alloc_live, &k);
	struct ep_alloc_free *e;
	__u64 ts;

	if (!b)
		return;
	ts = b->ts_ns;
	/* A mapping whose head was unmapped is known by its first start. */
	if (b->addr0)
		addr = b->addr0;
	/* Only the one that deletes it reports it (two threads freeing the
	 * same block is the target's bug, not two frees). */
	if (bpf_map_delete_elem(&alloc_live, &k))
		return;
	stat_add(EP_AST_TRACKED_FREES, 1);
	e = bpf_ringbuf_reserve(&alloc_events, sizeof(*e), 0);
	if (!e) {
		stat_add(EP_AST_DROP_RINGBUF, 1);
		return;
	}
	e->hdr.type = EP_EV_FREE;
	e->hdr.pid = tgid;
	e->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = bpf_ktime_get_ns();
	e->addr = addr;
	e->alloc_ts_ns = ts;
	bpf_ringbuf_submit(e, 0);
}

SEC("uprobe")
int alloc_free(struct pt_regs *ctx)
{
	__u64 addr = PT_REGS_PARM1(ctx);

	stat_add(EP_AST_FREES, 1);
	if (addr)
		emit_free(bpf_get_current_pid_tgid() >> 32, addr);
	return 0;
}

/* A sample is built here and only its used frames go into the ring (a
 * stack of 10 frames is 130 bytes, not the 1 KiB of a full record): the
 * ring then holds ~7,000 samples, against bursts of a few hundred per
 * 10 ms drain period when a target allocates 100 MB/s at a small rate. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ep_alloc_event);
} alloc_scratch SEC(".maps");

/* The CFI walk's state: on the stack it would put the walk's deepest call
 * chain (through bpf_loop callbacks, which newer verifiers count) past the
 * 512-byte combined limit on kernels without a private BPF stack. Used as
 * alloc_scratch is: one program at a time per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_walk);
} alloc_walk_buf SEC(".maps");

/* ctx is the program's (for bpf_get_stack), regs (UW_NREGS, uwalk.h) the
 * user registers the walk starts from. loops: the kernel has bpf_loop (5.17+).
 * The walk's frame step (uw_frame) is a global function, and before 6.8 the
 * kernel verifies every global function a program holds, reached or not:
 * its bpf_loop refuses the program on 5.13-5.16 ("invalid func unknown#181",
 * Ubuntu 22.04's 5.15, JetPack 6) whatever alloc_kwalk says. So the walk is
 * built only into take_sample, and the programs without bpf_loop call
 * take_sample_noloop, which holds no walk at all. */
static __always_inline int sample(void *ctx, __u64 *regs, __u64 addr, __u64 size, __u32 kind,
				  const bool loops)
{
	__u64 id = bpf_get_current_pid_tgid(), t0 = bpf_ktime_get_ns();
	struct ep_alloc_key k = { .tgid = id >> 32, .addr = addr };
	struct ep_alloc_block b = { .size = size, .ts_ns = t0 };
	struct ep_alloc_event *e;
	bool tracked, walked;
	__u32 zero = 0, n = 0;
	long used;

	e = bpf_map_lookup_elem(&alloc_scratch, &zero);
	if (!e)
		return 0;
	e->hdr.type = EP_EV_ALLOC;
	e->hdr.pid = id >> 32;
	e->hdr.tid = (__u32)id;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = t0;
	e->addr = addr;
	e->size = size;
	e->kind = kind;
	e->flags = 0;
	e->_pad = 0;
#if defined(__TARGET_ARCH_x86)
	if (loops && alloc_kwalk) {
		struct uw_walk *w = bpf_map_lookup_elem(&alloc_walk_buf, &zero);

		if (w)
			n = uw_walk_user(bpf_get_current_task_btf(), id >> 32, regs, w);
	}
#endif
	e->ustack_sz = uw_frames_or_fp(ctx, n, e->ips, sizeof(e->ips), NULL, &walked);
	if (walked)
		e->flags |= EP_ALLOC_F_KWALK;
	used = e->ustack_sz;
	if (used < 0)
		used = 0;
	if (used > (long)sizeof(e->ips))
		used = sizeof(e->ips);
	/* Every sampled entry point comes here: its Python callers go first. */
	pyframes_emit(&e->hdr);
	tracked = !bpf_map_update_elem(&alloc_live, &k, &b, BPF_ANY);
	if (!tracked)
		e->flags |= EP_ALLOC_F_UNTRACKED;
	if (bpf_ringbuf_output(&alloc_events, e, sizeof(*e) - sizeof(e->ips) + used, 0)) {
		/* Never seen by the collector: its free must not be either. */
		if (tracked)
			bpf_map_delete_elem(&alloc_live, &k);
		stat_add(EP_AST_DROP_RINGBUF, 1);
		return 0;
	}
	if (!tracked)
		stat_add(EP_AST_DROP_LIVE_FULL, 1);
	if (e->ustack_sz <= 0)
		stat_add(EP_AST_STACK_ERR, 1);
	stat_add(EP_AST_SAMPLED, 1);
	stat_add(EP_AST_SAMPLE_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/* Out of line: only sampled calls come here. */
static __noinline int take_sample(void *ctx, __u64 *regs, __u64 addr, __u64 size, __u32 kind)
{
	return sample(ctx, regs, addr, size, kind, true);
}

static __noinline int take_sample_noloop(void *ctx, __u64 *regs, __u64 addr, __u64 size, __u32 kind)
{
	return sample(ctx, regs, addr, size, kind, false);
}

static __always_inline void on_return(struct pt_regs *ctx, const bool loops)
{
	struct ep_alloc_thread *t =
		bpf_task_storage_get(&alloc_tls, bpf_get_current_task_btf(), NULL, 0);
	__u64 addr = PT_REGS_RC(ctx), size;
	__u32 kind, flags;

	if (t && t->depth)
		t->depth--;
	if (!t || !t->pend_kind)
		return;
	kind = t->pend_kind;
	flags = t->pend_flags;
	size = t->pend_size;
	t->pend_kind = 0;
	if (kind == EP_AK_POSIX_MEMALIGN) {
		/* Returns 0 or an error number; the block is in *ptr. */
		if (addr || !t->pend_ptr ||
		    bpf_probe_read_user(&addr, sizeof(addr), (void *)t->pend_ptr))
			addr = 0;
	}
	/* realloc: the old block is gone when a new one came back, or when
	 * it was freed by a size of 0; a failed realloc keeps it. */
	if ((flags & EP_ALLOC_P_FREE_OLD) && (addr || !size))
		emit_free(bpf_get_current_pid_tgid() >> 32, t->pend_old);
	if ((flags & EP_ALLOC_P_SAMPLE) && addr) {
		__u64 regs[UW_NREGS] = {};

		/* At the return probe the registers are the caller's, just
		 * after the call: the walk starts in the allocating function. */
		regs[EP_UREG_IP] = PT_REGS_IP(ctx);
		regs[EP_UREG_SP] = PT_REGS_SP(ctx);
		regs[EP_UREG_FP] = PT_REGS_FP(ctx);
		if (loops)
			take_sample(ctx, regs, addr, size, kind);
		else
			take_sample_noloop(ctx, regs, addr, size, kind);
	}
}

SEC("uretprobe")
int alloc_ret(struct pt_regs *ctx)
{
	on_return(ctx, true);
	return 0;
}

/* Loaded instead of alloc_ret on kernels without bpf_loop (5.17+). */
SEC("uretprobe")
int alloc_ret_noloop(struct pt_regs *ctx)
{
	on_return(ctx, false);
	return 0;
}

/* One program for the entry and the return (kernel 6.13+, attached by the
 * collector as BPF_TRACE_UPROBE_SESSION): a call that is not sampled asks
 * for no return probe, so it pays one trap instead of two. */
SEC("uprobe")
int alloc_session(struct pt_regs *ctx)
{
	/* Uprobe sessions (6.13+) come after bpf_loop (5.17). */
	if (ep_session_is_return(ctx)) {
		on_return(ctx, true);
		return 0;
	}
	return on_entry(ctx, (__u32)bpf_get_attach_cookie(ctx)) ? 0 : 1;
}

/* ---- anonymous mappings made by the program (docs/alloc.md) ---- */

#define EP_PROT_NONE	   0
#define EP_MAP_SHARED_MASK 0x03 /* MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE */
#define EP_MAP_PRIVATE	   0x02
#define EP_MAP_FIXED	   0x10
#define EP_MAP_ANONYMOUS   0x20
#define EP_MAP_STACK	   0x20000
#define EP_PAGE		   4096ull

/* Whether the thread is inside a probed allocator call: its last entry's
 * frame is still on the stack (sp below it, its return address in place).
 * Without a return probe on every call this is what can be known; a call
 * site that called malloc and then, from the same instruction, mmap would
 * be taken for the allocator (a function pointer, not seen in practice). */
static __always_inline bool in_allocator(struct ep_alloc_thread *t, __u64 sp)
{
	__u64 ra;

	/* A call whose return is awaited: the kernel has replaced its return
	 * address by its trampoline, and the return probe says when it ends. */
	if (t->depth)
		return true;
	if (!t->alloc_sp || sp >= t->alloc_sp)
		return false;
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)t->alloc_sp))
		return false;
	return ra == t->alloc_ra;
}

/* mmap(addr, len, prot, flags, fd, off): sampled by bytes with the same
 * countdown as the allocator's calls, so each sample gets the same weight
 * (1 - exp(-len/rate)); a mapping of several times the rate is always
 * sampled. Shared, file-backed, MAP_FIXED (it replaces part of a mapping
 * already there), PROT_NONE (address space reserved, no memory) and thread
 * stacks are not allocations of this kind. */
SEC("tracepoint/syscalls/sys_enter_mmap")
int alloc_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 len = ctx->args[1], prot = ctx->args[2], flags = ctx->args[3];
	struct ep_alloc_thread *t;
	struct pt_regs *regs;

	if ((flags & EP_MAP_SHARED_MASK) != EP_MAP_PRIVATE || !(flags & EP_MAP_ANONYMOUS) ||
	    (flags & (EP_MAP_FIXED | EP_MAP_STACK)) || prot == EP_PROT_NONE || !len)
		return 0;
	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	t = bpf_task_storage_get(&alloc_tls, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		stat_add(EP_AST_DROP_NO_THREAD, 1);
		return 0;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (in_allocator(t, PT_REGS_SP_CORE(regs))) {
		stat_add(EP_AST_MMAP_IN_ALLOC, 1);
		return 0;
	}
	if (!t->init) {
		t->countdown = draw();
		t->init = 1;
	}
	len = (len + EP_PAGE - 1) & ~(EP_PAGE - 1);
	stat_add(EP_AST_MMAPS, 1);
	stat_add(EP_AST_MMAP_BYTES, len);
	t->mmap_len = len;
	if ((__s64)len >= t->countdown) {
		t->mmap_sample = 1;
		t->countdown = draw();
	} else {
		t->mmap_sample = 0;
		t->countdown -= (__s64)len;
	}
	return 0;
}

static __always_inline int mmap_exit(struct trace_event_raw_sys_exit *ctx, const bool loops)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ep_alloc_thread *t = bpf_task_storage_get(&alloc_tls, task, NULL, 0);
	__u64 ur[UW_NREGS] = {};
	struct pt_regs *regs;

	if (!t || !t->mmap_sample)
		return 0;
	t->mmap_sample = 0;
	if (ctx->ret < 0 && ctx->ret > -4096)
		return 0;
	/* The walk starts in the syscall's wrapper (libc's mmap); the
	 * collector drops it from the stack. */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	ur[EP_UREG_IP] = PT_REGS_IP_CORE(regs);
	ur[EP_UREG_SP] = PT_REGS_SP_CORE(regs);
	ur[EP_UREG_FP] = PT_REGS_FP_CORE(regs);
	if (loops)
		take_sample(ctx, ur, (__u64)ctx->ret, t->mmap_len, EP_AK_MMAP);
	else
		take_sample_noloop(ctx, ur, (__u64)ctx->ret, t->mmap_len, EP_AK_MMAP);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int alloc_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	return mmap_exit(ctx, true);
}

/* Loaded instead of alloc_mmap_exit on kernels without bpf_loop (5.17+). */
SEC("tracepoint/syscalls/sys_exit_mmap")
int alloc_mmap_exit_noloop(struct trace_event_raw_sys_exit *ctx)
{
	return mmap_exit(ctx, false);
}

/* munmap(addr, len) of a tracked mapping, matched by its start: the whole
 * of it ends it; its head only (trimming a mapping made larger to align
 * it) moves its start, and the mapping stays counted whole until the rest
 * goes. A munmap starting inside or before a tracked mapping is not matched
 * (docs/alloc.md, "Limits"). */
SEC("tracepoint/syscalls/sys_enter_munmap")
int alloc_munmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 addr = ctx->args[0], len = (ctx->args[1] + EP_PAGE - 1) & ~(EP_PAGE - 1);
	struct ep_alloc_key k = { .tgid = tgid, .addr = addr };
	struct ep_alloc_block *b, nb;

	b = bpf_map_lookup_elem(&alloc_live, &k);
	if (!b)
		return 0;
	if (len >= b->size) {
		emit_free(tgid, addr);
		return 0;
	}
	nb.size = b->size - len;
	nb.ts_ns = b->ts_ns;
	nb.addr0 = b->addr0 ? b->addr0 : addr;
	k.addr = addr + len;
	if (bpf_map_update_elem(&alloc_live, &k, &nb, BPF_NOEXIST))
		return 0;
	k.addr = addr;
	bpf_map_delete_elem(&alloc_live, &k);
	stat_add(EP_AST_MUNMAP_PART, 1);
	return 0;
}
