// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc/alloc_syms.h"

#include <string.h>

bool alloc_is_mmap_wrapper(const char *name)
{
	/* glibc exports mmap and mmap64 at one address; its symbol table
	 * names the same code __mmap64 or __GI___mmap64. */
	static const char *const wrappers[] = { "mmap",	    "mmap64",	     "__mmap",
						"__mmap64", "__GI___mmap64", "syscall" };

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (!strcmp(name, wrappers[i]))
			return true;
	return false;
}
