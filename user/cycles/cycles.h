/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Experiment cycles: per-cycle attribution (pure).
 *
 * Input: cycle boundaries (begin/end events of a cycle probe, or entry
 * timestamps for --cycle-every, or nothing = the whole run is one cycle) and
 * a bag of timestamped facts gathered by the other modules (probe spans, CPU
 * samples, off-CPU intervals, RSS, CPU frequency, throttling, GPU samples).
 * Output: one row per cycle (docs/cycles.md).
 *
 * Facts may arrive in any order: everything is sorted before attribution, so
 * "slightly out-of-order" delivery from several ring buffers costs nothing.
 * Intervals crossing a cycle edge are split by overlap. All times are
 * CLOCK_MONOTONIC ns.
 */
#ifndef EP_CYCLES_H
#define EP_CYCLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Off-CPU reasons, same numbering as enum ep_off_reason in bpf/events/sched.h
 * (sleep, uninterruptible, preempted, runqueue, other). */
#define CYC_OFF_REASONS	  5
#define CYC_OFF_SLEEP	  0
#define CYC_OFF_BLOCKED	  1
#define CYC_OFF_PREEMPTED 2
#define CYC_OFF_RUNQ	  3
#define CYC_OFF_OTHER	  4

#define CYC_TOP_FUNCS 5

enum cyc_span_kind {
	CYC_SPAN_INFERENCE = 0,
	CYC_SPAN_SQL = 1,
	CYC_SPAN_OTHER = 2, /* any other probe */
	CYC_SPAN_GC = 3,    /* CPython gc__start/gc__done */
	CYC_SPAN__COUNT
};

/* A probe call. end_ns == 0 means the return was never seen. */
struct cyc_span {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t tid;
	uint32_t kind;	    /* enum cyc_span_kind */
	uint64_t tokens;    /* inference: tokens produced by this call (0 if unknown) */
	const char *name;   /* probe name, copied; may be NULL */
	const char *detail; /* SQL statement text, copied; may be NULL */
	/* A llama_decode whose batch was read (llama/llm_track.h): */
	uint32_t llm_flags;  /* LLM_D_* (llm_track.h); 0: no such call */
	uint32_t llm_tokens; /* the batch's token count */
	int64_t kv_after;    /* KV-cache cells in use after it, -1 unknown */
	uint32_t kv_size;    /* the context's n_ctx, 0 unknown */
};

struct cyc_gpu_sample {
	uint64_t ts_ns;
	double load_pct;
	double power_mw;
	double temp_c;
};

struct cycles_cfg {
	uint64_t run_start_ns; /* first instant of the recording */
	uint64_t run_end_ns;   /* last instant; closes open cycles */
	uint64_t period_ns;    /* CPU time one sample stands for */
	/* Thread whose off-CPU time enters the wall-time partition when a cycle
	 * has no thread of its own (whole run, --cycle-every without tid):
	 * normally the target's main thread. 0 = none. */
	uint32_t main_tid;
};

struct cycle_func {
	char *name;
	uint64_t samples;
};

/* LLM timing of a cycle, from the llama_decode calls that started in it
 * (docs/cycles.md "LLM timing"). */
struct cycle_llm {
	bool has; /* a decode with its batch read: the rest is meaningful */
	uint32_t prompts;
	uint64_t prompt_tokens, generated_tokens;
	uint64_t prefill_ns, decode_ns;
	bool has_ttft; /* cycle start -> end of its first prompt's first generation step */
	uint64_t ttft_ns;
	bool has_itl; /* two generation steps of a prompt at least */
	uint64_t itl_p50_ns, itl_p99_ns;
	int64_t kv_used;  /* after the cycle's last decode, -1 unknown */
	uint32_t kv_size; /* 0 unknown */
};

struct cycle_row {
	uint32_t index; /* 0-based */
	uint32_t tid;	/* thread that ran the cycle probe; 0 = unknown */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t wall_ns;
	bool truncated; /* end inferred: return missing (next begin or run end) */
	/* Still open when the run ended (cut by the end, also truncated): its
	 * wall time is a cut, not a cycle's length, so it stays out of every
	 * statistic and finding and is shown apart. */
	bool partial;

	uint64_t samples;
	uint64_t on_cpu_ns; /* samples * period, all threads */
	/* Off-CPU time of the cycle thread (or every thread when the cycle has
	 * no thread and no main_tid is set), by reason. */
	uint64_t off_cpu_ns[CYC_OFF_REASONS];
	uint64_t off_cpu_total_ns;

