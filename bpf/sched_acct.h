/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread on/off-CPU accounting as pure functions over struct
 * ep_sched_thread. The BPF program (bpf/sched.bpf.c) runs exactly this code
 * on every context switch and wakeup; the collector and the unit tests
 * (tests/unit/test_sched.c) run it too, so the rules are tested where they
 * are defined. No loops, no helpers: it must pass the verifier as is.
 *
 * A thread is ON (running), OFF (not running, off_ns[reason] grows),
 * SEEDED (found in /proc before attach: last_ts is the attach time and
 * reason is what /proc said, PREEMPTED standing for "R") or DEAD.
 * Events that do not fit the state mean a switch reached no program: on
 * 6.18 in a 2-vCPU VM, 5-35 of ~65,000 switches in a 3 s run of
 * tests/targets/offcpu_mix (a thread switched out twice with no switch-in
 * between; cause not found), and one of them cost a spinning thread up to
 * 0.8 s. Such an interval is split by the task's own run time
 * (se.sum_exec_runtime, what its CPU clock reads), which the kernel keeps
 * whatever reaches the tracepoint (ep_acct_missed), and counted per
 * thread. Where the run time is unknown the interval is left uncharged:
 * one interval lost, never a wrong total.
 */
#ifndef EBPF_PROF_SCHED_ACCT_H
#define EBPF_PROF_SCHED_ACCT_H

#ifdef __VMLINUX_H__
#define EP_ACCT_INLINE static __always_inline
#else
#include <stdbool.h>
#define EP_ACCT_INLINE static inline
#endif

#include "events/sched.h"

/* classify() result for a task that switches out for the last time. */
#define EP_OFF_DEAD 0xff
/* *rq_ns from ep_acct_switch_in when the interval was not a run-queue wait. */
#define EP_ACCT_NO_RQ (~0ull)

/* Kernel task state bits (include/linux/sched.h; stable ABI of /proc and
 * the sched_switch tracepoint's prev_state). */
#define EP_TASK_INTERRUPTIBLE	0x0001
#define EP_TASK_UNINTERRUPTIBLE 0x0002
#define EP_TASK_DEAD		0x0080
#define EP_TASK_RTLOCK_WAIT	0x1000

/* Why prev leaves the CPU. preempt: the scheduler took the CPU away (the
 * task stays on the run queue whatever its state says). */
EP_ACCT_INLINE __u8 ep_sched_classify(__u32 state, bool preempt)
{
	if (preempt || state == 0)
		return EP_OFF_PREEMPTED;
	if (state & EP_TASK_DEAD)
		return EP_OFF_DEAD;
	if (state & EP_TASK_INTERRUPTIBLE)
		return EP_OFF_SLEEP;
	/* TASK_KILLABLE and TASK_IDLE include the UNINTERRUPTIBLE bit; an
	 * rt-mutex "spinlock" wait on PREEMPT_RT blocks the same way. */
	if (state & (EP_TASK_UNINTERRUPTIBLE | EP_TASK_RTLOCK_WAIT))
		return EP_OFF_BLOCKED;
	return EP_OFF_OTHER;
}

/* Maps a /proc/PID/stat state letter to the seeded reason. */
EP_ACCT_INLINE __u8 ep_sched_seed_reason(char c)
{
	switch (c) {
	case 'R':
		return EP_OFF_PREEMPTED;
	case 'S':
		return EP_OFF_SLEEP;
	case 'D':
		return EP_OFF_BLOCKED;
	default:
		return EP_OFF_OTHER;
	}
}

EP_ACCT_INLINE __u32 ep_sched_log2(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffull) << 5;
	v >>= s;
	r |= s;
	s = (v > 0xffff) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xff) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xf) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (__u32)(v >> 1);
	return r;
}

/* Bucket of v in the kernel's run-queue histogram (events/sched.h). */
EP_ACCT_INLINE __u32 ep_sched_hist_bucket(__u64 v)
{
	const __u32 sub = 1u << EP_SCHED_HIST_SUB_BITS;
	__u32 e;

	if (v < sub)
		return (__u32)v;
	e = ep_sched_log2(v);
	if (e > EP_SCHED_HIST_MAX_EXP)
		return EP_SCHED_HIST_BUCKETS - 1;
	return ((e - EP_SCHED_HIST_SUB_BITS + 1) << EP_SCHED_HIST_SUB_BITS) |
	       (__u32)((v >> (e - EP_SCHED_HIST_SUB_BITS)) & (sub - 1));
}

