// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_code.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "python/py_linetable.h"

/* Enough of a PyCodeObject for every field the layouts name. */
#define CODE_HDR_READ 256
/* PyObject header: ob_refcnt, ob_type; PyVarObject adds ob_size. */
#define OB_TYPE	     8
#define OB_SIZE	     16
#define BYTES_SVAL   32 /* PyBytesObject.ob_sval, every version here */
#define TUPLE_ITEMS  24 /* PyTupleObject.ob_item, every version here */
#define STR_LENGTH   16
#define STR_STATE    32
#define TYPE_TP_NAME 24

static int rd_u64(py_read_fn rd, void *ctx, uint64_t addr, uint64_t *v)
{
	return rd(ctx, addr, v, sizeof(*v));
}

static uint64_t hdr64(const uint8_t *h, uint16_t off)
{
	uint64_t v;

	if (off > CODE_HDR_READ - 8)
		return 0;
	memcpy(&v, h + off, sizeof(v));
	return v;
}

/* Appends code point cp as UTF-8; false when it does not fit. */
static int put_utf8(char *dst, size_t cap, size_t *n, uint32_t cp)
{
	uint8_t b[4];
	size_t k;

	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 63));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
		b[2] = (uint8_t)(0x80 | (cp & 63));
		k = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
		b[2] = (uint8_t)(0x80 | ((cp >> 6) & 63));
		b[3] = (uint8_t)(0x80 | (cp & 63));
		k = 4;
	}
	if (*n + k >= cap)
		return 0;
	memcpy(dst + *n, b, k);
	*n += k;
	return 1;
}

int py_str_read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr, char **out)
{
	uint8_t hdr[40];
	int64_t length;
	uint32_t state, kind;
	size_t n = 0, take, unit;
	uint8_t raw[PY_NAME_MAX * 4];
	char *s;
	int err;

	*out = NULL;
	if (!addr)
		return -EINVAL;
	err = rd(ctx, addr, hdr, sizeof(hdr));
	if (err)
		return err;
	memcpy(&length, hdr + STR_LENGTH, sizeof(length));
	memcpy(&state, hdr + STR_STATE, sizeof(state));
	kind = (state >> 2) & 7;
	/* Only compact strings keep their characters right after the
	 * header; names and paths of code objects always are. */
	if (!((state >> 5) & 1) || length < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	unit = kind;
	take = (size_t)length < PY_NAME_MAX ? (size_t)length : PY_NAME_MAX;
	if (take) {
		uint64_t data = addr + (((state >> 6) & 1) ? l->ascii_size : l->compact_size);

		err = rd(ctx, data, raw, take * unit);
		if (err)
			return err;
	}
	s = malloc(PY_NAME_MAX + 1);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < take; i++) {
		uint32_t cp;

		if (unit == 1) {
			cp = raw[i];
		} else if (unit == 2) {
			uint16_t v;

			memcpy(&v, raw + 2 * i, 2);
			cp = v;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
		}
		if (cp < 0x20)
			cp = '?'; /* no control characters in frame names or reports */
		if (!put_utf8(s, PY_NAME_MAX + 1, &n, cp))
			break;
	}
	s[n] = '\0';
	*out = s;
	return 0;
}

/* The type's tp_name is "code": the address really holds a code object,
 * not something freed and reused. */
static int check_code_type(py_read_fn rd, void *ctx, uint64_t type)
{
	uint64_t name;
	char buf[8];

	if (!type || rd_u64(rd, ctx, type + TYPE_TP_NAME, &name) || !name || rd(ctx, name, buf, 5))
		return -EINVAL;
	return memcmp(buf, "code", 5) ? -EINVAL : 0;
}

int py_code_read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr,
		 struct py_code *out)
{
	uint8_t h[CODE_HDR_READ];
	__u64 w[4];
	uint64_t lines;
	int64_t nbytes;
	int32_t first;
	int err;

