// SPDX-License-Identifier: Dual BSD/GPL
/*
 * CPU sampling: a perf-event program fires on every CPU at the requested
 * frequency; samples from traced processes go to the collector through one
 * ring buffer. Fork and exit of traced processes are reported on the same
 * ring so the collector sees them in order with the samples.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events/profile.h"
#include "events/unwind.h"
#include "counters.h"
#include "targets.h"
#include "walk.h"

char LICENSE[] __weak SEC("license") = "Dual BSD/GPL";

/* Set by the collector before load; the verifier prunes the dead branch. */
const volatile bool capture_kernel = true;
/* Ring fill (bytes) above which a submit wakes the collector early. Below it
 * no wakeup is sent and the collector drains on its own timer: a wakeup per
 * sample costs the profiled thread 1.5-2.4 us here. */
const volatile __u64 wakeup_watermark = 2 << 20;
/* Bytes of user stack copied per sample for CFI unwinding in the collector
 * (--stack-bytes, a multiple of EP_STACK_CHUNK); 0 in frame-pointer mode. */
const volatile __u32 stack_bytes = 0;

/* --unwind cfi-kernel: user stacks walked here from CFI tables (uwalk.h)
 * instead of bpf_get_stack plus a window copy. */
const volatile bool kwalk = false;

/* Resized by the collector before load (sampler.c: ring_bytes) to half a
 * second of samples from every CPU; this is only the fallback. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");
#define EP_DROPS drops /* count_drop (counters.h) */

static __always_inline __u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_watermark)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/* The context only allows full 8-byte loads; cs shares its slot with
	 * padding (and FRED bits on new kernels), the privilege level is in
	 * the low two bits either way. Read at its fixed offset (slot 17 of
	 * pt_regs, as the entry code pushes it on every kernel), not through
	 * a CO-RE relocation: vmlinux.h declares cs as FRED kernels (6.9+) do,
	 * a u16 in a union, and libbpf refuses the 8-byte load of a 2-byte
	 * field on the kernels whose cs is an unsigned long (5.10, 6.1 failed
	 * to load the sampler). */
	_Static_assert(__builtin_offsetof(struct bpf_perf_event_data, regs.cs) == 17 * 8,
		       "x86-64 pt_regs: cs in slot 17");
	return (*(volatile __u64 *)((void *)ctx + 17 * 8) & 3) != 0;
#elif defined(__TARGET_ARCH_arm64)
	return (*(volatile __u64 *)&ctx->regs.pstate & 0xf) == 0; /* PSR_MODE_EL0t */
#else
	return false;
#endif
}

/* Samples are assembled here, then only the used bytes are copied into the
 * ring: one small copy is cheaper than pinning 2 KiB of ring per sample,
 * and the ring (and the collector's resident memory) shrinks tenfold. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ep_sample);
} scratch SEC(".maps");

/* The user registers at the moment of the sample (UW_NREGS of them): the
 * interrupted ones when the tick hit user mode, else those saved at the
 * last kernel entry (the user state the kernel will return to). */
/* Set by the collector when the kernel has bpf_task_pt_regs (5.15+).
 * Without it the user registers of a sample taken in the kernel are read
 * where task_pt_regs() has them: task->stack + THREAD_SIZE - sizeof(struct
 * pt_regs), THREAD_SIZE 16 KiB on x86_64 and on arm64 with 4 KiB pages,
 * both without KASAN (sched.bpf.c does the same; docs/jetson.md). */
const volatile bool have_task_pt_regs = false;
const volatile __u32 thread_size = 16384;

static __always_inline struct pt_regs *current_user_regs(void)
{
	struct task_struct *task;
	void *stack;

	if (have_task_pt_regs)
		return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	task = (struct task_struct *)bpf_get_current_task();
	stack = BPF_CORE_READ(task, stack);
	if (!stack)
		return NULL;
	return (struct pt_regs *)(stack + thread_size - bpf_core_type_size(struct pt_regs));
}

