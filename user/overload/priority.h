/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The collector's CPU priority. A target with more runnable threads than
 * CPUs leaves a nice-0 collector one share in (threads + 1): 256 busy
 * threads at 99 Hz made start-up take 11 s and lost 86% of the samples; at
 * nice -10 the same run took its 5 s and lost 3.6% (issue 17). nice -10
 * weighs ~9.3x a nice-0 thread under CFS/EEVDF: enough to keep up, not a
 * real-time class. SCHED_FIFO is not used on purpose: a collector that falls
 * behind (overload) never sleeps, and at a real-time priority it would take
 * a whole CPU from everything else, the target included, until the RT
 * throttle stops it (docs/performance.md, "Overload").
 */
#ifndef EBPF_PROF_PRIORITY_H
#define EBPF_PROF_PRIORITY_H

#define COLLECTOR_NICE (-10)

/* Sets the calling thread's nice value to COLLECTOR_NICE if that raises
 * it and is permitted (root or CAP_SYS_NICE); threads started afterwards
 * inherit it (Linux nice is per thread). *old gets the value before, for
 * child processes to go back to. Returns 0, or -errno when not permitted
 * (the run goes on at the old value). */
int collector_priority_raise(int *old);
/* In a child between fork and exec: back to the nice value before the
 * raise, so the command does not run at the collector's priority. */
void collector_priority_child(int old);

#endif
