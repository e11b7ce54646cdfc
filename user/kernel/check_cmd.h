/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `ebpf-prof check [--json] [--btf FILE]`: what this kernel supports,
 * before anyone records. Runs the recorder's own start-up (every module, CPU
 * sampling, the scheduler, probes, --alloc, Python frames) against a held
 * command that never runs, so every program a run would load is loaded and
 * attached for real, then reports the kernel release, its BTF, the BPF
 * features found, each program's verifier figures against the limits and
 * margins (kernel/vstat.h), and what a run would lose on this kernel.
 * Exit status 0: every program loaded within the margins and nothing is
 * lost; 1: something is; 2: a usage error.
 */
#ifndef EBPF_PROF_CHECK_CMD_H
#define EBPF_PROF_CHECK_CMD_H

#include <stdbool.h>

#include "kernel/kfeat.h"
#include "kernel/vstat.h"

struct check_result {
	bool done; /* the recorder got as far as everything attached */
	struct kfeat kf;
	struct vstat vs; /* a copy: the recorder frees its own */
};

/* Called by the recorder once everything is attached. */
void check_result_fill(struct check_result *c, const struct kfeat *kf, const struct vstat *vs);

int check_cmd_main(int argc, char **argv);

#endif
