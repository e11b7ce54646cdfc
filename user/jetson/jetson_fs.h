/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading sysfs-like files relative to a (possibly fake) root, for the Jetson
 * module. Every path is resolved component by component and confined to the
 * root: ".." never leaves it and absolute symlink targets restart at it, so a
 * fake tree under --sysfs-root behaves like a chroot.
 *
 * "Link stubs": trees copied by tools that cannot store symlinks (e.g. git
 * with core.symlinks=false) hold a symlink as a small regular file whose text
 * is the link target. With stubs enabled (any root other than "/"), a regular
 * file met where a directory is needed, or a final component whose whole
 * text starts with "../", is followed like a symlink. Real sysfs never has
 * such files, so this is off for "/".
 */
#ifndef EBPF_PROF_JETSON_FS_H
#define EBPF_PROF_JETSON_FS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest file the readers accept; sysfs attributes are at most a page. */
#define JFS_MAX_FILE 4096
/* Bound on symlinks followed while resolving one path (as the kernel's 40). */
#define JFS_MAX_LINKS 40

struct jfs {
	int dirfd;	     /* O_PATH fd of the root */
	bool stubs;	     /* follow link stubs (fake roots only) */
	bool deny_debugfs;   /* treat sys/kernel/debug as EACCES (tests) */
	char root[PATH_MAX]; /* as given, for messages */
};

int jfs_open(struct jfs *fs, const char *root);
void jfs_close(struct jfs *fs);

/*
 * Canonical path of rel (relative to the root, no leading '/', no links).
 * want_dir: the final component is used as a directory, so a final link stub
 * of any shape is followed. Returns 0 or -errno (-ELOOP, -ENOENT, ...).
 */
int jfs_resolve(const struct jfs *fs, const char *rel, bool want_dir, char *out, size_t outlen);

/*
 * Reads a whole small file into buf (NUL-terminated, trailing newlines and
 * NULs stripped). Returns the length or -errno; -EFBIG if larger than
 * JFS_MAX_FILE or than buflen-1.
 */
int jfs_read(const struct jfs *fs, const char *rel, char *buf, size_t buflen);
/* Like jfs_read but keeps inner NULs (device-tree string lists); returns length. */
int jfs_read_raw(const struct jfs *fs, const char *rel, char *buf, size_t buflen);
/* One decimal integer (optional sign, surrounding blanks); -EINVAL on garbage, -ERANGE. */
int jfs_read_ll(const struct jfs *fs, const char *rel, long long *out);
/* String parsing shared with the tegrastats parser and tests. */
int jfs_parse_ll(const char *s, long long *out);

/* Entries of directory rel (after resolution), sorted; caller frees with jfs_free_list. */
int jfs_list(const struct jfs *fs, const char *rel, char ***names, size_t *n);
void jfs_free_list(char **names, size_t n);

/* Path join helper: snprintf into out, -ENAMETOOLONG on truncation. */
__attribute__((format(printf, 3, 4))) int jfs_path(char *out, size_t outlen, const char *fmt, ...);

#endif
