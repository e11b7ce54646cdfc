// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind-table compiler (user/unwind/cfi_table.c): its rows against
 * `readelf --debug-dump=frames-interp` on real objects (Debian's libc and
 * libsqlite3, a C++ library and a .debug_frame-only library built in
 * tests/elf, an AArch64 library), the rules readelf's table cannot tell
 * apart (PLT, stack realignment, signal frames), bad input (mutated and
 * truncated .eh_frame, no CFI, wrong machine) and uw_table_find's edges.
 * UNSUPPORTED rows are no wildcard: they must be exactly the rows whose
 * rules, as readelf prints them, no walker row can express.
 */
#include "check.h"
#include "unwind/cfi_program.h"
#include "unwind/cfi_table.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *build_dir(void)
{
	const char *b = getenv("EP_BUILD_DIR");
	return b ? b : ".";
}

static char *read_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (buf = malloc((size_t)st.st_size + 1))) {
		size_t got = 0;
		while (got < (size_t)st.st_size) {
			ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		*size = got;
	}
	close(fd);
	return buf;
}

static int build_file(const char *path, struct uw_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	int rc;

	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = uw_table_build(e, t);
	elf_end(e);
	close(fd);
	return rc;
}

/* Every built table: sorted, valid enums, ends with a NONE row. */
static void check_invariants(const struct uw_table *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ep_uw_row *r = &t->rows[i];
		CHECK(r->cfa <= EP_UW_CFA_FP_DEREF);
		CHECK(r->fp <= EP_UW_REG_AT_SP);
		if (i) {
			CHECK(r->pc > t->rows[i - 1].pc);
			CHECK(memcmp(&r->cfa_off, &t->rows[i - 1].cfa_off, 8) != 0);
		}
	}
	if (t->n)
		CHECK_INT_EQ(t->rows[t->n - 1].cfa, EP_UW_CFA_NONE);
}

/* ---- readelf --debug-dump=frames-interp ---- */

struct rrow {
	uint64_t loc;
	char cfa[24], fp[16], ra[16];
};

struct rfde {
	uint64_t lo, hi;
	uint32_t first, n; /* rows in the row array; n == 0: the CIE's first row */
	uint64_t cie;
};

struct rcie {
	uint64_t off;
	struct rrow row;
};

struct rdump {
	struct rrow *rows;
	struct rfde *fdes;
	struct rcie *cies;
	size_t nrows, nfdes, ncies;
};

static void *push(void *arr, size_t *n, size_t elem)
{
	/* Doubling capacity at powers of two. */
	size_t cap = 1;
	while (cap < *n + 1)
		cap *= 2;
	if (!(*n & (*n - 1)) || !*n)
		arr = realloc(arr, cap * 2 * elem);
	if (!arr)
		abort();
	(*n)++;
	return arr;
}

/* Parses readelf's interpreted frames: per FDE its range and rows with the
 * CFA, the frame pointer's and the return address' columns. */
static int readelf_dump(const char *path, const char *fp_name, struct rdump *d)
{
	char cmd[512], line[1024];
	char cols[16][16];
	int ncols = 0;
	bool in_cie = false;
	FILE *p;

	memset(d, 0, sizeof(*d));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, len, id, lo, hi, cie;
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie,
			   &lo, &hi) == 6) {
			d->fdes = push(d->fdes, &d->nfdes, sizeof(*d->fdes));
			d->fdes[d->nfdes - 1] = (struct rfde){ lo, hi, (uint32_t)d->nrows, 0, cie };
			in_cie = false;
			ncols = 0;
			continue;
		}
		if (strstr(line, " CIE") &&
		    sscanf(line, "%llx %llx %llx CIE", &off, &len, &id) == 3) {
			d->cies = push(d->cies, &d->ncies, sizeof(*d->cies));
			memset(&d->cies[d->ncies - 1], 0, sizeof(*d->cies));
			d->cies[d->ncies - 1].off = off;
			in_cie = true;
			ncols = 0;
			continue;
		}
		if (strstr(line, "ZERO terminator")) {
			ncols = 0;
			continue;
		}
		/* "r10 (r10)": one column's value. */
		for (char *q; (q = strstr(line, " ("));)
			memmove(q, q + 1, strlen(q + 1) + 1);
		if (strstr(line, "   LOC ")) {
			char *save, *tok = strtok_r(line, " \n", &save);
			ncols = 0;
			while ((tok = strtok_r(NULL, " \n", &save)) && ncols < 16)
				snprintf(cols[ncols++], sizeof(cols[0]), "%s", tok);
			continue;
		}
		if (!ncols)
			continue;
		char *save, *tok = strtok_r(line, " \n", &save);
		char *end;
		if (!tok)
			continue;
		unsigned long long loc = strtoull(tok, &end, 16);
		if (*end)
			continue;
		struct rrow r = { .loc = loc };
		for (int c = 0; c < ncols && (tok = strtok_r(NULL, " \n", &save)); c++) {
			if (!strcmp(cols[c], "CFA"))
				snprintf(r.cfa, sizeof(r.cfa), "%s", tok);
			else if (!strcmp(cols[c], fp_name))
				snprintf(r.fp, sizeof(r.fp), "%s", tok);
			else if (!strcmp(cols[c], "ra"))
				snprintf(r.ra, sizeof(r.ra), "%s", tok);
		}
		if (in_cie) {
			if (!d->cies[d->ncies - 1].row.cfa[0])
				d->cies[d->ncies - 1].row = r;
		} else if (d->nfdes) {
			d->rows = push(d->rows, &d->nrows, sizeof(*d->rows));
			d->rows[d->nrows - 1] = r;
			d->fdes[d->nfdes - 1].n++;
		}
	}
	/* readelf exits 1 after warnings about sections it does not dump. */
	pclose(p);
	return d->nfdes ? 0 : -1;
}

