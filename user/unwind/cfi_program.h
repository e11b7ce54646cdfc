/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internal to the unwind-table compiler (cfi_table.c): bounded reading of
 * CFI bytes and the CFA program interpreter (cfi_program.c), which turns one
 * FDE into ep_uw_row rows. Not an interface for other modules.
 */
#ifndef EBPF_PROF_CFI_PROGRAM_H
#define EBPF_PROF_CFI_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/cfi_table.h"

/* One CFI section's bytes. */
struct cfi_section {
	const uint8_t *base;
	size_t size;
	uint64_t addr; /* sh_addr: pc-relative pointers are relative to it */
	bool eh;       /* .eh_frame (pointer encodings, augmentations) */
};

/* A bounded reader: a read past end sets bad and returns 0. */
struct cfi_rd {
	const uint8_t *p, *end;
	bool bad;
};

/* What a CIE says that its FDEs need. */
struct cfi_cie {
	uint64_t off;
	uint64_t caf;
	int64_t daf;
	uint64_t ra_reg;
	const uint8_t *init, *init_end;
	uint8_t fde_enc;
	bool aug_z;
	bool signal;
	bool ok;
};

/* An FDE as found, before its CIE is known. */
struct cfi_fde_raw {
	uint64_t cie_off;
	const uint8_t *start, *end;
};

/* An FDE decoded: the code range [lo, hi) and its program. */
struct cfi_fde {
	uint64_t lo, hi;
	const uint8_t *ins, *ins_end;
	const struct cfi_cie *cie;
	uint32_t seq; /* section order: ties in lo keep it */
};

/* DWARF register numbers of the walker's registers. */
struct cfi_arch {
	enum uw_arch arch;
	uint64_t sp, fp; /* DWARF numbers */
};

/* Rows under construction, sorted by pc, identical neighbours merged. */
struct cfi_rows {
	struct ep_uw_row *rows;
	uint32_t n, cap;
};

uint64_t cfi_rd_bytes(struct cfi_rd *r, unsigned n);
uint64_t cfi_rd_uleb(struct cfi_rd *r);
int64_t cfi_rd_sleb(struct cfi_rd *r);
/* A DW_EH_PE_* encoded value; with_base applies the application bits (only
 * pcrel is supported). False when it cannot be read or applied. */
bool cfi_rd_encoded(struct cfi_rd *r, uint8_t enc, const struct cfi_section *s, bool with_base,
		    uint64_t *out);

extern const struct ep_uw_row cfi_row_unsupported, cfi_row_none;

/* Appends r as the rules from pc on (pc never below the last row's). */
int cfi_emit(struct cfi_rows *b, uint64_t pc, struct ep_uw_row r);

/* Emits the rows of FDE f up to limit (its end, or the next FDE's start).
 * Returns 0; 1 when its program could not be followed to the end (rows
 * from there on are UNSUPPORTED: count it as bad); -ENOMEM. */
int cfi_compile_fde(const struct cfi_arch *a, const struct cfi_section *s, const struct cfi_fde *f,
		    uint64_t limit, struct cfi_rows *b);

#endif
