/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Parser for JIT symbol maps, /tmp/perf-PID.map: one "START SIZE name" line
 * per symbol, START and SIZE in hex (optional 0x), name = rest of the line.
 * The file is written by the (untrusted) target: bad lines are skipped and
 * counted, and the amount read is bounded.
 */
#ifndef EBPF_PROF_PERFMAP_H
#define EBPF_PROF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES   (64u << 20)
#define PERFMAP_MAX_ENTRIES (2u << 20)

struct perfmap;

/* Parses a buffer. Later lines override earlier ones for the same START (JITs
 * reuse code memory). */
int perfmap_parse(const char *buf, size_t len, struct perfmap **out);

/* Opens path without following a symlink in any of its components (each
 * is opened with O_NOFOLLOW), requires a regular file owned by root or by
 * owner_uid (pass (uid_t)-1 to skip that check), reads at most
 * PERFMAP_MAX_BYTES (the rest is ignored and counted as truncated). */
int perfmap_load(const char *path, uid_t owner_uid, struct perfmap **out);

/* The same, path taken from the directory dirfd as its root ("/" and ".."
 * never lead above it): "/tmp/perf-N.map" inside another mount namespace,
 * with dirfd on /proc/PID/root, cannot lead outside it. */
int perfmap_load_at(int dirfd, const char *path, uid_t owner_uid, struct perfmap **out);

/* The same checks and reading on a file already open (the symbolizer's,
 * opened as the traced process: proc/target_open.h). */
int perfmap_load_fd(int fd, uid_t owner_uid, struct perfmap **out);
void perfmap_free(struct perfmap *pm);

/* Name of the entry containing addr ([start, start+size)), or NULL. */
const char *perfmap_lookup(const struct perfmap *pm, uint64_t addr, uint64_t *sym_off);

size_t perfmap_count(const struct perfmap *pm);
size_t perfmap_bad_lines(const struct perfmap *pm);
/* Cut at PERFMAP_MAX_BYTES or PERFMAP_MAX_ENTRIES; the bytes of the file
 * left unparsed then (those beyond the cut, as the file's size was after
 * reading). */
bool perfmap_truncated(const struct perfmap *pm);
uint64_t perfmap_unread_bytes(const struct perfmap *pm);

#endif
