/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding where to put uprobes: which files a process has mapped, and the
 * file offsets of named functions in them. Both inputs are controlled by
 * the traced process (its maps, the ELF files it chose to map), so both
 * parsers treat them as hostile: sizes and offsets are bounds-checked and a
 * malformed file yields "not found", never a crash.
 */
#ifndef EBPF_PROF_UPROBE_DISCOVERY_H
#define EBPF_PROF_UPROBE_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "proc/proc_maps.h"

/* Refuse ELF files larger than this (statically linked inference servers
 * are tens of MiB; the whole file is read into memory once per run). */
#define UD_MAX_ELF_BYTES (1ull << 30)

/* Looks up each of names[0..n) among the defined functions of the ELF file
 * open on fd (.symtab and .dynsym), and stores the uprobe file offset of
 * each in offsets[i] (0 when absent). Returns how many were found, or a
 * negative errno (-ENOEXEC: not a usable ELF file, -EFBIG: too large). */
int ud_find_functions(int fd, const char *const *names, size_t n, uint64_t *offsets);

/* The virtual address (st_value) of each of names[0..n), functions or data
 * objects, defined in the ELF file open on fd (.symtab, then .dynsym), in
 * vaddrs[i] (0 when absent). Returns how many were found or a negative
 * errno (as ud_find_functions). */
int ud_find_symbols(int fd, const char *const *names, size_t n, uint64_t *vaddrs);

/* One mapped file worth looking into: distinct by (dev, inode). */
struct ud_file {
	uint64_t dev; /* makedev(major, minor) */
	uint64_t inode;
	uint64_t start, end; /* one of its mappings, for /proc/PID/map_files */
	uint64_t pgoff;	     /* file offset mapped at start */
	const char *path;    /* points into the proc_maps it came from */
	int deleted;
};

/* Lists the distinct regular files with an executable mapping in m (code
 * that could hold a probed function), at most max. Returns the count. */
size_t ud_exec_files(const struct proc_maps *m, struct ud_file *out, size_t max);

/* Opens a file a process has mapped, as that process could read it
 * (proc/target_open.h): /proc/PID/map_files/START-END (the exact file,
 * even if deleted or in another mount namespace), else PATH in its root
 * if it still leads to the mapped inode. Stores the name for the kernel's
 * uprobe attach in path_out (the map_files link while the mapping
 * exists). Returns an fd or a negative errno. */
int ud_open_mapped(const char *proc_root, uint32_t pid, const struct ud_file *f, char *path_out,
		   size_t path_len);

/* Does a mapped file match a user's LIB pattern? An absolute path must
 * equal the mapped path; a relative one ("./my-experiment", "build/app")
 * must be its last components (with "..": resolved from our directory);
 * a name matches the basename exactly or as a prefix followed by '.'
 * ("libsqlite3" and "libsqlite3.so" match "libsqlite3.so.0.8.6",
 * "libllama" matches "libllama.v0.5.0.so" but not "libllama-common.so",
 * another library; "python3" matches "python3.11"). */
int ud_lib_matches(const char *pattern, const char *path);

#endif
