// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_linetable.h"

#include <stdbool.h>

/* 3.8/3.9 co_lnotab: (bytecode increment, signed line increment) pairs; a
 * line belongs to the instructions from its pair's address up to the next
 * one's (Objects/lnotab_notes.txt of 3.8). */
static int lnotab_line(const uint8_t *t, size_t len, int line, uint32_t off)
{
	uint64_t addr = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > off)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/* 3.10 co_linetable: (bytecode length, signed line delta) pairs covering
 * consecutive ranges; a delta of -128 is a range without a line. */
static int linetable310_line(const uint8_t *t, size_t len, int line, uint32_t off)
{
	uint64_t end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint64_t start = end;
		int8_t d = (int8_t)t[i + 1];

		end = start + t[i];
		if (d != -128)
			line += d;
		if (off >= start && off < end)
			return d == -128 ? -1 : line;
	}
	return line;
}

/* 3.11+ location table (Objects/locations.md): entries of 1-8 code units
 * whose first byte has the top bit set, with 6-bit varints after it. */
struct lt_reader {
	const uint8_t *t;
	size_t len, pos;
};

static bool lt_varint(struct lt_reader *r, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->pos < r->len && shift < 64) {
		uint8_t b = r->t[r->pos++];

		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool lt_svarint(struct lt_reader *r, int64_t *out)
{
	uint64_t u;

	if (!lt_varint(r, &u))
		return false;
	*out = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

static int locations_line(const uint8_t *t, size_t len, int firstlineno, uint32_t off)
{
	struct lt_reader r = { .t = t, .len = len };
	uint64_t unit = off / 2, addr = 0;
	int64_t line = firstlineno;

	while (r.pos < r.len) {
		uint8_t b = t[r.pos++];
		unsigned code = (b >> 3) & 15, n = (b & 7) + 1;
		bool has_line = true;
		int64_t d = 0;
		uint64_t skip;

		if (!(b & 0x80))
			return -1; /* not at an entry's first byte: corrupt */
		switch (code) {
		case 15: /* no location */
			has_line = false;
			break;
		case 14: /* long form: line delta, end line, columns */
			if (!lt_svarint(&r, &d) || !lt_varint(&r, &skip) || !lt_varint(&r, &skip) ||
			    !lt_varint(&r, &skip))
				return -1;
			break;
		case 13: /* no column */
			if (!lt_svarint(&r, &d))
				return -1;
			break;
		case 12:
		case 11:
		case 10: /* one-line form: delta in the code, two column bytes */
			d = code - 10;
			r.pos += 2;
			break;
		default: /* short form: same line, one column byte */
			r.pos += 1;
			break;
		}
		if (r.pos > r.len)
			return -1;
		line += d;
		if (line < -1 || line > 0x7fffffff)
			return -1;
		if (unit >= addr && unit < addr + n)
			return has_line ? (int)line : -1;
		addr += n;
	}
	return (int)(line > 0x7fffffff ? -1 : line);
}

int py_line_for_offset(enum py_lines_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		       uint32_t off)
{
	if (!tab)
		len = 0;
	switch (kind) {
	case PY_LINES_LNOTAB:
		return lnotab_line(tab, len, firstlineno, off);
	case PY_LINES_LINETABLE:
		return linetable310_line(tab, len, firstlineno, off);
	case PY_LINES_LOCATIONS:
		return locations_line(tab, len, firstlineno, off);
	}
	return -1;
}