static __always_inline bool read_uregs(struct bpf_perf_event_data *ctx, bool user_mode, __u64 *regs)
{
	struct pt_regs *r;

#if defined(__TARGET_ARCH_x86)
	if (user_mode) {
		regs[EP_UREG_IP] = *(volatile __u64 *)&ctx->regs.ip;
		regs[EP_UREG_SP] = *(volatile __u64 *)&ctx->regs.sp;
		regs[EP_UREG_FP] = *(volatile __u64 *)&ctx->regs.bp;
		regs[UW_REG_LR] = 0;
		return true;
	}
	r = current_user_regs();
	if (!r)
		return false;
	uw_regs_from_pt(r, regs);
	/* In an int3 trap (a uprobe being handled: orig_ax -1 marks an
	 * exception without error code) ip is past the breakpoint; unwinding
	 * from there applies the rules of the probed instruction as if it had
	 * run (a 1-byte push at a function's entry moves the CFA). */
	if ((long)BPF_CORE_READ(r, orig_ax) == -1 && regs[EP_UREG_IP]) {
		__u8 op = 0;

		if (!bpf_probe_read_user(&op, 1, (void *)(regs[EP_UREG_IP] - 1)) && op == 0xcc)
			regs[EP_UREG_IP] -= 1;
	}
	return regs[EP_UREG_SP] != 0;
#elif defined(__TARGET_ARCH_arm64)
	/* A uprobe's brk leaves pc at the breakpoint itself: nothing to
	 * undo, unlike x86_64's int3. */
	if (user_mode) {
		regs[EP_UREG_IP] = *(volatile __u64 *)&ctx->regs.pc;
		regs[EP_UREG_SP] = *(volatile __u64 *)&ctx->regs.sp;
		regs[EP_UREG_FP] = *(volatile __u64 *)&ctx->regs.regs[29];
		regs[UW_REG_LR] = *(volatile __u64 *)&ctx->regs.regs[30];
		return true;
	}
	r = current_user_regs();
	if (!r)
		return false;
	uw_regs_from_pt(r, regs);
	return regs[EP_UREG_SP] != 0;
#else
	return false;
#endif
}

/* Thread -> the stack mapping its sp was last found in, so the window can
 * stop at the mapping's end without faulting. Sized for the threads of the
 * targets at once; an evicted thread only pays one more lookup. */
struct stack_vma {
	__u64 start, end;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct stack_vma);
} stack_vmas SEC(".maps");

/* Set by the collector when the kernel has bpf_find_vma (5.17+); the
 * verifier drops the lookup on older kernels and the chunked copy alone
 * finds the end, faulting. */
const volatile bool have_find_vma = false;

