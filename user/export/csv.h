/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cycles.csv: one row per cycle for spreadsheets and pandas (docs/cycles.md). */
#ifndef EP_EXPORT_CSV_H
#define EP_EXPORT_CSV_H

#include <stdio.h>

#include "cycles/cycles.h"

/* RFC 4180 (comma, CRLF-free "\n" lines, quotes doubled). Text fields that a
 * spreadsheet would run as a formula (= + - @ first) get a leading '.
 * Returns 0 or -EIO. */
int export_cycles_csv(FILE *f, const struct cycle_table *t);

#endif
