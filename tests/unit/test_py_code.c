// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Code objects read from a fake address space: a well-formed 3.12 one, and
 * the ways a hostile or dying process can make one look (wrong type, huge
 * or negative lengths, non-compact strings, unreadable pointers). Also the
 * interpreter-name parser, the layout check and the stack merge. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "python/py_code.h"
#include "python/py_layout.h"
#include "python/py_merge.h"
#include "python/py_proc.h"

/* Memory of the fake process: one region at BASE. Reads outside fail. */
#define BASE 0x10000ull
#define SIZE 0x4000u

struct fake {
	uint8_t mem[SIZE];
	int reads;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	f->reads++;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - BASE), len);
	return 0;
}

static void put64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(f->mem + (addr - BASE), &v, 8);
}

static void put32(struct fake *f, uint64_t addr, uint32_t v)
{
	memcpy(f->mem + (addr - BASE), &v, 4);
}

/* A compact str object: kind 1 (ASCII when ascii), 2 or 4. */
static void put_str(struct fake *f, const struct py_layout *l, uint64_t addr, const void *chars,
		    int64_t length, unsigned kind, bool ascii)
{
	uint32_t state = (kind << 2) | (1u << 5) | ((ascii ? 1u : 0u) << 6);
	uint64_t data = addr + (ascii ? l->ascii_size : l->compact_size);

	put64(f, addr + 16, (uint64_t)length);
	put32(f, addr + 32, state);
	if (length > 0 && length < 256)
		memcpy(f->mem + (data - BASE), chars, (size_t)length * kind);
}

#define CODE	 (BASE + 0x100)
#define TYPE	 (BASE + 0x800)
#define TPNAME	 (BASE + 0x900)
#define NAME	 (BASE + 0xa00)
#define FILENAME (BASE + 0xb00)
#define LINES	 (BASE + 0xc00)

static const uint8_t linetable[] = { 0x80 | (13 << 3) | 0, 0 /* resume, line +0 */,
				     0x80 | (13 << 3) | 1, 2 /* 2 units, line +1 */ };

static void build(struct fake *f, const struct py_layout *l)
{
	memset(f, 0, sizeof(*f));
	put64(f, CODE + 8, TYPE);
	put64(f, TYPE + 24, TPNAME);
	memcpy(f->mem + (TPNAME - BASE), "code", 5);
	for (unsigned i = 0; i < 32; i += 4)
		put32(f, CODE + l->code_csum + i, 0x1000 + i);
	put32(f, CODE + l->co_firstlineno, 41);
	if (l->co_qualname != EP_PY_NO_OFF)
		put64(f, CODE + l->co_qualname, NAME);
	put64(f, CODE + l->co_name, NAME);
	put64(f, CODE + l->co_filename, FILENAME);
	put64(f, CODE + l->co_lines, LINES);
	put_str(f, l, NAME, "Llama.generate", 14, 1, true);
	put_str(f, l, FILENAME, "/srv/exp/experiment.py", 22, 1, true);
	put64(f, LINES + 16, sizeof(linetable));
	memcpy(f->mem + (LINES + 32 - BASE), linetable, sizeof(linetable));
}

static void test_good(const struct py_layout *l)
{
	static struct fake f;
	struct py_code c;
	__u64 w[4];

	build(&f, l);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), 0);
	CHECK_STR_EQ(c.name, "Llama.generate");
	CHECK_STR_EQ(c.filename, "/srv/exp/experiment.py");
	CHECK_INT_EQ(c.firstlineno, 41);
	CHECK_INT_EQ(c.nlines, sizeof(linetable));
	memcpy(w, f.mem + (CODE + l->code_csum - BASE), sizeof(w));
	CHECK_INT_EQ(c.csum, ep_py_csum(w));
	/* Instruction pointer - code object: the first unit is line 41, the
	 * next two 42. */
	CHECK_INT_EQ(py_code_line(l, &c, l->co_code_adaptive), 41);
	CHECK_INT_EQ(py_code_line(l, &c, l->co_code_adaptive + 2), 42);
	CHECK_INT_EQ(py_code_line(l, &c, l->co_code_adaptive + 4), 42);
	/* An offset before the bytecode (a bogus pointer): the first line. */
	CHECK_INT_EQ(py_code_line(l, &c, 0), 41);
	py_code_free(&c);
}

