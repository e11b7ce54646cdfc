/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Address -> function name for user stacks (per pid, via elfutils libdwfl on
 * the target's /proc/PID/maps) and kernel stacks (via /proc/kallsyms), with
 * JIT perf maps for anonymous code. Not thread-safe: one symbolizer per
 * thread. See docs/symbolization.md.
 */
#ifndef EBPF_PROF_SYMBOLIZE_H
#define EBPF_PROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

struct symbolizer;

struct symbolizer_opts {
	const char *proc_root;	    /* NULL = "/proc"; tests may point elsewhere */
	const char *kallsyms_path;  /* NULL = "/proc/kallsyms" */
	const char *perfmap_dir;    /* NULL = "/tmp"; files are <dir>/perf-PID.map */
	const char *debuginfo_path; /* NULL = libdwfl's default (":.debug:/usr/lib/debug");
				     * same syntax, e.g. "-:.debug:/tmp/dbg" */
	/* Minimum time between two re-reads of one pid's maps (or perf map)
	 * triggered by unknown addresses. 0 = default (250 ms); <0 = no limit. */
	int reload_min_interval_ms;
	/* Keep C++/Rust names mangled (default: demangled, see demangle.h). */
	bool no_demangle;
};

/* A counter the kernel raises at each executable mapping of a traced
 * process (sampler_mmap_gen), NULL: none. An address outside every known
 * mapping re-reads the pid's maps at once, whatever the interval above,
 * when the counter moved since they were read: a library dlopen'ed a
 * moment ago is named from its first frame. */
void symbolizer_set_mmap_gen(struct symbolizer *s, const volatile uint64_t *gen);

struct sym_result {
	/* "func", or "[unknown] libfoo.so+0x1a2b" (file offset), "[unknown] [anon]+0x..."
	 * (offset in the anonymous region), "[unknown] [kernel]" (kallsyms hidden),
	 * "[unknown] [kernel]+0x<addr>" or "[unknown] 0x<addr>" if no mapping is known. */
	const char *name;
	/* Path of the mapped file as the target sees it (without " (deleted)"),
	 * "[kernel.kallsyms]", "[vdso]", "[perf-map]", "[anon]", or NULL. */
	const char *module;
	uint64_t offset;     /* file offset for files, offset in region for [anon]/[vdso],
			      * the address itself for the kernel */
	uint64_t sym_offset; /* addr - symbol start when resolved, else 0 */
	bool resolved;
};
/* All strings stay valid until symbolizer_free (also across forget_pid). */

int symbolizer_new(struct symbolizer **out, const struct symbolizer_opts *opts);
void symbolizer_free(struct symbolizer *s);

/* Resolves the address it is given: callers pass return_address - 1 for
 * non-leaf frames. Returns 0 (out always filled, maybe unresolved) or a
 * negative errno for failures of the symbolizer itself (-ENOMEM, -EINVAL). */
int symbolizer_user(struct symbolizer *s, uint32_t pid, uint64_t addr, struct sym_result *out);
int symbolizer_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out);

/* Starts parsing kallsyms on a thread of its own, so the first kernel frame
 * does not stall the caller (100-600 ms on a loaded 2-CPU VM, during which
 * nothing drains the ring buffers); the first symbolizer_kernel call waits
 * for whatever is left. Optional: without it that call loads kallsyms
 * itself. Returns 0, or a negative errno if no thread could be started
 * (the lazy load still happens). */
int symbolizer_preload_kernel(struct symbolizer *s);

/* Before the first kernel lookup or the preload: kallsyms from the boot
 * cache in dirfd plus the iterator link iter_link_fd (ksym_cache.h), or,
 * when that cannot be used, read whole and the cache written to dirfd.
 * Either may be -1. Both fds stay the caller's; they must outlive the
 * load (symbolizer_kernel or the preload's join). */
void symbolizer_set_kernel_cache(struct symbolizer *s, int dirfd, int iter_link_fd);

/* The libdwfl session of pid (modules reported from its maps), for the CFI
 * unwinder (unwind.c) to share rather than build its own; NULL on ENOMEM.
 * Valid until symbolizer_forget_pid(pid) or a reload after exec: callers
 * must not keep it across samples. */
struct Dwfl *symbolizer_dwfl(struct symbolizer *s, uint32_t pid);

struct target_ref;
struct target_map;

/* The file a traced process mapped at path (a frame's module), as the
 * symbolizer last opened it: on whose behalf (that process's credentials
 * and root) and which object, for target_open_map (the pprof export's
 * build-ids and sources read the same file, with the same rights). t's
 * and m's strings live as long as the symbolizer. -ENOENT when no traced
 * process was seen mapping it. s is a struct symbolizer (void: a
 * pprof_elf_locate_fn). */
int symbolizer_module_file(void *s, const char *path, struct target_ref *t, struct target_map *m);

/* Reads pid's maps now, while it runs, rather than at its first sample: a
 * process that exits before its samples are drained (a short command, a
 * recorder stalled at start-up) keeps its names. */
void symbolizer_prepare_pid(struct symbolizer *s, uint32_t pid);

/* pid exec'ed at ts_ns (CLOCK_MONOTONIC, the event's time): maps read
 * before then of another executable than pid's now are dropped; maps read
 * after it, or of the same executable (the recorder prepares a launched
 * command as soon as its ELF is loaded, before the event), or of a process
 * already gone, are kept, however late the event is processed. */
void symbolizer_exec_pid(struct symbolizer *s, uint32_t pid, uint64_t ts_ns);

/* Drop pid's maps, libdwfl session and cache (a pid taken by a new
 * process, new mappings to read). Names it contributed to the build-id
 * cache stay for other processes. */
void symbolizer_forget_pid(struct symbolizer *s, uint32_t pid);

/* The process exited: its state (the maps read while it ran) is kept for
 * the records still queued behind its exit event, e.g. off-CPU episodes in
 * a module's ring drained later than the exit (a recorder seconds behind:
 * they came out [unknown] when the exit forgot the pid). The last
 * SYMBOLIZER_RETIRED_MAX retired pids are kept, older ones forgotten; a pid
 * reused by a new process goes at its fork (symbolizer_fork_pid). */
#define SYMBOLIZER_RETIRED_MAX 64
void symbolizer_retire_pid(struct symbolizer *s, uint32_t pid);

/* pid is a new process (its fork event): the state of an exited process
 * that had the pid before is dropped; one built from the new process's own
 * samples (drained before the event) is kept. */
void symbolizer_fork_pid(struct symbolizer *s, uint32_t pid);

struct symbolizer_stats {
	uint64_t lookups; /* user + kernel calls */
	uint64_t cache_hits;
	uint64_t unresolved; /* results with resolved == false */
	uint64_t reloads;    /* maps re-reads after the first one, for any pid */
	/* Shared (build-id, file offset) cache, see docs/symbolization.md. */
	uint64_t buildid_hits;	 /* user lookups answered by it (per-pid cache misses) */
	uint64_t buildid_reads;	 /* build-id notes read (file identity not seen before) */
	uint64_t buildid_resets; /* times it reached its bound and was emptied */
	uint64_t elf_opens;	 /* ELF files opened for libdwfl, each loading its symbols */
	uint64_t symidx_builds;	 /* modules whose symbols were indexed (symidx.h) */
	/* Perf maps cut at PERFMAP_MAX_BYTES/ENTRIES (processes), and the bytes
	 * of them left unread. */
	uint64_t perfmaps_cut;
	uint64_t perfmap_unread_bytes;
};
void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif
