/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Recommendations with the numbers of the run's own llama.cpp set-up
 * (report.json "llama", llama_facts.h): an oversized n_ctx and the KV
 * cache it costs, a context beyond the model's training length, more
 * threads than CPUs, a batch smaller than the prompts; and the facts added
 * to the generic "inference dominates" advice. Rules: docs/cycles.md.
 */
#ifndef EP_LLAMA_FINDINGS_H
#define EP_LLAMA_FINDINGS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "cycles/cycles.h"
#include "report/findings.h"

/* The n_ctx recommended for prompts of `need` tokens: need plus a quarter,
 * rounded up to a multiple of 256 (llama.cpp pads n_ctx to 256 anyway). */
uint32_t llama_ctx_suggest(uint64_t need);

/* Appends the llama findings for root's "llama" section to f; t gives the
 * tokens generated per cycle (NULL or whole-run: the run's total is the
 * bound). ncpus 0: unknown. Returns 0 or -ENOMEM. */
int llama_findings_from_report(const cJSON *root, const struct cycle_table *t, uint32_t ncpus,
			       struct findings *f);

#endif