/* A reason read back from a map entry, bounded for the verifier. */
EP_ACCT_INLINE __u32 ep_off_idx(__u8 reason)
{
	__u32 r = reason;

	return r < EP_OFF__COUNT ? r : EP_OFF_OTHER;
}

/* [lo, hi] of a bucket of ep_sched_hist_bucket() (collector side). */
EP_ACCT_INLINE void ep_sched_hist_range(__u32 b, __u64 *lo, __u64 *hi)
{
	const __u32 sub = 1u << EP_SCHED_HIST_SUB_BITS;
	__u32 e;

	if (b >= EP_SCHED_HIST_BUCKETS)
		b = EP_SCHED_HIST_BUCKETS - 1;
	if (b < sub) {
		*lo = *hi = b;
		return;
	}
	e = (b >> EP_SCHED_HIST_SUB_BITS) + EP_SCHED_HIST_SUB_BITS - 1;
	*lo = (1ull << e) + (__u64)(b & (sub - 1)) * (1ull << (e - EP_SCHED_HIST_SUB_BITS));
	*hi = *lo + (1ull << (e - EP_SCHED_HIST_SUB_BITS)) - 1;
}

/* Length of the open interval at now (0 when events from two CPUs run
 * backwards). */
EP_ACCT_INLINE __u64 ep_acct_since(const struct ep_sched_thread *t, __u64 now)
{
	return now > t->last_ts ? now - t->last_ts : 0;
}

/* The run time mark of a task whose se.sum_exec_runtime reads rt. */
EP_ACCT_INLINE __u64 ep_rt_mark(__u64 rt)
{
	return rt + 1;
}

/* An interval of d ns since t->last_ts with an edge the kernel did not
 * report: the run time the task gained since its last event (rt is its
 * se.sum_exec_runtime now) was on-CPU, the rest off-CPU for off_reason.
 * Run time excludes interrupt time, so it is a lower bound of the wall
 * time on-CPU; it is capped at d. */
EP_ACCT_INLINE void ep_acct_missed(struct ep_sched_thread *t, __u64 d, __u64 rt, __u8 off_reason)
{
	__u64 r;

	if (!t->rt_mark)
		return; /* no history: nothing to infer from, and nothing missed */
	t->missed++;
	r = ep_rt_mark(rt) > t->rt_mark ? ep_rt_mark(rt) - t->rt_mark : 0;
	if (r > d)
		r = d;
	t->on_ns += r;
	t->off_ns[ep_off_idx(off_reason)] += d - r;
}

/* prev leaves the CPU at now; reason from ep_sched_classify(); rt is its
 * se.sum_exec_runtime. */
EP_ACCT_INLINE void ep_acct_switch_out(struct ep_sched_thread *t, __u64 now, __u8 reason, __u64 rt)
{
	__u64 d = ep_acct_since(t, now);

	if (t->state == EP_TS_DEAD)
		return; /* the last switch-out after sched_process_exit */
	/* ON, or SEEDED: a thread's first event being a switch-out means it
	 * ran from the attach until now. OFF: its switch-in was not reported. */
	if (t->state == EP_TS_ON || t->state == EP_TS_SEEDED)
		t->on_ns += d;
	else
		ep_acct_missed(t, d, rt, t->reason);
	t->rt_mark = ep_rt_mark(rt);
	if (reason == EP_OFF_PREEMPTED)
		t->nivcsw++;
	else
		t->nvcsw++;
	t->last_ts = now;
	t->out_ts = now;
	t->ustack_ok = 0;
	if (reason == EP_OFF_DEAD) {
		t->state = EP_TS_DEAD;
		return;
	}
	t->state = EP_TS_OFF;
	t->reason = reason;
	t->out_reason = reason;
}

/* The thread is made runnable at now (sched_wakeup / sched_wakeup_new).
 * The blocked part ends here; the wait for a CPU starts. */
EP_ACCT_INLINE void ep_acct_wakeup(struct ep_sched_thread *t, __u64 now)
{
	if (t->state == EP_TS_ON || t->state == EP_TS_DEAD)
		return; /* woken before it got off the CPU: nothing was blocked */
	if (t->reason == EP_OFF_RUNQ || t->reason == EP_OFF_PREEMPTED)
		return; /* already runnable (a seeded "R" included) */
	t->off_ns[ep_off_idx(t->reason)] += ep_acct_since(t, now);
	if (t->state == EP_TS_SEEDED) {
		/* The episode began before the attach: no stack, no length. */
		t->out_ts = 0;
		t->state = EP_TS_OFF;
	}
	t->last_ts = now;
	t->reason = EP_OFF_RUNQ;
}

