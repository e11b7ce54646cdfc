// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "report/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"
#include "util/sudo_ids.h"

#define OUTPUT_NAME_MAX 200

bool output_parse_sudo_ids(const char *sudo_uid, const char *sudo_gid, uid_t *uid, gid_t *gid)
{
	return sudo_ids_parse(sudo_uid, sudo_gid, uid, gid);
}

/* Opens one existing or new component below cur. A symlink is refused as
 * the final component (that is where an attacker would plant one to make us
 * write elsewhere); above it, only root-owned symlinks (/var/run and the
 * like) are followed, since only root could have made them. */
static int open_component(int cur, const char *comp, const char *shown, bool last, bool *created)
{
	int fl = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	*created = false;
	for (int attempt = 0; attempt < 3; attempt++) {
		int fd = openat(cur, comp, fl | O_NOFOLLOW);
		if (fd >= 0)
			return fd;
		int err = errno;
		if (err == ENOENT) {
			if (mkdirat(cur, comp, 0755) == 0) {
				*created = true;
			} else if (errno != EEXIST) {
				err = errno;
				log_error("cannot create output directory %s: %s", shown,
					  strerror(err));
				return -err;
			}
			continue;
		}
		struct stat st;
		if ((err == ELOOP || err == ENOTDIR) &&
		    fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			if (last || st.st_uid != 0) {
				log_error("output directory %s is a symlink (owned by uid %u); "
					  "refusing to write through it",
					  shown, (unsigned)st.st_uid);
				return -ELOOP;
			}
			fd = openat(cur, comp, fl);
			if (fd >= 0)
				return fd;
			err = errno;
		}
		log_error("cannot open output directory %s: %s", shown, strerror(err));
		return -err;
	}
	log_error("cannot open output directory %s: it keeps changing", shown);
	return -EAGAIN;
}

static size_t count_entries(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	size_t n = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return SIZE_MAX; /* unknown: not "empty" */
	}
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A run's result directory, opened as fd: ours, not writable by others,
 * new or empty unless forced. */
