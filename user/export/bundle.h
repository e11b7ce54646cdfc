/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The result bundle of a recording run: every export of the CPU profile
 * (speedscope, folded, pprof), the modules' own files and sections,
 * trace.json when a module has events for it, and report.json last, which
 * lists them all. One place says what a run writes.
 */
#ifndef EBPF_PROF_BUNDLE_H
#define EBPF_PROF_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "rec_module.h"

struct cycle_sink;

struct bundle {
	const struct profile *prof; /* the CPU profile */
	struct run_info *ri;
	const struct cycle_sink *cycles; /* NULL: no per-cycle table */
	/* The run's modules and their states (NULL: off this run). */
	const struct rec_module *const *mods;
	void *const *mstate;
	size_t nmods;	       /* at most REC_MAX_MODULES */
	struct output_dir *od; /* private: the directory being written */
};

/* Writes every file of the bundle into od, each through output_write()
 * (od records what was written and what failed), even when one fails.
 * Sets ri->output_files to what report.json lists (allocated: the caller
 * frees it). Returns 0, or -EIO when a file could not be written. */
int bundle_write(struct bundle *b, struct output_dir *od);
/* The default output directory's name: ebpf-prof-PID-YYYYmmdd-HHMMSS.
 * NULL: out of memory. */
char *bundle_default_dir(uint32_t pid);

#endif
