/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process id -> position in an append-only array of per-process records
 * (the records carry their own uint32_t pid at a known offset). The modules
 * searched their arrays linearly: in a fork storm (30k children in 8 s)
 * every event's lookup scanned thousands of records, most of the collector's
 * CPU after its BPF map walks were batched.
 */
#ifndef EBPF_PROF_PID_INDEX_H
#define EBPF_PROF_PID_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

struct pid_index {
	struct hashmap h;
	size_t stride, pid_off; /* record size; offset of its uint32_t pid */
};

void pid_index_init(struct pid_index *x, size_t stride, size_t pid_off);
void pid_index_free(struct pid_index *x);
/* Record idx (of base) has pid. Returns 0 or -ENOMEM. */
int pid_index_add(struct pid_index *x, uint32_t pid, uint32_t idx);
/* The position of the first record added with pid, or -1. base: the array
 * now (it may have moved since the records were added). */
int64_t pid_index_find(const struct pid_index *x, const void *base, uint32_t pid);

#endif
