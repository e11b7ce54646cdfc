/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * llama.cpp's decode calls as prompts and generated tokens, from outside
 * the process: each llama_decode span carries its batch's token count and
 * first and last positions (bpf/probes.bpf.c, struct ep_span_llama). In
 * the order the calls returned, per process:
 *
 * - a decode is prompt processing (prefill) when its batch has more than
 *   one token, when its first position is 0, or, positions unknown
 *   (batch.pos NULL: llama_batch_get_one), when it is the first decode
 *   after a llama_tokenize or a KV-cache clear; else it is a generation
 *   step (one token);
 * - a prompt runs from a prefill decode that follows a generation step, a
 *   tokenize or a clear (consecutive prefill decodes are the chunks of one
 *   prompt) to the next such decode; its time to first token runs from the
 *   tokenize or clear before it (else its first decode's start) to the end
 *   of its first generation step; inter-token latency is the time between
 *   the ends of consecutive generation steps of a prompt;
 * - the KV cache's fill after a decode (per context) is its last position
 *   + 1 when the batch has positions; else the count of tokens decoded
 *   since a clear, or since the context was created while we watched
 *   (n_ctx known), and unknown otherwise.
 *
 * Pure (no I/O): the probes module feeds it on its drain thread.
 */
#ifndef EP_LLM_TRACK_H
#define EP_LLM_TRACK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/histogram.h"

#define LLM_POS_NONE (-1)

/* What a decode was (llm_decode_out.flags). */
#define LLM_D_PREFILL	   1u /* prompt processing */
#define LLM_D_PROMPT_START 2u /* the first decode of a prompt */
#define LLM_D_FIRST_GEN	   4u /* a prompt's first generation step */
#define LLM_D_KNOWN	   8u /* the batch was read: n_tokens is the batch's */

struct llm_decode_in {
	uint32_t pid;
	uint64_t ctx;		     /* the llama_context pointer */
	int32_t n_tokens;	     /* < 0: the batch could not be read */
	int32_t pos_first, pos_last; /* LLM_POS_NONE: no positions */
	uint64_t start_ns, end_ns;
	uint32_t n_ctx; /* the context's size as set up, 0: unknown */
};

struct llm_decode_out {
	uint32_t flags;		  /* LLM_D_* */
	uint32_t n_tokens;	  /* the batch's tokens (0 unknown) */
	int64_t kv_after;	  /* KV-cache cells in use after the call, -1 unknown */
	uint32_t kv_size;	  /* n_ctx, 0 unknown */
	uint64_t prompt_start_ns; /* LLM_D_PROMPT_START: where its TTFT starts */
};

/* Whole-run totals, every process. */
struct llm_run {
	uint64_t decodes, unknown_batches, prompts;
	uint64_t prompt_tokens, generated_tokens, prefill_ns, decode_ns;
	struct histogram ttft, itl;
	int64_t kv_max; /* -1 unknown */
	uint32_t kv_size;
	int64_t kv_last; /* after the last decode, -1 unknown */
};

struct llm_tracker;

struct llm_tracker *llm_tracker_new(void);
void llm_tracker_free(struct llm_tracker *t);

/* A llama_tokenize (kv_clear false) or a KV-cache clear of the process,
 * which started at start_ns: the next decode begins a prompt. */
void llm_tracker_mark(struct llm_tracker *t, uint32_t pid, uint64_t start_ns, bool kv_clear);
/* A decode call, in the order of the returns. */
void llm_tracker_decode(struct llm_tracker *t, const struct llm_decode_in *in,
			struct llm_decode_out *out);
const struct llm_run *llm_tracker_run(const struct llm_tracker *t);

/* report.json "llm" (nothing without a decode): the whole run's prompts,
 * tokens, prefill and decode time, rates, TTFT and inter-token latency
 * percentiles and the largest KV-cache fill (docs/report-schema.md). */
int llm_run_report_json(const struct llm_tracker *t, cJSON *root);

#endif
