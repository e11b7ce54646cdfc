/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Parser for /proc/PID/maps. The content is controlled by the target process
 * (it names its own files), so every line is validated and bad lines are
 * skipped and counted rather than trusted.
 */
#ifndef EBPF_PROF_PROC_MAPS_H
#define EBPF_PROF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum proc_map_kind {
	PROC_MAP_FILE,	/* path starts with '/' */
	PROC_MAP_ANON,	/* no path, or [anon:...] / [heap] / [stack] style pseudo names */
	PROC_MAP_VDSO,	/* [vdso] */
	PROC_MAP_OTHER, /* [vvar], [vsyscall], ... never symbolized */
};

struct proc_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];
	bool deleted; /* path had the " (deleted)" suffix, which is stripped */
	enum proc_map_kind kind;
	char *path; /* owned; "" for anonymous memory */
};

struct proc_maps {
	struct proc_map *maps; /* sorted by start, non-overlapping */
	size_t n, cap;
	size_t bad_lines;
};

/* Parses one maps line (without or with trailing newline). On success fills
 * *out (out->path is malloc'ed) and returns 0; -EINVAL for a malformed line,
 * -ENOMEM on allocation failure. */
int proc_maps_parse_line(const char *line, struct proc_map *out);

/* Parses a whole maps text buffer. Bad lines, overlapping or unsorted entries
 * are skipped and counted in bad_lines. At most max_entries are kept. */
int proc_maps_parse_buf(const char *buf, size_t len, size_t max_entries, struct proc_maps *out);

/* Reads a file fully into a NUL-terminated malloc'ed buffer, refusing files
 * larger than max_bytes (-EFBIG). */
int proc_maps_read_file(const char *path, size_t max_bytes, char **buf, size_t *len);

/* Entry containing addr, or NULL. */
const struct proc_map *proc_maps_find(const struct proc_maps *m, uint64_t addr);

/* The mappings of one loaded instance of the file mapped at entry i (a
 * PROC_MAP_FILE with pgoff 0): entries i..*last that map the same file
 * (path, inode, device) at increasing file offsets. Holes and anonymous
 * entries (.bss, [heap]) may sit between them: the kernel maps each PT_LOAD
 * of an executable on its own, and segments whose addresses are further
 * apart than their file offsets (Debian's /usr/bin/node: .text at vaddr
 * 0xb72000, file offset 0x772000) leave unmapped gaps. The group stops at
 * another file, at a new mapping of the file from offset 0 (a second
 * instance), or after a few unrelated entries in a row. Returns the end
 * address of entry *last. */
uint64_t proc_maps_file_group(const struct proc_maps *m, size_t i, size_t *last);

/* Another mapping of the file mapped by like (same path, inode, device)
 * that covers file offset foff, or NULL. A program may map parts of a
 * loaded file again elsewhere (V8 copies its embedded builtins from node's
 * .text next to its JIT code): the loaded image names that code. */
const struct proc_map *proc_maps_find_alias(const struct proc_maps *m, const struct proc_map *like,
					    uint64_t foff);

void proc_maps_free(struct proc_maps *m);

/* "libfoo.so" for "/usr/lib/libfoo.so"; the pointer points into path. */
const char *proc_maps_basename(const char *path);

#endif