static void test_bad(const struct py_layout *l)
{
	static struct fake f;
	struct py_code c;
	char *s;

	/* Not a code object: the type's name says so. */
	build(&f, l);
	memcpy(f.mem + (TPNAME - BASE), "dict", 5);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), -EINVAL);
	CHECK(!c.name && !c.filename && !c.lines);
	/* Unreadable or misaligned addresses. */
	build(&f, l);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, 0x99999000ull, &c), -EFAULT);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE + 3, &c), -EINVAL);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, 0, &c), -EINVAL);
	/* A type pointer into nowhere. */
	put64(&f, CODE + 8, 0xdead0000ull);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), -EINVAL);
	/* A name that is not a compact string. */
	build(&f, l);
	put32(&f, NAME + 32, 1u << 2);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), -EINVAL);
	/* Negative and enormous lengths: refused, or cut at PY_NAME_MAX
	 * (reading that much past the region's end faults). */
	build(&f, l);
	put64(&f, NAME + 16, (uint64_t)-5);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), -EINVAL);
	build(&f, l);
	put64(&f, FILENAME + 16, 1ull << 40);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), 0);
	CHECK(c.filename && strlen(c.filename) == PY_NAME_MAX);
	py_code_free(&c);
	/* A string at the very end of the region, length past it. */
	build(&f, l);
	put64(&f, CODE + l->co_filename, BASE + SIZE - 48);
	put64(&f, BASE + SIZE - 48 + 16, 100);
	put32(&f, BASE + SIZE - 48 + 32, (1u << 2) | (1u << 5) | (1u << 6));
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), -EFAULT);
	/* A line table larger than the bound, or negative: no lines, the name
	 * is still good. */
	build(&f, l);
	put64(&f, LINES + 16, (uint64_t)PY_LINETABLE_MAX + 1);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), 0);
	CHECK(!c.lines && c.nlines == 0);
	CHECK_INT_EQ(py_code_line(l, &c, l->co_code_adaptive + 2), 41);
	py_code_free(&c);
	put64(&f, LINES + 16, (uint64_t)-1);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), 0);
	CHECK(!c.lines);
	py_code_free(&c);
	/* A line table that runs off the region: read fails, no lines. */
	put64(&f, CODE + l->co_lines, BASE + SIZE - 40);
	put64(&f, BASE + SIZE - 40 + 16, 4096);
	CHECK_INT_EQ(py_code_read(l, fake_read, &f, CODE, &c), 0);
	CHECK(!c.lines);
	py_code_free(&c);
	/* Wide strings become UTF-8; control characters are replaced. */
	build(&f, l);
	{
		const uint16_t wide[] = { 'f', 0xe9, '\n', 0x4e2d };
		const uint32_t ucs4[] = { 'g', 0x1f600, 0x110000 };

		put_str(&f, l, NAME, wide, 4, 2, false);
		CHECK_INT_EQ(py_str_read(l, fake_read, &f, NAME, &s), 0);
		CHECK_STR_EQ(s, "f\xc3\xa9?\xe4\xb8\xad");
		free(s);
		put_str(&f, l, NAME, ucs4, 3, 4, false);
		CHECK_INT_EQ(py_str_read(l, fake_read, &f, NAME, &s), 0);
		CHECK_STR_EQ(s, "g\xf0\x9f\x98\x80\xef\xbf\xbd");
		free(s);
	}
	/* An invalid kind. */
	put32(&f, NAME + 32, (3u << 2) | (1u << 5));
	CHECK_INT_EQ(py_str_read(l, fake_read, &f, NAME, &s), -EINVAL);
	CHECK(s == NULL);
}

static void test_names(void)
{
	unsigned a = 0, b = 0;

	CHECK_INT_EQ(py_version_from_name("libpython3.12.so.1.0", &a, &b), 0);
	CHECK(a == 3 && b == 12);
	CHECK_INT_EQ(py_version_from_name("python3.11", &a, &b), 0);
	CHECK(a == 3 && b == 11);
	CHECK_INT_EQ(py_version_from_name("libpython3.8d.so", &a, &b), 0);
	CHECK(b == 8);
	CHECK_INT_EQ(py_version_from_name("python3", &a, &b), -EINVAL);
	CHECK_INT_EQ(py_version_from_name("python2.7", &a, &b), -EINVAL);
	CHECK_INT_EQ(py_version_from_name("python3.12-config", &a, &b), -EINVAL);
	CHECK_INT_EQ(py_version_from_name("libpythonx.so", &a, &b), -EINVAL);
	CHECK_INT_EQ(py_version_from_name("", &a, &b), -EINVAL);
	CHECK(py_layout_find(3, 7) == NULL);
	CHECK(py_layout_find(3, 14) == NULL);
	for (unsigned m = 8; m <= 13; m++)
		CHECK(py_layout_find(3, m) != NULL);
}

