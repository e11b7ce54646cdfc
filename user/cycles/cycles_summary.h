/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EP_CYCLES_SUMMARY_H
#define EP_CYCLES_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "cycles/cycles.h"
#include "report/findings.h"

/* "Cycles: N median p95 mean slowest" and up to max_findings findings. */
/* run: aggregates of every cycle when the table keeps only part (NULL:
 * the table has them all). */
void cycles_print_summary(FILE *out, const struct cycle_table *t, const struct cycle_agg *run,
			  const struct findings *f, size_t max_findings);

#endif
