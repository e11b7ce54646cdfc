/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the pprof export reads from the modules' ELF files at write time:
 * GNU build-ids for Mapping.build_id and the source file and first line of
 * functions for Function.filename/start_line. Best effort: a file that is
 * gone or stripped leaves the field empty.
 */
#ifndef EP_EXPORT_PPROF_ELF_H
#define EP_EXPORT_PPROF_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

#define PPROF_BUILD_ID_MAX 64 /* bytes; GNU build-ids are 20 */

struct target_ref;
struct target_map;

/* Lower-case hex of the file's NT_GNU_BUILD_ID note into hex ("" when it
 * has none). Returns 0 or -errno. The file at path is opened as ours
 * (proc/target_open.h: regular files only, no symlink): a tool's. */
int pprof_elf_build_id(const char *path, char *hex, size_t len);
/* The same for a file open at fd (read, not mapped). */
int pprof_elf_build_id_fd(int fd, char *hex, size_t len);

/* The running kernel's build-id (/sys/kernel/notes). Returns 0 or -errno. */
int pprof_kernel_build_id(char *hex, size_t len);

/* Parses a sequence of ELF notes (the layout of SHT_NOTE sections and of
 * /sys/kernel/notes) for the GNU build-id. Returns 0 or -ENOENT. */
int pprof_notes_build_id(const void *notes, size_t size, char *hex, size_t len);

struct pprof_src {
	char *file; /* malloc'ed, NULL when unknown */
	int64_t line;
};

/* What was read per module file, kept across the profiles of a run
 * (continuous mode writes one every interval; reading the DWARF of libc
 * each time was ~60 ms of the recorder's CPU). A file replaced on disk
 * (other device, inode or mtime) is read again. */
struct pprof_elf_cache;
int pprof_elf_cache_new(struct pprof_elf_cache **out);
void pprof_elf_cache_free(struct pprof_elf_cache *c);

/* Where a module path of a profile comes from: which traced process
 * mapped it and which object (symbolizer_module_file). The files of a
 * recording are read only as that process could read them; without a
 * locate function a cache opens module paths as ours (tools, tests). A
 * module the function does not know (-ENOENT) is not read. */
typedef int (*pprof_elf_locate_fn)(void *ctx, const char *module, struct target_ref *t,
				   struct target_map *m);
void pprof_elf_cache_set_locate(struct pprof_elf_cache *c, pprof_elf_locate_fn fn, void *ctx);
/* dst locates as src does (a second cache of the same recording). */
void pprof_elf_cache_share_locate(struct pprof_elf_cache *dst, const struct pprof_elf_cache *src);

/* Keeps what was read about modules with a build-id also in files
 * pprof-src2-<build-id> of directory dirfd (dup'ed; -1: none), read before
 * opening a module's DWARF: a distribution's compressed debuginfo costs tens
 * of ms to inflate at each run (libc6-dbg). Files not owned by us, writable
 * by others, not regular or over 16 MiB are ignored. */
void pprof_elf_cache_set_dir(struct pprof_elf_cache *c, int dirfd);

/* Parses such a file: lines "name TAB line TAB file LF" (file empty: looked
 * up, not found). Malformed lines are skipped and counted. Calls add for
 * each good line; returns the number of bad lines. */
size_t pprof_src_cache_parse(const char *buf, size_t len,
			     void (*add)(void *ctx, const char *name, const char *file,
					 int64_t line),
			     void *ctx);

/* pprof_elf_build_id through the cache (c may be NULL). */
int pprof_elf_build_id_cached(struct pprof_elf_cache *c, const char *path, char *hex, size_t len);

/* For each user frame of p whose module is an ELF file with DWARF, the
 * declaring file and line of its function into src[frame]. c: a cache to
 * answer from and fill, or NULL. Modules are read for at most 5 s per
 * call (the rest keep what c knows), and a module whose open passed its
 * deadline is not tried again by c. */
void pprof_elf_sources(const struct profile *p, struct pprof_src *src, struct pprof_elf_cache *c);

/* Reads into c the sources of the frames of all n profiles (NULL entries
 * skipped) in one pass: each module's DWARF is opened once for the lot. The
 * run's CPU and off-CPU pprof files each brought names the other lacked, so
 * a module was opened twice; a distribution's compressed debuginfo is
 * inflated at each open (libc6-dbg alone: ~15% of the collector's CPU on a
 * short Python + llama run). */
void pprof_elf_prefetch(struct pprof_elf_cache *c, const struct profile *const *ps, size_t n);

#endif
