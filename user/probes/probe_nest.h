/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe time counted once when probed calls nest: llama_decode runs the
 * ggml graph computes, sqlite3_exec its own steps, a recursive function
 * itself. Per thread and per class (inference, SQL, other), only the
 * outermost call of the class counts; its inner calls of the same class
 * are inside its time. This is the whole-run figure report.json `probes.
 * classes` gives and a run without cycles shows as its breakdown.
 *
 * Input: completed spans of one thread in the order they ended (the order
 * one thread's returns reach the ring), with `depth`, the number of probed
 * calls still open below the span on its thread (any class): depth 0 means
 * nothing can contain it later.
 */
#ifndef EP_PROBE_NEST_H
#define EP_PROBE_NEST_H

#include <stddef.h>
#include <stdint.h>

#define PROBE_NEST_CLASSES 3 /* enum cyc_span_kind: inference, sql, other */

struct probe_nest;

struct probe_nest *probe_nest_new(void);
void probe_nest_free(struct probe_nest *n);

/* One completed call of class cls (< PROBE_NEST_CLASSES) on thread tid,
 * [start_ns, end_ns). Returns 0, -EINVAL (bad class or interval) or
 * -ENOMEM (the call is then counted as if it were outermost). */
int probe_nest_add(struct probe_nest *n, uint32_t tid, unsigned cls, uint64_t start_ns,
		   uint64_t end_ns, uint32_t depth);

/* Time of class cls counted once per thread, and the number of outermost
 * calls it is made of (summed over threads: may exceed wall time when
 * several threads run calls of the class at once). */
uint64_t probe_nest_ns(const struct probe_nest *n, unsigned cls);
uint64_t probe_nest_calls(const struct probe_nest *n, unsigned cls);

#endif
