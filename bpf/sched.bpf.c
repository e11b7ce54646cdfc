// SPDX-License-Identifier: Dual BSD/GPL
/*
 * Scheduler view of the traced processes: per-thread on-CPU time, off-CPU
 * time by reason, context switches and run-queue latency, all accumulated
 * here (bpf/sched_acct.h) so nothing is streamed per switch. Only off-CPU
 * episodes of at least offcpu_min_ns go to the collector, with their
 * stacks: the user stack is taken at the blocking switch-out (the only
 * moment it can be read: a user stack cannot be read across tasks) into a
 * per-thread slot; the kernel stack is read at the switch-in from the
 * sleeping task, which is still parked in __schedule, so the kernel unwind
 * is paid only for episodes that are reported.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events/sched.h"
#include "counters.h"
#include "targets.h"
#include "sched_acct.h"
#include "walk.h"

char LICENSE[] __weak SEC("license") = "Dual BSD/GPL";

#define EP_ENOENT 2 /* errno values; vmlinux.h has no <errno.h> */
#define EP_EFAULT 14

/* Set by the collector before load. */
const volatile __u64 offcpu_min_ns = 1000000;
const volatile bool capture_stacks = true;
/* The kernel stack of an episode is the sleeping task's, read at its
 * switch-in with bpf_get_task_stack, which takes a BTF-typed task: off on
 * kernels without BTF (the raw_tp programs). */
const volatile bool sched_capture_kernel = true;
/* --unwind cfi-kernel: user stacks at switch-out walked with CFI tables
 * (uwalk.h, maps shared with the CPU sampler) instead of frame pointers. */
const volatile bool sched_kwalk = false;
/* Ring fill (bytes) above which a submit wakes the collector early; below
 * it the collector drains on its 10 ms timer (a wakeup per event would cost
 * the traced thread more than the accounting itself). A quarter ring. */
const volatile __u64 sched_wakeup_watermark = 64 << 10;
/* Off-CPU user stacks are walked at a blocking switch-out only where a long
 * episode is predicted, and taken again without a walk where the thread
 * blocks exactly where its last walked stack was taken (ep_ustack_plan in
 * sched_acct.h). A walk costs ~1 us here; a switch-heavy thread whose waits
 * are short pays for none. N > 0 adds one walk in N blocking switch-outs
 * (--offcpu-ustack-every). */
const volatile __u8 ustack_sample_every = 0;
/* Kernels before 5.13 (JetPack 5's 5.10) have no task storage for tracing
 * programs: the state then lives in `sched_threads` by tid (a hash lookup
 * per switched task), and `sched_tls` is not created. Before 5.15 there is
 * no bpf_task_pt_regs: the blocked task's user registers are read where
 * the kernel keeps them, at the top of its kernel stack (task_pt_regs():
 * task->stack + THREAD_SIZE - sizeof(struct pt_regs), arm64's and x86_64's
 * asm/processor.h; THREAD_SIZE is 16 KiB on both with 4 KiB pages and no
 * KASAN, arch/arm64/include/asm/memory.h, arch/x86/include/asm/page_64_types.h).
 * Set by the collector. */
const volatile bool sched_task_storage = true;
const volatile bool sched_task_pt_regs = true;
const volatile __u32 sched_thread_size = 16384;

/* Zeroed template for new sched_ustacks entries: larger than the 512-byte BPF
 * stack. */
const struct ep_sched_ustack zero_ustack = {};
/* The same for a thread's entry in `sched_threads` without task storage. */
const struct ep_sched_thread zero_thread = {};