static long vma_bounds(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct stack_vma *v = ctx;

	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/* Bytes readable from sp to the end of its mapping, or ~0 when unknown. */
static __always_inline __u64 stack_room(__u32 tid, __u64 sp, const bool loops)
{
	struct stack_vma *c, v = {};

	/* loops: bpf_find_vma's callback is refused like bpf_loop's (cpu_sample). */
	if (!loops || !have_find_vma)
		return ~0ull;
	c = bpf_map_lookup_elem(&stack_vmas, &tid);
	if (c && sp >= c->start && sp < c->end)
		return c->end - sp;
	/* Only the first sample of a thread (or one after its stack moved)
	 * looks the mapping up: with interrupts off, as here, the kernel
	 * releases the mmap lock through an irq_work, one more interrupt. */
	if (bpf_find_vma(bpf_get_current_task_btf(), sp, vma_bounds, &v, 0) || sp < v.start ||
	    sp >= v.end)
		return ~0ull;
	bpf_map_update_elem(&stack_vmas, &tid, &v, BPF_ANY);
	return v.end - sp;
}

/* Copies up to stack_bytes of user stack from sp upward to dst (which has
 * room for EP_MAX_STACK_BYTES), stopping at limit bytes (the end of the mapping)
 * when known. Returns the bytes copied: the readable prefix, to
 * EP_STACK_SUBCHUNK precision when the window crosses the stack's end. */
static __always_inline __u32 copy_ustack(void *dst, __u64 sp, __u64 limit)
{
	__u32 n = 0, want = stack_bytes;

	if (want > EP_MAX_STACK_BYTES)
		want = EP_MAX_STACK_BYTES;
	/* Where the stack mapping ends is known: one read of what is there,
	 * with no fault at the end (a fault costs about a microsecond here,
	 * and the chunked reads below take two at a window that crosses the
	 * end, as most worker threads' windows do). */
	if (limit != ~0ull) {
		__u32 len = limit < want ? limit : want;

		if (len && !bpf_probe_read_user(dst, len, (void *)sp))
			return len;
	}
	for (int i = 0; i < EP_MAX_STACK_BYTES / EP_STACK_CHUNK; i++) {
		/* Spelled out for the verifier: dst has room for n + a chunk. */
		if (n > EP_MAX_STACK_BYTES - EP_STACK_CHUNK || n + EP_STACK_CHUNK > want)
			break;
		if (bpf_probe_read_user(dst + n, EP_STACK_CHUNK, (void *)(sp + n)))
			break;
		n += EP_STACK_CHUNK;
	}
	/* The rest of a window that is not a multiple of the chunk, or the
	 * readable part of the chunk that crossed the stack's end. */
	for (int j = 0; j < EP_STACK_CHUNK / EP_STACK_SUBCHUNK; j++) {
		if (n > EP_MAX_STACK_BYTES - EP_STACK_SUBCHUNK || n + EP_STACK_SUBCHUNK > want)
			break;
		if (bpf_probe_read_user(dst + n, EP_STACK_SUBCHUNK, (void *)(sp + n)))
			break;
		n += EP_STACK_SUBCHUNK;
	}
	return n;
}

/* Uretprobes (ours: the default llama.cpp and SQLite probes, or anyone's)
 * replace a probed function's return address on the user stack with the
 * address of the kernel's uprobe trampoline until the function returns. An
 * unwinder reading the stack sees that address, outside every mapping, and
 * stops there: every sample inside a probed function lost its callers. The
 * kernel keeps the original per hijacked slot in the thread's
 * return_instances (newest first; orig_ret_vaddr is already the real one
 * for chained entries); put them back in the copied window (a thread in
 * the trampoline itself: fix_uprobe_regs). */
#define EP_URETPROBE_FIX_MAX 32 /* the kernel nests at most 64; deeper ones lie far above sp */

struct uretfix_ctx {
	struct return_instance *ri;
	__u64 tramp, sp;
	__u32 win_off, len;
};

/* One return instance per call: a bpf_loop callback is verified once, where
 * an unrolled loop multiplied by the window copy's paths exceeds the
 * verifier's budget. */
static long uretfix_step(__u32 i, struct uretfix_ctx *c)
{
	__u32 zero = 0;
	struct ep_sample *s = bpf_map_lookup_elem(&scratch, &zero);
	struct return_instance *ri = c->ri;
	__u64 slot, off;

	if (!s || !ri)
		return 1;
	slot = BPF_CORE_READ(ri, stack);
	if (slot >= c->sp + c->len)
		return 1; /* newest first: the rest lie above the window */
	off = slot - c->sp;
	if (slot >= c->sp && off + 8 <= c->len && off <= EP_MAX_STACK_BYTES - 8 &&
	    c->win_off <= 2 * EP_MAX_STACK_DEPTH * 8) {
		__u64 *p = (void *)s->stack + c->win_off + off;

		if (*p == c->tramp) {
			*p = BPF_CORE_READ(ri, orig_ret_vaddr);
			s->flags |= EP_SAMPLE_F_URETPROBE_FIXED;
		}
	}
	c->ri = BPF_CORE_READ(ri, next);
	return 0;
}

/* Set by the collector when the kernel has bpf_loop (5.17+). */
const volatile bool have_bpf_loop = false;

static __always_inline void fix_uretprobes(struct ep_sample *s, __u32 win_off, __u32 len)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct uretfix_ctx c = { .sp = s->uregs[EP_UREG_SP], .win_off = win_off, .len = len };
	struct return_instance *ri;

	if (!have_bpf_loop || !bpf_core_field_exists(task->utask))
		return;
	ri = BPF_CORE_READ(task, utask, return_instances);
	if (!ri)
		return;
	c.ri = ri;
	c.tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	if (!c.tramp)
		return;
	bpf_loop(EP_URETPROBE_FIX_MAX, uretfix_step, &c, 0);
}

