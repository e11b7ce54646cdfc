/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unwind tables for the in-kernel CFI walker: an ELF object's .eh_frame
 * (else .debug_frame) compiled into sorted struct ep_uw_row arrays
 * (bpf/events/unwind.h), and an on-disk cache of them keyed by the object's
 * identity so a second run loads a table instead of compiling it.
 * See docs/unwinding.md.
 */
#ifndef EBPF_PROF_CFI_TABLE_H
#define EBPF_PROF_CFI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events/unwind.h"

typedef struct Elf Elf;

enum uw_arch {
	UW_ARCH_X86_64 = 1,
	UW_ARCH_ARM64 = 2,
};

enum uw_source {
	UW_SRC_NONE = 0, /* the object has no CFI: every pc walks by frame pointers */
	UW_SRC_EH_FRAME = 1,
	UW_SRC_DEBUG_FRAME = 2,
};

struct uw_table_stats {
	uint32_t fdes;		   /* FDEs read */
	uint32_t rows_unsupported; /* rows whose rule the walker cannot evaluate */
	uint32_t fdes_bad;	   /* FDEs skipped as malformed */
	uint64_t build_ns;	   /* CLOCK_MONOTONIC time to compile (0 from cache) */
};

struct uw_table {
	struct ep_uw_row *rows; /* sorted by pc, merged; malloc'd */
	uint32_t n;
	enum uw_arch arch;
	enum uw_source source;
	struct uw_table_stats stats;
};

/* The unwind architecture of elf: 0, or -ENOEXEC for a machine (or class,
 * byte order) the tables do not describe. */
int uw_table_arch_of(Elf *elf, enum uw_arch *arch);

/* Compiles the CFI of elf (an ELF object of the build's or another
 * architecture) into out. Returns 0 (maybe with n == 0 and UW_SRC_NONE), or
 * a negative errno: -ENOEXEC for an unsupported machine or a malformed ELF,
 * -ENOMEM. The ELF is outside input: malformed CFI never crashes or loops. */
int uw_table_build(Elf *elf, struct uw_table *out);

/* The row in force at ELF vaddr pc, or NULL when pc is before the first row
 * or past the end of the last covered range. A built table's last row is
 * always an EP_UW_CFA_NONE row at the end of the last FDE: it only ends the
 * table (gaps between FDEs are EP_UW_CFA_NONE rows too). */
const struct ep_uw_row *uw_table_find(const struct uw_table *t, uint32_t pc);

void uw_table_free(struct uw_table *t);

/* On-disk cache of compiled tables. */
struct uw_cache;

/* dir NULL: $XDG_CACHE_HOME/ebpf-prof, else ~/.cache/ebpf-prof, or
 * /var/cache/ebpf-prof when running as root. The directory is created when
 * missing; a cache that cannot be used is not an error (tables are then
 * compiled each time): *out is always set on 0. */
int uw_cache_open(struct uw_cache **out, const char *dir);
void uw_cache_free(struct uw_cache *c);
/* The cache directory's fd (owned by c), or -1 when it is not usable. */
int uw_cache_dirfd(const struct uw_cache *c);

/* The table of the ELF object open at fd (read-only; the caller keeps it),
 * from the cache when it holds a valid entry for the object's identity
 * (GNU build-id, else a hash of its CFI section), else compiled and stored.
 * *from_cache says which. Returns 0 or a negative errno as uw_table_build. */
int uw_cache_get(struct uw_cache *c, int fd, struct uw_table *out, bool *from_cache);

/* Size the directory is kept under (default 256 MiB): after a store, the
 * least recently used entries go. */
void uw_cache_set_max_bytes(struct uw_cache *c, uint64_t max_bytes);

#endif