static void rdump_free(struct rdump *d)
{
	free(d->rows);
	free(d->fdes);
	free(d->cies);
}

static int cmp_rfde(const void *a, const void *b)
{
	const struct rfde *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool is_expr_cfa(uint8_t cfa)
{
	return cfa == EP_UW_CFA_PLT || cfa == EP_UW_CFA_SIGNAL || cfa == EP_UW_CFA_FP_DEREF;
}

/*
 * Rules readelf prints that no walker row can express: there, and only
 * there, the table may say UNSUPPORTED (the walk ends, counted). Anything
 * else marked UNSUPPORTED is a row the table builder gave up on.
 */
enum inexpr {
	IX_NONE = 0,
	IX_CFA_REG,  /* CFA from a register other than sp and the frame pointer */
	IX_CFA_EXPR, /* a CFA expression other than the PLT, realignment and signal forms */
	IX_RA,	     /* return address in a register, or at no usable offset */
	IX__COUNT,
};

static const char *const ix_names[IX__COUNT] = { "none", "cfa-register", "cfa-expression",
						 "return-address" };

/* FDEs (by start address, sorted) of signal frames ('S' augmentation: the
 * table's SIGNAL rows, whatever the rules) and FDEs with a CFA expression
 * of none of the forms the walker evaluates (the .plt expression,
 * DW_OP_breg<fp> N; DW_OP_deref), from raw `readelf --debug-dump=frames`. */
enum { FDE_OTHER_EXPR = 1, FDE_SIGNAL = 2 };

struct fde_flag {
	uint64_t lo;
	int flags;
};

struct fde_set {
	struct fde_flag *e;
	size_t n;
};

static int cmp_flag(const void *a, const void *b)
{
	uint64_t x = ((const struct fde_flag *)a)->lo, y = ((const struct fde_flag *)b)->lo;
	return x < y ? -1 : x > y;
}

static bool known_expr(const char *e, bool arm64)
{
	char reg[16];
	int off, used = 0;

	if (!arm64 && strstr(e, "DW_OP_breg7 (rsp): ") == e &&
	    strstr(e, "; DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; DW_OP_lit"))
		return true;
	/* DW_OP_breg6 (rbp): -8; DW_OP_deref) */
	if (sscanf(e, "DW_OP_breg%*d (%15[^)]): %d; DW_OP_deref)%n", reg, &off, &used) == 2 &&
	    used && !strcmp(reg, arm64 ? "x29" : "rbp"))
		return e[used] == '\0' || e[used] == '\n';
	return false;
}

static void special_fdes(const char *path, bool arm64, struct fde_set *set)
{
	char cmd[512], line[1024];
	unsigned long long off, len, id, cie, l, h, cur = 0, cie_off = 0;
	uint64_t signal_cies[64];
	size_t nsig = 0;
	bool in_fde = false, cie_signal = false, fde_signal = false;
	FILE *p;

	memset(set, 0, sizeof(*set));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), p)) {
		const char *e;
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie,
			   &l, &h) == 6) {
			cur = l;
			in_fde = true;
			fde_signal = false;
			for (size_t i = 0; i < nsig; i++)
				fde_signal |= signal_cies[i] == cie;
			if (fde_signal) {
				set->e = push(set->e, &set->n, sizeof(*set->e));
				set->e[set->n - 1] = (struct fde_flag){ cur, FDE_SIGNAL };
			}
			continue;
		}
		if (strstr(line, " CIE") &&
		    sscanf(line, "%llx %llx %llx CIE", &off, &len, &id) == 3) {
			/* off is scratch: the FDE pattern reads hex from any line. */
			cie_off = off;
			in_fde = false;
			cie_signal = false;
			continue;
		}
		if (!in_fde && (e = strstr(line, "Augmentation:")) && strchr(e, '"') &&
		    strchr(strchr(e, '"'), 'S') && !cie_signal && nsig < 64) {
			cie_signal = true;
			signal_cies[nsig++] = cie_off;
			continue;
		}
		e = strstr(line, "DW_CFA_def_cfa_expression (");
		if (!e || !in_fde || fde_signal)
			continue;
		if (known_expr(e + strlen("DW_CFA_def_cfa_expression ("), arm64))
			continue;
		if (set->n && set->e[set->n - 1].lo == cur)
			continue;
		set->e = push(set->e, &set->n, sizeof(*set->e));
		set->e[set->n - 1] = (struct fde_flag){ cur, FDE_OTHER_EXPR };
	}
	pclose(p);
	if (set->n)
		qsort(set->e, set->n, sizeof(*set->e), cmp_flag);
}

