// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CFI table compiler: see cfi_table.h and docs/unwinding.md.
 *
 * libdw's dwarf_next_cfi splits the section into CIEs and FDEs; the CFA
 * programs are interpreted here, once per FDE, tracking only what the
 * walker evaluates (CFA, frame pointer, return address). Asking libdw for
 * the frame at each row (dwarf_cfi_addrframe) re-runs the FDE's program from
 * its start for every row: quadratic in the rows of an FDE, and ~4x over the
 * 300 ms budget on a 30 MB library. Everything read here is outside input:
 * every read is bounded by its entry, every loop consumes bytes, and a
 * program we cannot follow ends its FDE with an UNSUPPORTED row.
 */
#include "unwind/cfi_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Nesting of DW_CFA_remember_state that compilers emit is 1-2 deep. */
#define UW_REMEMBER_MAX 16

struct section {
	const uint8_t *base;
	size_t size;
	uint64_t addr; /* sh_addr: pc-relative pointers are relative to it */
	bool eh;       /* .eh_frame (pointer encodings, augmentations) */
};

/* A bounded reader: a read past end sets bad and returns 0. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_bytes(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	/* Little-endian only: uw_table_build rejects ELFDATA2MSB. */
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		if (r->bad || r->p >= r->end || shift >= 64) {
			r->bad = true;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		if (r->bad || r->p >= r->end || shift >= 64) {
			r->bad = true;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift + 7 < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << (shift + 7);
			return (int64_t)v;
		}
	}
}

/* A DW_EH_PE_* encoded value; with_base adds what the application bits ask
 * (only pcrel is used by linkers for code addresses). */
static bool rd_encoded(struct rd *r, uint8_t enc, const struct section *s, bool with_base,
		       uint64_t *out)
{
	uint64_t field = s->addr + (uint64_t)(r->p - s->base);
	uint64_t v;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		v = rd_bytes(r, 8);
		break;
	case DW_EH_PE_uleb128:
		v = rd_uleb(r);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)rd_sleb(r);
		break;
	case DW_EH_PE_udata2:
		v = rd_bytes(r, 2);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)rd_bytes(r, 2);
		break;
	case DW_EH_PE_udata4:
		v = rd_bytes(r, 4);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)rd_bytes(r, 4);
		break;
	default:
		r->bad = true;
		return false;
	}
	if (r->bad)
		return false;
	if (with_base) {
		if (enc & DW_EH_PE_indirect)
			return false;
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			v += field;
			break;
		default: /* textrel/datarel/funcrel: never used for FDE addresses */
			return false;
		}
	}
	*out = v;
	return true;
}

