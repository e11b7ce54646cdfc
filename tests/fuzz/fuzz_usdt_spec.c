// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/probes/probes_spec.c user/cycles/cycle_spec.c user/python/py_fnspec.c
/* The USDT and function probe specs (--probe usdt:PATH:PROVIDER:NAME[,end=,
 * pair,label=,count], --cycle / --cycle-every, --probe-count-only). The
 * notes themselves (.note.stapsdt) are parsed by libbpf's usdt.c at attach,
 * not by this tree. Input: NUL- or newline-separated specs; the first byte
 * picks the presets and whether the first spec is the cycle's. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycle_spec.h"
#include "probes/probes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *specs[32];
	char *buf, *p, *end, err[256], pair[256];
	struct probe_specs ps;
	struct cycle_spec cs;
	uint32_t mask = 0;
	size_t n = 0;

	if (!size)
		return 0;
	buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	for (p = buf, end = buf + size - 1; p < end && n < 32;) {
		char *q = p;

		while (q < end && *q && *q != '\n')
			q++;
		*q = '\0';
		specs[n++] = p;
		p = q + 1;
	}
	if (n) {
		memset(&cs, 0, sizeof(cs));
		if (cycle_spec_parse(specs[0], data[0] & 1, &cs, err, sizeof(err)) == 0)
			cycle_spec_free(&cs);
		probe_usdt_pair_end(specs[0], pair, sizeof(pair));
		probe_parse_presets(specs[0], &mask);
	}
	memset(&ps, 0, sizeof(ps));
	if (probe_specs_build(&ps, data[0] >> 1 & 3, specs, n,
			      n && (data[0] & 8) ? specs[n - 1] : NULL, err, sizeof(err)) == 0)
		probe_specs_free(&ps);
	free(buf);
	return 0;
}
