// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CFI table compiler: see cfi_table.h and docs/unwinding.md.
 *
 * libdw's dwarf_next_cfi splits the section into CIEs and FDEs; this file
 * decodes their headers, orders the FDEs by address and has each one's CFA
 * program interpreted once (cfi_program.c). Asking libdw for the frame at
 * each row instead (dwarf_cfi_addrframe) re-runs the FDE's program from its
 * start for every row: quadratic in the rows of an FDE, 850 ms for
 * libclang-14 (30 MB, 446k rows) against ~80 ms here (docs/unwinding.md).
 */
#include "unwind/cfi_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unwind/cfi_program.h"
#include "util/vec.h"

static int parse_cie(const Dwarf_CIE *dc, uint64_t off, const struct cfi_section *s,
		     struct cfi_cie *out)
{
	memset(out, 0, sizeof(*out));
	out->off = off;
	out->caf = dc->code_alignment_factor;
	out->daf = dc->data_alignment_factor;
	out->ra_reg = dc->return_address_register;
	out->init = dc->initial_instructions;
	out->init_end = dc->initial_instructions_end;
	out->fde_enc = DW_EH_PE_absptr;
	if (!out->caf || out->init > out->init_end)
		return 0;

	const char *aug = dc->augmentation;
	if (aug[0] == '\0') {
		out->ok = true;
		return 0;
	}
	if (!s->eh || aug[0] != 'z')
		return 0; /* cannot find where the FDE's instructions start */
	out->aug_z = true;
	struct cfi_rd r = { dc->augmentation_data,
			    dc->augmentation_data + dc->augmentation_data_size, false };
	for (const char *c = aug + 1; *c; c++) {
		uint64_t ignored;
		switch (*c) {
		case 'P': {
			uint8_t enc = (uint8_t)cfi_rd_bytes(&r, 1);
			if (!cfi_rd_encoded(&r, enc & 0x0f, s, false, &ignored))
				return 0;
			break;
		}
		case 'L':
			cfi_rd_bytes(&r, 1);
			break;
		case 'R':
			out->fde_enc = (uint8_t)cfi_rd_bytes(&r, 1);
			break;
		case 'S':
			out->signal = true;
			break;
		case 'B': /* AArch64 BTI, 'G' MTE: no data */
		case 'G':
			break;
		default:
			/* 'z' sized the data, but an 'R' after an unknown
			 * letter cannot be located. */
			if (strchr(c, 'R'))
				return 0;
			out->ok = !r.bad;
			return 0;
		}
	}
	out->ok = !r.bad;
	return 0;
}