/* The layout check: a thread state pointing back at its interpreter. */
static void test_check(const struct py_layout *l)
{
	static struct fake f;
	uint64_t rt = BASE + 0x100, interp = BASE + 0x1000, ts = BASE + 0x3000;

	memset(&f, 0, sizeof(f));
	CHECK_INT_EQ(py_proc_check(l, rt, fake_read, &f), -EAGAIN);
	put64(&f, rt + l->runtime_interp_head, interp);
	CHECK_INT_EQ(py_proc_check(l, rt, fake_read, &f), -EAGAIN);
	put64(&f, interp + l->interp_tstate_head, ts);
	CHECK_INT_EQ(py_proc_check(l, rt, fake_read, &f), -EPROTO);
	put64(&f, ts + 16, interp);
	CHECK_INT_EQ(py_proc_check(l, rt, fake_read, &f), 0);
	put64(&f, interp + l->interp_tstate_head, 0x5000000ull);
	CHECK_INT_EQ(py_proc_check(l, rt, fake_read, &f), -EPROTO);
	CHECK(py_proc_check(l, 0x7000000ull, fake_read, &f) < 0);
}

static void test_merge(void)
{
	/* native (root first): 1 main, 2 Py_RunMain(interp), 3 eval, 4 call(interp),
	 * 5 eval, 6 builtin_sum(interp), 7 libc */
	const uint32_t nat[] = { 1, 2, 3, 4, 5, 6, 7 };
	const uint8_t cls[] = { PY_N_OTHER, PY_N_INTERP, PY_N_EVAL, PY_N_INTERP,
				PY_N_EVAL,  PY_N_INTERP, PY_N_OTHER };
	/* python (root first): 100 <module>, 101 main | 102 f, 103 g */
	const uint32_t py[] = { 100, 101, 102, 103 };
	const bool entry[] = { true, false, true, false };
	uint32_t out[16];
	size_t n;

	n = py_merge(nat, cls, 7, py, entry, 4, false, out);
	{
		const uint32_t want[] = { 1, 2, 100, 101, 4, 102, 103, 6, 7 };

		CHECK_INT_EQ(n, 9);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	n = py_merge(nat, cls, 7, py, entry, 4, true, out);
	{
		const uint32_t want[] = { 1, 2, 100, 101, 102, 103, 6, 7 };

		CHECK_INT_EQ(n, 8);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	/* More runs than evaluator frames (the native root was cut): the
	 * extra runs go into the outermost evaluator frame. */
	{
		const bool e3[] = { true, true, true, false };
		const uint32_t want[] = { 1, 2, 100, 101, 4, 102, 103, 6, 7 };

		n = py_merge(nat, cls, 7, py, e3, 4, false, out);
		CHECK_INT_EQ(n, 9);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	/* More evaluator frames than runs: the innermost are paired, the
	 * outer ones stay. */
	{
		const bool e1[] = { true, false, false, false };
		const uint32_t want[] = { 1, 2, 3, 4, 100, 101, 102, 103, 6, 7 };

		n = py_merge(nat, cls, 7, py, e1, 4, false, out);
		CHECK_INT_EQ(n, 10);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	/* No evaluator frame: Python frames first, as callers. */
	{
		const uint8_t none[] = { 0, 0, 0, 0, 0, 0, 0 };
		const uint32_t want[] = { 100, 101, 102, 103, 1, 2, 3, 4, 5, 6, 7 };

		n = py_merge(nat, none, 7, py, entry, 4, true, out);
		CHECK_INT_EQ(n, 11);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	/* No Python frames, or no native ones. */
	CHECK_INT_EQ(py_merge(nat, cls, 7, py, entry, 0, false, out), 7);
	CHECK(!memcmp(out, nat, sizeof(nat)));
	CHECK_INT_EQ(py_merge(nat, cls, 0, py, entry, 4, false, out), 4);
	CHECK(!memcmp(out, py, sizeof(py)));
}

/* 3.13's published offsets, as the pyenv 3.13.0 build has them (the values
 * of the table): parsed back to the table; then broken ones refused. */
static void test_debug_offsets(void)
{
	const struct py_layout *t = py_layout_find(3, 13);
	uint8_t buf[PY_DEBUG_OFFSETS_LEN];
	struct py_layout l;
	const struct {
		size_t at;
		uint64_t v;
	} vals[] = {
		{ 8, 0x030d00f0 }, { 40, 632 },	 { 72, 7344 }, { 168, 8 },   { 176, 16 },
		{ 184, 72 },	   { 192, 152 }, { 232, 8 },   { 240, 0 },   { 248, 56 },
		{ 264, 70 },	   { 280, 112 }, { 288, 120 }, { 296, 128 }, { 304, 136 },
		{ 312, 68 },	   { 344, 200 },
	};

	memset(buf, 0, sizeof(buf));
	memcpy(buf, "xdebugpy", 8);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		memcpy(buf + vals[i].at, &vals[i].v, 8);
	l = *t;
	memset(&l.frame_back, 0xee, sizeof(l.frame_back));
	CHECK_INT_EQ(py_layout_apply_debug_offsets(buf, sizeof(buf), &l), 0);
	CHECK(!memcmp(&l, t, sizeof(l)));
	CHECK_INT_EQ(py_layout_apply_debug_offsets(buf, sizeof(buf) - 1, &l), -EINVAL);
	CHECK_INT_EQ(py_layout_apply_debug_offsets(NULL, sizeof(buf), &l), -EINVAL);
	buf[0] = 'y';
	CHECK_INT_EQ(py_layout_apply_debug_offsets(buf, sizeof(buf), &l), -EINVAL);
	buf[0] = 'x';
	/* 3.14's table has another shape: refused, not misread. */
	{
		uint64_t v = 0x030e00f0, big = 4096, one = 1;

		memcpy(buf + 8, &v, 8);
		CHECK_INT_EQ(py_layout_apply_debug_offsets(buf, sizeof(buf), &l), -EINVAL);
		v = 0x030d00f0;
		memcpy(buf + 8, &v, 8);
		/* A frame field beyond what the walk reads. */
		memcpy(buf + 248, &big, 8);
		CHECK_INT_EQ(py_layout_apply_debug_offsets(buf, sizeof(buf), &l), -EINVAL);
		big = 56;
		memcpy(buf + 248, &big, 8);
		memcpy(buf + 16, &one, 8);
		CHECK_INT_EQ(py_layout_apply_debug_offsets(buf, sizeof(buf), &l), -ENOTSUP);
	}
	CHECK(!memcmp(&l, t, sizeof(l)));
}

/* The code objects among a code object's constants (py: cycles find a
 * function's code there): the ones of the code type, none beyond the
 * tuple, nothing from a hostile tuple (negative or huge size, unreadable
 * items, items pointing outside). */
#define CONSTS (BASE + 0x1000)
#define NESTED (BASE + 0x1400)
static void test_nested(const struct py_layout *l)
{
	struct fake f;
	struct py_code c;
	uint64_t out[8];

	build(&f, l);
	put64(&f, CODE + l->co_consts, CONSTS);
	put64(&f, CONSTS + 16, 4); /* ob_size */
	put64(&f, CONSTS + 24, NESTED);
	put64(&f, CONSTS + 32, 0);		/* None would be an address; NULL is skipped */
	put64(&f, CONSTS + 40, NAME);		/* a str: not of the code type */
	put64(&f, CONSTS + 48, NESTED + 0x100); /* a second code object */
	put64(&f, NESTED + 8, TYPE);
	put64(&f, NESTED + 0x100 + 8, TYPE);
	int rc = py_code_read(l, fake_read, &f, CODE, &c);

	CHECK_INT_EQ(rc, 0);
	if (rc)
		return;
	CHECK(c.type == TYPE && c.consts == CONSTS);
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), 2);
	CHECK(out[0] == NESTED && out[1] == NESTED + 0x100);
	/* at most max */
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 1), 1);
	/* negative size */
	put64(&f, CONSTS + 16, (uint64_t)-5);
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), -EINVAL);
	/* a huge size: PY_CONSTS_MAX items looked at (the rest of the fake
	 * memory is zeros), not 2^40 */
	put64(&f, CONSTS + 16, (uint64_t)1 << 40);
	f.reads = 0;
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), 2);
	CHECK(f.reads < 64);
	/* items past the end of memory: unreadable */
	put64(&f, BASE + SIZE - 64 + 16, 64);
	c.consts = BASE + SIZE - 64;
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), -EFAULT);
	c.consts = CONSTS;
	/* items pointing outside memory or misaligned: skipped */
	put64(&f, CONSTS + 16, 3);
	put64(&f, CONSTS + 24, 0xdead0000ull);
	put64(&f, CONSTS + 32, NESTED + 3);
	put64(&f, CONSTS + 40, NESTED);
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), 1);
	/* an unreadable or misaligned tuple */
	c.consts = 0xdead0000ull;
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), -EFAULT);
	c.consts = CONSTS + 4;
	CHECK_INT_EQ(py_code_nested(fake_read, &f, &c, out, 8), -EINVAL);
	py_code_free(&c);
}

int main(void)
{
	test_debug_offsets();
	for (unsigned m = 8; m <= 13; m++) {
		const struct py_layout *l = py_layout_find(3, m);

		if (m >= 11)
			test_good(l);
		test_nested(l);
		test_bad(l);
		test_check(l);
	}
	test_names();
	test_merge();
	return check_report("test_py_code");
}
