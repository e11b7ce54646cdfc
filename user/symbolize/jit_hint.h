/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether a profile shows Node.js running JIT code without a perf map, so
 * the summary can say how to get JS function names. Pure: reads the
 * profile only.
 */
#ifndef EBPF_PROF_JIT_HINT_H
#define EBPF_PROF_JIT_HINT_H

#include <stdint.h>

#include "profile/profile.h"

struct jit_hint {
	uint64_t node_samples;	  /* samples with a frame in node's executable or libnode */
	uint64_t anon_unknown;	  /* of those, samples with an unnamed [anon] (JIT) frame */
	uint64_t perfmap_samples; /* of those, samples with a frame named from a perf map */
};

void jit_hint_compute(const struct profile *p, struct jit_hint *h);

/* True if the summary should print the hint: Node code was seen, some of
 * its samples run unnamed JIT code, and no perf map named any frame. */
int jit_hint_wanted(const struct jit_hint *h);

/* The hint's text (one line, no newline). */
#define JIT_HINT_TEXT                                                                      \
	"run JS code shown as [unknown] [anon]: start node with --perf-basic-prof (or "    \
	"NODE_OPTIONS=--perf-basic-prof; --perf-basic-prof-only-functions for a smaller "  \
	"map) so that V8 writes /tmp/perf-PID.map, which ebpf-prof reads for JS function " \
	"names (--perf-prof's jitdump files are not read)"

#endif
