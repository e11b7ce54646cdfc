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
#include <stdint.h>

struct kallsyms;

/* Loads and sorts the file. Bad lines are skipped and counted. Returns 0 or
 * negative errno (-ENOENT/-EACCES from open, -EFBIG if absurdly large).
 * Among aliases at one address one symbol is kept: T, then t, then w/W,
 * then the first one listed. */
int kallsyms_load(const char *path, struct kallsyms **out);
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
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *sym_off);

#endif
