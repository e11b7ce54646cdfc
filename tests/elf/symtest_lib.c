// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libsymtest.so: functions the symbolizer test resolves by exact name. */
#include <stdint.h>

/* Static: only in .symtab, never in .dynsym, so resolving it proves the full
 * symbol table was used. */
static __attribute__((noinline)) int symtest_static_helper(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) int symtest_lib_alpha(int x)
{
	__asm__ volatile("" ::: "memory");
	return symtest_static_helper(x) + 2;
}

__attribute__((noinline)) int symtest_lib_beta(int x)
{
	__asm__ volatile("" ::: "memory");
	return symtest_lib_alpha(x) * 5;
}

uintptr_t symtest_static_helper_addr(void)
{
	return (uintptr_t)&symtest_static_helper;
}

/* A function whose symbol size (1 byte) is much smaller than the code after
 * it: addresses in the trailing 64 bytes are covered by no symbol and must
 * not be attributed to symtest_padded. */
__asm__(".text\n"
	".globl symtest_padded\n"
	".type symtest_padded, @function\n"
	"symtest_padded:\n"
	"\tret\n"
	".size symtest_padded, 1\n"
	".fill 64, 1, 0xcc\n");
