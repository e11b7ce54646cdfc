/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cycle marker for ebpf-prof: call ebpf_prof_cycle_begin() when a cycle of
 * your experiment starts and ebpf_prof_cycle_end() when it ends; run
 * `ebpf-prof --cycle marker ...` and each begin/end pair is one cycle.
 *
 * Each function holds a USDT probe (provider "ebpf_prof", probes
 * "cycle_begin" and "cycle_end", one argument: the id you pass) guarded by a
 * semaphore: when nobody traces the process the probe is a nop that is not
 * even reached, so a marker costs one call and one load.
 *
 * Build: compile ebpf_prof_cycle.c into your program or into a shared
 * library (needs <sys/sdt.h>, Debian package systemtap-sdt-dev):
 *     cc -O2 -fPIC -shared -o libebpf_prof_cycle.so ebpf_prof_cycle.c
 */
#ifndef EBPF_PROF_CYCLE_H
#define EBPF_PROF_CYCLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* id: any number you want to see in the report (e.g. the loop counter). */
void ebpf_prof_cycle_begin(uint64_t id);
void ebpf_prof_cycle_end(uint64_t id);
/* Non-zero while ebpf-prof (or any USDT tracer) is attached. */
int ebpf_prof_cycle_traced(void);

#ifdef __cplusplus
}
#endif

#endif