/* Per-thread accounting while the thread lives: task-local storage, found
 * from the task_struct the tracepoint hands over (no hash of the tid per
 * switch, and no targets lookup for a thread already traced), allocated on
 * the thread's first traced event and freed with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ep_sched_thread);
} sched_tls SEC(".maps");

/* What the collector reads, by tid: /proc seeds (moved to `sched_tls` at the
 * thread's first switch), threads at their exit (copied from `sched_tls`), and all
 * live ones when the collector runs sched_flush at the end. Preallocated
 * (the default): the exit path must never wait on an allocator. The
 * collector removes exited threads every second. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct ep_sched_thread);
} sched_threads SEC(".maps");

/* One user stack per thread, from its last blocking switch-out. Shrunk to
 * one entry by the collector when stacks are off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct ep_sched_ustack);
} sched_ustacks SEC(".maps");

/* Long off-CPU episodes, sized by their frames: 64 bytes + 8 per frame,
 * ~300 bytes for a typical 10 kernel + 15 user frames, 2 KiB at most. At
 * the 1 ms default a thread sends at most 10 per 10 ms drain; 256 KiB holds
 * ~870 typical ones (87 threads all blocking in 1 ms waits, or a 300 ms
 * collector stall at ~2900 episodes/s) and 128 of the largest. Not larger:
 * a ring is mapped twice into the collector and all of it counts in its
 * resident memory from the mmap (was 1 MiB of fixed 2 KiB records: 500
 * episodes for 2 MiB of RSS). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} sched_offcpu_events SEC(".maps");

/* Python frames of the traced Python threads (bpf/pyframes.bpf.h, maps
 * shared with the CPU sampler), walked beside the native user stack at a
 * blocking switch-out. */
#include "pyframes.bpf.h"

/* Zeroed template for new sched_pystacks entries. */
const struct ep_pystack zero_pystack = {};

/* One Python stack per Python thread, walked with its sched_ustacks slot
 * (and reused with it). Not preallocated: only Python threads take an
 * entry (2 KiB each); a thread beyond them is reported with its native
 * frames only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ep_pystack);
} sched_pystacks SEC(".maps");

/* Where an episode is put together before it is copied to the ring at its
 * used size (a ring reservation must have a constant size). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ep_offcpu);
} sched_offcpu_scratch SEC(".maps");

/* The CFI walk's state at a blocking switch-out. Not on the stack: the
 * switch program's deepest call chain (the user stack's walk, then the
 * Python frames' walk, each through bpf_loop callbacks, which newer
 * verifiers count in the combined stack) must stay well under the 512-byte
 * limit. sched_switch runs with interrupts off, so nothing else on this CPU
 * uses the entry while a walk is under way. */
struct sched_walk_scratch {
	struct uw_walk w;
	__u64 regs[UW_NREGS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_walk_scratch);
} sched_walk_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_SCHED_COUNTERS); /* drops + EP_SSTAT_* */
	__type(key, __u32);
	__type(value, __u64);
} sched_drops SEC(".maps");
#define EP_DROPS sched_drops /* count_drop (counters.h) */

/* Kernels before 5.14 name the field `state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* The tp_btf arguments are trusted BTF pointers: their fields are read with
 * plain (CO-RE relocated) loads, no bpf_probe_read_kernel call per field.
 * A kernel without BTF has no tp_btf programs: there the same bodies run
 * as raw_tp programs (the twins at the end), whose arguments are plain
 * numbers to the verifier, read with probe reads. `raw` is a constant in
 * each program, so the tp_btf ones are built exactly as without it. */
#define TASK_READ(raw, t, field) ((raw) ? BPF_CORE_READ((t), field) : (t)->field)

/* The task's own run time (what its CPU clock reads): kept by the kernel
 * whatever switches it reports, see ep_acct_missed. */
static __always_inline __u64 task_runtime(struct task_struct *t, const bool raw)
{
	return TASK_READ(raw, t, se.sum_exec_runtime);
}

static __always_inline __u32 task_state(struct task_struct *t, const bool raw)
{
	if (bpf_core_field_exists(t->__state))
		return TASK_READ(raw, t, __state);
	return (__u32)TASK_READ(raw, (struct task_struct___pre514 *)t, state);
}

/* tgid 0 is the idle task: half of all switches on an idle-ish machine,
 * never a target, no map lookup. */
static __always_inline bool is_target(struct task_struct *t, __u32 *tgid, const bool raw)
{
	*tgid = TASK_READ(raw, t, tgid);
	return *tgid && bpf_map_lookup_elem(&targets, tgid) != NULL;
}

/* The state of a traced thread that switched since the attach, in its own
 * task_struct (see `sched_tls`). A thread without one is looked up in `targets`
 * once per switch until it is traced; then its /proc seed, if any, is moved
 * here, else it starts ON now (created between seeding and attach). */