	/* Sums of the probe spans' parts inside the cycle, all threads. */
	uint64_t inference_ns;
	uint32_t inference_calls;
	uint64_t tokens;
	double tokens_per_s; /* tokens / inference time; 0 without inference */
	uint64_t sql_ns;
	uint32_t sql_count;
	uint64_t sql_slowest_ns;
	char *sql_slowest; /* statement text, or NULL */
	uint64_t probe_other_ns;
	uint32_t probe_other_calls;
	uint64_t gc_ns;
	uint32_t gc_count;
	uint32_t incomplete_spans; /* spans whose return was never seen */
	struct cycle_llm llm;

	/* Partition of the wall time (sums to wall_ns): each instant goes to the
	 * first of gc, sql, inference, other probe, off-CPU of the cycle thread
	 * (by reason) that covers it; the rest is other_ns. */
	uint64_t part_gc_ns;
	uint64_t part_sql_ns;
	uint64_t part_inference_ns;
	uint64_t part_probe_ns;
	uint64_t part_off_cpu_ns[CYC_OFF_REASONS];
	uint64_t other_ns; /* wall minus the attributed parts */

	bool has_rss;
	uint64_t rss_end_bytes;
	int64_t rss_delta_bytes;

	bool has_freq;
	double mhz_mean;
	double mhz_min;
	double throttled_share; /* 0..1 of wall time */

	bool has_gpu;
	double gpu_load_pct;
	double gpu_power_mw;
	double gpu_temp_c;
	double gpu_energy_mj; /* mean power * wall */

	uint32_t n_top;
	struct cycle_func top[CYC_TOP_FUNCS];
};

struct cycle_table {
	struct cycle_row *rows;
	size_t n;
	bool whole_run;		 /* no cycle boundaries: one cycle = the run */
	uint64_t unmatched_ends; /* returns of the cycle probe with no open cycle */
	uint64_t period_ns;
};

struct cycles_input;
struct cycle_facts;

struct cycles_input *cycles_input_new(void);
void cycles_input_free(struct cycles_input *in);
/* Forgets every boundary and fact but keeps the memory and the interned
 * strings, for a caller that builds one input after another. */
void cycles_input_clear(struct cycles_input *in);

/* Cycle boundaries. Begin/end of the cycle probe (--cycle): per thread, an
 * end closes the open cycle; a begin while one is open closes it there and
 * marks it truncated (missing return); a recursive cycle function therefore
 * ends its cycle at the first inner return. Entries (--cycle-every): a cycle
 * runs from one entry to the next, the last to run_end_ns. Use one form. */
int cycles_add_begin(struct cycles_input *in, uint64_t ts_ns, uint32_t tid);
int cycles_add_end(struct cycles_input *in, uint64_t ts_ns, uint32_t tid);
int cycles_add_entry(struct cycles_input *in, uint64_t ts_ns, uint32_t tid);

/* Facts: added to this bag (cycle_facts.h), in any order. */
struct cycle_facts *cycles_input_facts(struct cycles_input *in);

/* Builds the table; the input is not modified. Returns 0 or -errno. */
int cycles_compute(const struct cycles_input *in, const struct cycles_cfg *cfg,
		   struct cycle_table *out);
void cycle_table_free(struct cycle_table *t);
/* Frees the rows' strings only (rows stays). */
void cycle_table_free_rows(struct cycle_table *t);

/* Nearest-rank percentile (0..100) of the complete (not partial) cycles'
 * wall times; 0 if none. */
uint64_t cycles_wall_percentile(const struct cycle_table *t, double pct);

/* The complete cycles of t (partial ones left out), as a table whose rows
 * are shallow copies: t must outlive it; free it with cycles_view_free.
 * Returns the number of partial rows left out, or -ENOMEM. */
int cycles_complete_view(const struct cycle_table *t, struct cycle_table *view);
void cycles_view_free(struct cycle_table *view);

const char *cycles_off_reason_name(unsigned reason);

/* The numbers against what can be: each cycle's partition sums to its
 * wall time, and (nthreads > 0) no per-kind sum (inference, SQL, other
 * probes, GC, off-CPU) exceeds wall x nthreads. Returns how many cycles
 * fail, with the first failure described in why. */
size_t cycles_self_check(const struct cycle_table *t, uint32_t nthreads, char *why, size_t len);

#endif