/* The walker's own time (bpf_ktime_get_ns around it), walks and frames,
 * per CPU: its cost per sample in report.json, apart from the program's
 * other work and from other tasks' ticks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} uw_stats SEC(".maps");

static __always_inline void uw_stat_add(__u32 k, __u64 v)
{
	ep_count(&uw_stats, k, v);
}

/* The user stack walked in the kernel (uwalk.h) into the sample after its
 * kbytes of kernel frames: only addresses travel, no stack window. */
static __always_inline void kwalk_user(struct bpf_perf_event_data *ctx, struct ep_sample *s,
				       bool user_mode, long kbytes)
{
	struct uw_walk w = {};
	__u64 regs[UW_NREGS];
	__u32 n;
	__u64 t0;

	s->ustack_copy = 0;
	s->ustack_sz = 0;
	s->flags |= EP_SAMPLE_F_KWALK;
	if (!read_uregs(ctx, user_mode, regs)) {
		count_drop(EP_DROP_UREGS_ERR);
		s->flags |= EP_UW_END_NO_REGS << EP_SAMPLE_UW_END_SHIFT;
		return;
	}
	s->flags |= EP_SAMPLE_F_UREGS;
	s->uregs[EP_UREG_IP] = regs[EP_UREG_IP];
	s->uregs[EP_UREG_SP] = regs[EP_UREG_SP];
	s->uregs[EP_UREG_FP] = regs[EP_UREG_FP];
	t0 = bpf_ktime_get_ns();
	n = uw_walk_user(bpf_get_current_task_btf(), s->hdr.pid, regs, &w);
	uw_stat_add(0, bpf_ktime_get_ns() - t0);
	uw_stat_add(1, 1);
	uw_stat_add(2, n);
	s->flags |= (w.end & 0xff) << EP_SAMPLE_UW_END_SHIFT;
	if (w.fixed)
		s->flags |= EP_SAMPLE_F_URETPROBE_FIXED;
	if (kbytes < 0 || kbytes > EP_MAX_STACK_DEPTH * 8)
		return;
	s->ustack_sz = uw_copy_frames((void *)s->stack + kbytes, n, EP_UW_MAX_FRAMES * 8, NULL);
}

/* A thread stopped inside the uprobes page (the xol area) is either in the
 * uretprobe trampoline (its first slot: returning from a probed function
 * through the uretprobe syscall) or single-stepping a probed instruction
 * copied to a later slot. Neither address is in any mapping the collector
 * can unwind from; move the registers to where the code logically is:
 * the trampoline to the original return address with sp just above the
 * hijacked slot (the trampoline pushes registers before its syscall), a
 * single-step slot to the same offset from the probed instruction (what
 * the kernel does after the step). Before the window is copied: the copy
 * starts at sp. */
#define EP_XOL_TRAMP_BYTES 128 /* UPROBE_XOL_SLOT_BYTES: slot 0 is the trampoline */
#define EP_XOL_AREA_BYTES  4096
#define EP_X86_MAX_INSN	   15

static __always_inline void fix_uprobe_regs(struct ep_sample *s)
{
	/* CO-RE reads only: bpf_get_current_task_btf is 5.11+. */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 ip = s->uregs[EP_UREG_IP], area, xol;
	struct return_instance *ri;

	if (!bpf_core_field_exists(task->utask))
		return;
	area = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	if (!area || ip < area || ip >= area + EP_XOL_AREA_BYTES)
		return;
	if (ip < area + EP_XOL_TRAMP_BYTES) {
		ri = BPF_CORE_READ(task, utask, return_instances);
		if (!ri)
			return;
		__u64 slot = BPF_CORE_READ(ri, stack);

		if (slot + 8 < s->uregs[EP_UREG_SP] || slot > s->uregs[EP_UREG_SP] + 256)
			return; /* not the instance this return is going through */
		s->uregs[EP_UREG_IP] = BPF_CORE_READ(ri, orig_ret_vaddr);
		s->uregs[EP_UREG_SP] = slot + 8;
		s->flags |= EP_SAMPLE_F_URETPROBE_FIXED;
		return;
	}
	xol = BPF_CORE_READ(task, utask, xol_vaddr);
	if (xol && ip >= xol && ip - xol <= EP_X86_MAX_INSN)
		s->uregs[EP_UREG_IP] = BPF_CORE_READ(task, utask, vaddr) + (ip - xol);
}

