// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/probes/sym_scan.c user/probes/uprobe_discovery.c user/proc/proc_maps.c
// fuzz-libs: -lelf
/* The streaming symbol lookup on hostile tables (a traced process's ELF
 * file): the first 24 bytes choose the table layout, the rest is the file.
 * Then the same bytes as a whole file through ud_find_functions. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probes/sym_scan.h"
#include "probes/uprobe_discovery.h"

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
	return 0;
}
