// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/llama/gguf.c user/llama/llama_layout.c user/probes/uprobe_discovery.c user/probes/sym_scan.c user/proc/proc_maps.c
// fuzz-libs: -lelf
/* The GGUF header parser (a model file named by the traced program) and
 * the decoding of llama.cpp parameter copies (bytes from its stack). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
	memcpy(blob, data, size < sizeof(blob) ? size : sizeof(blob));
	(void)llama_ctx_decode(llama_layout_find("0.5.0-dev"), blob,
			       size < sizeof(blob) ? size : sizeof(blob), &p);
	(void)llama_model_decode(llama_layout_find("0.5.0-dev"), blob,
				 size < sizeof(blob) ? size : sizeof(blob), &ngl);
	return 0;
}