static __always_inline struct ep_sched_thread *get_thread_by_tid(struct task_struct *task,
								 const bool raw)
{
	__u32 tgid, tid = TASK_READ(raw, task, pid);
	struct ep_sched_thread *t = bpf_map_lookup_elem(&sched_threads, &tid);

	/* A DEAD entry is an earlier thread with this tid, not yet harvested:
	 * the new one waits for the harvest (within a second). A seed is used
	 * in place, as task storage takes it over. */
	if (t)
		return t->state == EP_TS_DEAD ? NULL : t;
	if (!is_target(task, &tgid, raw))
		return NULL;
	bpf_map_update_elem(&sched_threads, &tid, &zero_thread, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&sched_threads, &tid);
	if (!t) {
		count_drop(EP_SDROP_THREAD_MAP_FULL);
		return NULL;
	}
	t->pid = tgid;
	t->state = EP_TS_ON;
	t->last_ts = bpf_ktime_get_ns();
	bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), task->comm);
	return t;
}

static __always_inline struct ep_sched_thread *get_thread(struct task_struct *task, const bool raw)
{
	struct ep_sched_thread *t, *seed;
	__u32 tgid, tid;

	/* Task storage takes a BTF-typed task: not in raw_tp programs. */
	if (raw || !sched_task_storage)
		return get_thread_by_tid(task, raw);
	t = bpf_task_storage_get(&sched_tls, task, NULL, 0);
	if (t || !is_target(task, &tgid, raw))
		return t;
	t = bpf_task_storage_get(&sched_tls, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count_drop(EP_SDROP_THREAD_MAP_FULL);
		return NULL;
	}
	tid = task->pid;
	seed = bpf_map_lookup_elem(&sched_threads, &tid);
	/* A DEAD entry is an earlier thread with this tid, not yet harvested. */
	if (seed && seed->state == EP_TS_SEEDED && seed->pid == tgid &&
	    !bpf_probe_read_kernel(t, sizeof(*t), seed)) {
		bpf_map_delete_elem(&sched_threads, &tid);
		return t;
	}
	t->pid = tgid;
	t->state = EP_TS_ON;
	t->last_ts = bpf_ktime_get_ns();
	/* Once per thread: the name is refreshed at exit, not per switch. */
	bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), task->comm);
	return t;
}

/* The thread's Python frames into its sched_pystacks slot (no Python: an
 * empty slot, or none for a process that is not registered). */
static __always_inline void save_py_stack(__u32 tid, __u32 pid)
{
	const struct ep_py_proc *cfg = bpf_map_lookup_elem(&py_procs, &pid);
	struct ep_pystack *ps = bpf_map_lookup_elem(&sched_pystacks, &tid);

	if (!cfg) {
		if (ps) /* no longer Python (exec): no frames from before */
			ps->nframes = 0;
		return;
	}
	if (!ps) {
		bpf_map_update_elem(&sched_pystacks, &tid, &zero_pystack, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&sched_pystacks, &tid);
		if (!ps)
			return;
	}
	py_walk_into(cfg, tid, ps, bpf_ktime_get_ns());
}

/* loops: the kernel has bpf_loop. Before 5.13 a program that only refers to
 * a bpf_loop callback is refused (profile.bpf.c cpu_sample): sched_switch_noloop
 * is built without the CFI walk and the Python frames. */
static __always_inline void save_user_stack_body(void *ctx, __u32 tid, struct ep_sched_thread *t,
						 const bool loops)
{
	struct ep_sched_ustack *s = bpf_map_lookup_elem(&sched_ustacks, &tid);
	bool walked;
	__u32 n = 0;

	if (!s) {
		bpf_map_update_elem(&sched_ustacks, &tid, &zero_ustack, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&sched_ustacks, &tid);
		if (!s) {
			count_drop(EP_SDROP_USTACK_SLOT);
			return;
		}
	}
	s->trunc = 0;
	if (loops && sched_kwalk) {
		struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		__u32 zero = 0;
		struct sched_walk_scratch *ws = bpf_map_lookup_elem(&sched_walk_buf, &zero);

		if (r && ws) {
			uw_regs_from_pt(r, ws->regs);
			n = uw_walk_user(bpf_get_current_task_btf(), t->pid, ws->regs, &ws->w);
		}
	}
	s->size = uw_frames_or_fp(ctx, n, s->ips, sizeof(s->ips), &s->trunc, &walked);
	s->kwalk = walked;
	t->ustack_ok = 1;
	count_drop(EP_SSTAT_USTACK_WALKS);
	/* A failed walk is not taken again as is. */
	if (s->size <= 0)
		t->ustack_key = 0;
}

