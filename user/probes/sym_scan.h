/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding a few names in an ELF symbol table without holding the table in
 * memory. libelf's elf_getdata copies a whole section into fresh heap: for
 * Debian's /usr/bin/node that is 17 MB (.symtab, .strtab, .dynsym,
 * .dynstr) to look up ~30 preset names, ~20 ms of the collector's CPU per
 * run, most of it page faults. Here the string table is read through one
 * small buffer to find where each name's text is (as a whole string or as
 * the tail of a longer one: linkers merge string tails), then the symbol
 * table is read the same way for the symbols whose st_name is one of those
 * places. Input is the traced process's file: every size and offset is
 * checked against the file, and the candidate list is bounded.
 */
#ifndef EBPF_PROF_SYM_SCAN_H
#define EBPF_PROF_SYM_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One symbol as the callers need it, in host order. */
struct sym_scan_sym {
	uint64_t value;
	uint16_t shndx;
	uint8_t type; /* GELF_ST_TYPE(st_info) */
};

/* Called for each symbol of the table whose name is names[k], in table
 * order; returns true to stop the scan (every name found). */
typedef bool (*sym_scan_fn)(void *arg, size_t k, const struct sym_scan_sym *sym);

struct sym_scan_table {
	uint64_t sym_off, sym_size, sym_entsize; /* the symbol table section */
	uint64_t str_off, str_size;		 /* its string table (sh_link) */
	bool elf64;
};

/* Scans the table of the ELF file open on fd (file_size bytes) for the
 * symbols named names[0..n). Returns 0; -ENOTSUP when the table cannot be
 * scanned this way (a layout or byte order other than the host's, more
 * than SYM_SCAN_MAX_CANDS places where a name is stored: the caller falls
 * back to libelf); -EINVAL for a table outside the file; -ENOMEM; -EIO. */
int sym_scan(int fd, uint64_t file_size, const struct sym_scan_table *t, const char *const *names,
	     size_t n, sym_scan_fn fn, void *arg);

#define SYM_SCAN_MAX_CANDS 4096

#endif
