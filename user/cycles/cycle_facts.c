// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cycles/cycle_facts.h"

#include <errno.h>
#include <string.h>

void cycle_facts_init(struct cycle_facts *f, size_t max_names, bool keep_unnamed)
{
	memset(f, 0, sizeof(*f));
	interner_init(&f->names, max_names);
	f->keep_unnamed = keep_unnamed;
}

void cycle_facts_free(struct cycle_facts *f)
{
	free(f->spans.v);
	free(f->samples.v);
	free(f->offs.v);
	free(f->rss.v);
	free(f->freq.v);
	free(f->thr.v);
	free(f->gpu.v);
	interner_free(&f->names);
}

void cycle_facts_clear(struct cycle_facts *f)
{
	f->spans.n = f->samples.n = f->offs.n = 0;
	f->rss.n = f->freq.n = f->thr.n = f->gpu.n = 0;
}

size_t cycle_facts_count(const struct cycle_facts *f)
{
	return f->spans.n + f->samples.n + f->offs.n + f->rss.n + f->freq.n + f->thr.n + f->gpu.n;
}

const char *cycle_facts_str(const struct cycle_facts *f, uint32_t id)
{
	return id ? interner_str(&f->names, id - 1) : NULL;
}

/* *id: s's id + 1, 0 for NULL (or for a name dropped under keep_unnamed). */
static int name_id(struct cycle_facts *f, const char *s, uint32_t *id)
{
	int64_t i;

	*id = 0;
	if (!s)
		return 0;
	i = interner_add(&f->names, s);
	if (i >= 0) {
		*id = (uint32_t)i + 1;
		return 0;
	}
	if (!f->keep_unnamed)
		return -ENOMEM;
	f->names_dropped++;
	return 0;
}

int cycle_facts_add_span(struct cycle_facts *f, const struct cyc_span *sp)
{
	struct cf_span v;
	int err;

	if (!sp || sp->kind >= CYC_SPAN__COUNT)
		return -EINVAL;
	v = (struct cf_span){
		.start = sp->start_ns,
		.end = sp->end_ns,
		.tokens = sp->tokens,
		.tid = sp->tid,
		.kind = sp->kind,
		.llm_flags = sp->llm_flags,
		.llm_tokens = sp->llm_tokens,
		.kv_size = sp->kv_size,
		.kv_after = sp->kv_after,
	};
	/* A return before its entry is garbage; keep the call, drop the end. */
	if (v.end && v.end < v.start)
		v.end = 0;
	err = name_id(f, sp->name, &v.name);

	if (!err)
		err = name_id(f, sp->detail, &v.detail);
	return err ? err : EP_VEC_PUSH(f->spans, v);
}

int cycle_facts_add_sample(struct cycle_facts *f, uint64_t ts, uint32_t tid, const char *func)
{
	struct cf_sample v = { ts, tid, 0 };
	int err = name_id(f, func, &v.func);

	return err ? err : EP_VEC_PUSH(f->samples, v);
}

int cycle_facts_add_offcpu(struct cycle_facts *f, uint64_t start, uint64_t end, uint32_t tid,
			   unsigned reason)
{
	if (end < start)
		return -EINVAL;
	if (reason >= CYC_OFF_REASONS)
		reason = CYC_OFF_OTHER;
	return EP_VEC_PUSH(f->offs, ((struct cf_off){ start, end, tid, reason }));
}

int cycle_facts_add_rss(struct cycle_facts *f, uint64_t ts, uint64_t rss_bytes)
{
	return EP_VEC_PUSH(f->rss, ((struct cf_point){ ts, (double)rss_bytes }));
}

int cycle_facts_add_freq(struct cycle_facts *f, uint64_t ts, double mhz)
{
	if (!(mhz >= 0))
		return -EINVAL;
	return EP_VEC_PUSH(f->freq, ((struct cf_point){ ts, mhz }));
}

int cycle_facts_add_throttle(struct cycle_facts *f, uint64_t start, uint64_t end)
{
	if (end && end < start)
		return -EINVAL;
	return EP_VEC_PUSH(f->thr, ((struct cf_interval){ start, end }));
}

int cycle_facts_add_gpu(struct cycle_facts *f, const struct cyc_gpu_sample *g)
{
	if (!g)
		return -EINVAL;
	return EP_VEC_PUSH(f->gpu, *g);
}
