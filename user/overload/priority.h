/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The collector's CPU priority. A target with more runnable threads than
 * CPUs leaves a nice-0 collector one share in (threads + 1): 256 busy
 * threads at 99 Hz made start-up take 11 s and lost 86% of the samples
 * Where permitted (root or CAP_SYS_NICE):
 * - every collector thread runs at nice -10 (inherited by the threads
 *   started later; Linux nice is per thread);
 * - the recorder thread, which drains the rings, also runs SCHED_FIFO at
 *   priority 1, the lowest real-time one: no number of busy nice-0 threads
 *   can starve it, while any real-time work on the machine still preempts
 *   it. A real-time thread that falls behind would never sleep, so the
 *   recorder yields COLLECTOR_RT_YIELD_MS after every poll that ended on
 *   its time budget (at most ~70% of a CPU under overload) and threads that
 *   may run flat out (the probes' drain thread) go back to SCHED_OTHER.
 *   The kernel's RT throttle (95% per second) is the backstop.
 * Children (the launched command, --alert-exec) go back to the nice value
 * before and SCHED_OTHER. docs/performance.md ("Overload") has figures.
 */
#ifndef EBPF_PROF_PRIORITY_H
#define EBPF_PROF_PRIORITY_H

#include <stdbool.h>

#define COLLECTOR_NICE	      (-10)
#define COLLECTOR_RT_PRIO     1
#define COLLECTOR_RT_YIELD_MS 10

struct collector_prio {
	int old_nice;  /* before the raise: children go back to it */
	int nice_err;  /* 0, or the errno that kept nice where it was */
	bool realtime; /* the calling thread is SCHED_FIFO */
	int rt_err;
};

/* Raises the calling thread as above; never fails the run: what could not
 * be done is in *p for the caller to say. Call before starting threads. */
void collector_priority_raise(struct collector_prio *p);
/* In a child between fork and exec: SCHED_OTHER at old_nice. */
void collector_priority_child(int old_nice);
/* In a collector thread that may run flat out: SCHED_OTHER, nice kept. */
void collector_thread_not_realtime(void);

#endif