struct cie {
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

struct fde_raw {
	uint64_t cie_off;
	const uint8_t *start, *end;
};

struct fde {
	uint64_t lo, hi;
	const uint8_t *ins, *ins_end;
	const struct cie *cie;
	uint32_t seq; /* section order: ties in lo keep it */
};

/* Register rules the walker can use; everything else is RK_OTHER. */
enum rule_kind { RK_UNSPEC = 0, RK_UNDEF, RK_SAME, RK_OFFSET, RK_AT_FP, RK_OTHER };
enum cfa_kind { CK_NONE = 0, CK_REG, CK_EXPR };

struct rule {
	uint8_t kind;
	int64_t off;
};

struct cstate {
	uint8_t cfa_kind;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *expr;
	uint64_t expr_len;
	struct rule fp, ra;
};

struct arch_regs {
	enum uw_arch arch;
	uint64_t sp, fp; /* DWARF numbers */
};

struct builder {
	struct ep_uw_row *rows;
	uint32_t n, cap;
};

static bool same_rules(const struct ep_uw_row *a, const struct ep_uw_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off8 == b->fp_off8 && a->ra_off8 == b->ra_off8;
}

/* Appends the rules in force from pc on. pc never decreases: FDEs are
 * visited in address order and clipped at the next one's start. */
static int emit(struct builder *b, uint64_t pc, struct ep_uw_row r)
{
	r.pc = (uint32_t)pc;
	if (b->n) {
		struct ep_uw_row *last = &b->rows[b->n - 1];
		if (last->pc == r.pc) {
			/* Several rules at one pc: the last one holds. */
			b->n--;
			if (b->n && same_rules(&b->rows[b->n - 1], &r))
				return 0;
			b->rows[b->n++] = r;
			return 0;
		}
		if (same_rules(last, &r))
			return 0;
	}
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 1024;
		struct ep_uw_row *rows = realloc(b->rows, (size_t)cap * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		b->rows = rows;
		b->cap = cap;
	}
	b->rows[b->n++] = r;
	return 0;
}

static const struct ep_uw_row row_unsupported = { .cfa = EP_UW_CFA_UNSUPPORTED };
static const struct ep_uw_row row_none = { .cfa = EP_UW_CFA_NONE };

/* The x86_64 .plt expressions binutils emits (elf_x86_64_eh_frame_plt and
 * its IBT variant): DW_OP_breg7 (rsp) N; DW_OP_breg16 (rip) 0; DW_OP_lit15;
 * DW_OP_and; DW_OP_lit11 (IBT: lit10); DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus. Returns the row's CFA kind, or 0. */
static uint8_t plt_expr(const uint8_t *e, uint64_t len, int64_t *off)
{
	static const uint8_t tail[] = { DW_OP_breg16, 0,	   DW_OP_lit15,
					DW_OP_and,    DW_OP_lit11, DW_OP_ge,
					DW_OP_lit3,   DW_OP_shl,   DW_OP_plus };
	struct rd r = { e, e + len, false };

	if (rd_bytes(&r, 1) != DW_OP_breg7)
		return 0;
	*off = rd_sleb(&r);
	if (r.bad || (size_t)(r.end - r.p) != sizeof(tail) || memcmp(r.p, tail, 4) ||
	    memcmp(r.p + 5, tail + 5, sizeof(tail) - 5))
		return 0;
	if (r.p[4] == DW_OP_lit11)
		return EP_UW_CFA_PLT;
	return r.p[4] == DW_OP_lit10 ? EP_UW_CFA_PLT_IBT : 0;
}

/* DW_OP_breg<reg> N, then deref when deref: the CFA of gcc's stack
 * realignment (CFA = *(rbp - N)) and where it saved rbp (at rbp + 0). */
static bool breg_expr(const uint8_t *e, uint64_t len, uint64_t reg, bool deref, int64_t *off)
{
	struct rd r = { e, e + len, false };

	if (reg > 31 || rd_bytes(&r, 1) != DW_OP_breg0 + reg)
		return false;
	*off = rd_sleb(&r);
	if (deref && rd_bytes(&r, 1) != DW_OP_deref)
		return false;
	return !r.bad && r.p == r.end;
}

static bool fits_off8(int64_t off, bool allow_zero)
{
	return off % 8 == 0 && off / 8 >= -128 && off / 8 <= 127 && (allow_zero || off != 0);
}

static struct ep_uw_row to_row(const struct arch_regs *a, const struct cstate *st)
{
	struct ep_uw_row r = { 0 };
	int64_t off;

	if (st->ra.kind == RK_UNDEF) {
		r.cfa = EP_UW_CFA_END;
		return r;
	}
	if (st->cfa_kind == CK_REG && (st->cfa_reg == a->sp || st->cfa_reg == a->fp) &&
	    st->cfa_off >= INT32_MIN && st->cfa_off <= INT32_MAX) {
		r.cfa = st->cfa_reg == a->sp ? EP_UW_CFA_SP : EP_UW_CFA_FP;
		r.cfa_off = (int32_t)st->cfa_off;
	} else if (a->arch == UW_ARCH_X86_64 && st->cfa_kind == CK_EXPR &&
		   (r.cfa = plt_expr(st->expr, st->expr_len, &off)) && off >= 0 &&
		   off <= INT32_MAX) {
		r.cfa_off = (int32_t)off;
	} else if (st->cfa_kind == CK_EXPR &&
		   breg_expr(st->expr, st->expr_len, a->fp, true, &off) && off >= INT32_MIN &&
		   off <= INT32_MAX) {
		r.cfa = EP_UW_CFA_FP_DEREF;
		r.cfa_off = (int32_t)off;
	} else {
		return row_unsupported;
	}

	if (a->arch == UW_ARCH_X86_64) {
		/* The call pushed it at CFA-8; the walker relies on that. */
		if (!(st->ra.kind == RK_UNSPEC || (st->ra.kind == RK_OFFSET && st->ra.off == -8)))
			return row_unsupported;
		r.ra_off8 = -1;
	} else {
		if (st->ra.kind == RK_UNSPEC || st->ra.kind == RK_SAME)
			r.ra_off8 = 0; /* still in x30 */
		else if (st->ra.kind == RK_OFFSET && fits_off8(st->ra.off, false))
			r.ra_off8 = (int8_t)(st->ra.off / 8);
		else
			return row_unsupported;
	}