static __noinline void save_user_stack(void *ctx, __u32 tid, struct ep_sched_thread *t)
{
	save_user_stack_body(ctx, tid, t, true);
}

static __noinline void save_user_stack_noloop(void *ctx, __u32 tid, struct ep_sched_thread *t)
{
	save_user_stack_body(ctx, tid, t, false);
}

/* The user pc and sp of a task blocked in the kernel (see
 * sched_task_pt_regs): false when unknown. */
static __always_inline bool user_ip_sp(struct task_struct *task, __u64 *ip, __u64 *sp,
				       const bool raw)
{
	struct pt_regs *regs;
	void *stack;

	if (!raw && sched_task_pt_regs) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!regs)
			return false;
		*ip = PT_REGS_IP(regs);
		*sp = PT_REGS_SP(regs);
		return true;
	}
	stack = BPF_CORE_READ(task, stack);
	if (!stack)
		return false;
	regs = (struct pt_regs *)(stack + sched_thread_size - bpf_core_type_size(struct pt_regs));
	*ip = PT_REGS_IP_CORE(regs);
	*sp = PT_REGS_SP_CORE(regs);
	return true;
}

/* prev blocks: plan its user stack from where it stopped in user space (the
 * syscall wrapper, or the instruction whose page fault waits), read from
 * its saved user registers without walking anything. */
static __always_inline void plan_user_stack(void *ctx, struct task_struct *prev, __u32 tid,
					    struct ep_sched_thread *t, const bool loops,
					    const bool raw)
{
	__u64 ip, sp;

	if (!user_ip_sp(prev, &ip, &sp, raw))
		return;
	/* The same native site from another Python function is another stack
	 * (3.11+ calls Python from Python without a C frame). */
	if (loops && py_enabled)
		sp ^= py_where(t->pid, tid);
	if (ep_ustack_plan(t, ep_ustack_key(ip, sp), ustack_sample_every) == EP_USTACK_WALK) {
		if (loops)
			save_user_stack(ctx, tid, t);
		else
			save_user_stack_noloop(ctx, tid, t);
		/* Beside the native walk, not inside it: the two walks' call
		 * chains would add up in the verifier's combined stack. */
		if (loops && py_enabled && t->ustack_ok)
			save_py_stack(tid, t->pid);
		if (!t->ustack_ok)
			t->ustack_key = 0; /* no slot */
	}
}

static __always_inline __u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&sched_offcpu_events, BPF_RB_AVAIL_DATA) >= sched_wakeup_watermark)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* The Python frames taken with the episode's user stack, as an
 * EP_EV_PYSTACK record right before the episode (same hdr: the collector
 * pairs them). */
static __always_inline void emit_py_stack(__u32 tid, const struct ep_event_hdr *hdr)
{
	struct ep_pystack *ps = bpf_map_lookup_elem(&sched_pystacks, &tid);
	__u64 size;

	if (!ps || !ps->nframes)
		return;
	ps->hdr = *hdr;
	ps->hdr.type = EP_EV_PYSTACK;
	size = EP_PYSTACK_HDR_SIZE + (__u64)ps->nframes * sizeof(struct ep_py_frame);
	if (size > sizeof(*ps))
		size = sizeof(*ps);
	if (bpf_ringbuf_output(&sched_offcpu_events, ps, size, BPF_RB_NO_WAKEUP))
		count_drop(EP_SDROP_RINGBUF_FULL);
}

/* Out of line, as save_user_stack: they run for few switches, and keeping
 * them out of on_switch keeps its hot path compact. */