static int check_run_dir(struct output_dir *od, int fd, bool created, unsigned flags,
			 const char *shown)
{
	struct stat st;
	size_t n;

	if (fstat(fd, &st)) {
		int err = -errno;

		log_error("cannot check output directory %s: %s", shown, strerror(-err));
		return err;
	}
	if (st.st_uid != geteuid() && !(od->chown_to_user && st.st_uid == od->uid)) {
		log_error("output directory %s belongs to uid %u, not to you: refusing to write "
			  "the results there (its owner could change or replace them before they "
			  "are read); choose a directory of your own",
			  shown, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		log_error("output directory %s can be written by %s (mode %04o): refusing to "
			  "write the results there (they could be changed or replaced before "
			  "they are read); chmod go-w it or choose another directory",
			  shown, st.st_mode & S_IWOTH ? "every user" : "its group",
			  (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (created)
		return 0;
	n = count_entries(fd);
	if (!n)
		return 0;
	if (!(flags & OUTPUT_DIR_FORCE)) {
		log_error("output directory %s exists and is not empty: choose a new directory "
			  "(ebpf-prof creates it), or pass --force to write into this one (files "
			  "of the same names are replaced, the others are left as they are)",
			  shown);
		return -EEXIST;
	}
	if (n == SIZE_MAX)
		log_warn("--force: writing into %s", shown);
	else
		log_warn("--force: writing into %s, which holds %zu entr%s already: files of "
			 "the same names are replaced, the others stay (and mix with this run's)",
			 shown, n, n == 1 ? "y" : "ies");
	return 0;
}

/* The final component of a default name: PATH, else PATH-2, PATH-3, ...,
 * whichever can be created now (never one that exists). */
static int create_fresh(struct output_dir *od, int cur, const char *comp, const char *shown,
			bool *created)
{
	char name[NAME_MAX + 1];
	int fd;

	*created = false;
	for (int k = 1; k < 1000; k++) {
		if (k == 1)
			snprintf(name, sizeof(name), "%s", comp);
		else if (snprintf(name, sizeof(name), "%s-%d", comp, k) >= (int)sizeof(name))
			return -ENAMETOOLONG;
		if (mkdirat(cur, name, 0755) == 0) {
			*created = true;
			break;
		}
		if (errno != EEXIST) {
			int err = -errno;

			log_error("cannot create output directory %s: %s", shown, strerror(-err));
			return err;
		}
	}
	if (!*created) {
		log_error("cannot create output directory %s: it and 998 numbered names exist",
			  shown);
		return -EEXIST;
	}
	fd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int err = -errno;

		log_error("cannot open output directory %s: %s", name, strerror(-err));
		return err;
	}
	if (strcmp(name, comp)) {
		size_t len = strlen(od->path) + strlen(name) - strlen(comp) + 1;
		char *np = malloc(len);

		if (!np) {
			close(fd);
			return -ENOMEM;
		}
		snprintf(np, len, "%.*s%s", (int)(strlen(od->path) - strlen(comp)), od->path, name);
		log_warn("%s exists already: writing to %s", od->path, np);
		free(od->path);
		od->path = np;
	}
	return fd;
}

static int dir_open(struct output_dir *od, const char *path, bool run, unsigned flags)
{
	memset(od, 0, sizeof(*od));
	od->dirfd = -1;
	od->guard_fd = -1;
	if (!path || !*path) {
		log_error("output directory path is empty");
		return -EINVAL;
	}
	od->path = strdup(path);
	char *work = strdup(path);
	char *shown = strdup(path);
	int err = -ENOMEM;
	int cur = -1;
	if (!od->path || !work || !shown)
		goto fail;
	/* Messages name "dir/file", not "dir//file". */
	for (size_t n = strlen(od->path); n > 1 && od->path[n - 1] == '/'; n--)
		od->path[n - 1] = '\0';
	od->chown_to_user =
		output_parse_sudo_ids(getenv("SUDO_UID"), getenv("SUDO_GID"), &od->uid, &od->gid);

	cur = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		err = -errno;
		log_error("cannot open %s: %s", path[0] == '/' ? "/" : ".", strerror(-err));
		goto fail;
	}
	/* Split in place; shown[0..end of comp] names the path so far. */
	char *p = work;
	bool checked = false;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *comp = p;
		while (*p && *p != '/')
			p++;
		bool last = true;
		for (char *q = p; *q; q++)
			if (*q != '/') {
				last = false;
				break;
			}
		if (*p)
			*p++ = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		size_t end = (size_t)(comp - work) + strlen(comp);
		char saved = shown[end];
		shown[end] = '\0';
		bool created;
		int fd = last && run && (flags & OUTPUT_DIR_NEW_NAME)
				 ? create_fresh(od, cur, comp, shown, &created)
				 : open_component(cur, comp, shown, last, &created);
		if (fd >= 0 && last && run) {
			checked = true;
			err = check_run_dir(od, fd, created, flags, od->path);
			if (err) {
				close(fd);
				/* Only ever removes what was made just now, empty. */
				const char *made = strrchr(od->path, '/');

				if (created)
					unlinkat(cur, made ? made + 1 : od->path, AT_REMOVEDIR);
				fd = err;
			}
		}
		shown[end] = saved;
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		if (last)
			od->created = created;
		/* Directories we made are the user's, like the files in them. */
		if (created && od->chown_to_user && fchown(fd, od->uid, od->gid))
			log_warn("cannot give %s to uid %u: %s", shown, (unsigned)od->uid,
				 strerror(errno));
		close(cur);
		cur = fd;
	}
	/* "." or "a/.": the directory reached is the result directory. */
	if (run && !checked) {
		err = check_run_dir(od, cur, false, flags, od->path);
		if (err)
			goto fail;
	}
	od->dirfd = cur;
	free(work);
	free(shown);
	return 0;
fail:
	if (cur >= 0)
		close(cur);
	free(work);
	free(shown);
	free(od->path);
	od->path = NULL;
	return err;
}

int output_dir_open(struct output_dir *od, const char *path)
{
	return dir_open(od, path, false, 0);
}

int output_dir_open_run(struct output_dir *od, const char *path, unsigned flags)
{
	return dir_open(od, path, true, flags);
}

void output_dir_remove_if_unused(struct output_dir *od)
{
	/* rmdir: only ever removes an empty directory. */
	if (od->dirfd >= 0 && od->created && !od->nwritten && od->path && rmdir(od->path) == 0)
		log_info("removed the empty output directory %s", od->path);
}

/* The helper: async-signal-safe calls only (forked from a threaded
 * process). Nothing of the recorder stays open in it, so it keeps no BPF
 * program, perf event or output pipe alive after the recorder is gone. */
_Noreturn static void guard_main(int rfd, int parentfd, const char *name, const struct stat *dir)
{
	struct sched_param sp = { 0 };
	struct stat st;
	char c;
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* A Ctrl-C reaches the whole foreground group: only EOF ends it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sched_setscheduler(0, SCHED_OTHER, &sp);
	for (int fd = 0; fd < 3 && nul >= 0; fd++)
		if (fd != rfd && fd != parentfd)
			dup2(nul, fd);
	{
		int hi = rfd > parentfd ? rfd : parentfd;

		for (int fd = 3; fd < hi; fd++)
			if (fd != rfd && fd != parentfd)
				close(fd);
		if (syscall(SYS_close_range, hi + 1, ~0u, 0))
			for (int fd = hi + 1; fd < 65536; fd++)
				close(fd);
	}
	for (;;) {
		ssize_t r = read(rfd, &c, 1);

		if (r == 0 || (r < 0 && errno != EINTR))
			break;
	}
	if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dir->st_dev &&
	    st.st_ino == dir->st_ino)
		unlinkat(parentfd, name, AT_REMOVEDIR); /* fails unless empty */
	_exit(0);
}

