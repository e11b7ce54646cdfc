/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Feeds the in-kernel stack walker (bpf/uwalk.h): for each executable
 * mapping of a traced process, the object's CFI table (cfi_table.h, cached
 * on disk) loaded once into a BPF array of its own, and the process's list
 * of mappings (start, end, load bias, object) into uw_procs. Re-scans a
 * process's maps when a walk met a pc in no known mapping (dlopen), rate
 * limited. Not thread-safe. See docs/unwinding.md.
 */
#ifndef EBPF_PROF_KTABLES_H
#define EBPF_PROF_KTABLES_H

#include <stdint.h>

struct ktables;

struct ktables_opts {
	const char *proc_root; /* NULL = "/proc" */
	int objs_fd;	       /* uw_objs (array of maps) */
	int blk_pc_fd;	       /* uw_blk_pc */
	int procs_fd;	       /* uw_procs */
	/* Kernel memory for rows, all objects together; objects beyond it are
	 * walked by frame pointers (counted). 0 = the default (128 MiB). */
	uint64_t max_bytes;
	/* Tables' on-disk cache directory; NULL = cfi_table.h's default. */
	const char *cache_dir;
	/* Tests: executable mappings of paths containing this are left out of
	 * the list the walker searches, as for a library mapped a moment ago
	 * whose table is not loaded yet (EBPF_PROF_FAULT_NO_TABLE). */
	const char *fault_unmapped;
};

struct ktables_stats {
	uint64_t objects;      /* objects seen (files, the vdso) */
	uint64_t objects_cfi;  /* of them: with a table in the kernel */
	uint64_t rows;	       /* rows loaded */
	uint64_t map_bytes;    /* BPF memory of rows, block index and process lists */
	uint64_t build_ns;     /* CLOCK_MONOTONIC spent compiling or loading tables */
	uint64_t scan_ns;      /* all of the scans: maps, tables, BPF map updates */
	uint64_t from_cache;   /* tables read from the disk cache */
	uint64_t errors;       /* objects whose table could not be built or loaded */
	uint64_t over_budget;  /* objects left to frame pointers by max_bytes */
	uint64_t scans;	       /* maps scans (first ones and re-scans) */
	uint64_t rescans;      /* of them: after a walk met an unknown pc */
	uint64_t maps_over;    /* executable mappings beyond EP_UW_MAX_MAPS */
	uint64_t forks_copied; /* children given their parent's list, not scanned */
};

int ktables_new(struct ktables **out, const struct ktables_opts *o);
void ktables_free(struct ktables *k);

/* Reads pid's maps, loads the tables of objects not loaded yet and writes
 * its mapping list. Returns 0 or a negative errno (-ESRCH: gone). */
int ktables_scan(struct ktables *k, uint32_t pid, uint64_t now_ns);
/* pid was forked by parent: until it execs it has the parent's mappings,
 * so the parent's list is copied (no /proc read: a fork storm must not
 * cost a maps scan per child). Scans when the parent has none. */
int ktables_fork(struct ktables *k, uint32_t parent, uint32_t pid, uint64_t now_ns);
/* A walk of pid met a pc in no known mapping: re-scan, at most every
 * 20 ms per process. Returns 1 when it scanned, 0 when rate limited. */
int ktables_miss(struct ktables *k, uint32_t pid, uint64_t now_ns);
/* The process exited or exec'd: its mapping list goes (objects stay). */
void ktables_forget(struct ktables *k, uint32_t pid);

void ktables_get_stats(const struct ktables *k, struct ktables_stats *st);
/* The on-disk cache directory's fd (owned by k), or -1. */
int ktables_cache_dirfd(const struct ktables *k);

#endif
