// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/export/pprof_elf.c user/symbolize/debuginfo.c user/util/hashmap.c user/util/log.c
// fuzz-libs: -ldw -lelf
/* pprof-src-<build-id> files of the cache directory (pprof_elf.h): ours, but
 * read back by every later run, so a file cut or damaged must not hurt. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "export/pprof_elf.h"

static void add(void *ctx, const char *name, const char *file, int64_t line)
{
	size_t *n = ctx;

	/* What a good line promises: a non-empty name, a non-negative line. */
	if (!name[0] || line < 0 || (file && !file[0]))
		__builtin_trap();
	*n += strlen(name) + (file ? strlen(file) : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;

	pprof_src_cache_parse((const char *)data, size, add, &n);
	return 0;
}
