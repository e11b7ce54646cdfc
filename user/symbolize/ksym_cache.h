/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel symbol table without reading all of /proc/kallsyms. Reading it
 * makes the kernel format ~120k lines, about a fifth of the collector's CPU
 * on a short run (docs/performance.md). The core kernel's symbols cannot
 * change within a boot; modules, ftrace trampolines and BPF programs can.
 * So a full read also saves the table of the core kernel's lines
 * (kallsyms_save) as kallsyms-<boot id> in the cache directory (owned by
 * us, nobody else can write it: user/unwind/cfi_cache.c), and a later run
 * of the same boot loads that table and merges it with the rest, printed
 * by a BPF iterator over the same kernel table (bpf/ksym.bpf.c): the table
 * a full read gives (kallsyms_merge). The iterator also prints the
 * kernel's first core text symbols; each must be at an address the saved
 * table has (so a reader to whom kptr_restrict shows zeros, or a table
 * from another kernel layout, falls back to the full read).
 */
#ifndef EBPF_PROF_KSYM_CACHE_H
#define EBPF_PROF_KSYM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct kallsyms;

/* True if dirfd holds a file for this boot (worth loading the iterator). */
bool ksym_cache_present(int dirfd);

/* Loads the table from this boot's file in dirfd and the output of a new
 * iterator on iter_link_fd (a bpf_link of bpf/ksym.bpf.c). -ENOENT: no
 * file; -EPERM: a file we cannot trust; -ENOTSUP: a file but no iterator
 * (iter_link_fd -1: a kernel before 6.0); -EINVAL: not a saved table;
 * -ESTALE: the sample does not match it; -EEXIST: an address in the file
 * and in the rest; other negative errnos from the reads. */
int ksym_cache_load(int dirfd, int iter_link_fd, struct kallsyms **out);

/* The core table alone: this boot's file (errors as ksym_cache_load),
 * checked against the first lines of kallsyms_path (/proc/kallsyms: the
 * kernel formats only what is read) instead of the iterator's sample:
 * -ESTALE when they do not match. Modules, ftrace trampolines and BPF
 * programs are not in it: ksym_cache_load_rest adds them, for a run that
 * meets one (user/symbolize/symbolize_kernel.c). */
int ksym_cache_load_core(int dirfd, const char *kallsyms_path, struct kallsyms **core);

/* The rest of the table (what follows the core kernel) from a new
 * iterator on iter_link_fd (-ENOTSUP when -1), its sample checked against
 * core: *rest alone, or core merged with it (*out). */
int ksym_cache_read_rest(const struct kallsyms *core, int iter_link_fd, struct kallsyms **rest);
int ksym_cache_load_rest(struct kallsyms *core, int iter_link_fd, struct kallsyms **out);

/* The check of the first lines of /proc/kallsyms (head, len bytes; a cut
 * last line is ignored) against a saved core table: at least 8 text lines
 * of the core kernel, each at a non-zero address where core has a symbol. */
bool ksym_cache_head_ok(const struct kallsyms *core, const char *head, size_t len);

/* Loads path (/proc/kallsyms) whole and, when dirfd >= 0 and the table has
 * real addresses, publishes its core lines as this boot's file (replacing
 * other boots' files). Errors writing the file are not the load's. */
int ksym_cache_full_load(int dirfd, const char *path, struct kallsyms **out);

/* The check of the iterator's sample against a cache file's table
 * (exposed for the tests): true when every "C ADDR TYPE NAME" line of
 * sample has a non-zero address at which core has a symbol, and there are
 * at least 8 of them. */
bool ksym_cache_sample_ok(const struct kallsyms *core, const char *sample, size_t len);

/* Entries of a and b that differ: a symbol at an address in one only, or
 * two names at one address. A [bpf] symbol in one only is not counted
 * (other tools load and unload programs between two reads); *bpf_alike
 * counts those found alike in both. For EBPF_PROF_KSYM_CHECK. */
size_t ksym_cache_diff(const struct kallsyms *a, const struct kallsyms *b, size_t *bpf_alike);

#endif
