// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libsymdl.so: dlopen'ed by symtarget on request, in several copies (plain,
 * stripped with separate debuginfo, deleted after loading). */
#include <stdint.h>

/* A second build (libsymdl_b.so) renames only this static function: same
 * code at the same file offsets, another build-id, another name. */
#ifndef SYMDL_HIDDEN
#define SYMDL_HIDDEN symdl_hidden
#endif

static __attribute__((noinline)) int SYMDL_HIDDEN(int x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x5a;
}

__attribute__((noinline)) int symdl_func(int x)
{
	__asm__ volatile("" ::: "memory");
	return SYMDL_HIDDEN(x) + 7;
}

uintptr_t symdl_hidden_addr(void)
{
	return (uintptr_t)&SYMDL_HIDDEN;
}
