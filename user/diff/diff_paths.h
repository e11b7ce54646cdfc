/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The call-path rule of `ebpf-prof diff` (docs/diff.md, "Regressions
 * along call paths"), run by dm_compare after every row is decided. */
#ifndef EBPF_PROF_DIFF_PATHS_H
#define EBPF_PROF_DIFF_PATHS_H

#include "diff/diff_load.h"
#include "diff/diff_model.h"

/* Total rows that grew through one shared callee stay regressions, named
 * with it (via); the other grown total rows become DM_CHANGED. 0 or
 * -errno. */
int dm_path_regressions(const struct dl_run *b, const struct dl_run *n, struct dm_result *r);

#endif
