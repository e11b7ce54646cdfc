/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Continuous mode (--rotate SECONDS, --keep N; docs/pprof.md): every
 * interval the CPU profile so far goes to interval-NNNNNN.pb.gz with a
 * small interval-NNNNNN.json beside it, the oldest beyond N are deleted,
 * and the recorder starts a fresh profile, so the collector's memory does
 * not grow with the length of the run.
 */
#ifndef EP_EXPORT_ROTATE_H
#define EP_EXPORT_ROTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "report/output.h"
#include "profile/profile.h"

struct run_info;
struct rotator;

/* interval_s > 0, keep >= 1; the first interval starts at start_ns
 * (CLOCK_MONOTONIC). Returns 0 or -ENOMEM. */
int rotator_new(struct rotator **out, struct output_dir *od, double interval_s, int keep,
		uint64_t start_ns);
void rotator_free(struct rotator *r);

/* Whether the current interval [start, start + interval) is over at ts_ns
 * (NULL: never). Intervals are on a fixed grid from the start of the run,
 * in sample time: the recorder rotates at the first sample past the end,
 * or, when no sample comes, once the ring buffer has had time to deliver
 * the interval's last samples. */
bool rotator_due(const struct rotator *r, uint64_t ts_ns);

/* Writes the current interval of p: both files, then the deletion of the
 * oldest pair beyond keep; the next interval starts. The caller then resets
 * p. Returns 0 or -errno (logged); the interval counts as done either way. */
int rotator_write(struct rotator *r, const struct profile *p, const struct run_info *ri);

/* Intervals written so far. */
uint32_t rotator_count(const struct rotator *r);

#endif