static int fde_flags(const struct fde_set *set, uint64_t lo)
{
	struct fde_flag key = { lo, 0 };
	const struct fde_flag *f = set->n ? bsearch(&key, set->e, set->n, sizeof(*set->e), cmp_flag)
					  : NULL;

	return f ? f->flags : 0;
}

/* What a readelf row asks for that the walker cannot do, if anything (the
 * rules of to_row in user/unwind/cfi_program.c seen from outside: the
 * walker knows sp- and frame-pointer-based CFAs, three expressions, the
 * return address at CFA-8 on x86_64 and in x30 or at an 8-byte slot near
 * the CFA or sp on arm64). */
static enum inexpr inexpressible(const struct rrow *r, bool arm64, int fde)
{
	const char *sp = arm64 ? "sp+" : "rsp+", *fp = arm64 ? "x29+" : "rbp+";
	bool sp_cfa = !strncmp(r->cfa, sp, strlen(sp));

	if (!strcmp(r->ra, "u") && !arm64)
		return IX_NONE; /* the outermost frame: END */
	if (!strcmp(r->cfa, "exp")) {
		if (fde & FDE_SIGNAL)
			return IX_NONE; /* all registers from the signal frame */
		if (fde & FDE_OTHER_EXPR)
			return IX_CFA_EXPR;
	} else if (!sp_cfa && strncmp(r->cfa, fp, strlen(fp))) {
		return IX_CFA_REG;
	}
	if (!arm64)
		return strcmp(r->ra, "c-8") ? IX_RA : IX_NONE;
	if (!r->ra[0] || !strcmp(r->ra, "u") || !strcmp(r->ra, "s"))
		return IX_NONE;
	if (r->ra[0] == 'c') {
		long n = strtol(r->ra + 1, NULL, 10);
		long cfa_off = sp_cfa ? strtol(r->cfa + strlen(sp), NULL, 10) : 0;
		/* An 8-byte slot within +-1 KiB of the CFA, or above sp. */
		if (n % 8 == 0 && ((n >= -1024 && n <= 1016 && n) ||
				   (sp_cfa && n + cfa_off > 0 && n + cfa_off <= 1016)))
			return IX_NONE;
	}
	return IX_RA;
}

struct cmp_stats {
	unsigned checked, mismatches;
	unsigned unsupported[IX__COUNT];   /* table UNSUPPORTED, by readelf's kind */
	unsigned inexpressible[IX__COUNT]; /* readelf rows of each kind */
};

