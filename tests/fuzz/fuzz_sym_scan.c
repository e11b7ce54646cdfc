// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/probes/sym_scan.c user/probes/uprobe_discovery.c user/proc/proc_maps.c user/proc/target_open.c
// fuzz-libs: -lelf
/* The streaming symbol lookup on hostile tables (a traced process's ELF
 * file): the first 24 bytes choose the table layout, the rest is the file.
 * Then the same bytes as a whole file through ud_find_functions, from a
 * memfd and as a file opened the way a traced process's file is
 * (target_open.h, with a size bound). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probes/sym_scan.h"
#include "probes/uprobe_discovery.h"
#include "proc/target_open.h"

static char tmp_path[64];

static void remove_tmp(void)
{
	unlink(tmp_path);
}

static const char *const names[] = { "main", "foo", "llama_decode", "sqlite3_step", "a", "foo" };
#define NN (sizeof(names) / sizeof(names[0]))

static bool take(void *arg, size_t k, const struct sym_scan_sym *s)
{
	size_t *hits = arg;

	if (k >= NN)
		__builtin_trap();
	(void)s;
	return ++*hits > 1000;
}

/* The input as one scratch file (rewritten each time), open for writing. */
static int target_file(const uint8_t *data, size_t size)
{
	int fd;

	if (!tmp_path[0]) {
		snprintf(tmp_path, sizeof(tmp_path), "/tmp/ep-fuzz-elf-%d", (int)getpid());
		atexit(remove_tmp);
	}
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t h[6];
	size_t hits = 0;
	uint64_t off[NN];
	int fd;

	if (size < sizeof(h))
		return 0;
	memcpy(h, data, sizeof(h));
	fd = memfd_create("f", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	struct sym_scan_table t = { .sym_off = h[0] % (size + 8),
				    .sym_size = h[1] % (size + 64),
				    .sym_entsize = (h[2] & 1) ? 24 : 16,
				    .str_off = h[3] % (size + 8),
				    .str_size = h[4] % (size + 64),
				    .elf64 = h[2] & 1 };
	sym_scan(fd, size, &t, names, NN, take, &hits);
	ud_find_functions(fd, names, NN, off);
	close(fd);
	/* The same bytes as a file a process names, opened as the collector
	 * opens one (proc/target_open.h), with a size bound from the input:
	 * over it nothing is read. */
	fd = target_file(data, size);
	if (fd >= 0) {
		uint64_t max = h[5] % (2 * size + 1);
		struct target_ref self;
		int tf;

		target_ref_self(&self);
		tf = target_open_path(&self, tmp_path, TARGET_NO_SYMLINKS, max, NULL);
		if (tf >= 0 && max && size > max)
			__builtin_trap();
		if (tf >= 0) {
			ud_find_functions(tf, names, NN, off);
			close(tf);
		}
		close(fd);
	}
	return 0;
}
