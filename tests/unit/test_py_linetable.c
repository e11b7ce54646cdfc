// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Line-table decoders on the tables real interpreters wrote, and on
 * truncated, corrupt and hostile ones. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "py_linetable_vectors.h"
#include "python/py_linetable.h"

static void check_case(const char *name, const struct lt_case *c)
{
	int bad = 0;

	for (size_t i = 0; i < c->nexp; i++) {
		int got = py_line_for_offset(c->kind, c->tab, c->len, c->firstlineno,
					     (uint32_t)c->exp[i][0]);

		if (got != c->exp[i][1]) {
			if (bad++ < 5)
				fprintf(stderr, "%s: offset %d: line %d, want %d\n", name,
					c->exp[i][0], got, c->exp[i][1]);
		}
	}
	CHECK_INT_EQ(bad, 0);
	CHECK(c->nexp > 10);
}

/* Every prefix of a real table (a table cut mid-entry by a hostile
 * process) decodes without reading past its end; 3.11+ tables cut inside
 * an entry give -1 or a line the full table also has. */
static void check_prefixes(const struct lt_case *c)
{
	uint8_t buf[512];

	CHECK(c->len <= sizeof(buf));
	for (size_t n = 0; n <= c->len && n <= sizeof(buf); n++) {
		/* The copy ends at an unmapped-like boundary for ASan. */
		uint8_t *t = n ? malloc(n) : NULL;

		if (n)
			memcpy(t, c->tab, n);
		for (size_t i = 0; i < c->nexp; i++) {
			int got = py_line_for_offset(c->kind, t, n, c->firstlineno,
						     (uint32_t)c->exp[i][0]);

			CHECK(got >= -1 && got < 1000);
		}
		free(t);
	}
}

static void check_hostile(void)
{
	uint8_t t[64];
	int l;

	/* Nothing to decode: the first line. */
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LOCATIONS, NULL, 0, 7, 0), 7);
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LINETABLE, NULL, 5, 7, 4), 7);
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LNOTAB, NULL, 5, 7, 4), 7);
	/* 3.11+: a byte without the entry bit where an entry starts. */
	t[0] = 0x10;
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LOCATIONS, t, 1, 7, 0), -1);
	/* A long-form entry whose varints never end. */
	t[0] = 0x80 | (14 << 3);
	memset(t + 1, 0x7f, sizeof(t) - 1);
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LOCATIONS, t, sizeof(t), 7, 0), -1);
	/* No-column entries with the largest line delta, repeated: the line
	 * overflows int and is refused rather than wrapped. */
	for (size_t i = 0; i + 7 <= sizeof(t); i += 7) {
		t[i] = 0x80 | (13 << 3) | 7;
		memset(t + i + 1, 0x7e, 5);
		t[i + 6] = 0x3e;
	}
	l = py_line_for_offset(PY_LINES_LOCATIONS, t, sizeof(t), 7, 1000);
	CHECK(l >= -1);
	/* "No location" entries: no line. */
	t[0] = 0x80 | (15 << 3) | 1;
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LOCATIONS, t, 1, 7, 2), -1);
	/* 3.10: a range without a line (-128). */
	t[0] = 8;
	t[1] = 0x80;
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LINETABLE, t, 2, 7, 2), -1);
	/* Odd lengths: the last half pair is ignored. */
	t[0] = 2;
	t[1] = 1;
	t[2] = 200;
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LNOTAB, t, 3, 7, 100), 8);
	/* Offsets past the end: the last line. */
	CHECK_INT_EQ(py_line_for_offset(PY_LINES_LINETABLE, t, 2, 7, UINT32_MAX), 8);
}

int main(void)
{
	const struct {
		const char *name;
		const struct lt_case *c;
	} cases[] = {
		{ "3.8", &v38 },   { "3.9", &v39 },   { "3.10", &v310 },
		{ "3.11", &v311 }, { "3.12", &v312 }, { "3.13", &v313 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_case(cases[i].name, cases[i].c);
		check_prefixes(cases[i].c);
	}
	check_hostile();
	return check_report("test_py_linetable");
}
