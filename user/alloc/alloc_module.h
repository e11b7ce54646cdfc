/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --alloc: allocation sampling by bytes (bpf/alloc.bpf.c) as a recording
 * module: uprobes on the allocator in every traced process, the sampled
 * stacks symbolized into an alloc_model, alloc/inuse profiles and
 * report.json memory.alloc at the end (docs/alloc.md).
 *
 * Place it after the overhead module (its cost reads report.json
 * "overhead") and before the cycles module (which writes report.html and
 * the findings, the alloc_leak finding included, from report.json).
 */
#ifndef EP_ALLOC_MODULE_H
#define EP_ALLOC_MODULE_H

#include "rec_module.h"

extern const struct rec_module alloc_rec_module;

#endif
