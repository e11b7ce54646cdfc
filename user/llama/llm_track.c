// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama.cpp decodes as prompts and generated tokens (llm_track.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llama/llm_track.h"

/* Processes followed at once, contexts per process: a program runs one
 * or two contexts (a draft model); the least recently used slot goes. */
#define LLM_PROCS 32
#define LLM_CTXS  4
/* More tokens than any context takes in one call (n_batch <= n_ctx). */
#define LLM_MAX_BATCH (1 << 24)

struct llm_ctx_slot {
	uint64_t ctx;
	int64_t kv; /* -1 unknown */
	bool used;
};

struct llm_proc {
	uint32_t pid;
	bool used;
	uint64_t last_ns;
	bool mark, cleared; /* a tokenize or clear since the last decode; a clear ever */
	uint64_t mark_ns;   /* the first mark since the last decode */
	bool last_prefill, last_gen, ttft_pending;
	uint64_t prompt_start_ns, last_gen_end;
	struct llm_ctx_slot ctx[LLM_CTXS];
};

struct llm_tracker {
	struct llm_proc p[LLM_PROCS];
	struct llm_run run;
};

struct llm_tracker *llm_tracker_new(void)
{
	struct llm_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	hist_init(&t->run.ttft);
	hist_init(&t->run.itl);
	t->run.kv_max = -1;
	t->run.kv_last = -1;
	return t;
}

void llm_tracker_free(struct llm_tracker *t)
{
	free(t);
}

static struct llm_proc *proc_of(struct llm_tracker *t, uint32_t pid, uint64_t now)
{
	struct llm_proc *old = &t->p[0];

	for (size_t i = 0; i < LLM_PROCS; i++) {
		struct llm_proc *p = &t->p[i];

		if (p->used && p->pid == pid) {
			if (now > p->last_ns)
				p->last_ns = now;
			return p;
		}
		if (!p->used || (old->used && p->last_ns < old->last_ns))
			old = p;
	}
	memset(old, 0, sizeof(*old));
	old->used = true;
	old->pid = pid;
	old->last_ns = now;
	return old;
}

void llm_tracker_mark(struct llm_tracker *t, uint32_t pid, uint64_t start_ns, bool kv_clear)
{
	struct llm_proc *p = proc_of(t, pid, start_ns);

	if (!p->mark)
		p->mark_ns = start_ns;
	p->mark = true;
	if (kv_clear) {
		/* llama_memory_clear names the context's memory, not the
		 * context: every context of the process is taken as cleared. */
		p->cleared = true;
		for (size_t i = 0; i < LLM_CTXS; i++)
			p->ctx[i].kv = 0;
	}
}

static struct llm_ctx_slot *ctx_of(struct llm_proc *p, uint64_t ctx, uint32_t n_ctx)
{
	struct llm_ctx_slot *free_slot = NULL;

	for (size_t i = 0; i < LLM_CTXS; i++) {
		if (p->ctx[i].used && p->ctx[i].ctx == ctx)
			return &p->ctx[i];
		if (!p->ctx[i].used && !free_slot)
			free_slot = &p->ctx[i];
	}
	if (!free_slot)
		free_slot = &p->ctx[ctx % LLM_CTXS];
	free_slot->used = true;
	free_slot->ctx = ctx;
	/* From 0 when its creation or a clear was seen; else it may hold
	 * tokens decoded before we attached. */
	free_slot->kv = n_ctx || p->cleared ? 0 : -1;
	return free_slot;
}

void llm_tracker_decode(struct llm_tracker *t, const struct llm_decode_in *in,
			struct llm_decode_out *out)
{
	struct llm_proc *p = proc_of(t, in->pid, in->start_ns);
	struct llm_run *r = &t->run;
	struct llm_ctx_slot *c;
	uint64_t dur = in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0;
	bool known_pos = in->pos_first >= 0 && in->pos_last >= 0, prefill;
	uint32_t n;