/* One readelf row the walker can express against the table's row at pc. */
static bool row_matches(const struct ep_uw_row *t, const struct rrow *r, bool arm64)
{
	const char *sp = arm64 ? "sp+" : "rsp+", *fp = arm64 ? "x29+" : "rbp+";
	long n;

	if (!t)
		return false;
	/* x86_64 always defines ra; on arm64 'u' is also "not yet saved". */
	if (!strcmp(r->ra, "u") && !arm64)
		return t->cfa == EP_UW_CFA_END;
	if (t->cfa == EP_UW_CFA_END)
		return !strcmp(r->ra, "u");
	if (!strncmp(r->cfa, sp, strlen(sp))) {
		n = strtol(r->cfa + strlen(sp), NULL, 10);
		if (t->cfa != EP_UW_CFA_SP || t->cfa_off != n)
			return false;
	} else if (!strncmp(r->cfa, fp, strlen(fp))) {
		n = strtol(r->cfa + strlen(fp), NULL, 10);
		if (t->cfa != EP_UW_CFA_FP || t->cfa_off != n)
			return false;
	} else if (!strcmp(r->cfa, "exp")) {
		if (!is_expr_cfa(t->cfa))
			return false;
		if (t->cfa == EP_UW_CFA_SIGNAL)
			return true;
	} else {
		return false;
	}
	/* The return address. */
	if (!arm64) {
		if (strcmp(r->ra, "c-8") || t->ra_off8 != -1)
			return false;
	} else {
		if (!strcmp(r->ra, "u") || !strcmp(r->ra, "s") || !r->ra[0]) {
			if (t->ra_off8 != 0)
				return false;
		} else if (r->ra[0] == 'c') {
			/* EP_UW_REG_AT_SP: from sp, which is CFA - cfa_off. */
			long base = t->fp == EP_UW_REG_AT_SP ? -(long)t->cfa_off : 0;

			if (base + t->ra_off8 * 8 != strtol(r->ra + 1, NULL, 10))
				return false;
		} else {
			return false;
		}
	}
	/* The caller's frame pointer: absent/u/s = unchanged. */
	if (!r->fp[0] || !strcmp(r->fp, "u") || !strcmp(r->fp, "s"))
		return t->fp == EP_UW_REG_SAME ||
		       (!strcmp(r->fp, "u") && t->fp == EP_UW_REG_UNDEF) ||
		       (t->fp == EP_UW_REG_AT_SP && t->fp_off8 < 0);
	if (r->fp[0] == 'c') {
		long off = strtol(r->fp + 1, NULL, 10);
		if (off % 8)
			return t->fp == EP_UW_REG_UNDEF;
		if (t->fp == EP_UW_REG_AT_SP)
			return t->fp_off8 * 8 - t->cfa_off == off;
		return t->fp == EP_UW_REG_AT_CFA && t->fp_off8 * 8 == off;
	}
	if (!strcmp(r->fp, "exp"))
		return t->fp == EP_UW_REG_AT_FP || t->fp == EP_UW_REG_UNDEF;
	return t->fp == EP_UW_REG_UNDEF;
}

/* Compares every row readelf prints (at its first and last byte) with the
 * table. FDEs that overlap another are left out: the table keeps one. A
 * table row marked UNSUPPORTED matches only a readelf row the walker
 * cannot express, and every such readelf row must be UNSUPPORTED: the
 * unsupported rows are exactly, in number and kind, what readelf shows to
 * be beyond the walker. */
static void compare_with_readelf(const char *path, bool arm64, unsigned min_rows)
{
	struct uw_table t;
	struct rdump d;
	struct fde_set special;
	struct cmp_stats st = { 0 };
	int rc = build_file(path, &t);

	CHECK_INT_EQ(rc, 0);
	if (rc)
		return;
	check_invariants(&t);
	CHECK_INT_EQ(t.arch, arm64 ? UW_ARCH_ARM64 : UW_ARCH_X86_64);
	CHECK_INT_EQ(readelf_dump(path, arm64 ? "x29" : "rbp", &d), 0);
	CHECK(d.nfdes > 0);
	special_fdes(path, arm64, &special);
	/* Ranges in address order to spot overlaps; rows stay in FDE order. */
	struct rfde *sorted = malloc((d.nfdes ? d.nfdes : 1) * sizeof(*sorted));
	memcpy(sorted, d.fdes, d.nfdes * sizeof(*sorted));
	qsort(sorted, d.nfdes, sizeof(*sorted), cmp_rfde);
	for (size_t i = 0; i < d.nfdes; i++) {
		const struct rfde *f = &sorted[i];
		if (f->lo == f->hi || !f->lo)
			continue;
		if ((i && sorted[i - 1].hi > f->lo) ||
		    (i + 1 < d.nfdes && sorted[i + 1].lo < f->hi))
			continue;
		struct rrow cie_row = { 0 };
		for (size_t c = 0; c < d.ncies; c++)
			if (d.cies[c].off == f->cie)
				cie_row = d.cies[c].row;
		int fde = fde_flags(&special, f->lo);
		uint32_t nr = f->n ? f->n : 1;
		for (uint32_t k = 0; k < nr; k++) {
			const struct rrow *r = f->n ? &d.rows[f->first + k] : &cie_row;
			uint64_t lo = f->n ? r->loc : f->lo;
			uint64_t hi = f->n && k + 1 < f->n ? d.rows[f->first + k + 1].loc : f->hi;
			if (lo >= hi)
				continue;
			enum inexpr kind = inexpressible(r, arm64, fde);
			uint64_t pcs[2] = { lo, hi - 1 };
			for (int j = 0; j < 2; j++) {
				const struct ep_uw_row *tr = uw_table_find(&t, (uint32_t)pcs[j]);
				bool unsup = tr && tr->cfa == EP_UW_CFA_UNSUPPORTED;
				bool ok = unsup ? kind != IX_NONE
						: kind == IX_NONE && row_matches(tr, r, arm64);
				st.checked++;
				st.inexpressible[kind]++;
				st.unsupported[kind] += unsup;
				if (!ok) {
					if (st.mismatches++ < 10)
						fprintf(stderr,
							"%s: pc %#llx: readelf cfa=%s fp=%s ra=%s (%s), "
							"table cfa=%d off=%d fp=%d/%d ra=%d\n",
							path, (unsigned long long)pcs[j], r->cfa,
							r->fp, r->ra,
							kind ? "beyond the walker" : "expressible",
							tr ? tr->cfa : -1, tr ? tr->cfa_off : 0,
							tr ? tr->fp : -1, tr ? tr->fp_off8 : 0,
							tr ? tr->ra_off8 : 0);
				}
			}
		}
		/* Just past the FDE: a gap (NONE), the next FDE or the end. */
		const struct ep_uw_row *after = uw_table_find(&t, (uint32_t)f->hi);
		if (!(i + 1 < d.nfdes && sorted[i + 1].lo == f->hi))
			CHECK(!after || after->cfa == EP_UW_CFA_NONE);
	}
	unsigned unsup = 0, beyond = 0;
	for (int k = IX_NONE + 1; k < IX__COUNT; k++) {
		unsup += st.unsupported[k];
		beyond += st.inexpressible[k];
		if (st.inexpressible[k])
			fprintf(stderr,
				"%s: %u rows with a %s rule readelf shows, %u UNSUPPORTED\n", path,
				st.inexpressible[k], ix_names[k], st.unsupported[k]);
	}
	fprintf(stderr,
		"%s: %u rows of %zu FDEs checked against readelf, %u mismatches, %u UNSUPPORTED "
		"(readelf: %u beyond the walker)\n",
		path, st.checked, d.nfdes, st.mismatches, unsup, beyond);
	CHECK_INT_EQ(st.mismatches, 0);
	/* Implied by the row checks; said once more as the bound it is. */
	CHECK_INT_EQ(st.unsupported[IX_NONE], 0);
	CHECK_INT_EQ(unsup, beyond);
	CHECK(st.checked >= min_rows);
	free(sorted);
	free(special.e);
	rdump_free(&d);
	uw_table_free(&t);
}

