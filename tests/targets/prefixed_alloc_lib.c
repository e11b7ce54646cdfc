// ep-target-libs: -shared -fPIC
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An allocator library without malloc, exporting jemalloc's prefixed API
 * (--with-jemalloc-prefix=je_) and mimalloc's: the ELF test_alloc_syms
 * reads to check that they are found and chosen. je_free and mi_free are
 * one function (an alias), probed once. Not a working allocator: nothing
 * runs it.
 */
#include <stddef.h>

static char arena[1 << 16];
static size_t used;

void *je_malloc(size_t n)
{
	void *p = used + n <= sizeof(arena) ? arena + used : NULL;

	used += n;
	return p;
}

void *je_calloc(size_t k, size_t n)
{
	return je_malloc(k * n);
}

void *je_mallocx(size_t n, int flags)
{
	return je_malloc(n + (size_t)flags);
}

void je_free(void *p)
{
	(void)p;
}

void mi_free(void *p) __attribute__((alias("je_free")));

void *mi_zalloc(size_t n)
{
	return je_malloc(n + 1);
}

void *mi_malloc_aligned(size_t n, size_t align)
{
	return je_malloc(n + align);
}
