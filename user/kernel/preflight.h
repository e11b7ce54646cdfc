/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Before a recording run holds anything: whether this user and this kernel
 * can run it, and what the defaults become on this kernel (fallbacks said
 * in one line each). Kept apart from the run so that every refusal and
 * every degradation reads in one place.
 */
#ifndef EBPF_PROF_PREFLIGHT_H
#define EBPF_PROF_PREFLIGHT_H

#include "cli.h"
#include "kernel/kfeat.h"

/* libbpf's messages at the -v level: -v its warnings and the verifier log,
 * -vv everything. */
void preflight_libbpf_log(void);
/* Checks the capabilities and the kernel's BTF, probes the kernel's BPF
 * features into *kf (EBPF_PROF_FAULT_KFEAT=HELPERS hides some, for the
 * tests) and degrades the defaults in *o to what the kernel can do, saying
 * so. Returns 0, or a negative errno after logging why the run cannot
 * start. */
int preflight(struct cli_opts *o, struct kfeat *kf);
/* Mounts tracefs if it is not: tracepoints attached through perf need it.
 * Only warns when it cannot: the CPU sampler does not need it. */
void preflight_tracefs(void);

#endif