/* ---- rules readelf prints as "exp" ---- */

/* Address ranges of the FDEs whose raw CFI contains needle, per readelf. */
static size_t fdes_with(const char *path, const char *needle, uint64_t *lo, size_t max)
{
	char cmd[512], line[1024];
	unsigned long long off, len, id, cie, l, h, cur = 0;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie,
			   &l, &h) == 6)
			cur = l;
		else if (strstr(line, needle) && n < max && (!n || lo[n - 1] != cur))
			lo[n++] = cur;
	}
	pclose(p);
	return n;
}

static bool table_has_in(const struct uw_table *t, uint64_t lo, uint8_t cfa)
{
	const struct ep_uw_row *r = uw_table_find(t, (uint32_t)lo);
	uint32_t i = r ? (uint32_t)(r - t->rows) : t->n;

	/* Any row of the FDE starting at lo, up to the next gap. */
	for (; i < t->n && t->rows[i].cfa != EP_UW_CFA_NONE; i++)
		if (t->rows[i].cfa == cfa)
			return true;
	return false;
}

/* PLT rows carry the threshold of their expression (11, or 9/10 with IBT):
 * checked on every PLT FDE of path against readelf's raw dump. */
static unsigned check_plt(const char *path, int want_k)
{
	char cmd[512], line[1024];
	unsigned long long off, len, id, cie, l, h, cur = 0;
	unsigned n = 0;
	struct uw_table t;
	FILE *p;

	CHECK_INT_EQ(build_file(path, &t), 0);
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), p)) {
		const char *e = strstr(line, "DW_OP_lit15; DW_OP_and; DW_OP_lit");
		int k;
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie,
			   &l, &h) == 6)
			cur = l;
		if (!e || sscanf(e, "DW_OP_lit15; DW_OP_and; DW_OP_lit%d; DW_OP_ge", &k) != 1)
			continue;
		if (want_k >= 0)
			CHECK_INT_EQ(k, want_k);
		else
			CHECK(k == 9 || k == 10);
		/* The second entry (the first is PLT0), at and around its jump. */
		for (uint64_t pc = cur + 16; pc < cur + 32; pc++) {
			const struct ep_uw_row *r = uw_table_find(&t, (uint32_t)pc);
			CHECK(r && r->cfa == EP_UW_CFA_PLT && r->cfa_off == 8 && r->fp_off8 == k &&
			      r->fp == EP_UW_REG_SAME && r->ra_off8 == -1);
		}
		n++;
	}
	pclose(p);
	uw_table_free(&t);
	return n;
}

