// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libcfiarm64.so: freestanding AArch64 code (no libc needed to link) for
 * the unwind-table compiler's arm64 rules (tests/unit/test_cfi_table.c):
 * a leaf (return address in x30), frames saving x29/x30, a large frame. */
extern int cfiarm_ext(int);

__attribute__((noinline)) int cfiarm_leaf(int x)
{
	return x * 3;
}

__attribute__((noinline)) int cfiarm_mid(int x)
{
	volatile char buf[256];
	buf[x & 255] = 1;
	return cfiarm_ext(cfiarm_leaf(x) + buf[3]);
}

__attribute__((noinline)) int cfiarm_big(int x)
{
	volatile char buf[70000];
	buf[x & 0xffff] = 2;
	return cfiarm_mid(x) + buf[9];
}
