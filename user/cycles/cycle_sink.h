/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cycle facts sink: what the recording modules hand over, while the run
 * goes on, for the per-cycle table (docs/cycles.md "During a recording").
 *
 * Modules call the fact functions from their poll hooks (the recorder
 * thread: not thread-safe, no locking); every function accepts a NULL sink
 * and then does nothing, so a module needs no "are cycles on" test. The
 * cycles module feeds the boundaries and calls cycle_sink_flush() each
 * poll: a cycle is attributed (user/cycles/cycles.c) once it is closed and `lag_ns`
 * has passed since its end, so facts still queued in the other modules'
 * rings reach it; then the facts nobody needs any more are dropped. Memory
 * is bounded by the lag plus the longest open cycle, and by a cap per fact
 * kind (`max_facts`): facts beyond it are counted, not kept.
 */
#ifndef EP_CYCLE_SINK_H
#define EP_CYCLE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cycles/cycles.h"
#include "cycles/cycle_agg.h"

enum cycle_mode {
	CYCLE_MODE_PAIRS = 0, /* begin/end per thread: --cycle, marker, py: */
	CYCLE_MODE_EVERY = 1, /* a new cycle at each entry: --cycle-every */
};

struct cycle_sink_cfg {
	enum cycle_mode mode;
	uint64_t lag_ns;    /* attribute a cycle this long after its end */
	uint64_t period_ns; /* CPU time one sample stands for */
	size_t max_facts;   /* per kind (spans, samples, off-CPU, readings) */
	/* Rows kept in the table: the first max_rows / 2 and the last ones;
	 * every cycle is in the aggregates (cycle_sink_agg) either way. */
	size_t max_rows;
	/* Shares over which the aggregates list a cycle (findings_agg_init's). */
	double over_share[CA__COUNT];
	/* Pairs mode: an end with no open cycle on its thread closes a cycle
	 * that started at that thread's previous end (CPython 3.11 fires no
	 * function__entry for calls from Python code, gh-98894, but every
	 * function__return). The first such end only starts the chain. */
	bool chain_ends;
};

struct cycle_sink_stats {
	uint64_t closed;	 /* cycles closed (boundaries seen) */
	uint64_t attributed;	 /* rows in the table */
	uint64_t unmatched_ends; /* end with no open cycle on that thread */
	uint64_t chained;	 /* cycles closed from one end to the next (chain_ends) */
	uint64_t reordered;	 /* --cycle-every entry older than the open cycle: ignored */
	/* Facts that came after the cycles they overlap had been attributed
	 * (the lag was too short): not in those rows. */
	uint64_t late_facts;
	uint64_t dropped_facts; /* over max_facts: not kept */
	uint64_t dropped_names; /* over the name table's cap: kept without name */
	uint64_t rows_not_kept; /* attributed, in the aggregates, row replaced (max_rows) */
	uint64_t agg_errors;	/* rows the aggregates could not take whole (ENOMEM) */
	size_t held_facts, peak_held_facts;
};

/* A cycle as its boundaries closed it, before attribution. */
struct cycle_closed {
	uint64_t no; /* 0-based, in closing order */
	uint64_t start_ns, end_ns;
	uint32_t tid;
	bool truncated;
	bool partial; /* still open at the end of the run (cut there) */
};

struct cycle_sink;

struct cycle_sink *cycle_sink_new(const struct cycle_sink_cfg *cfg);
void cycle_sink_free(struct cycle_sink *s);

/* Facts are taken only while active: the cycles module turns the sink on
 * once a cycle boundary is attached, so a run without cycles (or before
 * its cycle library is loaded) pays one test per fact. Off at creation. */
void cycle_sink_set_active(struct cycle_sink *s, bool on);

/* Turns chain_ends off: the boundaries come with their calls after all
 * (py: cycles by watchpoint, not CPython 3.11's USDT points). Before the
 * first event. */
void cycle_sink_no_chain(struct cycle_sink *s);

/* The process whose RSS readings count (the first target); others' are
 * ignored. 0: any. */
void cycle_sink_set_main_pid(struct cycle_sink *s, uint32_t pid);

/* ---- boundaries (cycles module) ---- */
void cycle_sink_begin(struct cycle_sink *s, uint64_t ts_ns, uint32_t tid);
void cycle_sink_end(struct cycle_sink *s, uint64_t ts_ns, uint32_t tid);
void cycle_sink_entry(struct cycle_sink *s, uint64_t ts_ns, uint32_t tid);

/* ---- facts (any module, recorder thread) ---- */
/* Strings are interned: the caller's may go away after the call. */
void cycle_sink_span(struct cycle_sink *s, const struct cyc_span *sp);
void cycle_sink_sample(struct cycle_sink *s, uint64_t ts_ns, uint32_t tid, const char *func);
void cycle_sink_offcpu(struct cycle_sink *s, uint64_t start_ns, uint64_t end_ns, uint32_t tid,
		       unsigned reason);
void cycle_sink_rss(struct cycle_sink *s, uint32_t pid, uint64_t ts_ns, uint64_t rss_bytes);
void cycle_sink_freq(struct cycle_sink *s, uint64_t ts_ns, double mhz);
void cycle_sink_throttle(struct cycle_sink *s, uint64_t start_ns, uint64_t end_ns);
void cycle_sink_gpu(struct cycle_sink *s, const struct cyc_gpu_sample *g);

/* ---- attribution (cycles module) ---- */
/* Attributes the closed cycles whose end is at least lag_ns before now
 * (a time before which every ring has been drained), appends their rows to
 * the table and drops facts no cycle needs. final: the run is over at now:
 * open cycles end there (truncated and partial), and everything is
 * attributed.
 * Returns the number of rows added, or -errno. */
int cycle_sink_flush(struct cycle_sink *s, uint64_t now_ns, bool final);

/* Cycles closed since the last call (for the live view); *n set. The
 * array stays valid until the next call. */
const struct cycle_closed *cycle_sink_take_closed(struct cycle_sink *s, size_t *n);

/* The rows kept so far. Index = position until max_rows rows; past it,
 * the last rows replace each other in a ring, put back in index order by
 * the final flush and by cycle_sink_take_table. The sink keeps ownership. */
const struct cycle_table *cycle_sink_table(const struct cycle_sink *s);
/* Aggregates over every row attributed (the table keeps only part of
 * them past max_rows). The sink keeps ownership. */
const struct cycle_agg *cycle_sink_agg(const struct cycle_sink *s);
/* Moves the table out (the sink's becomes empty), rows in index order.
 * From then on cycle_sink_table returns *out: the exporters that label by
 * cycle (pprof, trace.json) still see the rows after report.json took
 * them. The taker keeps *out alive while the sink is read. */
void cycle_sink_take_table(struct cycle_sink *s, struct cycle_table *out);
const struct cycle_sink_stats *cycle_sink_stats(const struct cycle_sink *s);

#endif
