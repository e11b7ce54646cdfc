// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/proc/proc_maps.c
/* /proc/PID/maps: the paths in it are chosen by the traced process. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps m;
	struct proc_map one;
	char *line;

	memset(&m, 0, sizeof(m));
	if (proc_maps_parse_buf((const char *)data, size, 512, &m) == 0) {
		for (size_t i = 0; i < m.n && i < 8; i++) {
			proc_maps_find(&m, m.maps[i].start);
			proc_maps_find(&m, m.maps[i].end - 1);
		}
		proc_maps_find(&m, 0);
	}
	proc_maps_free(&m);
	line = malloc(size + 1);
	if (line) {
		memcpy(line, data, size);
		line[size] = '\0';
		if (proc_maps_parse_line(line, &one) == 0) {
			proc_maps_basename(one.path);
			free(one.path);
		}
		free(line);
	}
	return 0;
}
