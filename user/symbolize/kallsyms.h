/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * /proc/kallsyms loader: text symbols (types t, T, w, W) sorted by address,
 * looked up by binary search. Module symbols keep their "name [module]" form
 * as the name. Other types (data, rodata, bss, absolute, undefined) are
 * skipped: stack addresses are code, and a data symbol placed between two
 * functions must not name them. Memory: 12 bytes per kept symbol plus its
 * name (no copy of the file is kept).
 */
#ifndef EBPF_PROF_KALLSYMS_H
#define EBPF_PROF_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct kallsyms;

/* Loads and sorts the file. Bad lines are skipped and counted. Returns 0 or
 * negative errno (-ENOENT/-EACCES from open, -EFBIG if absurdly large).
 * Among aliases at one address one symbol is kept: T, then t, then w/W,
 * then the first one listed. */
int kallsyms_load(const char *path, struct kallsyms **out);
/* The same from fs[0..nfs) read in turn as one file (the core kernel's
 * lines from a cache, then the rest from the kernel: ksym_cache.h). When
 * core_out is not NULL, every text line of the core kernel (no [module])
 * with a non-zero address is written to it as read, as "ADDR TYPE NAME":
 * such lines followed by the rest of the file load into the same table as
 * the whole file. -EIO on a read or write error. */
int kallsyms_load_streams(FILE *const *fs, size_t nfs, FILE *core_out, struct kallsyms **out);
void kallsyms_free(struct kallsyms *ks);

/* True if the file had text symbols but every address was zero
 * (kptr_restrict hides them). */
bool kallsyms_restricted(const struct kallsyms *ks);
size_t kallsyms_count(const struct kallsyms *ks);
size_t kallsyms_bad_lines(const struct kallsyms *ks);
/* Well-formed lines not kept: non-text types and zero addresses. */
size_t kallsyms_skipped(const struct kallsyms *ks);
/* Heap bytes held by the table (addresses, name offsets, names). */
size_t kallsyms_bytes(const struct kallsyms *ks);

/* Name of the symbol covering addr (the last symbol starting at or before it,
 * within the same module), and the offset into it; NULL if addr is before
 * the first symbol or after the last one. */
/* The table as a file (a cache of the core kernel's part: ksym_cache.h),
 * and back: kallsyms_load_saved reads size bytes from fd and checks that
 * they hold what kallsyms_save writes (sizes, one ascending non-zero
 * address per symbol, names in bounds), else -EINVAL. */
int kallsyms_save(const struct kallsyms *ks, FILE *f);
int kallsyms_load_saved(int fd, size_t size, struct kallsyms **out);
/* One table of a's and b's symbols, as loading their files one after the
 * other would give: -EEXIST if an address is in both (which alias such a
 * load keeps is not known from the tables). a and b are left as they are. */
int kallsyms_merge(struct kallsyms *a, struct kallsyms *b, struct kallsyms **out);

/* Symbol i of the table (address order), NULL past the end. */
const char *kallsyms_at(const struct kallsyms *ks, size_t i, uint64_t *addr);
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *sym_off);

#endif
