/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Function-call probes: llama.cpp and SQLite presets, user-given uprobes
 * and USDT points. See docs/probes.md.
 *
 * Layers, each usable on its own (the unit tests drive the last two with
 * synthetic events):
 *   probe_specs_*   what to probe: presets + --probe strings (pure parsing)
 *   probes_module   discovery in /proc/PID/maps, attach, ring buffer
 *   probe_stats_*   aggregation of spans into per-probe / per-SQL stats,
 *                   report.json sections, trace events and the summary
 */
#ifndef EBPF_PROF_PROBES_H
#define EBPF_PROF_PROBES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "events/probes.h"
#include "util/histogram.h"
#include "rec_module.h"

/* ---- what to probe ---- */

enum probe_group {
	PG_USER = 0, /* --probe */
	PG_LLAMA = 1,
	PG_SQLITE = 2,
};

#define PROBE_PRESET_LLAMA  (1u << PG_LLAMA)
#define PROBE_PRESET_SQLITE (1u << PG_SQLITE)
#define PROBE_PRESET_ALL    (PROBE_PRESET_LLAMA | PROBE_PRESET_SQLITE)

#define PROBE_F_TOKENS 1u /* one call per generated token */
#define PROBE_F_PROMPT 2u /* returns the number of tokens of a text (llama_tokenize) */
/* Empties a llama.cpp context's KV cache: the next decode starts a prompt
 * at position 0 (llama/llm_track.h). */
#define PROBE_F_KV_CLEAR 4u

/* How a return value says "failed". Integer rules look at the low 32 bits
 * only: the rest of the return register is undefined for an int. */
enum probe_err_rule {
	PE_NONE = 0,
	PE_NONZERO,  /* int != 0 (SQLite rc, llama_decode, ggml_status) */
	PE_NEGATIVE, /* int < 0 (llama_tokenize) */
	PE_NULL,     /* pointer == NULL (llama_model_load_from_file) */
	PE_STEP,     /* sqlite3_step: anything but SQLITE_ROW / SQLITE_DONE */
};

struct probe_def {
	enum probe_group group;
	const char *lib;	   /* pattern (ud_lib_matches); NULL: any mapped file */
	const char *symbol;	   /* function, or USDT name */
	const char *usdt_provider; /* non-NULL: a USDT point */
	const char *label;	   /* shown name */
	uint32_t kind;		   /* enum ep_probe_kind */
	uint32_t mode;		   /* enum ep_probe_mode */
	uint32_t flags;		   /* PROBE_F_* */
	uint32_t err_rule;	   /* enum probe_err_rule */
	char *owned;		   /* storage the strings above point into, if any */
	/* USDT pair: the point that ends the span begun at `symbol` (kind
	 * EP_PK_USDT_BEGIN); NULL for a single point. */
	const char *usdt_end;
};

struct probe_specs {
	struct probe_def *defs;
	size_t n;
};

/* What a call is, as the cycles see it (enum cyc_span_kind): inference
 * (the llama preset), SQL (the SQLite preset and --probe'd SQLite
 * functions), other. */
unsigned probe_def_class(const struct probe_def *def);

/* Parses a --probes value: "none", "all", or a comma list of llama,sqlite.
 * Returns the PROBE_PRESET_* mask, or -EINVAL. */
int probe_parse_presets(const char *s, uint32_t *mask);

/* Parses one --probe value: LIB:SYMBOL[,label=NAME][,count] or
 * usdt:PATH:PROVIDER:NAME[,end=NAME|,pair][,label=NAME][,count]. end=NAME
 * makes NAME the point that closes a span opened at the first one; pair
 * derives it from the name's suffix (probe_usdt_pair_end). On error writes
 * a reason to err[0..errlen) and returns -EINVAL. */
int probe_parse_spec(const char *s, struct probe_def *out, char *err, size_t errlen);

/* The end point paired with a begin point by naming convention: a name
 * ending in entry, start or begin (after '_' or "__") pairs with the same
 * name ending in return, done or end (CPython function__entry /
 * function__return, gc__start / gc__done; cycle_begin / cycle_end). Writes
 * it to out and returns 0, or -ENOENT when the name has no such suffix. */