#define PYFRAMES_RING events
#include "pyframes.bpf.h"

/* loops: the kernel has bpf_loop. A program that only refers to a bpf_loop
 * callback, on a branch the verifier would drop, is still refused before
 * 5.13 (its func_info counts the callback, the kernel's subprograms do
 * not), so kernels without bpf_loop get the program built with loops false:
 * no callback in it at all. */
static __always_inline int cpu_sample(struct bpf_perf_event_data *ctx, const bool loops)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct ep_sample *s;
	bool user_mode;
	long kbytes = 0, ubytes, size = 0;

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	user_mode = in_user_mode(ctx);
	s->hdr.type = EP_EV_SAMPLE;
	s->hdr.pid = tgid;
	s->hdr.tid = (__u32)id;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts_ns = bpf_ktime_get_ns();
	s->flags = user_mode ? EP_SAMPLE_F_USER_MODE : 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	/* A sample taken in user mode has no kernel part; asking anyway would
	 * only return the interrupt path. */
	s->kstack_sz = 0;
	if (capture_kernel && !user_mode) {
		s->kstack_sz = bpf_get_stack(ctx, s->stack, EP_MAX_STACK_DEPTH * 8, 0);
		if (s->kstack_sz < 0)
			count_drop(EP_DROP_KERN_STACK_ERR);
		else
			kbytes = s->kstack_sz;
	}
	if (kbytes < 0 || kbytes > EP_MAX_STACK_DEPTH * 8)
		kbytes = 0;
	kbytes &= ~7L;
	if (loops && kwalk) {
		kwalk_user(ctx, s, user_mode, kbytes);
		goto out;
	}
	s->ustack_sz = bpf_get_stack(ctx, (void *)s->stack + kbytes, EP_MAX_STACK_DEPTH * 8,
				     BPF_F_USER_STACK);
	ubytes = s->ustack_sz;
	if (ubytes < 0) {
		count_drop(EP_DROP_USER_STACK_ERR);
		ubytes = 0;
	}
	if (ubytes > EP_MAX_STACK_DEPTH * 8)
		ubytes = EP_MAX_STACK_DEPTH * 8;
	s->ustack_copy = 0;
	s->uregs[EP_UREG_IP] = s->uregs[EP_UREG_SP] = s->uregs[EP_UREG_FP] = 0;
	if (stack_bytes) {
		long off = (kbytes + ubytes) & ~7L;

		__u64 ur[UW_NREGS];

		if (!read_uregs(ctx, user_mode, ur)) {
			count_drop(EP_DROP_UREGS_ERR);
		} else {
			s->uregs[EP_UREG_IP] = ur[EP_UREG_IP];
			s->uregs[EP_UREG_SP] = ur[EP_UREG_SP];
			s->uregs[EP_UREG_FP] = ur[EP_UREG_FP];
			s->flags |= EP_SAMPLE_F_UREGS;
			fix_uprobe_regs(s);
			if (off > 2 * EP_MAX_STACK_DEPTH * 8)
				off = 2 * EP_MAX_STACK_DEPTH * 8;
			s->ustack_copy =
				copy_ustack((void *)s->stack + off, s->uregs[EP_UREG_SP],
					    stack_room((__u32)id, s->uregs[EP_UREG_SP], loops));
			/* Even the first 64 bytes at sp unreadable: bogus sp. */
			if (!s->ustack_copy)
				count_drop(EP_DROP_USTACK_COPY_ERR);
			else if (loops)
				fix_uretprobes(s, off, s->ustack_copy);
		}
	}
	size = EP_SAMPLE_HDR_SIZE + kbytes + ubytes + s->ustack_copy;
out:
	if (loops && kwalk)
		size = EP_SAMPLE_HDR_SIZE + kbytes + (s->ustack_sz > 0 ? s->ustack_sz : 0);
	if (size > sizeof(*s))
		size = sizeof(*s);
	if (loops)
		pyframes_emit(&s->hdr); /* its record goes first: the collector pairs them */
	if (bpf_ringbuf_output(&events, s, size, submit_flags()))
		count_drop(EP_DROP_RINGBUF_FULL);
	return 0;
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	return cpu_sample(ctx, true);
}

