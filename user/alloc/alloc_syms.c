// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc/alloc_syms.h"

#include <string.h>

const struct alloc_sym alloc_syms[] = {
	{ "malloc", EP_AK_MALLOC, false },
	{ "calloc", EP_AK_CALLOC, false },
	{ "realloc", EP_AK_REALLOC, false },
	{ "memalign", EP_AK_MEMALIGN, false },
	{ "aligned_alloc", EP_AK_MEMALIGN, false },
	{ "posix_memalign", EP_AK_POSIX_MEMALIGN, false },
	{ "valloc", EP_AK_VALLOC, false },
	{ "pvalloc", EP_AK_VALLOC, false },
	{ "free", EP_AK_NONE, false },
	/* jemalloc's own API, beside malloc in Debian's libjemalloc: a
	 * separate path, not through malloc. */
	{ "mallocx", EP_AK_MALLOC, false },
	{ "rallocx", EP_AK_REALLOC, false },
	{ "dallocx", EP_AK_NONE, false },
	{ "sdallocx", EP_AK_NONE, false },
	/* An allocator that replaces malloc (jemalloc, tcmalloc, mimalloc)
	 * replaces C++'s operator new and delete too, and they do not go
	 * through its malloc; libstdc++'s own (which call malloc) are in a
	 * file without malloc, not probed. Size or pointer first. */
	{ "_Znwm", EP_AK_MALLOC, false },
	{ "_Znam", EP_AK_MALLOC, false },
	{ "_ZnwmRKSt9nothrow_t", EP_AK_MALLOC, false },
	{ "_ZnamRKSt9nothrow_t", EP_AK_MALLOC, false },
	{ "_ZnwmSt11align_val_t", EP_AK_MALLOC, false },
	{ "_ZnamSt11align_val_t", EP_AK_MALLOC, false },
	{ "_ZdlPv", EP_AK_NONE, false },
	{ "_ZdaPv", EP_AK_NONE, false },
	{ "_ZdlPvm", EP_AK_NONE, false },
	{ "_ZdaPvm", EP_AK_NONE, false },
	{ "_ZdlPvSt11align_val_t", EP_AK_NONE, false },
	{ "_ZdlPvmSt11align_val_t", EP_AK_NONE, false },
	/* jemalloc built with --with-jemalloc-prefix=je_. */
	{ "je_malloc", EP_AK_MALLOC, true },
	{ "je_calloc", EP_AK_CALLOC, true },
	{ "je_realloc", EP_AK_REALLOC, true },
	{ "je_aligned_alloc", EP_AK_MEMALIGN, true },
	{ "je_posix_memalign", EP_AK_POSIX_MEMALIGN, true },
	{ "je_memalign", EP_AK_MEMALIGN, true },
	{ "je_valloc", EP_AK_VALLOC, true },
	{ "je_free", EP_AK_NONE, true },
	{ "je_mallocx", EP_AK_MALLOC, true },
	{ "je_rallocx", EP_AK_REALLOC, true },
	{ "je_dallocx", EP_AK_NONE, true },
	{ "je_sdallocx", EP_AK_NONE, true },
	/* mimalloc's API (a program linking it without overriding malloc). */
	{ "mi_malloc", EP_AK_MALLOC, true },
	{ "mi_zalloc", EP_AK_MALLOC, true },
	{ "mi_calloc", EP_AK_CALLOC, true },
	{ "mi_mallocn", EP_AK_CALLOC, true },
	{ "mi_realloc", EP_AK_REALLOC, true },
	{ "mi_malloc_aligned", EP_AK_MALLOC, true },
	{ "mi_zalloc_aligned", EP_AK_MALLOC, true },
	{ "mi_free", EP_AK_NONE, true },
	/* tcmalloc's (aliases of its malloc, found alone if it is not). */
	{ "tc_malloc", EP_AK_MALLOC, true },
	{ "tc_calloc", EP_AK_CALLOC, true },
	{ "tc_realloc", EP_AK_REALLOC, true },
	{ "tc_memalign", EP_AK_MEMALIGN, true },
	{ "tc_posix_memalign", EP_AK_POSIX_MEMALIGN, true },
	{ "tc_free", EP_AK_NONE, true },
};
const size_t alloc_nsyms = sizeof(alloc_syms) / sizeof(alloc_syms[0]);

size_t alloc_pick_syms(const uint64_t *off, bool *probe)
{
	bool standard = off[0] != 0;
	size_t n = 0;

	for (size_t i = 0; i < alloc_nsyms; i++) {
		probe[i] = false;
		if (!off[i] || alloc_syms[i].prefixed == standard)
			continue;
		/* Aliases (memalign = aligned_alloc in some builds): once. */
		probe[i] = true;
		for (size_t j = 0; j < i && probe[i]; j++)
			if (probe[j] && off[j] == off[i])
				probe[i] = false;
		n += probe[i];
	}
	return n;
}

uint64_t alloc_tail_jump_x86(const uint8_t *code, size_t n, uint64_t off)
{
	if (n >= 5 && code[0] == 0xe9) {
		int32_t rel = (int32_t)((uint32_t)code[1] | (uint32_t)code[2] << 8 |
					(uint32_t)code[3] << 16 | (uint32_t)code[4] << 24);

		return off + 5 + (uint64_t)(int64_t)rel;
	}
	if (n >= 2 && code[0] == 0xeb)
		return off + 2 + (uint64_t)(int64_t)(int8_t)code[1];
	return 0;
}

size_t alloc_drop_tail_wrappers(const uint64_t *off, const uint64_t *jump, bool *probe)
{
	size_t n = 0;

	for (size_t i = 0; i < alloc_nsyms; i++) {
		if (!probe[i])
			continue;
		for (size_t j = 0; j < alloc_nsyms && jump[i]; j++)
			if (j != i && probe[j] && off[j] == jump[i])
				probe[i] = false;
		n += probe[i];
	}
	return n;
}

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
