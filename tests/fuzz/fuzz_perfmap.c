// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/symbolize/perfmap.c
/* perf maps (/tmp/perf-PID.map) are written by the traced process. */
#include <stddef.h>
#include <stdint.h>

#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = NULL;
	uint64_t off;

	/* data is exactly size bytes, with no NUL after it: ASan sees any
	 * read past the end (how the parser's overread was found). */
	if (perfmap_parse((const char *)data, size, &pm) == 0 && pm) {
		for (uint64_t a = 0; a < 0x10000; a += 0x1000)
			perfmap_lookup(pm, a, &off);
		perfmap_lookup(pm, UINT64_MAX, &off);
		perfmap_count(pm);
		perfmap_bad_lines(pm);
	}
	perfmap_free(pm);
	return 0;
}