static __noinline void emit_episode(struct task_struct *task, __u32 tid, struct ep_sched_thread *t,
				    __u64 dur, __u64 now)
{
	const __u32 max_bytes = EP_MAX_STACK_DEPTH * sizeof(__u64),
		    max_ubytes = EP_OFFCPU_USER_FRAMES * sizeof(__u64), zero = 0;
	struct ep_offcpu *e = bpf_map_lookup_elem(&sched_offcpu_scratch, &zero);
	struct ep_sched_ustack *s;
	/* 64-bit, clamped after a barrier: 5.10's verifier loses the bounds
	 * of 32-bit values zero-extended by shifts. */
	__u64 kbytes = 0, ubytes = 0, size;
	long n;

	if (!e) {
		count_drop(EP_SDROP_RINGBUF_FULL);
		return;
	}
	e->hdr.type = EP_EV_OFFCPU;
	e->hdr.pid = t->pid;
	e->hdr.tid = tid;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	e->dur_ns = dur;
	e->reason = t->out_reason;
	e->ukwalk = 0;
	e->utrunc = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);

	e->kstack_sz = 0;
	if (sched_capture_kernel) {
		n = bpf_get_task_stack(task, e->ips, max_bytes, 0);
		e->kstack_sz = (__s32)n;
		if (n < 0)
			count_drop(EP_SDROP_KERN_STACK);
		else
			kbytes = (__u32)n & ~7u;
	}
	barrier_var(kbytes);
	if (kbytes > max_bytes)
		kbytes = max_bytes;
	e->ustack_sz = -EP_ENOENT;
	if (!t->ustack_ok) {
		/* Not walked at the switch-out (no long wait predicted): kernel
		 * frames only, counted apart from the failures. */
		count_drop(EP_SSTAT_USTACK_SKIPPED);
	} else {
		s = bpf_map_lookup_elem(&sched_ustacks, &tid);
		if (s) {
			e->ustack_sz = s->size;
			e->ukwalk = s->kwalk;
			e->utrunc = s->trunc;
			if (s->size > 0) {
				ubytes = (__u32)s->size & ~7u;
				barrier_var(ubytes);
				if (ubytes > max_ubytes)
					ubytes = max_ubytes;
				if (bpf_probe_read_kernel((void *)e->ips + kbytes, ubytes,
							  s->ips)) {
					e->ustack_sz = -EP_EFAULT;
					ubytes = 0;
				}
			}
		}
		if (e->ustack_sz < 0)
			count_drop(EP_SDROP_USER_STACK);
	}
	if (py_enabled && e->ustack_sz >= 0)
		emit_py_stack(tid, &e->hdr);
	e->kstack_sz = e->kstack_sz < 0 ? e->kstack_sz : (__s32)kbytes;
	e->ustack_sz = e->ustack_sz < 0 ? e->ustack_sz : (__s32)ubytes;
	size = offsetof(struct ep_offcpu, ips) + (__u64)kbytes + ubytes;
	barrier_var(size);
	if (size > sizeof(*e))
		size = sizeof(*e);
	if (bpf_ringbuf_output(&sched_offcpu_events, e, size, submit_flags()))
		count_drop(EP_SDROP_RINGBUF_FULL);
}

/* prev's half of a switch. Returns the time read, 0 when prev is not
 * traced. */
static __always_inline __u64 switch_out(void *ctx, bool preempt, struct task_struct *prev,
					const bool loops, const bool raw)
{
	struct ep_sched_thread *t = get_thread(prev, raw);
	__u64 now;
	__u32 tid;
	__u8 reason;

	if (!t)
		return 0;
	now = bpf_ktime_get_ns();
	tid = TASK_READ(raw, prev, pid);
	reason = ep_sched_classify(task_state(prev, raw), preempt);
	ep_acct_switch_out(t, now, reason, task_runtime(prev, raw));
	/* A preempted thread is not blocked anywhere: its stack is a CPU
	 * sample's, and it is not reported. */
	if (capture_stacks && reason != EP_OFF_PREEMPTED && reason != EP_OFF_DEAD)
		plan_user_stack(ctx, prev, tid, t, loops, raw);
	return now;
}

/* Out of line where the user stack can be walked: the walk's call chain
 * (bpf_loop callbacks included, which newer verifiers count) then starts
 * from this frame, which holds only the switch-out's registers, instead of
 * from the program's, which also holds the switch-in's. */
static __noinline __u64 switch_out_walk(void *ctx, bool preempt, struct task_struct *prev)
{
	return switch_out(ctx, preempt, prev, true, false);
}