/* Loaded instead of on_cpu_sample on kernels without bpf_loop (5.17+). */
SEC("perf_event")
int on_cpu_sample_noloop(struct bpf_perf_event_data *ctx)
{
	return cpu_sample(ctx, false);
}

static __always_inline void emit_task_event(__u32 type, struct task_struct *task, __u32 parent,
					    __s32 exit_code)
{
	struct ep_task_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(EP_DROP_EVENT_RINGBUF_FULL);
		return;
	}
	e->hdr.type = type;
	e->hdr.pid = BPF_CORE_READ(task, tgid);
	e->hdr.tid = BPF_CORE_READ(task, pid);
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = bpf_ktime_get_ns();
	e->parent_pid = parent;
	e->exit_code = exit_code;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	/* Lifecycle events are rare and the collector acts on them (stop when
	 * all targets are gone), so do not leave them waiting for the timer. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* The task lifecycle tracepoints, each twice: tp_btf where the kernel has
 * its own BTF, raw_tp where it has not (a kernel built without BTF, run
 * with --btf FILE: libbpf cannot resolve a tp_btf attach point from that
 * file, and the kernel refuses tp_btf programs anyway). The sampler loads
 * one of each pair (kfeat.h). The bodies read the task with CO-RE probe
 * reads, which both kinds allow, so the pair shares one body. */
static __always_inline int task_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	/* A new thread shares its tgid and is already covered. */
	if (ptgid == ctgid || !bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	if (bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&targets, &ctgid)) {
		count_drop(EP_DROP_TARGET_MAP_FULL);
		return 0;
	}
	emit_task_event(EP_EV_FORK, child, ptgid, 0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	return task_fork(parent, child);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork_raw, struct task_struct *parent, struct task_struct *child)
{
	return task_fork(parent, child);
}

/* After exec every address means something else: the collector must drop
 * what it knows of the old image before symbolizing the next sample. */
static __always_inline int task_exec(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	emit_task_event(EP_EV_EXEC, task, 0, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task)
{
	return task_exec(task);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec_raw, struct task_struct *task)
{
	return task_exec(task);
}

/* Loaded only with kwalk (sampler.c): a dlopen'ed library's code gets its
 * tables before most of its samples are walked without them. The syscall
 * tracepoints, not fexit on the kernel's mmap: function tracing is not
 * available everywhere (lockdown). tid -> an executable file mapping is
 * being made. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} mmap_exec_tids SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u8 one = 1;

	/* mmap(addr, len, prot, flags, fd, off): PROT_EXEC of a file. */
	if (!(ctx->args[2] & 4) || (long)ctx->args[4] < 0 || !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	bpf_map_update_elem(&mmap_exec_tids, &tid, &one, BPF_ANY);
	return 0;
}

/* Executable mappings made by traced processes so far (read by the
 * collector through the mmap'ed .bss). */
__u64 mmap_exec_gen = 0;

SEC("tracepoint/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!bpf_map_lookup_elem(&mmap_exec_tids, &tid))
		return 0;
	bpf_map_delete_elem(&mmap_exec_tids, &tid);
	if (ctx->ret < 0 && ctx->ret > -4096)
		return 0;
	/* Before the event: a stack taken after this mapping, drained from
	 * another ring before the event is, sees the count moved and makes
	 * the symbolizer re-read the maps (user/symbolize: mmap_gen). */
	__sync_fetch_and_add(&mmap_exec_gen, 1);
	emit_task_event(EP_EV_MMAP_EXEC, (struct task_struct *)bpf_get_current_task(), 0, 0);
	return 0;
}

static __always_inline int task_exit(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	/* do_exit() decrements signal->live before this tracepoint: zero means
	 * this was the last thread of the process. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	emit_task_event(EP_EV_EXIT, task, 0, BPF_CORE_READ(task, exit_code));
	bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	return task_exit(task);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit_raw, struct task_struct *task)
{
	return task_exit(task);
}
