/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The facts a llama.cpp recommendation needs from a GGUF model file's
 * header: architecture, quantization, training context and the sizes that
 * give the KV cache's size per token. The file is named by the traced
 * program (the path it passed to llama_model_load_from_file), so the
 * parser treats it as hostile: every count and length is bounded, and a
 * malformed header is an error, never a crash or a huge allocation.
 */
#ifndef EP_LLAMA_GGUF_H
#define EP_LLAMA_GGUF_H

#include <stdint.h>
#include <stdio.h>

/* Bounds on what a header may declare (real models: ~300 keys, a few
 * thousand tensors; vocabularies up to a few 100k strings). */
#define GGUF_MAX_KV	 65536
#define GGUF_MAX_TENSORS (1u << 20)
#define GGUF_MAX_STR	 (1u << 24) /* one string value, skipped unread */
#define GGUF_MAX_ARRAY	 (1ull << 32)

struct gguf_facts {
	uint32_t version;
	uint64_t n_tensors, n_kv;
	char arch[64];	   /* general.architecture ("" if absent) */
	char name[128];	   /* general.name */
	int64_t file_type; /* general.file_type (enum llama_ftype), -1 absent */
	/* {arch}.* keys; 0 when absent. Per-layer arrays give their maximum. */
	uint64_t context_length, block_count, embedding_length, head_count, head_count_kv;
	uint64_t key_length, value_length; /* attention.key_length / value_length */
	/* The ggml type holding most weight elements, and the total count. */
	int64_t main_type; /* enum ggml_type, -1 none */
	uint64_t n_elements;
};

/* Header bytes read (or passed over) at most: a real one, a 256k-token
 * vocabulary and its merges included, is a few tens of MiB at most; a
 * sparse file can declare arrays of 2^32 elements. */
#define GGUF_MAX_HEADER_BYTES (64ull << 20)

/* What one read may cost. */
struct gguf_limits {
	uint64_t max_bytes;   /* header bytes read or passed over */
	uint64_t file_size;   /* the file's size, 0: unknown (then nothing is
			       * seeked over: a pipe's bytes are read) */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
};

/* Parses the header (key/value pairs and tensor infos) from f's current
 * position, within GGUF_MAX_HEADER_BYTES. Returns 0, -EINVAL (not GGUF,
 * malformed or beyond the bounds; err says where), -ENOTSUP (GGUF version
 * 1), -EFBIG (the header is over the byte budget) or -EIO. */
int gguf_read_facts(FILE *f, struct gguf_facts *out, char *err, size_t errlen);
/* The same within lim; also -ETIMEDOUT past its deadline. */
int gguf_read_facts_bounded(FILE *f, const struct gguf_limits *lim, struct gguf_facts *out,
			    char *err, size_t errlen);

/* Names: llama_ftype ("Q4_K_M") and ggml_type ("Q4_K"); NULL if unknown. */
const char *gguf_ftype_name(int64_t ftype);
const char *gguf_type_name(int64_t type);
/* Bytes per element of a K/V cache type (F32, F16, BF16, Q8_0, Q4_0...),
 * 0 if unknown. */
double gguf_type_bytes(int64_t type);

/* KV cache bytes per token of context: per layer, K and V rows of
 * head_count_kv heads of key_length / value_length (default
 * embedding_length / head_count) elements of the given types. 0 when a
 * size is unknown. */
uint64_t gguf_kv_bytes_per_token(const struct gguf_facts *g, int64_t type_k, int64_t type_v);

#endif
