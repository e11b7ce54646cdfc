/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the fields of llama_context_params and llama_model_params sit, per
 * llama.cpp build (the structs are passed by value and change between
 * releases), and the decoding of the copies bpf/probes.bpf.c takes at
 * llama_init_from_model / llama_model_load_from_file. The build is told
 * by the string llama_version() returns, read from the library file.
 */
#ifndef EP_LLAMA_LAYOUT_H
#define EP_LLAMA_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llama_layout {
	const char *version; /* llama_version() */
	/* llama_context_params: byte offsets of the fields we read. */
	uint32_t ctx_size, n_ctx, n_batch, n_ubatch, n_seq_max, n_threads, n_threads_batch;
	/* llama_model_params */
	uint32_t model_size, n_gpu_layers;
	const char *source; /* where the offsets come from, and how they were checked */
};

struct llama_ctx_params {
	uint32_t n_ctx, n_batch, n_ubatch, n_seq_max;
	int32_t n_threads, n_threads_batch;
};

/* The layout of a llama_version() string, NULL if not in the table. */
const struct llama_layout *llama_layout_find(const char *version);

/* Reads the string llama_version() returns from the ELF file on fd (its
 * code is "lea string(%rip), %rax; ret", after an optional endbr64).
 * Returns 0, -ENOENT (no such function, or other code), -ENOEXEC. */
int llama_version_read(int fd, char *out, size_t outlen);

/* Decodes a context-parameter copy of len bytes. Returns false when the
 * copy is short or a value is implausible for the layout (the library is
 * another build than its version string says): nothing is reported then. */
bool llama_ctx_decode(const struct llama_layout *l, const uint8_t *blob, size_t len,
		      struct llama_ctx_params *out);
bool llama_model_decode(const struct llama_layout *l, const uint8_t *blob, size_t len,
			int32_t *n_gpu_layers);

#endif
