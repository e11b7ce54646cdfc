// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CFA program interpreter of the unwind-table compiler: see
 * cfi_program.h, cfi_table.c and docs/unwinding.md.
 *
 * One pass per FDE, tracking only what the walker evaluates (CFA, frame
 * pointer, return address). Everything read is outside input: every read is
 * bounded by its entry, every loop consumes bytes, and a program we cannot
 * follow ends its FDE with an UNSUPPORTED row.
 */
#include "unwind/cfi_program.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Nesting of DW_CFA_remember_state that compilers emit is 1-2 deep. */
#define UW_REMEMBER_MAX 16

uint64_t cfi_rd_bytes(struct cfi_rd *r, unsigned n)
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

uint64_t cfi_rd_uleb(struct cfi_rd *r)
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

int64_t cfi_rd_sleb(struct cfi_rd *r)
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
bool cfi_rd_encoded(struct cfi_rd *r, uint8_t enc, const struct cfi_section *s, bool with_base,
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
		v = cfi_rd_bytes(r, 8);
		break;
	case DW_EH_PE_uleb128:
		v = cfi_rd_uleb(r);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)cfi_rd_sleb(r);
		break;
	case DW_EH_PE_udata2:
		v = cfi_rd_bytes(r, 2);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)cfi_rd_bytes(r, 2);
		break;
	case DW_EH_PE_udata4:
		v = cfi_rd_bytes(r, 4);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)cfi_rd_bytes(r, 4);
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

static bool same_rules(const struct ep_uw_row *a, const struct ep_uw_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off8 == b->fp_off8 && a->ra_off8 == b->ra_off8;
}

/* Appends the rules in force from pc on. pc never decreases: FDEs are
 * visited in address order and clipped at the next one's start. */
int cfi_emit(struct cfi_rows *b, uint64_t pc, struct ep_uw_row r)
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

const struct ep_uw_row cfi_row_unsupported = { .cfa = EP_UW_CFA_UNSUPPORTED };
const struct ep_uw_row cfi_row_none = { .cfa = EP_UW_CFA_NONE };

/* The x86_64 .plt expressions binutils emits (elf_x86_64_eh_frame_plt and
 * its IBT variants): DW_OP_breg7 (rsp) N; DW_OP_breg16 (rip) 0; DW_OP_lit15;
 * DW_OP_and; DW_OP_lit<K>; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus, with
 * K 11 for the lazy PLT, 10 (binutils 2.38) or 9 (2.40) with IBT. Returns
 * K, or -1 for any other expression. */
static int plt_expr(const uint8_t *e, uint64_t len, int64_t *off)
{
	static const uint8_t tail[] = { DW_OP_breg16, 0,	   DW_OP_lit15,
					DW_OP_and,    DW_OP_lit11, DW_OP_ge,
					DW_OP_lit3,   DW_OP_shl,   DW_OP_plus };
	struct cfi_rd r = { e, e + len, false };

	if (cfi_rd_bytes(&r, 1) != DW_OP_breg7)
		return -1;
	*off = cfi_rd_sleb(&r);
	if (r.bad || (size_t)(r.end - r.p) != sizeof(tail) || memcmp(r.p, tail, 4) ||
	    memcmp(r.p + 5, tail + 5, sizeof(tail) - 5))
		return -1;
	if (r.p[4] < DW_OP_lit1 || r.p[4] > DW_OP_lit15)
		return -1;
	return r.p[4] - DW_OP_lit0;
}

/* DW_OP_breg<reg> N, then deref when deref: the CFA of gcc's stack
 * realignment (CFA = *(rbp - N)) and where it saved rbp (at rbp + 0). */
static bool breg_expr(const uint8_t *e, uint64_t len, uint64_t reg, bool deref, int64_t *off)
{
	struct cfi_rd r = { e, e + len, false };

	if (reg > 31 || cfi_rd_bytes(&r, 1) != DW_OP_breg0 + reg)
		return false;
	*off = cfi_rd_sleb(&r);
	if (deref && cfi_rd_bytes(&r, 1) != DW_OP_deref)
		return false;
	return !r.bad && r.p == r.end;
}

static bool fits_off8(int64_t off, bool allow_zero)
{
	return off % 8 == 0 && off / 8 >= -128 && off / 8 <= 127 && (allow_zero || off != 0);
}

static struct ep_uw_row to_row(const struct cfi_arch *a, const struct cstate *st)
{
	struct ep_uw_row r = { 0 };
	int64_t off;
	int plt = -1;