	switch (st->fp.kind) {
	case RK_UNSPEC:
	case RK_SAME:
		r.fp = EP_UW_REG_SAME;
		break;
	case RK_OFFSET:
	case RK_AT_FP:
		if (fits_off8(st->fp.off, true)) {
			r.fp = st->fp.kind == RK_OFFSET ? EP_UW_REG_AT_CFA : EP_UW_REG_AT_FP;
			r.fp_off8 = (int8_t)(st->fp.off / 8);
		} else {
			r.fp = EP_UW_REG_UNDEF;
		}
		break;
	default:
		/* In another register or an expression: the caller's frame
		 * pointer is lost, which only matters if a caller's CFA uses it. */
		r.fp = EP_UW_REG_UNDEF;
		break;
	}
	return r;
}

struct interp {
	const struct arch_regs *a;
	const struct section *s;
	const struct cie *cie;
	struct cstate st, init;
	struct cstate stack[UW_REMEMBER_MAX];
	unsigned depth;
};

static struct rule *track(struct interp *in, uint64_t reg)
{
	if (reg == in->a->fp)
		return &in->st.fp;
	if (reg == in->cie->ra_reg)
		return &in->st.ra;
	return NULL;
}

static void set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t off)
{
	struct rule *r = track(in, reg);

	if (r) {
		r->kind = kind;
		r->off = off;
	}
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	struct rule *r = track(in, reg);

	if (r)
		*r = r == &in->st.fp ? in->init.fp : in->init.ra;
}

/*
 * Runs the CFA program [p, end). For an FDE (b != NULL), the state in force
 * is emitted at each advance of *loc; it stops at limit. Returns 0, -EINVAL
 * for a program it cannot follow (the caller ends the FDE there), -ENOMEM.
 */
