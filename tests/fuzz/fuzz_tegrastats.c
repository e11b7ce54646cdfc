// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/jetson/jetson_tegrastats.c user/jetson/jetson_fs.c
// fuzz-libs: -lcjson
/* tegrastats output, as given to `ebpf-prof jetson --parse-tegrastats`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jetson/jetson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), buf[256];
	FILE *f;
	int n;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	cJSON_Delete(jetson_tegrastats_parse_line(line));
	free(line);
	/* The line reader with a small buffer: every line is parsed as the
	 * subcommand does, too-long ones end it. */
	f = fmemopen((void *)data, size ? size : 1, "r");
	if (!f)
		return 0;
	while ((n = jetson_tegrastats_read_line(f, buf, sizeof(buf))) >= 0)
		cJSON_Delete(jetson_tegrastats_parse_line(buf));
	fclose(f);
	return 0;
}
