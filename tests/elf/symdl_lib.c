// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libsymdl.so: dlopen'ed by symtarget on request, in several copies (plain,
 * stripped with separate debuginfo, deleted after loading). */
#include <stdint.h>

static __attribute__((noinline)) int symdl_hidden(int x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x5a;
}

__attribute__((noinline)) int symdl_func(int x)
{
	__asm__ volatile("" ::: "memory");
	return symdl_hidden(x) + 7;
}

uintptr_t symdl_hidden_addr(void)
{
	return (uintptr_t)&symdl_hidden;
}