int probe_usdt_pair_end(const char *begin, char *out, size_t outlen);

/* Builds the probe list: presets in mask, then each --probe spec, then
 * switches the symbols named in count_only (comma list, may be NULL) to
 * count-only mode. */
int probe_specs_build(struct probe_specs *ps, uint32_t mask, const char *const *specs,
		      size_t nspecs, const char *count_only, char *err, size_t errlen);
void probe_specs_free(struct probe_specs *ps);

/* ---- aggregation ---- */

/* One attached (definition, file) pair; the probe id indexes these. */
struct probe_info {
	const struct probe_def *def;
	char *library; /* path as mapped */
};

struct probe_stat {
	uint64_t calls;	   /* entered (exact, from the in-kernel counter) */
	uint64_t spans;	   /* completed calls received */
	uint64_t total_ns; /* inclusive, recursion counted once */
	uint64_t errors;
	uint64_t open;	     /* still running at the end */
	uint64_t rows, done; /* sqlite3_step: SQLITE_ROW / SQLITE_DONE */
	uint64_t nested_sql; /* made by another probed SQLite call (exec) */
	struct histogram hist;
};

struct probe_span_rec { /* kept for trace.json */
	uint64_t start_ns, dur_ns;
	int64_t ret;
	uint32_t pid, tid, probe_id;
	int32_t sql; /* statement index, -1 */
	uint16_t flags;
	uint8_t open;
};

struct sql_stmt_stat {
	char *text;
	bool truncated;
	uint64_t count; /* executions */
	uint64_t total_ns;
	uint64_t rows, errors, prepares;
	struct histogram hist; /* per execution */
};

/* Text of the shared entry for statements prepared before the probes
 * attached (their steps are seen, their prepare was not). */
#define PROBE_SQL_UNKNOWN_TEXT "(prepared before attach: text unknown)"

struct probe_stats; /* opaque */

/* max_trace_spans bounds the spans kept for trace.json (the rest are
 * counted); max_sql bounds distinct statements (the rest are pooled under
 * one "(other statements)" entry). */
struct probe_stats *probe_stats_new(size_t max_trace_spans, size_t max_sql);
void probe_stats_free(struct probe_stats *st);

/* Registers probe id `id` (ids are dense from 0). */
int probe_stats_set_probe(struct probe_stats *st, uint32_t id, const struct probe_def *def,
			  const char *library);
/* Feeds one record from the ring (struct ep_span or ep_span_sql). Returns
 * 0, or -EINVAL for a malformed record (counted, not fatal). */
int probe_stats_add_event(struct probe_stats *st, const void *data, size_t size);
/* Statement index (probe_stats_sql) of the event probe_stats_add_event
 * accepted last, or -1. */
int32_t probe_stats_last_sql(const struct probe_stats *st);
/* Hands the event probe_stats_add_event just accepted to the cycle facts
 * sink (probes_cycles.c); sink may be NULL. */
struct cycle_sink;
struct cyc_span;
void probes_cycle_fact(const struct probe_stats *st, const void *data, size_t size,
		       struct cycle_sink *sink);
/* The same fact, built but not handed over (the probes module builds it on
 * its drain thread and hands it over on the recorder thread, the sink not
 * being thread-safe). false: the event is no cycle fact. Its strings live
 * as long as st. */
bool probes_cycle_span(const struct probe_stats *st, const void *data, size_t size,
		       struct cyc_span *out);
/* A call still open at the end of the run. */
void probe_stats_add_open(struct probe_stats *st, uint32_t pid, uint32_t tid, uint32_t probe_id,
			  uint64_t start_ns, uint64_t end_ns);
void probe_stats_set_calls(struct probe_stats *st, uint32_t id, uint64_t calls);
void probe_stats_set_drops(struct probe_stats *st, const uint64_t drops[EP_PDROP__COUNT]);
/* Spans of other modules' probes (probe bus) their queue could not hold. */
void probe_stats_set_module_lost(struct probe_stats *st, uint64_t n);
void probe_stats_set_thread_name(struct probe_stats *st, uint32_t pid, uint32_t tid,
				 const char *name);
