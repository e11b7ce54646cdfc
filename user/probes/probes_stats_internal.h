/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The span aggregation's state (struct probe_stats), shared by the code
 * that fills it (probes_stats.c) and the outputs built from it
 * (probes_stats_out.c). Not part of the interface: see probes.h.
 */
#ifndef EBPF_PROF_PROBES_STATS_INTERNAL_H
#define EBPF_PROF_PROBES_STATS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "probes/probes.h"
#include "util/hashmap.h"

#define SQLITE_ROW  100
#define SQLITE_DONE 101

enum stmt_role { ROLE_NONE, ROLE_STEP, ROLE_RESET, ROLE_FINALIZE };

struct stmt_ent {
	uint32_t pid;
	uint64_t ptr;
	int32_t sql; /* -1: finalized / unknown */
	bool in_run;
	uint64_t run_ns;
};

struct thread_ent {
	uint32_t pid, tid;
	char name[EP_COMM_LEN + 1];
};

struct probe_stats {
	struct probe_info *info;
	struct probe_stat *stat;
	uint8_t *role;
	size_t nprobes, cap;

	struct sql_stmt_stat *sql;
	size_t nsql, capsql, max_sql;
	struct hashmap sql_idx;
	int32_t other_sql;
	int32_t unknown_sql; /* steps of statements prepared before attach */

	struct stmt_ent *stmts;
	size_t nstmts, capstmts;
	struct hashmap stmt_idx;

	struct probe_span_rec *spans;
	size_t nspans, capspans, max_spans;
	uint64_t spans_not_kept;
	struct probe_span_rec first_not_kept; /* where trace.json stops */

	struct thread_ent *threads;
	size_t nthreads, capthreads;
	struct hashmap thread_idx;

	uint64_t drops[EP_PDROP__COUNT];
	uint64_t bad_events;
	uint64_t module_lost; /* spans another module's queue could not take */
	uint64_t tokens, tok_first_ns, tok_last_ns;
	/* Largest successful llama_tokenize result (PROBE_F_PROMPT), calls. */
	int64_t max_prompt;
	uint64_t prompts;
	int32_t last_sql; /* statement of the last event added, -1 (cycle facts) */

	char **nf; /* "probe\0reason" pairs as two strings each */
	size_t nnf;
	struct probe_nest *nest; /* time per class, nested calls once */
};

#endif
