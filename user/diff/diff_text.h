/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Terminal summary and --json document of `ebpf-prof diff`. */
#ifndef EP_DIFF_TEXT_H
#define EP_DIFF_TEXT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "diff/diff_load.h"
#include "diff/diff_model.h"

/* The terminal summary: what was compared, regressions and improvements
 * with their intervals, the per-cycle table, the top function changes and
 * the verdict line. max_lines bounds each list (0: 10). */
void diff_print_summary(FILE *f, const struct dl_run *b, const struct dl_run *n,
			const struct dm_result *r, size_t max_lines);

/* The --json document (docs/report-schema.md, "ebpf-prof diff --json");
 * NULL on ENOMEM. */
cJSON *diff_to_json(const struct dl_run *b, const struct dl_run *n, const struct dm_result *r);

/* A value in its unit for people: "12.3 ms", "45.0 MB", "12.5%", "3.2". */
void diff_fmt_value(char *buf, size_t len, double v, const char *unit);
/* The change: "+12.3%", "-4.0 pt", "new", "gone", "" when absent. */
void diff_fmt_change(char *buf, size_t len, const struct dm_row *w);

#endif