bool probe_stats_knows_thread(const struct probe_stats *st, uint32_t tid);
/* Something for the user-facing "not found" list in report.json. */
int probe_stats_add_not_found(struct probe_stats *st, const char *probe, const char *reason);

size_t probe_stats_nprobes(const struct probe_stats *st);
const struct probe_stat *probe_stats_get(const struct probe_stats *st, uint32_t id);
const struct probe_info *probe_stats_info(const struct probe_stats *st, uint32_t id);
size_t probe_stats_nsql(const struct probe_stats *st);
const struct sql_stmt_stat *probe_stats_sql(const struct probe_stats *st, size_t i);
uint64_t probe_stats_bad_events(const struct probe_stats *st);
/* Time of the calls of one class (enum cyc_span_kind: inference, SQL,
 * other) with nested calls of the class counted once per thread
 * (probes/probe_nest.h), and in *calls (may be NULL) how many outermost
 * calls that is. */
uint64_t probe_stats_class_ns(const struct probe_stats *st, unsigned cls, uint64_t *calls);
/* Generated tokens (calls of a PROBE_F_TOKENS probe) and their rate from
 * the first to the last token's start; 0 when fewer than two. */
uint64_t probe_stats_tokens(const struct probe_stats *st, double *tokens_per_s);
/* The largest token count a PROBE_F_PROMPT call (llama_tokenize) returned
 * (0: none); *calls: successful calls. */
int64_t probe_stats_max_prompt(const struct probe_stats *st, uint64_t *calls);

int probe_stats_report_json(const struct probe_stats *st, cJSON *root);
int probe_stats_trace_events(const struct probe_stats *st, FILE *out, bool *first);
bool probe_stats_has_trace(const struct probe_stats *st);
void probe_stats_summary(const struct probe_stats *st, FILE *out);

/* ---- probes requested by other modules (probe_bus.c) ----
 *
 * A recording module that needs spans of its own (the cycles module's
 * --cycle usdt:PATH:PROV:BEGIN,pair or --cycle LIB:SYMBOL) asks for them
 * from its open hook:
 *
 *   int id = probe_bus_request(ctx->probe_bus, "usdt:app:p:step_begin,pair",
 *                              on_span, state, err, sizeof(err));
 *
 * The probes module attaches every request at its attach hook (all open
 * hooks have run by then, whatever the modules' order), like a --probe of
 * the same spec: same discovery, same pairing, same drops, and the probe
 * shows in report.json `probes` under the spec's label. Each span of the
 * request is passed to on_span on the recorder thread, from the probes
 * module's poll hook (within ~10 ms of the span's end) and, for the last
 * ones, from its stop hook; spans of one thread arrive in end order.
 * Spans lost in the kernel (probes.dropped) never arrive; calls still
 * open at stop are not delivered. With --probes none and no --probe the
 * probes module loads its BPF programs only if some module made a
 * request. */
struct probe_span_ev {
	uint32_t pid, tid;
	uint64_t start_ns; /* CLOCK_MONOTONIC: call entry / begin point */
	uint64_t dur_ns;   /* 0 for a single USDT point */
	int64_t ret;	   /* return value; USDT: the end (or single) point's 1st argument */
	uint64_t obj;	   /* USDT pair: the begin point's 1st argument */
	uint32_t depth;	   /* open probed calls below this one on its thread */
	bool nested_same;  /* inside another span of the same probe (recursion) */
};
typedef void (*probe_span_fn)(void *arg, const struct probe_span_ev *ev);

struct probe_bus;
int probe_bus_new(struct probe_bus **out);
void probe_bus_free(struct probe_bus *b);
/* Returns the request's index (>= 0), or a negative errno with a reason in
 * err (a spec probe_parse_spec rejects: -EINVAL). */
int probe_bus_request(struct probe_bus *b, const char *spec, probe_span_fn fn, void *arg, char *err,
		      size_t errlen);
/* For the probes module. */
size_t probe_bus_count(const struct probe_bus *b);
const struct probe_def *probe_bus_def(const struct probe_bus *b, size_t i);
void probe_bus_deliver(const struct probe_bus *b, size_t i, const struct probe_span_ev *ev);

/* ---- the recording module ---- */

extern const struct rec_module probes_rec_module;

#endif
