/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report.json sections of the cycles concern (docs/report-schema.md):
 * `cycles`, `findings`, `flame`; and their readers for `ebpf-prof report`.
 * The readers parse outside input (a saved report.json): every field is
 * type- and range-checked, and an error names the field.
 */
#ifndef EP_CYCLES_JSON_H
#define EP_CYCLES_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "cycles/cycles.h"
#include "report/findings.h"

struct profile;

cJSON *cycles_to_json(const struct cycle_table *t);
/* cycles_meta.all_cycles: wall-time statistics over every cycle of the run
 * (the table may keep only part of them). Returns 0 or -ENOMEM. */
struct cycle_agg;
int cycles_agg_to_json(const struct cycle_agg *a, cJSON *meta);
cJSON *findings_to_json(const struct findings *f);
/* The stacks of p for the flame graphs: the heaviest max_stacks of the run
 * and each listed thread's heaviest per_thread not among them. { "unit",
 * "total", "frames": [{ "name", "module", "kernel" }], "stacks": [{ "f":
 * [frame index, root first], "n": count, "t": [[thread entry, count]] }],
 * "threads": [{ "pid", "tid", "comm", "n" }] } with the heaviest
 * max_threads threads listed, the rest merged into one entry
 * (docs/report-schema.md). unit: what a count is ("samples"; "us" for the
 * off-CPU profile). */
/* Stacks kept for the HTML flame graphs: the heaviest ones carry nearly all
 * samples, and the page stays small enough for a laptop browser. */
#define FLAME_MAX_STACKS 3000
/* Threads the page can pick one by one; the others are one entry: a stack
 * costs ~10 bytes per thread entry it appears in. */
#define FLAME_MAX_THREADS 32
/* Stacks kept for each listed thread beyond the run's heaviest. */
#define FLAME_THREAD_STACKS 100
cJSON *flame_to_json(const struct profile *p, const char *unit, size_t max_stacks,
		     size_t max_threads, size_t per_thread);

/* Return 0, or -EINVAL with a message in err, or -ENOMEM. out is empty on
 * error. */
int cycles_from_json(const cJSON *arr, struct cycle_table *out, char *err, size_t errlen);
int findings_from_json(const cJSON *arr, struct findings *out, char *err, size_t errlen);

/* One whole-run cycle rebuilt from the other sections of a report.json
 * without `cycles` (cycles_fromreport.c): exact RSS and throttling, the rest
 * from totals. Needs time.start/end_monotonic_ns; -EINVAL otherwise. */
/* A non-negative number below 2^64 as JSON number or as raw decimal text
 * (how a live report holds u64 values); false otherwise. */
bool cycles_json_number(const cJSON *x, double *v);
/* The findings' facts that are not per cycle, from a report.json (RAM,
 * run-queue p99, our overhead, the cycle spec). Strings point into root. */
void cycles_findings_ctx(const cJSON *root, struct findings_ctx *ctx);
int cycles_whole_run_from_report(const cJSON *root, struct cycle_table *out, char *err,
				 size_t errlen);

#endif