static void test_expression_rules(const char *libc, const char *cpp)
{
	struct uw_table t;
	uint64_t lo[64];
	size_t n;

	/* libc: .plt's expression and __restore_rt's signal frame. */
	CHECK(check_plt(libc, 11) >= 1);
	CHECK_INT_EQ(build_file(libc, &t), 0);
	n = fdes_with(libc, "DW_OP_breg7 (rsp): 160; DW_OP_deref", lo, 64);
	CHECK(n >= 1);
	for (size_t i = 0; i < n; i++) {
		const struct ep_uw_row *r = uw_table_find(&t, (uint32_t)lo[i] + 1);
		CHECK(r && r->cfa == EP_UW_CFA_SIGNAL);
	}
	uw_table_free(&t);

	/* The C++ fixture: gcc's realignment of cfitest::realigned. */
	CHECK_INT_EQ(build_file(cpp, &t), 0);
	n = fdes_with(cpp, "; DW_OP_deref)", lo, 64);
	CHECK(n >= 1);
	for (size_t i = 0; i < n; i++)
		CHECK(table_has_in(&t, lo[i], EP_UW_CFA_FP_DEREF));
	unsigned deref_rows = 0;
	for (uint32_t i = 0; i < t.n; i++) {
		if (t.rows[i].cfa != EP_UW_CFA_FP_DEREF)
			continue;
		deref_rows++;
		CHECK(t.rows[i].cfa_off < 0 && t.rows[i].cfa_off % 8 == 0);
		CHECK_INT_EQ(t.rows[i].fp, EP_UW_REG_AT_FP);
		CHECK_INT_EQ(t.rows[i].fp_off8, 0);
	}
	CHECK(deref_rows >= 1);
	uw_table_free(&t);
}

/* ---- bad input ---- */

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Offset and size of a section in an ELF image, 0 when absent. */
static size_t section_span(char *img, size_t size, const char *name, size_t *len)
{
	Elf *e = elf_memory(img, size);
	size_t shstrndx, off = 0;
	Elf_Scn *scn = NULL;

	*len = 0;
	if (!e || elf_getshdrstrndx(e, &shstrndx)) {
		elf_end(e);
		return 0;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name)) {
			off = sh.sh_offset;
			*len = sh.sh_size;
		}
	}
	elf_end(e);
	return off;
}

static int build_mem(char *img, size_t size, struct uw_table *t)
{
	Elf *e = elf_memory(img, size);
	int rc = uw_table_build(e, t);
	elf_end(e);
	return rc;
}

static void test_mutations(const char *path, const char *section, unsigned rounds)
{
	size_t size, len, off;
	char *orig = read_file(path, &size), *img;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned ok = 0, failed = 0, bad = 0;

	CHECK(orig != NULL);
	if (!orig)
		return;
	off = section_span(orig, size, section, &len);
	CHECK(off > 0 && len > 64);
	img = malloc(size);
	for (unsigned i = 0; i < rounds && len; i++) {
		struct uw_table t;
		memcpy(img, orig, size);
		unsigned flips = 1 + (unsigned)(xorshift(&seed) % 16);
		for (unsigned k = 0; k < flips; k++) {
			size_t at = off + (size_t)(xorshift(&seed) % len);
			/* Mostly small changes (lengths, opcodes), some random bytes. */
			img[at] = (char)(k & 1 ? xorshift(&seed)
					       : (uint64_t)img[at] ^ (1u << (k % 8)));
		}
		int rc = build_mem(img, size, &t);
		CHECK(rc == 0 || rc == -ENOEXEC);
		if (rc == 0) {
			check_invariants(&t);
			ok++;
			bad += t.stats.fdes_bad > 0;
		} else {
			failed++;
		}
		uw_table_free(&t);
	}
	/* Truncated files: cut inside the section and just after the headers. */
	size_t cuts[] = { off + len / 2, off + 3, 64, 0 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct uw_table t;
		memcpy(img, orig, size);
		int rc = build_mem(img, cuts[i], &t);
		CHECK(rc == 0 || rc == -ENOEXEC);
		if (rc == 0)
			check_invariants(&t);
		uw_table_free(&t);
	}
	fprintf(stderr, "%s: %u mutated copies: %u built (%u with bad FDEs), %u rejected\n", path,
		rounds, ok, bad, failed);
	free(img);
	free(orig);
}