int output_dir_guard(struct output_dir *od)
{
	const char *name;
	struct stat st;
	int p[2], parentfd, err;
	pid_t pid;

	if (od->dirfd < 0 || !od->created || od->guard_fd >= 0)
		return 0;
	name = strrchr(od->path, '/');
	name = name ? name + 1 : od->path;
	if (fstat(od->dirfd, &st))
		return -errno;
	parentfd = openat(od->dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (parentfd < 0)
		return -errno;
	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		close(parentfd);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		guard_main(p[0], parentfd, name, &st);
	}
	err = pid < 0 ? -errno : 0;
	close(p[0]);
	close(parentfd);
	if (err) {
		close(p[1]);
		return err;
	}
	od->guard_fd = p[1];
	return 0;
}

void output_dir_close(struct output_dir *od)
{
	if (od->dirfd >= 0)
		close(od->dirfd);
	od->dirfd = -1;
	if (od->guard_fd > 0) /* 0: a zeroed struct that output_dir_open never set */
		close(od->guard_fd);
	od->guard_fd = -1;
	free(od->path);
	od->path = NULL;
	for (size_t i = 0; i < od->nwritten; i++)
		free(od->written[i]);
	free(od->written);
	od->written = NULL;
	od->nwritten = 0;
	for (size_t i = 0; i < od->nfailed; i++)
		free(od->failed[i]);
	free(od->failed);
	free(od->failed_errs);
	od->failed = NULL;
	od->failed_errs = NULL;
	od->nfailed = 0;
}