static int run(struct interp *in, const uint8_t *p, const uint8_t *end, uint64_t *loc,
	       uint64_t limit, struct builder *b)
{
	struct rd r = { p, end, false };
	const struct cie *c = in->cie;
	int err;

	while (r.p < r.end) {
		uint8_t op = (uint8_t)rd_bytes(&r, 1);
		uint64_t reg = 0, delta = 0, newloc = 0;
		bool advance = false;
		int64_t off;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			delta = op & 0x3f;
			advance = true;
			break;
		case DW_CFA_offset:
			reg = op & 0x3f;
			off = (int64_t)rd_uleb(&r) * c->daf;
			set_rule(in, reg, RK_OFFSET, off);
			break;
		case DW_CFA_restore:
			restore_rule(in, op & 0x3f);
			break;
		default:
			switch (op) {
			case DW_CFA_nop:
				break;
			case DW_CFA_set_loc:
				if (in->s->eh) {
					if (!rd_encoded(&r, c->fde_enc, in->s, true, &newloc))
						return -EINVAL;
				} else {
					newloc = rd_bytes(&r, 8);
				}
				if (newloc < *loc)
					return -EINVAL;
				delta = (newloc - *loc) / (c->caf ? c->caf : 1);
				advance = true;
				break;
			case DW_CFA_advance_loc1:
				delta = rd_bytes(&r, 1);
				advance = true;
				break;
			case DW_CFA_advance_loc2:
				delta = rd_bytes(&r, 2);
				advance = true;
				break;
			case DW_CFA_advance_loc4:
				delta = rd_bytes(&r, 4);
				advance = true;
				break;
			case DW_CFA_offset_extended:
				reg = rd_uleb(&r);
				set_rule(in, reg, RK_OFFSET, (int64_t)rd_uleb(&r) * c->daf);
				break;
			case DW_CFA_restore_extended:
				restore_rule(in, rd_uleb(&r));
				break;
			case DW_CFA_undefined:
				set_rule(in, rd_uleb(&r), RK_UNDEF, 0);
				break;
			case DW_CFA_same_value:
				set_rule(in, rd_uleb(&r), RK_SAME, 0);
				break;
			case DW_CFA_register:
				reg = rd_uleb(&r);
				rd_uleb(&r);
				set_rule(in, reg, RK_OTHER, 0);
				break;
			case DW_CFA_remember_state:
				if (in->depth == UW_REMEMBER_MAX)
					return -EINVAL;
				in->stack[in->depth++] = in->st;
				break;
			case DW_CFA_restore_state:
				if (!in->depth)
					return -EINVAL;
				in->st = in->stack[--in->depth];
				break;
			case DW_CFA_def_cfa:
				in->st.cfa_kind = CK_REG;
				in->st.cfa_reg = rd_uleb(&r);
				in->st.cfa_off = (int64_t)rd_uleb(&r);
				break;
			case DW_CFA_def_cfa_sf:
				in->st.cfa_kind = CK_REG;
				in->st.cfa_reg = rd_uleb(&r);
				in->st.cfa_off = rd_sleb(&r) * c->daf;
				break;
			case DW_CFA_def_cfa_register:
				/* Only meaningful after a register rule; an
				 * expression CFA stays unusable. */
				in->st.cfa_reg = rd_uleb(&r);
				break;
			case DW_CFA_def_cfa_offset:
				in->st.cfa_off = (int64_t)rd_uleb(&r);
				break;
			case DW_CFA_def_cfa_offset_sf:
				in->st.cfa_off = rd_sleb(&r) * c->daf;
				break;
			case DW_CFA_def_cfa_expression: {
				uint64_t len = rd_uleb(&r);
				if (r.bad || len > (uint64_t)(r.end - r.p))
					return -EINVAL;
				in->st.cfa_kind = CK_EXPR;
				in->st.expr = r.p;
				in->st.expr_len = len;
				r.p += len;
				break;
			}
			case DW_CFA_expression:
			case DW_CFA_val_expression: {
				reg = rd_uleb(&r);
				uint64_t len = rd_uleb(&r);
				if (r.bad || len > (uint64_t)(r.end - r.p))
					return -EINVAL;
				if (op == DW_CFA_expression && reg == in->a->fp &&
				    breg_expr(r.p, len, reg, false, &off))
					set_rule(in, reg, RK_AT_FP, off);
				else
					set_rule(in, reg, RK_OTHER, 0);
				r.p += len;
				break;
			}
			case DW_CFA_offset_extended_sf:
				reg = rd_uleb(&r);
				set_rule(in, reg, RK_OFFSET, rd_sleb(&r) * c->daf);
				break;
			case DW_CFA_val_offset:
				reg = rd_uleb(&r);
				rd_uleb(&r);
				set_rule(in, reg, RK_OTHER, 0);
				break;
			case DW_CFA_val_offset_sf:
				reg = rd_uleb(&r);
				rd_sleb(&r);
				set_rule(in, reg, RK_OTHER, 0);
				break;
			case DW_CFA_GNU_window_save:
				/* AArch64 negate_ra_state (pointer authentication):
				 * the walker strips the signature bits; SPARC never
				 * reaches here (unsupported machine). */
				break;
			case DW_CFA_GNU_args_size:
				rd_uleb(&r);
				break;
			case DW_CFA_GNU_negative_offset_extended:
				reg = rd_uleb(&r);
				set_rule(in, reg, RK_OFFSET, -(int64_t)rd_uleb(&r) * c->daf);
				break;
			default:
				return -EINVAL;
			}
		}
		if (r.bad)
			return -EINVAL;
		if (advance) {
			if (!b) /* a CIE's initial instructions do not advance */
				return -EINVAL;
			if ((err = emit(b, *loc, to_row(in->a, &in->st))))
				return err;
			if (delta > (limit - *loc) / (c->caf ? c->caf : 1))
				return 0; /* the rest applies past this FDE */
			*loc += delta * c->caf;
			if (*loc >= limit)
				return 0;
		}
	}
	if (b)
		return emit(b, *loc, to_row(in->a, &in->st));
	return 0;
}

static int compile_fde(const struct arch_regs *a, const struct section *s, const struct fde *f,
		       uint64_t limit, struct builder *b)
{
	struct interp in = { .a = a, .s = s, .cie = f->cie };
	uint64_t loc = f->lo;
	int err;

	if (f->cie->signal)
		return emit(b, f->lo, (struct ep_uw_row){ .cfa = EP_UW_CFA_SIGNAL });
	err = run(&in, f->cie->init, f->cie->init_end, &loc, limit, NULL);
	if (!err) {
		in.init = in.st;
		err = run(&in, f->ins, f->ins_end, &loc, limit, b);
	}
	if (err == -EINVAL) {
		/* The rows before loc are right; what follows is unknown. */
		err = emit(b, loc, row_unsupported);
		return err ? err : 1;
	}
	return err;
}

