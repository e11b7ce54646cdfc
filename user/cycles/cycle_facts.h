/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The store of cycle facts (cycles.h's probe spans, CPU samples, off-CPU
 * intervals, RSS and frequency readings, throttling, GPU samples): one
 * vector per kind, names interned. The cycle sink keeps the facts of the
 * run that cycles may still need in one (cycle_sink.c, which admits facts
 * by rules of its own first), the attribution's input its batch in another
 * (cycles_input_facts). Facts may come in any order.
 */
#ifndef EP_CYCLE_FACTS_H
#define EP_CYCLE_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cycles/cycles.h"
#include "util/interner.h"
#include "util/vec.h"

/* name, detail, func: a name's id + 1 (cycle_facts_str), 0 for none. */
struct cf_span {
	uint64_t start, end, tokens; /* end 0: its return was never seen */
	uint32_t tid, kind, name, detail;
	uint32_t llm_flags, llm_tokens, kv_size; /* as struct cyc_span's */
	int64_t kv_after;
};

struct cf_sample {
	uint64_t ts;
	uint32_t tid, func;
};

struct cf_off {
	uint64_t start, end;
	uint32_t tid, reason;
};

/* A reading (RSS bytes, MHz): holds until the next one. */
struct cf_point {
	uint64_t ts;
	double v;
};

struct cf_interval {
	uint64_t start, end; /* end 0: still going */
};

struct cycle_facts {
	EP_VEC(struct cf_span) spans;
	EP_VEC(struct cf_sample) samples;
	EP_VEC(struct cf_off) offs;
	EP_VEC(struct cf_point) rss, freq;
	EP_VEC(struct cf_interval) thr;
	EP_VEC(struct cyc_gpu_sample) gpu;
	struct interner names;
	/* A name that cannot be interned (no memory, max_names reached)
	 * fails the add, or with keep_unnamed leaves the fact without it,
	 * counted in names_dropped. */
	bool keep_unnamed;
	uint64_t names_dropped;
};

/* max_names: distinct names at most (0: no bound but the ids'). */
void cycle_facts_init(struct cycle_facts *f, size_t max_names, bool keep_unnamed);
void cycle_facts_free(struct cycle_facts *f);
/* Forgets every fact; the memory and the interned names stay. */
void cycle_facts_clear(struct cycle_facts *f);
/* Facts held, of every kind. */
size_t cycle_facts_count(const struct cycle_facts *f);
/* The name of id (cf_span.name...): NULL for 0. */
const char *cycle_facts_str(const struct cycle_facts *f, uint32_t id);
/* The number of distinct names: ids run from 1 to it. */
static inline size_t cycle_facts_nnames(const struct cycle_facts *f)
{
	return f->names.n;
}

/* Adding one fact, its strings copied (interned). 0, -ENOMEM, or -EINVAL
 * for what cannot be: a span of no known kind (its return before its
 * entry only loses the return: end 0), an off-CPU interval or a throttling
 * that ends before it starts, a negative frequency. An off-CPU reason out
 * of range counts as CYC_OFF_OTHER. */
int cycle_facts_add_span(struct cycle_facts *f, const struct cyc_span *sp);
int cycle_facts_add_sample(struct cycle_facts *f, uint64_t ts_ns, uint32_t tid, const char *func);
int cycle_facts_add_offcpu(struct cycle_facts *f, uint64_t start_ns, uint64_t end_ns, uint32_t tid,
			   unsigned reason);
int cycle_facts_add_rss(struct cycle_facts *f, uint64_t ts_ns, uint64_t rss_bytes);
int cycle_facts_add_freq(struct cycle_facts *f, uint64_t ts_ns, double mhz);
/* end_ns == 0: still throttled at the end of the run. */
int cycle_facts_add_throttle(struct cycle_facts *f, uint64_t start_ns, uint64_t end_ns);
int cycle_facts_add_gpu(struct cycle_facts *f, const struct cyc_gpu_sample *g);

#endif
