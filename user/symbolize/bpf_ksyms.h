/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names of the kernel's JITed BPF functions from the programs' own info
 * (BPF_OBJ_GET_INFO_BY_FD: addresses, lengths, tags, BTF function names),
 * as /proc/kallsyms names them: "bpf_prog_<tag>_<function> [bpf]". A
 * sample taken while one of our probe programs runs has such a frame; with
 * these the collector names it without the ksym iterator, which makes the
 * kernel expand all ~120k core kernel names (docs/performance.md). Needs
 * CAP_SYS_ADMIN; a program that goes away while it is read is skipped.
 */
#ifndef EBPF_PROF_BPF_KSYMS_H
#define EBPF_PROF_BPF_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct bpf_ksyms;

/* Every loaded program's functions. Returns 0 (possibly an empty table) or
 * a negative errno (-EPERM without the privilege, -ENOMEM). */
int bpf_ksyms_load(struct bpf_ksyms **out);
void bpf_ksyms_free(struct bpf_ksyms *b);
size_t bpf_ksyms_count(const struct bpf_ksyms *b);

/* The function whose JITed code holds addr, and the offset into it; NULL
 * when none does. */
const char *bpf_ksyms_lookup(const struct bpf_ksyms *b, uint64_t addr, uint64_t *off);

/* Function i (address order) and its start, NULL past the end. */
const char *bpf_ksyms_at(const struct bpf_ksyms *b, size_t i, uint64_t *addr);

#endif
