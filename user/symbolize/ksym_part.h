/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kallsyms iterator (bpf/ksym.bpf.c) as a part of the modules' BPF
 * object (bpf_parts.h): loaded only when this boot's kallsyms cache exists
 * (ksym_cache.h), so a run that must read /proc/kallsyms whole pays no
 * program load for it. A kernel without the ksym iterator (before 6.0)
 * fails the part alone; kallsyms is then read whole.
 */
#ifndef EBPF_PROF_KSYM_PART_H
#define EBPF_PROF_KSYM_PART_H

#include <stdbool.h>

#include "kernel/bpf_parts.h"

struct bpf_link;

struct ksym_part {
	bool want;
	struct bpf_link *link; /* the iterator's link once loaded */
};

/* A part for bpf_parts_load, its state in k. */
struct bpf_part ksym_part_def(struct ksym_part *k);
/* The link's fd for symbolizer_set_kernel_cache, -1 without one. */
int ksym_part_link_fd(const struct ksym_part *k);
/* After the kernel symbols were loaded (symbolizer_free). */
void ksym_part_free(struct ksym_part *k);

#endif