	memset(out, 0, sizeof(*out));
	if (!addr || (addr & 7))
		return -EINVAL;
	err = rd(ctx, addr, h, sizeof(h));
	if (err)
		return err;
	err = check_code_type(rd, ctx, hdr64(h, OB_TYPE));
	if (err)
		return err;
	if (l->code_csum > CODE_HDR_READ - sizeof(w) || l->co_firstlineno > CODE_HDR_READ - 4)
		return -EINVAL;
	memcpy(w, h + l->code_csum, sizeof(w));
	out->csum = ep_py_csum(w);
	memcpy(&first, h + l->co_firstlineno, sizeof(first));
	out->firstlineno = first;
	/* 3.8-3.10: co_flags is the int before co_firstlineno. */
	out->flags = -1;
	if (l->co_qualname == EP_PY_NO_OFF && l->co_firstlineno >= 4)
		memcpy(&out->flags, h + l->co_firstlineno - 4, sizeof(out->flags));
	out->type = hdr64(h, OB_TYPE);
	out->consts = l->co_consts ? hdr64(h, l->co_consts) : 0;
	out->code_off = l->co_code_adaptive;
	err = py_str_read(l, rd, ctx,
			  hdr64(h, l->co_qualname != EP_PY_NO_OFF ? l->co_qualname : l->co_name),
			  &out->name);
	if (err)
		goto fail;
	err = py_str_read(l, rd, ctx, hdr64(h, l->co_filename), &out->filename);
	if (err)
		goto fail;
	lines = hdr64(h, l->co_lines);
	if (lines && !rd(ctx, lines + OB_SIZE, &nbytes, sizeof(nbytes)) && nbytes > 0 &&
	    nbytes <= PY_LINETABLE_MAX) {
		out->lines = malloc((size_t)nbytes);
		if (!out->lines) {
			err = -ENOMEM;
			goto fail;
		}
		if (rd(ctx, lines + BYTES_SVAL, out->lines, (size_t)nbytes)) {
			free(out->lines);
			out->lines = NULL;
		} else {
			out->nlines = (size_t)nbytes;
		}
	}
	return 0;
fail:
	py_code_free(out);
	return err;
}

int py_code_nested(py_read_fn rd, void *ctx, const struct py_code *c, uint64_t *out, size_t max)
{
	uint64_t items[64];
	int64_t size;
	size_t n = 0;

	if (!c->consts || (c->consts & 7) || !c->type)
		return -EINVAL;
	if (rd(ctx, c->consts + OB_SIZE, &size, sizeof(size)))
		return -EFAULT;
	if (size < 0)
		return -EINVAL;
	if (size > PY_CONSTS_MAX)
		size = PY_CONSTS_MAX;
	for (int64_t i = 0; i < size && n < max; i += 64) {
		size_t take = (size_t)(size - i < 64 ? size - i : 64);

		/* PyTupleObject.ob_item follows the PyVarObject header. */
		if (rd(ctx, c->consts + TUPLE_ITEMS + (uint64_t)i * 8, items, take * 8))
			return -EFAULT;
		for (size_t k = 0; k < take && n < max; k++) {
			uint64_t type;

			/* The same type object as c's: a code object. */
			if (items[k] && !(items[k] & 7) &&
			    !rd_u64(rd, ctx, items[k] + OB_TYPE, &type) && type == c->type)
				out[n++] = items[k];
		}
	}
	return (int)n;
}

void py_code_free(struct py_code *c)
{
	free(c->name);
	free(c->filename);
	free(c->lines);
	memset(c, 0, sizeof(*c));
}

int py_code_line(const struct py_layout *l, const struct py_code *c, uint32_t instr)
{
	uint32_t off;

	switch (l->lines) {
	case PY_LINES_LNOTAB:
		off = instr == UINT32_MAX ? 0 : instr; /* f_lasti -1: not started */
		break;
	case PY_LINES_LINETABLE:
		off = instr == UINT32_MAX ? 0 : instr * 2;
		break;
	default:
		off = instr >= c->code_off ? instr - c->code_off : 0;
		break;
	}
	return py_line_for_offset(l->lines, c->lines, c->nlines, c->firstlineno, off);
}