int output_dir_check(struct output_dir *od, uint64_t min_free)
{
	static const char probe[] = ".ebpf-prof-write-probe";
	char block[4096];
	struct statvfs sv;
	int fd, err = 0;

	if (od->dirfd < 0)
		return -EBADF;
	/* O_EXCL without a random name: a leftover from a killed run is
	 * removed first (never followed: O_NOFOLLOW, unlinkat). */
	unlinkat(od->dirfd, probe, 0);
	fd = openat(od->dirfd, probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		log_error("output directory %s is not writable: %s", od->path, strerror(-err));
		return err;
	}
	memset(block, 0, sizeof(block));
	if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
		err = errno ? -errno : -ENOSPC;
	else if (fsync(fd))
		err = -errno;
	close(fd);
	unlinkat(od->dirfd, probe, 0);
	if (err) {
		log_error("cannot write to output directory %s: %s", od->path, strerror(-err));
		return err;
	}
	if (fstatvfs(od->dirfd, &sv) == 0) {
		uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;

		if (avail < min_free) {
			log_error("output directory %s: only %llu KiB free on its filesystem, "
				  "need at least %llu KiB for the outputs",
				  od->path, (unsigned long long)(avail >> 10),
				  (unsigned long long)(min_free >> 10));
			return -ENOSPC;
		}
		if (avail / 16 < min_free)
			log_warn(
				"output directory %s: only %llu MiB free on its filesystem; a long "
				"run may not fit",
				od->path, (unsigned long long)(avail >> 20));
	}
	return 0;
}

static void record_failed(struct output_dir *od, const char *name, int err)
{
	for (size_t i = 0; name && i < od->nfailed; i++)
		if (!strcmp(od->failed[i], name)) {
			od->failed_errs[i] = err;
			return;
		}
	char *copy = strdup(name ? name : "(null)");
	char **names = copy ? realloc(od->failed, (od->nfailed + 1) * sizeof(*names)) : NULL;
	int *errs;

	if (!names) {
		free(copy);
		return;
	}
	od->failed = names;
	errs = realloc(od->failed_errs, (od->nfailed + 1) * sizeof(*errs));
	if (!errs) {
		free(copy);
		return;
	}
	od->failed_errs = errs;
	names[od->nfailed] = copy;
	errs[od->nfailed++] = err;
}

static bool valid_name(const char *name)
{
	size_t len = name ? strlen(name) : 0;
	return len && len <= OUTPUT_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static bool was_written(const struct output_dir *od, const char *name)
{
	for (size_t i = 0; i < od->nwritten; i++)
		if (!strcmp(od->written[i], name))
			return true;
	return false;
}

/* Best effort: the list only feeds the report's file list. A name written
 * is no longer a failure (a retry that worked). */
static void record_written(struct output_dir *od, const char *name)
{
	char *copy;
	char **list;

	for (size_t i = 0; i < od->nfailed; i++)
		if (!strcmp(od->failed[i], name)) {
			free(od->failed[i]);
			memmove(&od->failed[i], &od->failed[i + 1],
				(od->nfailed - i - 1) * sizeof(*od->failed));
			memmove(&od->failed_errs[i], &od->failed_errs[i + 1],
				(od->nfailed - i - 1) * sizeof(*od->failed_errs));
			od->nfailed--;
			break;
		}
	for (size_t i = 0; i < od->nwritten; i++)
		if (!strcmp(od->written[i], name))
			return;
	copy = strdup(name);
	list = copy ? realloc(od->written, (od->nwritten + 1) * sizeof(*list)) : NULL;
	if (!list) {
		free(copy);
		return;
	}
	list[od->nwritten++] = copy;
	od->written = list;
}

int output_remove(struct output_dir *od, const char *name)
{
	if (!valid_name(name))
		return -EINVAL;
	for (size_t i = 0; i < od->nwritten; i++) {
		if (strcmp(od->written[i], name))
			continue;
		free(od->written[i]);
		memmove(&od->written[i], &od->written[i + 1],
			(od->nwritten - i - 1) * sizeof(*od->written));
		od->nwritten--;
		return unlinkat(od->dirfd, name, 0) ? -errno : 0;
	}
	/* Not written by this run: not ours to delete. */
	return -ENOENT;
}

/* The stream a writer writes to: its first failing write(2) keeps its
 * errno, so that a full disk is reported as ENOSPC (or EDQUOT), not as the
 * EIO a writer returns for any failed fprintf. */
struct sink {
	int fd;
	int err;
};

static ssize_t sink_write(void *c, const char *buf, size_t n)
{
	struct sink *s = c;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(s->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!s->err)
				s->err = w < 0 ? errno : ENOSPC;
			break;
		}
		done += (size_t)w;
	}
	/* Fewer bytes than asked (0 included) is the stream's error. */
	return (ssize_t)done;
}