/* next gets the CPU at now (rt: its se.sum_exec_runtime). Returns the
 * length of the off-CPU episode that ends here (0 when its start was not
 * seen); *rq_ns is the run-queue wait to record, or EP_ACCT_NO_RQ. */
EP_ACCT_INLINE __u64 ep_acct_switch_in(struct ep_sched_thread *t, __u64 now, __u64 *rq_ns, __u64 rt)
{
	__u64 d = ep_acct_since(t, now), ep = 0;

	*rq_ns = EP_ACCT_NO_RQ;
	if (t->state == EP_TS_DEAD)
		return 0; /* after sched_process_exit: nothing is charged */
	if (t->state == EP_TS_ON) {
		/* Its switch-out was not reported: why it left is unknown. */
		ep_acct_missed(t, d, rt, EP_OFF_OTHER);
	} else if (t->state == EP_TS_OFF || t->state == EP_TS_SEEDED) {
		t->off_ns[ep_off_idx(t->reason)] += d;
		/* A seeded wait began before the attach: its length is unknown,
		 * so it is not a latency sample. */
		if (t->state == EP_TS_OFF &&
		    (t->reason == EP_OFF_RUNQ || t->reason == EP_OFF_PREEMPTED))
			*rq_ns = d;
		if (t->state == EP_TS_OFF && t->out_ts && now > t->out_ts)
			ep = now - t->out_ts;
	}
	t->state = EP_TS_ON;
	t->last_ts = now;
	t->rt_mark = ep_rt_mark(rt);
	return ep;
}

/*
 * Off-CPU user stacks. The user stack can only be walked at the blocking
 * switch-out (~1 us here), before anyone knows whether the episode will
 * reach the reporting threshold; walking at every switch-out pays for stacks
 * that are thrown away on switch-heavy threads. A wait site is where the
 * thread stopped in user space: its user IP (the system call instruction or
 * the faulting one) and stack pointer, hashed (ep_ustack_key); two 6-bit
 * fields of it pick a bit in each of two 64-bit sets per thread. A site is
 * taken as seen only when both its bits are set, and as long when either
 * says so: with one set, two sites sharing a bit (1 in 64 for a pair; ASLR
 * moves the stack pointer, so it came and went between runs) made a long
 * nap that follows short waits at the other site look short every time and
 * lose all its user stacks; now both bits must collide (1 in 4096).
 * At each blocking switch-out
 * (ep_ustack_plan):
 *  - REUSE: the thread blocks at the site its stack slot was last walked at
 *    (a loop blocking at the same call, or a second wait inside the same
 *    system call): the slot's stack is taken again without a walk. Same IP
 *    and stack depth with a different chain of callers would be taken for
 *    the same stack; --offcpu-ustack-every 1 walks every time instead;
 *  - WALK: the thread blocks at a site for the first time (at most 128 such
 *    walks per thread, so a thread that blocks once, long, still gets its
 *    stack), or a long episode is predicted: the thread's previous blocking
 *    episode was long, or the last one at the same site was (so a thread
 *    that waits long at one call and briefly at another gets its long waits
 *    walked, in any order); or 1 in `every` blocking switch-outs
 *    (--offcpu-ustack-every; 0 = never, 1 = every one and no REUSE: exact);
 *  - SKIP otherwise: a long episode here is reported with kernel frames only
 *    (counted as user_stack_skipped), and teaches the site for next time.
 */
enum ep_ustack_plan { EP_USTACK_SKIP = 0, EP_USTACK_REUSE = 1, EP_USTACK_WALK = 2 };

/* Never 0 (an empty slot). */
EP_ACCT_INLINE __u64 ep_ustack_key(__u64 ip, __u64 sp)
{
	__u64 k = ip * 0x9e3779b97f4a7c15ull;

	k = (k ^ sp) * 0xc2b2ae3d27d4eb4full;
	return (k ^ (k >> 29)) | 1;
}

/* At a blocking switch-out (after ep_acct_switch_out, which clears
 * ustack_ok). WALK: the caller walks into the slot and clears ustack_key
 * if the walk fails. */
