// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/export/pprof_elf.c user/symbolize/debuginfo.c user/util/hashmap.c user/util/log.c user/proc/target_open.c
// fuzz-libs: -ldw -lelf -lz
/* pprof-src-<build-id> files of the cache directory (pprof_elf.h): ours, but
 * read back by every later run, so a file cut or damaged must not hurt.
 * Then the bytes as a traced process's module file: its build-id. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/pprof_elf.h"
#include "proc/target_open.h"

static void add(void *ctx, const char *name, const char *file, int64_t line)
{
	size_t *n = ctx;

	/* What a good line promises: a non-empty name, a non-negative line. */
	if (!name[0] || line < 0 || (file && !file[0]))
		__builtin_trap();
	*n += strlen(name) + (file ? strlen(file) : 0);
}

static char tmp_path[64];

static void remove_tmp(void)
{
	unlink(tmp_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hex[2 * PPROF_BUILD_ID_MAX + 1];
	struct target_ref self;
	size_t n = 0;
	int fd;

	pprof_src_cache_parse((const char *)data, size, add, &n);
	/* The same bytes as a module file: its build-id note read as the
	 * pprof export reads one (opened through target_open.h with a size
	 * bound from the input, read, not mapped). */
	if (!tmp_path[0]) {
		snprintf(tmp_path, sizeof(tmp_path), "/tmp/ep-fuzz-bid-%d", (int)getpid());
		atexit(remove_tmp);
	}
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		uint64_t max = size ? data[0] * (uint64_t)size / 128 : 0;
		int tf;

		target_ref_self(&self);
		tf = target_open_path(&self, tmp_path, TARGET_NO_SYMLINKS, max, NULL);
		if (tf >= 0 && max && size > max)
			__builtin_trap();
		if (tf >= 0) {
			if (pprof_elf_build_id_fd(tf, hex, sizeof(hex)) == 0 &&
			    strlen(hex) > 2 * PPROF_BUILD_ID_MAX)
				__builtin_trap();
			close(tf);
		}
	}
	close(fd);
	return 0;
}
