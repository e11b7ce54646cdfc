/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What llama.cpp was asked to do, read at the calls that set it up
 * (bpf/probes.bpf.c EP_EV_LLAMA_ARGS at llama_model_load_from_file and
 * llama_init_from_model): the context's n_ctx, n_batch, n_ubatch,
 * n_threads, the model's n_gpu_layers and, from the GGUF file it named,
 * the model's quantization, training context and KV-cache size per token.
 * Written to report.json "llama" (docs/probes.md); the recommendations
 * built on it are llama_findings.h's.
 */
#ifndef EP_LLAMA_FACTS_H
#define EP_LLAMA_FACTS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

struct llama_facts;

/* proc_root: "/proc" (or a test's fake root). */
struct llama_facts *llama_facts_new(const char *proc_root);
void llama_facts_free(struct llama_facts *lf);

/* The llama_version() of the library probe `id` is in (NULL: none read). */
int llama_facts_set_probe(struct llama_facts *lf, uint32_t id, const char *version);

/* One EP_EV_LLAMA_ARGS event. A relative model path is resolved against
 * the process's working directory now (it may change). Returns 0 or
 * -EINVAL for a malformed event. */
int llama_facts_add(struct llama_facts *lf, const void *data, size_t size);

/* The n_ctx of the process's latest context, when its parameters
 * were read and decoded (0: unknown, or the model's own size asked for). */
uint32_t llama_facts_n_ctx(const struct llama_facts *lf, uint32_t pid);

/* Adds report.json "llama" (nothing when no llama call was set up):
 * models (path, n_gpu_layers, GGUF facts), contexts (parameters, KV-cache
 * bytes), the largest prompt (max_prompt tokens over prompts tokenize
 * calls) and the problems met reading them. */
int llama_facts_report_json(const struct llama_facts *lf, cJSON *root, int64_t max_prompt,
			    uint64_t prompts);

#endif