	if (st->ra.kind == RK_UNDEF) {
		r.cfa = EP_UW_CFA_END;
		return r;
	}
	if (st->cfa_kind == CK_REG && (st->cfa_reg == a->sp || st->cfa_reg == a->fp) &&
	    st->cfa_off >= INT32_MIN && st->cfa_off <= INT32_MAX) {
		r.cfa = st->cfa_reg == a->sp ? EP_UW_CFA_SP : EP_UW_CFA_FP;
		r.cfa_off = (int32_t)st->cfa_off;
	} else if (a->arch == UW_ARCH_X86_64 && st->cfa_kind == CK_EXPR &&
		   (plt = plt_expr(st->expr, st->expr_len, &off)) >= 0 && off >= 0 &&
		   off <= INT32_MAX) {
		r.cfa = EP_UW_CFA_PLT;
		r.cfa_off = (int32_t)off;
	} else if (st->cfa_kind == CK_EXPR &&
		   breg_expr(st->expr, st->expr_len, a->fp, true, &off) && off >= INT32_MIN &&
		   off <= INT32_MAX) {
		r.cfa = EP_UW_CFA_FP_DEREF;
		r.cfa_off = (int32_t)off;
	} else {
		return cfi_row_unsupported;
	}

	if (a->arch == UW_ARCH_X86_64) {
		/* The call pushed it at CFA-8; the walker relies on that. */
		if (!(st->ra.kind == RK_UNSPEC || (st->ra.kind == RK_OFFSET && st->ra.off == -8)))
			return cfi_row_unsupported;
		r.ra_off8 = -1;
	} else {
		if (st->ra.kind == RK_UNSPEC || st->ra.kind == RK_SAME) {
			r.ra_off8 = 0; /* still in x30 */
		} else if (st->ra.kind == RK_OFFSET && fits_off8(st->ra.off, false)) {
			r.ra_off8 = (int8_t)(st->ra.off / 8);
		} else if (st->ra.kind == RK_OFFSET && r.cfa == EP_UW_CFA_SP &&
			   st->ra.off + r.cfa_off > 0 && fits_off8(st->ra.off + r.cfa_off, false) &&
			   ((st->fp.kind == RK_OFFSET && st->fp.off + r.cfa_off >= 0 &&
			     fits_off8(st->fp.off + r.cfa_off, true)) ||
			    st->fp.kind == RK_UNSPEC || st->fp.kind == RK_SAME)) {
			/* x30 (and x29) saved near sp in a frame over 1 KiB:
			 * the slots from sp (EP_UW_REG_AT_SP; fp_off8 -1: x29
			 * not saved). */
			r.ra_off8 = (int8_t)((st->ra.off + r.cfa_off) / 8);
			r.fp = EP_UW_REG_AT_SP;
			r.fp_off8 = st->fp.kind == RK_OFFSET
					    ? (int8_t)((st->fp.off + r.cfa_off) / 8)
					    : -1;
			return r;
		} else {
			return cfi_row_unsupported;
		}
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
	if (r.cfa == EP_UW_CFA_PLT) {
		r.fp = EP_UW_REG_SAME;
		r.fp_off8 = (int8_t)plt;
	}
	return r;
}

struct interp {
	const struct cfi_arch *a;
	const struct cfi_section *s;
	const struct cfi_cie *cie;
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

/* An operand times the CIE's data alignment factor. The CFI is outside
 * input: a product that does not fit is a malformed program (the reader
 * marked bad, the FDE dropped), not signed overflow (found by
 * fuzzing). */
static int64_t scaled(struct cfi_rd *r, int64_t v, int64_t f)
{
	int64_t out;

	if (__builtin_mul_overflow(v, f, &out)) {
		r->bad = true;
		return 0;
	}
	return out;
}

/*
 * Runs the CFA program [p, end). For an FDE (b != NULL), the state in force
 * is emitted at each advance of *loc; it stops at limit. Returns 0, -EINVAL
 * for a program it cannot follow (the caller ends the FDE there), -ENOMEM.
 */
static int run(struct interp *in, const uint8_t *p, const uint8_t *end, uint64_t *loc,
	       uint64_t limit, struct cfi_rows *b)
{
	struct cfi_rd r = { p, end, false };
	const struct cfi_cie *c = in->cie;
	int err;

	while (r.p < r.end) {
		uint8_t op = (uint8_t)cfi_rd_bytes(&r, 1);
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
			off = scaled(&r, (int64_t)cfi_rd_uleb(&r), c->daf);
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
					if (!cfi_rd_encoded(&r, c->fde_enc, in->s, true, &newloc))
						return -EINVAL;
				} else {
					newloc = cfi_rd_bytes(&r, 8);
				}
				if (newloc < *loc)
					return -EINVAL;
				delta = (newloc - *loc) / (c->caf ? c->caf : 1);
				advance = true;
				break;
			case DW_CFA_advance_loc1:
				delta = cfi_rd_bytes(&r, 1);
				advance = true;
				break;
			case DW_CFA_advance_loc2:
				delta = cfi_rd_bytes(&r, 2);
				advance = true;
				break;
			case DW_CFA_advance_loc4:
				delta = cfi_rd_bytes(&r, 4);
				advance = true;
				break;
			case DW_CFA_offset_extended:
				reg = cfi_rd_uleb(&r);
				set_rule(in, reg, RK_OFFSET,
					 scaled(&r, (int64_t)cfi_rd_uleb(&r), c->daf));
				break;
			case DW_CFA_restore_extended:
				restore_rule(in, cfi_rd_uleb(&r));
				break;
			case DW_CFA_undefined:
				set_rule(in, cfi_rd_uleb(&r), RK_UNDEF, 0);
				break;
			case DW_CFA_same_value:
				set_rule(in, cfi_rd_uleb(&r), RK_SAME, 0);
				break;
			case DW_CFA_register:
				reg = cfi_rd_uleb(&r);
				cfi_rd_uleb(&r);
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
				in->st.cfa_reg = cfi_rd_uleb(&r);
				in->st.cfa_off = (int64_t)cfi_rd_uleb(&r);
				break;
			case DW_CFA_def_cfa_sf:
				in->st.cfa_kind = CK_REG;
				in->st.cfa_reg = cfi_rd_uleb(&r);
				in->st.cfa_off = scaled(&r, cfi_rd_sleb(&r), c->daf);
				break;
			case DW_CFA_def_cfa_register:
				/* Only meaningful after a register rule; an
				 * expression CFA stays unusable. */
				in->st.cfa_reg = cfi_rd_uleb(&r);
				break;
			case DW_CFA_def_cfa_offset:
				in->st.cfa_off = (int64_t)cfi_rd_uleb(&r);
				break;
			case DW_CFA_def_cfa_offset_sf:
				in->st.cfa_off = scaled(&r, cfi_rd_sleb(&r), c->daf);
				break;
			case DW_CFA_def_cfa_expression: {
				uint64_t len = cfi_rd_uleb(&r);
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
				reg = cfi_rd_uleb(&r);
				uint64_t len = cfi_rd_uleb(&r);
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
				reg = cfi_rd_uleb(&r);
				set_rule(in, reg, RK_OFFSET, scaled(&r, cfi_rd_sleb(&r), c->daf));
				break;
			case DW_CFA_val_offset:
				reg = cfi_rd_uleb(&r);
				cfi_rd_uleb(&r);
				set_rule(in, reg, RK_OTHER, 0);
				break;
			case DW_CFA_val_offset_sf:
				reg = cfi_rd_uleb(&r);
				cfi_rd_sleb(&r);
				set_rule(in, reg, RK_OTHER, 0);
				break;
			case DW_CFA_GNU_window_save:
				/* AArch64 negate_ra_state (pointer authentication):
				 * the walker strips the signature bits; SPARC never
				 * reaches here (unsupported machine). */
				break;
			case DW_CFA_GNU_args_size:
				cfi_rd_uleb(&r);
				break;
			case DW_CFA_GNU_negative_offset_extended:
				reg = cfi_rd_uleb(&r);
				set_rule(in, reg, RK_OFFSET,
					 scaled(&r, scaled(&r, (int64_t)cfi_rd_uleb(&r), c->daf),
						-1));
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
			if ((err = cfi_emit(b, *loc, to_row(in->a, &in->st))))
				return err;
			if (delta > (limit - *loc) / (c->caf ? c->caf : 1))
				return 0; /* the rest applies past this FDE */
			*loc += delta * c->caf;
			if (*loc >= limit)
				return 0;
		}
	}
	if (b)
		return cfi_emit(b, *loc, to_row(in->a, &in->st));
	return 0;
}

int cfi_compile_fde(const struct cfi_arch *a, const struct cfi_section *s, const struct cfi_fde *f,
		    uint64_t limit, struct cfi_rows *b)
{
	struct interp in = { .a = a, .s = s, .cie = f->cie };
	uint64_t loc = f->lo;
	int err;

	if (f->cie->signal)
		return cfi_emit(b, f->lo, (struct ep_uw_row){ .cfa = EP_UW_CFA_SIGNAL });
	err = run(&in, f->cie->init, f->cie->init_end, &loc, limit, NULL);
	if (!err) {
		in.init = in.st;
		err = run(&in, f->ins, f->ins_end, &loc, limit, b);
	}
	if (err == -EINVAL) {
		/* The rows before loc are right; what follows is unknown. */
		err = cfi_emit(b, loc, cfi_row_unsupported);
		return err ? err : 1;
	}
	return err;
}
