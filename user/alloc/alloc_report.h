/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report.json memory.alloc, the summary lines of --alloc and its leak
 * finding (docs/report-schema.md, docs/alloc.md).
 */
#ifndef EP_ALLOC_REPORT_H
#define EP_ALLOC_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "alloc/alloc_model.h"
#include "cycles/cycles.h"
#include "report/findings.h"

/* Above this share of the targets' CPU the allocator probes' cost is a
 * finding (alloc_probe_cost), a warning on stderr and in the summary: the
 * targets' times are then visibly inflated (3% of a cycle is about the
 * run-to-run noise of a quiet machine), and the remedy (launch mode, or
 * fewer stack walks) is worth a restart. */
#define ALLOC_COST_WARN_SHARE 0.03
/* The interval stated for estimates: +/- this many standard errors (95%). */
#define ALLOC_Z95 1.96

struct alloc_run {
	const struct alloc_model *model;
	uint64_t rate;
	uint32_t max_live;
	const uint64_t *stats; /* EP_AST__COUNT counters summed over CPUs */
	uint64_t bad_events, collector_drops;
	bool kwalk;
	bool session; /* uprobe sessions: return probes only for sampled calls */
	bool attach;  /* --pid: the targets were running before us (not launched) */
	const struct cycle_table *cycles; /* NULL: none */
	uint64_t nlinks;
	const char *probed[8];
	size_t nprobed;
};

/* What the summary prints, kept from report time. */
struct alloc_results {
	bool have;
	uint64_t calls, frees, bytes, samples, rate, dropped;
	struct alloc_totals t;
	double cost_ns, per_call_ns, share; /* share < 0: unknown */
	double trap_ns, sampled_ns;	    /* per trap (< 0 unknown); in the sampled path */
	uint64_t hits;			    /* traps: probe hits */
	bool attach;
	double alloc_se, inuse_se; /* sampling standard errors of t's bytes */
	char top[3][160];
	double top_bytes[3];
	size_t ntop;
	char leak[3][200];
	size_t nleak;
};

/* Adds memory.alloc to root (reading root.overhead for the cost, so the
 * overhead module reports first) and fills res. Returns 0 or -ENOMEM. */
int alloc_report_json(const struct alloc_run *run, cJSON *root, struct alloc_results *res);
void alloc_print_summary(const struct alloc_results *res, FILE *out);
void alloc_results_free(struct alloc_results *res);

/* The stderr line of the probes' cost (a warning above
 * ALLOC_COST_WARN_SHARE, else at -v). */
void alloc_log_cost(const struct alloc_results *res);

/* Appends the "alloc_leak" findings that memory.alloc.leaks in root
 * describes, and "alloc_probe_cost" when memory.alloc.cost says the probes
 * took more than ALLOC_COST_WARN_SHARE of the targets' CPU (nothing when
 * absent). Returns 0 or -ENOMEM. */
int alloc_findings_from_report(const cJSON *root, struct findings *f);

#endif