EP_ACCT_INLINE enum ep_ustack_plan ep_ustack_plan(struct ep_sched_thread *t, __u64 key, __u8 every)
{
	t->out_site = (__u8)(key >> 58);
	t->out_site2 = (__u8)((key >> 52) & 63);
	/* every == 1 asks for a walk at each blocking switch-out: exact stacks,
	 * no reuse. */
	if (every != 1 && t->ustack_key == key) {
		t->ustack_ok = 1;
		return EP_USTACK_REUSE;
	}
	if (!((t->seen_sites >> t->out_site) & 1) || !((t->seen_sites2 >> t->out_site2) & 1) ||
	    t->last_long || (t->long_sites >> t->out_site) & 1 ||
	    (t->long_sites2 >> t->out_site2) & 1 || (every && ++t->walk_ctr >= every)) {
		t->walk_ctr = 0;
		t->seen_sites |= 1ull << t->out_site;
		t->seen_sites2 |= 1ull << t->out_site2;
		t->ustack_key = key;
		return EP_USTACK_WALK;
	}
	return EP_USTACK_SKIP;
}

/* At the switch-in that ends a blocking episode: remember whether it was
 * long, for the thread and for the site it began at. */
EP_ACCT_INLINE void ep_ustack_learn(struct ep_sched_thread *t, bool long_ep)
{
	__u64 bit = 1ull << (t->out_site & 63), bit2 = 1ull << (t->out_site2 & 63);

	t->last_long = long_ep;
	if (long_ep) {
		t->long_sites |= bit;
		t->long_sites2 |= bit2;
	} else {
		t->long_sites &= ~bit;
		t->long_sites2 &= ~bit2;
	}
}

/* The thread exits (sched_process_exit, in its own context: it is on
 * CPU; rt is its se.sum_exec_runtime). Nothing after this is charged to
 * it. */
EP_ACCT_INLINE void ep_acct_exit(struct ep_sched_thread *t, __u64 now, __u64 rt)
{
	__u64 d = ep_acct_since(t, now);

	if (t->state == EP_TS_DEAD)
		return;
	if (t->state == EP_TS_ON || t->state == EP_TS_SEEDED)
		t->on_ns += d;
	else /* running its exit, believed off-CPU: a switch-in was missed */
		ep_acct_missed(t, d, rt, t->reason);
	t->state = EP_TS_DEAD;
	t->last_ts = now;
	t->rt_mark = ep_rt_mark(rt);
}

/* At the end of the run, before ep_acct_finish (collector side, on a copy):
 * a runnable thread believed off-CPU whose run time grew since its last
 * event (rt, read from /proc/TID/schedstat) was switched in without a
 * report, and may have run ever since. A blocked one is left alone: its
 * wakeup was seen or it would be runnable, and run time it gained after
 * the tracepoints were detached must not be charged. */
EP_ACCT_INLINE void ep_acct_resync(struct ep_sched_thread *t, __u64 now, __u64 rt)
{
	__u64 d = ep_acct_since(t, now);

	if (t->state != EP_TS_OFF || !t->rt_mark || ep_rt_mark(rt) <= t->rt_mark ||
	    (t->reason != EP_OFF_RUNQ && t->reason != EP_OFF_PREEMPTED))
		return;
	ep_acct_missed(t, d, rt, t->reason);
	t->last_ts = now;
	t->rt_mark = ep_rt_mark(rt);
}

EP_ACCT_INLINE void ep_acct_rq(struct ep_sched_thread *t, __u64 rq_ns)
{
	__u64 b = ep_sched_hist_bucket(rq_ns);

#if defined(__bpf__)
	/* One register for the check and the index: older verifiers (6.1,
	 * Debian's arm64 kernel) do not carry a bound from one zero-extended
	 * copy of b to another and rejected the access. */
	__asm__ volatile("" : "+r"(b));
#endif
	if (b < EP_SCHED_HIST_BUCKETS)
		t->rq_hist[b]++;
	t->rq_count++;
	t->rq_sum_ns += rq_ns;
	if (rq_ns > t->rq_max_ns)
		t->rq_max_ns = rq_ns;
}

/* Closes the open interval at the end of the run (on a copy: the kernel's
 * entry keeps going). A seeded thread that never switched is taken as
 * running if /proc said "R" (a spinning thread is never switched out on
 * an idle CPU) and as still blocked otherwise. */
EP_ACCT_INLINE void ep_acct_finish(struct ep_sched_thread *t, __u64 now)
{
	__u64 d = ep_acct_since(t, now);

	if (t->state == EP_TS_ON || (t->state == EP_TS_SEEDED && t->reason == EP_OFF_PREEMPTED))
		t->on_ns += d;
	else if (t->state != EP_TS_DEAD)
		t->off_ns[ep_off_idx(t->reason)] += d;
	t->last_ts = now;
}

#endif
