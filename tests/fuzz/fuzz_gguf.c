// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/llama/gguf.c user/llama/llama_layout.c user/probes/uprobe_discovery.c user/probes/sym_scan.c user/proc/proc_maps.c user/proc/target_open.c
// fuzz-libs: -lelf
/* The GGUF header parser (a model file named by the traced program), also
 * within the byte, size and time budgets the collector reads it with, and
 * the decoding of llama.cpp parameter copies (bytes from its stack). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "llama/gguf.h"
#include "llama/llama_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gguf_facts g;
	struct llama_ctx_params p;
	char err[256];
	uint8_t blob[256] = { 0 };
	int32_t ngl;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	if (f) {
		if (!gguf_read_facts(f, &g, err, sizeof(err))) {
			(void)gguf_kv_bytes_per_token(&g, 1, 1);
			(void)gguf_ftype_name(g.file_type);
			(void)gguf_type_name(g.main_type);
		}
		fclose(f);
	}
	/* Within budgets as the collector reads a model file: a byte budget
	 * (at times below the input's size), the file's size (at times the
	 * 64 GiB a sparse file claims: skipped arrays are seeked over), a
	 * deadline. Going over a budget is an error, never a read past it. */
	f = fmemopen((void *)data, size, "rb");
	if (f) {
		struct gguf_limits lim = {
			.max_bytes = data[0] & 1 ? size / 2 + 1 : GGUF_MAX_HEADER_BYTES,
			.file_size = data[0] & 2 ? 64ull << 30 : size,
		};
		struct timespec ts;
		int e;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		lim.deadline_ns =
			(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 1000000000ull;
		e = gguf_read_facts_bounded(f, &lim, &g, err, sizeof(err));
		if (e == 0 && (uint64_t)ftello(f) > lim.max_bytes)
			__builtin_trap();
		fclose(f);
	}
	memcpy(blob, data, size < sizeof(blob) ? size : sizeof(blob));
	(void)llama_ctx_decode(llama_layout_find("0.5.0-dev"), blob,
			       size < sizeof(blob) ? size : sizeof(blob), &p);
	(void)llama_model_decode(llama_layout_find("0.5.0-dev"), blob,
				 size < sizeof(blob) ? size : sizeof(blob), &ngl);
	return 0;
}