static int write_one(struct output_dir *od, const char *name, output_writer_fn write_fn, void *ctx)
{
	char tmp[OUTPUT_NAME_MAX + 32];
	const char *dir = od->path ? od->path : "?";
	struct sink sk = { -1, 0 };
	int fd = -1, err;
	FILE *f = NULL;

	if (!valid_name(name)) {
		log_error("invalid output file name '%s'", name ? name : "(null)");
		return -EINVAL;
	}
	if (od->dirfd < 0) {
		log_error("cannot write %s: output directory %s is not open", name, dir);
		return -EBADF;
	}
	for (int attempt = 0; attempt < 32 && fd < 0; attempt++) {
		uint32_t rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = (uint32_t)getpid() * 2654435761u + (uint32_t)attempt;
		snprintf(tmp, sizeof(tmp), ".%s.tmp.%06x", name, rnd & 0xffffff);
		fd = openat(od->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd < 0 && errno != EEXIST) {
			err = -errno;
			log_error("cannot create %s/%s: %s", dir, tmp, strerror(-err));
			return err;
		}
	}
	if (fd < 0) {
		log_error("cannot create a temporary file for %s in %s", name, dir);
		return -EEXIST;
	}
	sk.fd = fd;
	f = fopencookie(&sk, "w", (cookie_io_functions_t){ .write = sink_write });
	if (!f) {
		err = -errno;
		log_error("cannot write %s/%s: %s", dir, name, strerror(-err));
		goto fail;
	}
	err = write_fn(f, ctx);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	if (sk.err)
		err = -sk.err; /* what the disk said, over what the writer made of it */
	if (err < 0) {
		log_error("cannot write %s/%s: %s", dir, name, strerror(-err));
		goto fail;
	}
	fclose(f);
	f = NULL;
	if (fsync(fd)) {
		err = -errno;
		log_error("cannot sync %s/%s: %s", dir, name, strerror(-err));
		goto fail;
	}
	if (od->chown_to_user && fchown(fd, od->uid, od->gid))
		log_warn("cannot give %s/%s to uid %u: %s", dir, name, (unsigned)od->uid,
			 strerror(errno));
	err = close(fd);
	fd = -1;
	if (err) {
		err = -errno;
		log_error("cannot write %s/%s: %s", dir, name, strerror(-err));
		goto fail;
	}
	/* rename replaces whatever is at name, a planted symlink included,
	 * without ever opening it. */
	if (renameat(od->dirfd, tmp, od->dirfd, name)) {
		err = -errno;
		log_error("cannot rename %s/%s to %s: %s", dir, tmp, name, strerror(-err));
		goto fail;
	}
	fsync(od->dirfd); /* best effort: makes the rename durable */
	record_written(od, name);
	return 0;
fail:
	if (f)
		fclose(f); /* its buffer goes nowhere once sk.err is set or the write failed */
	if (fd >= 0)
		close(fd);
	unlinkat(od->dirfd, tmp, 0);
	return err;
}

int output_write(struct output_dir *od, const char *name, output_writer_fn write_fn, void *ctx)
{
	struct timespec t0, t1;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = write_one(od, name, write_fn, ctx);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_debug("output: %s written in %.1f ms", name,
		  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);

	if (err && valid_name(name) && was_written(od, name))
		log_warn("%s/%s: the version written before stays", od->path ? od->path : "?",
			 name);
	else if (err)
		record_failed(od, name, err);
	return err;
}
