/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A sorted index of one libdwfl module's symbols, answering what
 * dwfl_module_addrinfo answers in O(log n) instead of a scan of the whole
 * symbol table per address (Node's executable: ~100k symbols, and every new
 * address of a profile paid the scan: half the collector's CPU).
 *
 * The choice is libdwfl 0.188's (dwfl_module_addrsym.c), emulated: globals
 * first, locals only when no global sized symbol holds the address (or a
 * global label sits exactly on it); among the sized symbols holding it,
 * libdwfl's replacement rule in table order; else the label (sizeless
 * symbol) at the highest start below it, in the address's section and not
 * covered by a symbol ending above it. tests/unit/test_symidx.c compares
 * both on real objects.
 */
#ifndef EBPF_PROF_SYMIDX_H
#define EBPF_PROF_SYMIDX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct symidx;

/* Builds the index of mod's symbol tables (.symtab, else .dynsym, and the
 * minidebuginfo table), in bias-adjusted addresses. Names point into the
 * module's ELF data: the index lives no longer than the module. -ENOENT
 * when the module has no symbols, -ENOMEM. */
int symidx_build(Dwfl_Module *mod, struct symidx **out);

/* 1 with the symbol holding addr (as above): *name, *off = addr - its
 * start, *sym its entry (st_value adjusted); 0 when none does; -E2BIG when
 * the index gave up (a symbol spanning thousands of others): ask libdwfl. */
int symidx_lookup(const struct symidx *x, uint64_t addr, const char **name, uint64_t *off,
		  GElf_Sym *sym);

void symidx_free(struct symidx *x);

#endif
