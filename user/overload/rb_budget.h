/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ring-buffer draining bounded in time. libbpf's ring_buffer__poll and
 * __consume return only once the ring is empty: when BPF produces records
 * faster than the collector handles them (one thread sampled at 100 kHz,
 * 256 busy threads at 10 kHz) they never return, and the loop that checks
 * the deadline and signals never runs again. libbpf 1.1 (Debian
 * 12) has no ring_buffer__consume_n, but it stops consuming, with the
 * record just handled consumed, when the callback returns an error: the
 * callback here returns one once the call's time budget is spent.
 */
#ifndef EBPF_PROF_RB_BUDGET_H
#define EBPF_PROF_RB_BUDGET_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdint.h>

struct rb_budget {
	ring_buffer_sample_fn fn; /* the real handler */
	void *ctx;
	/* per call */
	uint64_t end_ns;
	uint32_t since_check;
	bool discard; /* count records without handing them to fn */
	bool spent;   /* the last call stopped on its budget: data may be left */
	uint64_t handled;
	/* totals */
	uint64_t cut_short; /* calls that stopped on their budget */
};

/* Pass as ring_buffer__new's callback, with the struct rb_budget as ctx. */
int rb_budget_cb(void *ctx, void *data, size_t size);

/* ring_buffer__poll, then a consume, returning within about budget_ns of
 * the call (the wait included: keep timeout_ms below it). Returns the records handled or -errno; b->spent tells whether it
 * stopped on the budget. */
int rb_budget_poll(struct ring_buffer *rb, struct rb_budget *b, int timeout_ms, uint64_t budget_ns);
/* ring_buffer__consume for at most budget_ns. */
int rb_budget_consume(struct ring_buffer *rb, struct rb_budget *b, uint64_t budget_ns);
/* Throws queued records away, for at most budget_ns; returns how many. For
 * what is left at the end of a run after the last bounded drain, so that it
 * is counted rather than silently left in the ring. */
int64_t rb_budget_discard(struct ring_buffer *rb, struct rb_budget *b, uint64_t budget_ns);

#endif