/* Renames sections in a copy so the object has no CFI; patches e_machine. */
static void test_no_cfi_wrong_machine(const char *path)
{
	size_t size;
	char *img = read_file(path, &size);
	struct uw_table t;

	CHECK(img != NULL);
	if (!img)
		return;
	for (size_t i = 0; i + 10 < size; i++) {
		if (!memcmp(img + i, ".eh_frame", 9) || !memcmp(img + i, ".debug_frame", 12))
			img[i + 1] = 'X';
	}
	CHECK_INT_EQ(build_mem(img, size, &t), 0);
	CHECK_INT_EQ(t.n, 0);
	CHECK_INT_EQ(t.source, UW_SRC_NONE);
	CHECK(uw_table_find(&t, 0x1000) == NULL);
	uw_table_free(&t);
	free(img);

	img = read_file(path, &size);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	eh->e_machine = EM_PPC64;
	CHECK_INT_EQ(build_mem(img, size, &t), -ENOEXEC);
	CHECK_INT_EQ(t.n, 0);
	eh->e_machine = EM_X86_64;
	eh->e_ident[EI_DATA] = ELFDATA2MSB;
	CHECK_INT_EQ(build_mem(img, size, &t), -ENOEXEC);
	/* Not an ELF file at all. */
	memcpy(img, "#!/bin/sh\n", 10);
	CHECK_INT_EQ(build_mem(img, size, &t), -ENOEXEC);
	CHECK_INT_EQ(uw_table_build(NULL, &t), -ENOEXEC);
	free(img);
}

static void test_debug_frame(const char *path)
{
	struct uw_table t;

	CHECK_INT_EQ(build_file(path, &t), 0);
	CHECK_INT_EQ(t.source, UW_SRC_DEBUG_FRAME);
	CHECK(t.n >= 4);
	uw_table_free(&t);
	compare_with_readelf(path, false, 8);
}

/* ---- uw_table_find ---- */

static void test_find_edges(void)
{
	struct ep_uw_row rows[] = {
		{ .pc = 0x1000, .cfa = EP_UW_CFA_SP, .cfa_off = 8, .ra_off8 = -1 },
		{ .pc = 0x1004, .cfa = EP_UW_CFA_SP, .cfa_off = 16, .ra_off8 = -1 },
		{ .pc = 0x1010, .cfa = EP_UW_CFA_NONE },
		{ .pc = 0x2000, .cfa = EP_UW_CFA_FP, .cfa_off = 16, .ra_off8 = -1 },
		{ .pc = 0xfffffff0, .cfa = EP_UW_CFA_NONE },
	};
	struct uw_table t = { .rows = rows, .n = 5 };

	CHECK(uw_table_find(&t, 0) == NULL);
	CHECK(uw_table_find(&t, 0xfff) == NULL);
	CHECK(uw_table_find(&t, 0x1000) == &rows[0]);
	CHECK(uw_table_find(&t, 0x1003) == &rows[0]);
	CHECK(uw_table_find(&t, 0x1004) == &rows[1]);
	CHECK(uw_table_find(&t, 0x100f) == &rows[1]);
	CHECK(uw_table_find(&t, 0x1010) == &rows[2]);
	CHECK(uw_table_find(&t, 0x1fff) == &rows[2]);
	CHECK(uw_table_find(&t, 0x2000) == &rows[3]);
	CHECK(uw_table_find(&t, 0xffffffef) == &rows[3]);
	CHECK(uw_table_find(&t, 0xfffffff0) == NULL);
	CHECK(uw_table_find(&t, 0xffffffff) == NULL);
	t.n = 1;
	CHECK(uw_table_find(&t, 0x1000) == NULL);
	t.n = 2;
	CHECK(uw_table_find(&t, 0x1000) == &rows[0]);
	CHECK(uw_table_find(&t, 0x1004) == NULL);
	t.n = 0;
	CHECK(uw_table_find(&t, 0x1000) == NULL);
	CHECK(uw_table_find(NULL, 0x1000) == NULL);
	struct uw_table empty = { 0 };
	uw_table_free(&empty);
	uw_table_free(NULL);
}

/* Register offsets and CFA offsets are operand x data alignment factor:
 * products that do not fit in 64 bits are malformed CFI, the FDE is not
 * followed past them, and nothing overflows (found by
 * fuzz_cfi_table, a DW_CFA_offset of 2^63-1 with a factor of -8, signed
 * overflow under UBSan). */
