// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A library built twice for the layout test (tests/unit/test_symbolize_layouts.c):
 * libsymprelink.so, linked at a non-zero first p_vaddr as prelink left
 * libraries, and libsymmini.so, stripped with its static functions kept
 * only in an xz-compressed .gnu_debugdata (minidebuginfo, as Fedora ships).
 * SYMLIB names the build: every function carries it, so a name proves
 * which file answered.
 */
#include <stdint.h>

#define CAT2(a, b) a##b
#define CAT(a, b)  CAT2(a, b)
#define FN(x)	   CAT(SYMLIB, x)

/* Static: only in .symtab (or .gnu_debugdata), never in .dynsym. */
static __attribute__((noinline)) int FN(_static)(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 7 + 3;
}

/* Protected: exported, but the library's own references bind to it, so
 * FN(_exported_addr) gives its code address, not the executable's PLT slot
 * (a non-PIE caller's &FN(_exported) is that slot). */
__attribute__((noinline, visibility("protected"))) int FN(_exported)(int x)
{
	__asm__ volatile("" ::: "memory");
	return FN(_static)(x) + 1;
}

uintptr_t FN(_exported_addr)(void)
{
	return (uintptr_t)&FN(_exported);
}

uintptr_t FN(_static_addr)(void)
{
	return (uintptr_t)&FN(_static);
}
