/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one path that writes result files. We run as root against hostile
 * processes, so: never follow a symlink planted in the output path, write
 * each file to a temporary name and rename it into place (a reader never
 * sees half a file, an interrupted run never leaves one), and hand files to
 * the invoking user when run under sudo.
 */
#ifndef EBPF_PROF_OUTPUT_H
#define EBPF_PROF_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct output_dir {
	int dirfd;
	char *path;
	bool chown_to_user; /* SUDO_UID/SUDO_GID were valid */
	bool created;	    /* the directory itself was made by output_dir_open */
	int guard_fd;	    /* output_dir_guard's pipe (write end), or -1 */
	uid_t uid;
	gid_t gid;
	char **written; /* names written so far, in order (for the report) */
	size_t nwritten;
	char **failed; /* names output_write could not write, with the -errno */
	int *failed_errs;
	size_t nfailed;
};

/* Creates (if needed) and opens the directory. The final component must not
 * be a symlink. Returns 0 or -errno; on error a message naming the path has
 * been logged. */
int output_dir_open(struct output_dir *od, const char *path);

/* For output_dir_open_run. */
enum output_dir_flags {
	/* An existing directory that is not empty is written into (files of
	 * the same names replaced, nothing else touched). */
	OUTPUT_DIR_FORCE = 1u << 0,
	/* The path is a default name: when it exists, PATH-2, PATH-3, ... is
	 * created instead (od->path names the one used). */
	OUTPUT_DIR_NEW_NAME = 1u << 1,
};

/* As output_dir_open, for the result directory of a run, which root then
 * fills with what report/diff trust later: the directory must be new, or
 * existing and empty (OUTPUT_DIR_FORCE: or not), and in any case owned by
 * this user (or by SUDO_UID) and not writable by group or others.
 * Otherwise refused with a message saying why and what to do (-EEXIST,
 * -EPERM). */
int output_dir_open_run(struct output_dir *od, const char *path, unsigned flags);
void output_dir_close(struct output_dir *od);
/* Removes the directory if output_dir_open created it and nothing was
 * written into it: a failed start leaves no empty directory. */
void output_dir_remove_if_unused(struct output_dir *od);
/* After output_dir_open created the directory: a helper process removes it
 * when this process ends, however it ends (SIGKILL included), if it is then
 * still empty and still the same directory (a killed run used to leave an
 * empty directory behind). The helper waits on a pipe only this process
 * holds (close-on-exec); output_dir_close closes it. No-op (0) when the
 * directory existed before. Returns 0 or -errno. */
int output_dir_guard(struct output_dir *od);
/* Before a run, so that a recording is not made for nothing: creates,
 * writes, syncs and removes a probe file in the directory, and checks that
 * its filesystem has at least min_free bytes available (warns below 16
 * times that). Returns 0 or -errno (-EROFS, -EACCES, -ENOSPC, ...), with a
 * message naming the directory logged. */
int output_dir_check(struct output_dir *od, uint64_t min_free);

typedef int (*output_writer_fn)(FILE *f, void *ctx);

/* Writes NAME inside the directory atomically: temp file, write_fn, fflush,
 * fsync, fchown, renameat. Returns 0 or -errno; logs the failure with the
 * file name. The error of the write itself wins over write_fn's return
 * (-ENOSPC, -EDQUOT named as such, not a writer's -EIO). When NAME was
 * written before by this directory, the earlier version stays and is still
 * listed as written; else NAME is listed as failed until a later write of
 * it succeeds. */
int output_write(struct output_dir *od, const char *name, output_writer_fn write_fn, void *ctx);

/* Deletes NAME, a file written through this output_dir (one rotated out),
 * and drops it from the written list. A name this run did not write is
 * never deleted: -ENOENT. Returns 0 or -errno. */
int output_remove(struct output_dir *od, const char *name);

/* Parses SUDO_UID/SUDO_GID from the given values (NULL when unset).
 * Returns true and fills uid/gid when both are valid decimal ids. */
bool output_parse_sudo_ids(const char *sudo_uid, const char *sudo_gid, uid_t *uid, gid_t *gid);

#endif
