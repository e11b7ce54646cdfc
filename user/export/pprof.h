/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pprof export (docs/pprof.md): a struct profile as a gzipped
 * perftools.profiles.Profile (user/export/profile.proto), the format that
 * `go tool pprof`, Pyroscope, Parca and Grafana read.
 */
#ifndef EP_EXPORT_PPROF_H
#define EP_EXPORT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

struct pprof_elf_cache;

enum pprof_kind {
	PPROF_CPU,	   /* samples/count, cpu/nanoseconds */
	PPROF_OFFCPU,	   /* off_cpu/nanoseconds (a profile whose unit is period_ns) */
	PPROF_ALLOC_SPACE, /* alloc_space/bytes (period_ns 1: a count is a byte) */
	PPROF_INUSE_SPACE, /* inuse_space/bytes, likewise */
};

/* One cycle of the experiment's main loop: a sample taken in
 * [start_ns, end_ns) is labelled cycle=index. */
struct pprof_cycle {
	uint64_t start_ns, end_ns;
	uint32_t index;
};

struct pprof_opts {
	enum pprof_kind kind;
	int64_t time_nanos;	/* start of the run, CLOCK_REALTIME ns */
	int64_t duration_nanos; /* length of the run */
	/* Sorted by start_ns, not overlapping; NULL/0 for no cycle label. */
	const struct pprof_cycle *cycles;
	size_t ncycles;
	/* Read build-ids and source file/line from the modules' ELF files
	 * (off in tests that feed made-up module paths). */
	bool read_elf;
	/* Keeps what was read from ELF files across calls (pprof_elf.h);
	 * NULL: read afresh. */
	struct pprof_elf_cache *elf_cache;
};

/* The serialized (not gzipped) profile in *out (malloc'ed, caller frees).
 * Returns 0 or -ENOMEM. */
int pprof_encode(const struct profile *p, const struct pprof_opts *o, uint8_t **out, size_t *len);

/* Writes buf gzipped (RFC 1952, what pprof expects on disk). 0 or -EIO. */
int pprof_write_gz(FILE *f, const uint8_t *buf, size_t len);

/* pprof_encode + pprof_write_gz. */
int export_pprof(const struct profile *p, const struct pprof_opts *o, FILE *f);

struct run_info;
struct cycle_table;

/* export_pprof for a recording: start and length from ri, cycle labels
 * from t (NULL, or a whole-run table: none), build-ids and sources read. */
int export_pprof_run(const struct profile *p, enum pprof_kind kind, const struct run_info *ri,
		     const struct cycle_table *t, FILE *f);

/* Is a profile frame a Python one, as user/python/pyframes.c names them
 * ("QUAL (BASE:LINE)", "QUAL (BASE)", BASE the file name of module)? Then
 * the qualified name's length in *qlen and the line (0: none) in *line:
 * pprof's Function.name and Line.line, module its Function.filename. */
bool pprof_py_frame(const char *name, const char *module, bool kernel, size_t *qlen, int64_t *line);

/* The cycle containing ts_ns in a sorted table, or -1. */
int64_t pprof_cycle_of(const struct pprof_cycle *c, size_t n, uint64_t ts_ns);

#endif