	memset(out, 0, sizeof(*out));
	out->kv_after = -1;
	r->decodes++;
	if (in->n_tokens <= 0 || in->n_tokens > LLM_MAX_BATCH) {
		/* Unreadable, or not a batch llama.cpp takes (empty: refused;
		 * beyond any n_batch: another layout than the one read). */
		r->unknown_batches += in->n_tokens != 0;
		return;
	}
	n = (uint32_t)in->n_tokens;
	out->flags = LLM_D_KNOWN;
	out->n_tokens = n;
	prefill = n > 1 || (known_pos && in->pos_first == 0) || (!known_pos && p->mark);
	if (prefill) {
		out->flags |= LLM_D_PREFILL;
		if (!p->last_prefill || p->mark) {
			out->flags |= LLM_D_PROMPT_START;
			p->prompt_start_ns = p->mark ? p->mark_ns : in->start_ns;
			out->prompt_start_ns = p->prompt_start_ns;
			p->ttft_pending = true;
			r->prompts++;
		}
		r->prompt_tokens += n;
		r->prefill_ns += dur;
		p->last_gen = false;
	} else {
		r->generated_tokens += n;
		r->decode_ns += dur;
		if (p->ttft_pending) {
			out->flags |= LLM_D_FIRST_GEN;
			hist_add(&r->ttft, in->end_ns - p->prompt_start_ns);
			p->ttft_pending = false;
		} else if (p->last_gen && in->end_ns >= p->last_gen_end) {
			hist_add(&r->itl, in->end_ns - p->last_gen_end);
		}
		p->last_gen = true;
		p->last_gen_end = in->end_ns;
	}
	p->last_prefill = prefill;
	p->mark = false;

	c = ctx_of(p, in->ctx, in->n_ctx);
	if (known_pos)
		c->kv = (int64_t)in->pos_last + 1;
	else if (c->kv >= 0)
		c->kv += n;
	out->kv_after = c->kv;
	out->kv_size = in->n_ctx;
	if (c->kv > r->kv_max)
		r->kv_max = c->kv;
	r->kv_last = c->kv;
	if (in->n_ctx)
		r->kv_size = in->n_ctx;
}

const struct llm_run *llm_tracker_run(const struct llm_tracker *t)
{
	return &t->run;
}

static bool add_ms(cJSON *o, const char *k, bool known, uint64_t ns)
{
	return known ? cJSON_AddNumberToObject(o, k, (double)ns / 1e6) != NULL
		     : cJSON_AddNullToObject(o, k) != NULL;
}

static bool add_rate(cJSON *o, const char *k, uint64_t n, uint64_t ns)
{
	return ns ? cJSON_AddNumberToObject(o, k, (double)n * 1e9 / (double)ns) != NULL
		  : cJSON_AddNullToObject(o, k) != NULL;
}

int llm_run_report_json(const struct llm_tracker *t, cJSON *root)
{
	const struct llm_run *r;
	cJSON *o;
	bool ok;

	if (!t || !t->run.decodes)
		return 0;
	r = &t->run;
	o = cJSON_AddObjectToObject(root, "llm");
	if (!o)
		return -ENOMEM;
	ok = cJSON_AddNumberToObject(o, "decodes", (double)r->decodes) &&
	     cJSON_AddNumberToObject(o, "batches_unknown", (double)r->unknown_batches) &&
	     cJSON_AddNumberToObject(o, "prompts", (double)r->prompts) &&
	     cJSON_AddNumberToObject(o, "prompt_tokens", (double)r->prompt_tokens) &&
	     cJSON_AddNumberToObject(o, "generated_tokens", (double)r->generated_tokens) &&
	     add_ms(o, "prefill_ms", true, r->prefill_ns) &&
	     add_ms(o, "decode_ms", true, r->decode_ns) &&
	     add_rate(o, "prompt_tokens_per_s", r->prompt_tokens, r->prefill_ns) &&
	     add_rate(o, "generation_tokens_per_s", r->generated_tokens, r->decode_ns) &&
	     add_ms(o, "ttft_p50_ms", r->ttft.count, hist_quantile(&r->ttft, 0.5)) &&
	     add_ms(o, "ttft_p99_ms", r->ttft.count, hist_quantile(&r->ttft, 0.99)) &&
	     add_ms(o, "itl_p50_ms", r->itl.count, hist_quantile(&r->itl, 0.5)) &&
	     add_ms(o, "itl_p99_ms", r->itl.count, hist_quantile(&r->itl, 0.99)) &&
	     (r->kv_max >= 0 ? cJSON_AddNumberToObject(o, "kv_used_max", (double)r->kv_max)
			     : cJSON_AddNullToObject(o, "kv_used_max")) &&
	     (r->kv_size ? cJSON_AddNumberToObject(o, "kv_size", r->kv_size)
			 : cJSON_AddNullToObject(o, "kv_size"));
	return ok ? 0 : -ENOMEM;
}