static int cmp_fde(const void *x, const void *y)
{
	const struct cfi_fde *a = x, *b = y;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const struct cfi_cie *find_cie(const struct cfi_cie *cies, size_t n, uint64_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cies[mid].off == off)
			return &cies[mid];
		if (cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Compiles one CFI section into out->rows. */
static int compile_section(Elf *elf, const struct cfi_arch *a, const struct cfi_section *s,
			   struct uw_table *out)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Data data = { .d_buf = (void *)s->base, .d_size = s->size, .d_type = ELF_T_BYTE };
	struct cfi_cie *cies = NULL;
	struct cfi_fde_raw *raws = NULL;
	struct cfi_fde *fdes = NULL;
	size_t ncies = 0, ccies = 0, nraws = 0, craws = 0, nfdes = 0;
	struct cfi_rows b = { 0 };
	Dwarf_Off off = 0;
	int err = 0;

	if (!ident)
		return -ENOEXEC;
	for (;;) {
		Dwarf_CFI_Entry e;
		Dwarf_Off next = (Dwarf_Off)-1;

		/* A zero length word ends .eh_frame (crtend's terminator). */
		if (s->eh && off + 4 <= s->size && !memcmp(s->base + off, "\0\0\0\0", 4))
			break;
		int rc = dwarf_next_cfi(ident, &data, s->eh, off, &next, &e);
		if (rc == 1)
			break;
		if (rc < 0) {
			out->stats.fdes_bad++;
			if (next == (Dwarf_Off)-1 || next <= off)
				break; /* the entry's length is unusable: nothing after it can be found */
			off = next;
			continue;
		}
		if (dwarf_cfi_cie_p(&e)) {
			if ((err = ep_vec_grow((void **)&cies, &ccies, ncies + 1, sizeof(*cies))))
				goto out;
			parse_cie(&e.cie, off, s, &cies[ncies++]);
		} else {
			if ((err = ep_vec_grow((void **)&raws, &craws, nraws + 1, sizeof(*raws))))
				goto out;
			raws[nraws++] =
				(struct cfi_fde_raw){ e.fde.CIE_pointer, e.fde.start, e.fde.end };
		}
		if (next <= off)
			break;
		off = next;
	}

	if (nraws && !(fdes = malloc(nraws * sizeof(*fdes)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nraws; i++) {
		const struct cfi_cie *c = find_cie(cies, ncies, raws[i].cie_off);
		struct cfi_rd r = { raws[i].start, raws[i].end, false };
		uint64_t lo, range;

		if (!c || !c->ok) {
			out->stats.fdes_bad++;
			continue;
		}
		if (s->eh) {
			if (!cfi_rd_encoded(&r, c->fde_enc, s, true, &lo) ||
			    !cfi_rd_encoded(&r, c->fde_enc & 0x0f, s, false, &range)) {
				out->stats.fdes_bad++;
				continue;
			}
		} else {
			lo = cfi_rd_bytes(&r, 8);
			range = cfi_rd_bytes(&r, 8);
		}
		if (c->aug_z) {
			uint64_t len = cfi_rd_uleb(&r);
			if (!r.bad && len <= (uint64_t)(r.end - r.p))
				r.p += len;
			else
				r.bad = true;
		}
		if (r.bad) {
			out->stats.fdes_bad++;
			continue;
		}
		out->stats.fdes++;
		/* Zero-length FDEs and those of discarded sections (lo 0)
		 * describe no code. */
		if (!range || !lo)
			continue;
		if (lo >= UINT32_MAX) {
			out->stats.fdes_bad++; /* the row format keeps 32-bit pcs */
			continue;
		}
		uint64_t hi = lo + range < lo || lo + range > UINT32_MAX ? UINT32_MAX : lo + range;
		fdes[nfdes] = (struct cfi_fde){ lo, hi, r.p, raws[i].end, c, (uint32_t)i };
		nfdes++;
	}
	if (nfdes)
		qsort(fdes, nfdes, sizeof(*fdes), cmp_fde);

	for (size_t i = 0; i < nfdes; i++) {
		uint64_t limit = fdes[i].hi;
		if (i + 1 < nfdes && fdes[i + 1].lo < limit)
			limit = fdes[i + 1].lo; /* overlapping FDEs: the later start wins */
		if (limit <= fdes[i].lo)
			continue;
		err = cfi_compile_fde(a, s, &fdes[i], limit, &b);
		if (err == 1) {
			out->stats.fdes_bad++;
			err = 0;
		}
		if (err)
			goto out;
		/* The gap up to the next FDE (or past the last) has no CFI. */
		if ((err = cfi_emit(&b, limit, cfi_row_none)))
			goto out;
	}
	out->rows = b.rows;
	out->n = b.n;
	b.rows = NULL;
	if (out->n) {
		struct ep_uw_row *shrunk = realloc(out->rows, (size_t)out->n * sizeof(*out->rows));
		if (shrunk)
			out->rows = shrunk;
	}
	for (uint32_t i = 0; i < out->n; i++)
		out->stats.rows_unsupported += out->rows[i].cfa == EP_UW_CFA_UNSUPPORTED;
out:
	free(b.rows);
	free(fdes);
	free(raws);
	free(cies);
	return err;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if ((n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static int section_of(Elf_Scn *scn, bool eh, struct cfi_section *s)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh))
		return -ENOEXEC;
	/* .debug_frame may be compressed (SHF_COMPRESSED); libelf inflates
	 * it in memory, the file is untouched. */
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -ENOEXEC;
	if (!(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return -ENOEXEC;
	*s = (struct cfi_section){ d->d_buf, d->d_size, sh.sh_addr, eh };
	return 0;
}

int uw_table_arch_of(Elf *elf, enum uw_arch *arch)
{
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	switch (eh.e_machine) {
	case EM_X86_64:
		*arch = UW_ARCH_X86_64;
		return 0;
	case EM_AARCH64:
		*arch = UW_ARCH_ARM64;
		return 0;
	default:
		return -ENOEXEC;
	}
}

int uw_table_build(Elf *elf, struct uw_table *out)
{
	struct timespec t0, t1;
	struct cfi_arch a;
	struct cfi_section s;
	Elf_Scn *scn;
	enum uw_arch arch;
	int err;

	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = uw_table_arch_of(elf, &arch)))
		return err;
	/* DWARF register numbers: x86_64 psABI (rsp 7, rbp 6), AArch64 DWARF
	 * ABI (sp 31, x29 29). The return address column is the CIE's. */
	a = arch == UW_ARCH_X86_64 ? (struct cfi_arch){ arch, 7, 6 }
				   : (struct cfi_arch){ arch, 31, 29 };
	out->arch = arch;
	if ((scn = find_section(elf, ".eh_frame"))) {
		if ((err = section_of(scn, true, &s)) || (err = compile_section(elf, &a, &s, out)))
			goto fail;
		if (out->n)
			out->source = UW_SRC_EH_FRAME;
	}
	if (!out->n && (scn = find_section(elf, ".debug_frame"))) {
		struct uw_table_stats keep = out->stats;
		out->stats = (struct uw_table_stats){ 0 };
		if ((err = section_of(scn, false, &s)) || (err = compile_section(elf, &a, &s, out)))
			goto fail;
		out->stats.fdes += keep.fdes;
		out->stats.fdes_bad += keep.fdes_bad;
		if (out->n)
			out->source = UW_SRC_DEBUG_FRAME;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->stats.build_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
			      (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	return 0;
fail:
	uw_table_free(out);
	return err;
}

const struct ep_uw_row *uw_table_find(const struct uw_table *t, uint32_t pc)
{
	uint32_t lo = 0, hi;

	/* The last row only ends the table (past the last FDE). */
	if (!t || t->n < 2 || pc < t->rows[0].pc || pc >= t->rows[t->n - 1].pc)
		return NULL;
	hi = t->n - 1;
	/* The last row with rows[i].pc <= pc: rows[lo].pc <= pc < rows[hi].pc */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

void uw_table_free(struct uw_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}