static int parse_cie(const Dwarf_CIE *dc, uint64_t off, const struct section *s, struct cie *out)
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
	struct rd r = { dc->augmentation_data, dc->augmentation_data + dc->augmentation_data_size,
			false };
	for (const char *c = aug + 1; *c; c++) {
		uint64_t ignored;
		switch (*c) {
		case 'P': {
			uint8_t enc = (uint8_t)rd_bytes(&r, 1);
			if (!rd_encoded(&r, enc & 0x0f, s, false, &ignored))
				return 0;
			break;
		}
		case 'L':
			rd_bytes(&r, 1);
			break;
		case 'R':
			out->fde_enc = (uint8_t)rd_bytes(&r, 1);
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
	const struct fde *a = x, *b = y;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const struct cie *find_cie(const struct cie *cies, size_t n, uint64_t off)
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

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	void *q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Compiles one CFI section into out->rows. */
static int compile_section(Elf *elf, const struct arch_regs *a, const struct section *s,
			   struct uw_table *out)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Data data = { .d_buf = (void *)s->base, .d_size = s->size, .d_type = ELF_T_BYTE };
	struct cie *cies = NULL;
	struct fde_raw *raws = NULL;
	struct fde *fdes = NULL;
	size_t ncies = 0, ccies = 0, nraws = 0, craws = 0, nfdes = 0;
	struct builder b = { 0 };
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
			if ((err = grow((void **)&cies, &ccies, ncies, sizeof(*cies))))
				goto out;
			parse_cie(&e.cie, off, s, &cies[ncies++]);
		} else {
			if ((err = grow((void **)&raws, &craws, nraws, sizeof(*raws))))
				goto out;
			raws[nraws++] =
				(struct fde_raw){ e.fde.CIE_pointer, e.fde.start, e.fde.end };
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
		const struct cie *c = find_cie(cies, ncies, raws[i].cie_off);
		struct rd r = { raws[i].start, raws[i].end, false };
		uint64_t lo, range;

		if (!c || !c->ok) {
			out->stats.fdes_bad++;
			continue;
		}
		if (s->eh) {
			if (!rd_encoded(&r, c->fde_enc, s, true, &lo) ||
			    !rd_encoded(&r, c->fde_enc & 0x0f, s, false, &range)) {
				out->stats.fdes_bad++;
				continue;
			}
		} else {
			lo = rd_bytes(&r, 8);
			range = rd_bytes(&r, 8);
		}
		if (c->aug_z) {
			uint64_t len = rd_uleb(&r);
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
		fdes[nfdes] = (struct fde){ lo, hi, r.p, raws[i].end, c, (uint32_t)i };
		nfdes++;
	}
	qsort(fdes, nfdes, sizeof(*fdes), cmp_fde);

	for (size_t i = 0; i < nfdes; i++) {
		uint64_t limit = fdes[i].hi;
		if (i + 1 < nfdes && fdes[i + 1].lo < limit)
			limit = fdes[i + 1].lo; /* overlapping FDEs: the later start wins */
		if (limit <= fdes[i].lo)
			continue;
		err = compile_fde(a, s, &fdes[i], limit, &b);
		if (err == 1) {
			out->stats.fdes_bad++;
			err = 0;
		}
		if (err)
			goto out;
		/* The gap up to the next FDE (or past the last) has no CFI. */
		if ((err = emit(&b, limit, row_none)))
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

static int section_of(Elf_Scn *scn, bool eh, struct section *s)
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
	*s = (struct section){ d->d_buf, d->d_size, sh.sh_addr, eh };
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
	struct arch_regs a;
	struct section s;
	Elf_Scn *scn;
	enum uw_arch arch;
	int err;

	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = uw_table_arch_of(elf, &arch)))
		return err;
	/* DWARF register numbers: x86_64 psABI (rsp 7, rbp 6), AArch64 DWARF
	 * ABI (sp 31, x29 29). The return address column is the CIE's. */
	a = arch == UW_ARCH_X86_64 ? (struct arch_regs){ arch, 7, 6 }
				   : (struct arch_regs){ arch, 31, 29 };
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