static void test_scaled_overflow(void)
{
	static const uint8_t big_uleb[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	static const uint8_t min_sleb[] = { 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x80, 0x80, 0x80, 0x80, 0x7f };
	const struct cfi_arch a = { UW_ARCH_X86_64, 7, 6 };
	const struct cfi_section sec = { 0 };
	struct {
		uint8_t op, reg;
		bool has_reg;
		const uint8_t *arg;
		size_t len;
		int64_t daf;
	} cases[] = {
		{ 0x80 | 16, 0, false, big_uleb, sizeof(big_uleb), -8 },   /* DW_CFA_offset */
		{ 0x05, 16, true, big_uleb, sizeof(big_uleb), -8 },	   /* offset_extended */
		{ 0x11, 16, true, min_sleb, sizeof(min_sleb), -1 },	   /* offset_extended_sf */
		{ 0x13, 0, false, min_sleb, sizeof(min_sleb), -1 },	   /* def_cfa_offset_sf */
		{ 0x12, 7, true, min_sleb, sizeof(min_sleb), -1 },	   /* def_cfa_sf */
		{ 0x2f, 16, true, big_uleb, sizeof(big_uleb), INT64_MIN }, /* GNU negative */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t prog[32];
		size_t n = 0;
		struct cfi_cie cie = { .caf = 1, .daf = cases[i].daf, .ra_reg = 16, .ok = true };
		struct cfi_fde f = { .lo = 0x1000, .hi = 0x1100, .cie = &cie };
		struct cfi_rows rows = { 0 };

		prog[n++] = cases[i].op;
		if (cases[i].has_reg)
			prog[n++] = cases[i].reg;
		memcpy(prog + n, cases[i].arg, cases[i].len);
		n += cases[i].len;
		prog[n++] = 0x40 | 4; /* DW_CFA_advance_loc 4 */
		f.ins = prog;
		f.ins_end = prog + n;
		CHECK_INT_EQ(cfi_compile_fde(&a, &sec, &f, f.hi, &rows), 1);
		free(rows.rows);
	}
}

int main(void)
{
	char cpp[4096], dbg[4096], arm[4096], ibt[4096], ggml[4096], llama[4096], lldir[2048];
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	const char *sqlite = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

	elf_version(EV_CURRENT);
	snprintf(cpp, sizeof(cpp), "%s/tests/elf/libcfitest.so", build_dir());
	snprintf(dbg, sizeof(dbg), "%s/tests/elf/libcfidbg.so", build_dir());
	snprintf(arm, sizeof(arm), "%s/tests/elf/libcfiarm64.so", build_dir());
	snprintf(ibt, sizeof(ibt), "%s/tests/elf/libcfitest_ibt.so", build_dir());
	/* node-llama-cpp's build (binutils 2.38: K = 10), when a llama test
	 * fetched it (tests/integration/llama_lib.sh). */
	if (getenv("EP_LLAMA_LIB_DIR"))
		snprintf(lldir, sizeof(lldir), "%s", getenv("EP_LLAMA_LIB_DIR"));
	else
		snprintf(lldir, sizeof(lldir), "%s/llama-npm/package/bins/linux-x64", build_dir());
	snprintf(ggml, sizeof(ggml), "%s/libggml-cpu-haswell.so", lldir);
	snprintf(llama, sizeof(llama), "%s/libllama.v0.5.0.so", lldir);

	test_find_edges();
	test_scaled_overflow();
	compare_with_readelf(libc, false, 20000);
	compare_with_readelf(sqlite, false, 20000);
	compare_with_readelf(cpp, false, 50);
	/* Built when clang and ld.lld (Debian: lld) can target AArch64. */
	if (access(arm, R_OK) == 0) {
		compare_with_readelf(arm, true, 6);
	} else {
		fprintf(stderr, "no %s (ld.lld missing?): arm64 rules not checked\n", arm);
		CHECK(!getenv("CI") || strcmp(getenv("CI"), "true"));
	}
	/* Debian's arm64 libc (libc6:arm64, installed by the cross build):
	 * gcc's frame records at the bottom of frames over 1 KiB. */
	if (access("/lib/aarch64-linux-gnu/libc.so.6", R_OK) == 0)
		compare_with_readelf("/lib/aarch64-linux-gnu/libc.so.6", true, 5000);
	test_debug_frame(dbg);
	/* More objects to compare, by hand: EP_CFI_EXTRA=/path/a.so:/path/b */
	if (getenv("EP_CFI_EXTRA")) {
		char *list = strdup(getenv("EP_CFI_EXTRA")), *save = NULL;
		for (char *f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save))
			compare_with_readelf(f, false, 1);
		free(list);
	}
	test_expression_rules(libc, cpp);
	CHECK(check_plt(ibt, -1) >= 1);
	compare_with_readelf(ibt, false, 50);
	if (access(ggml, R_OK) == 0) {
		CHECK(check_plt(ggml, 10) >= 1);
		compare_with_readelf(ggml, false, 5000);
		compare_with_readelf(llama, false, 20000);
	} else {
		fprintf(stderr, "no %s: node-llama-cpp's libraries not checked\n", ggml);
	}
	test_mutations(cpp, ".eh_frame", 400);
	test_mutations(dbg, ".debug_frame", 400);
	test_mutations(libc, ".eh_frame", 20);
	test_no_cfi_wrong_machine(cpp);
	return check_report("test_cfi_table");
}