static __noinline __u64 switch_out_walk_raw(void *ctx, bool preempt, struct task_struct *prev)
{
	return switch_out(ctx, preempt, prev, true, true);
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, const bool loops, const bool raw)
{
	struct ep_sched_thread *t;
	__u64 now, ep, rq;
	__u32 tid;
	__u8 reason;

	if (!loops)
		now = switch_out(ctx, preempt, prev, loops, raw);
	else if (raw)
		now = switch_out_walk_raw(ctx, preempt, prev);
	else
		now = switch_out_walk(ctx, preempt, prev);
	t = get_thread(next, raw);
	if (t) {
		if (!now)
			now = bpf_ktime_get_ns();
		tid = TASK_READ(raw, next, pid);
		reason = t->out_reason;
		ep = ep_acct_switch_in(t, now, &rq, task_runtime(next, raw));
		if (rq != EP_ACCT_NO_RQ)
			ep_acct_rq(t, rq);
		if (ep && reason != EP_OFF_PREEMPTED)
			ep_ustack_learn(t, ep >= offcpu_min_ns);
		if (ep && ep >= offcpu_min_ns && reason != EP_OFF_PREEMPTED) {
			t->episodes_long++;
			if (capture_stacks)
				emit_episode(next, tid, t, ep, now);
		}
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true, false);
}

/* Loaded instead of sched_switch on kernels without bpf_loop (5.17+). */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_noloop, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, false, false);
}

/* The raw_tp twins of the two, for kernels without BTF (see TASK_READ). */
SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_noloop_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, false, true);
}

static __always_inline void on_wakeup(struct task_struct *p, bool new_task, const bool raw)
{
	struct ep_sched_thread *t = get_thread(p, raw);
	__u64 now;

	if (!t)
		return;
	now = bpf_ktime_get_ns();
	if (new_task) {
		/* Runnable from birth: the wait for its first CPU is run-queue
		 * latency like any other. */
		t->state = EP_TS_OFF;
		t->reason = EP_OFF_RUNQ;
		t->out_reason = EP_OFF_RUNQ;
		t->out_ts = 0;
		t->last_ts = now;
		t->rt_mark = ep_rt_mark(task_runtime(p, raw));
		return;
	}
	ep_acct_wakeup(t, now);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wake, struct task_struct *p)
{
	on_wakeup(p, false, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wake_new, struct task_struct *p)
{
	on_wakeup(p, true, false);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wake_raw, struct task_struct *p)
{
	on_wakeup(p, false, true);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wake_new_raw, struct task_struct *p)
{
	on_wakeup(p, true, true);
	return 0;
}

/* Per thread, in the exiting thread's context. No target check: only
 * traced threads have entries, and the CPU sampler may already have dropped
 * the tgid from `targets` when this is the process's last thread. */
static __always_inline int exit_thread(struct task_struct *task, const bool raw)
{
	struct ep_sched_thread *t;
	__u32 tid = TASK_READ(raw, task, pid);

	if (raw || !sched_task_storage) {
		/* The state is where the collector reads it already. */
		t = bpf_map_lookup_elem(&sched_threads, &tid);
		if (t && t->state != EP_TS_DEAD) {
			ep_acct_exit(t, bpf_ktime_get_ns(), task_runtime(task, raw));
			bpf_get_current_comm(t->comm, sizeof(t->comm));
		}
		return 0;
	}
	t = bpf_task_storage_get(&sched_tls, task, NULL, 0);
	if (!t) {
		/* Seeded, never switched since the attach. */
		t = bpf_map_lookup_elem(&sched_threads, &tid);
		if (t)
			ep_acct_exit(t, bpf_ktime_get_ns(), task_runtime(task, raw));
		return 0;
	}
	ep_acct_exit(t, bpf_ktime_get_ns(), task_runtime(task, raw));
	/* Its final name (pthread_setname_np after creation). */
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	/* `sched_tls` goes with the task: the record moves to where the collector
	 * reads it. */
	if (bpf_map_update_elem(&sched_threads, &tid, t, BPF_ANY))
		count_drop(EP_SDROP_THREAD_MAP_FULL);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_exit, struct task_struct *task)
{
	return exit_thread(task, false);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(sched_exit_raw, struct task_struct *task)
{
	return exit_thread(task, true);
}

/* Run by the collector at the end (bpf_iter_create): copies every live
 * traced thread's `sched_tls` into `sched_threads`. Not auto-attached. */
SEC("iter/task")
int sched_flush(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct ep_sched_thread *t;
	__u32 tid;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&sched_tls, task, NULL, 0);
	if (!t)
		return 0;
	tid = task->pid;
	if (bpf_map_update_elem(&sched_threads, &tid, t, BPF_ANY))
		count_drop(EP_SDROP_THREAD_MAP_FULL);
	return 0;
}
