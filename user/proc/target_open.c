// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opening the files a profiled program names (target_open.h). */
#include "proc/target_open.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#ifndef FUSE_CTL_SUPER_MAGIC
#define FUSE_CTL_SUPER_MAGIC 0x65735543
#endif

/* The status file is read this far: Uid and Gid come in its first lines,
 * a Groups line cut here keeps fewer groups (less access, never more). */
#define STATUS_MAX_BYTES 65536
/* The helper threads read and copy small buffers only. */
#define HELPER_STACK (1u << 20)

static const char *root_of(const struct target_ref *t)
{
	return t->proc_root ? t->proc_root : "/proc";
}

/* ---- credentials ---- */

static const char *field_line(const char *buf, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i + nl <= len;) {
		const char *l = buf + i, *e = memchr(l, '\n', len - i);
		size_t ll = e ? (size_t)(e - l) : len - i;

		if (ll >= nl && !memcmp(l, name, nl))
			return l;
		i += ll + 1;
	}
	return NULL;
}

/* Up to max unsigned 32-bit numbers of the line at l (ends at '\n' or
 * end); *n how many. False on anything but numbers and blanks. */
static bool numbers(const char *l, const char *end, uint32_t *out, size_t max, size_t *n,
		    size_t *seen)
{
	*n = 0;
	*seen = 0;
	while (l < end && *l != '\n') {
		uint64_t v = 0;
		const char *s;

		if (*l == ' ' || *l == '\t') {
			l++;
			continue;
		}
		for (s = l; l < end && *l >= '0' && *l <= '9'; l++) {
			v = v * 10 + (uint64_t)(*l - '0');
			if (v > UINT32_MAX)
				return false;
		}
		if (l == s || (l < end && *l != ' ' && *l != '\t' && *l != '\n'))
			return false;
		if (*n < max)
			out[(*n)++] = (uint32_t)v;
		(*seen)++;
	}
	return true;
}

int target_cred_parse(const char *buf, size_t len, struct target_cred *c)
{
	const char *end = buf + len, *u = field_line(buf, len, "Uid:"),
		   *g = field_line(buf, len, "Gid:"), *gr = field_line(buf, len, "Groups:");
	uint32_t v[4];
	size_t n, seen;

	memset(c, 0, sizeof(*c));
	if (!u || !g || !numbers(u + 4, end, v, 4, &n, &seen) || seen != 4)
		return -EINVAL;
	c->uid = v[3];
	if (!numbers(g + 4, end, v, 4, &n, &seen) || seen != 4)
		return -EINVAL;
	c->gid = v[3];
	/* No Groups line (very old kernels): no supplementary groups. */
	if (gr && !numbers(gr + 7, end, c->groups, TARGET_CRED_MAX_GROUPS, &n, &seen))
		return -EINVAL;
	c->ngroups = gr ? (uint32_t)n : 0;
	c->known = true;
	return 0;
}

int target_cred_read(const char *proc_root, uint32_t pid, struct target_cred *c)
{
	char path[PATH_MAX], *buf;
	size_t len = 0;
	int fd, err;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%u/status", proc_root ? proc_root : "/proc", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	buf = malloc(STATUS_MAX_BYTES);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, STATUS_MAX_BYTES - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == STATUS_MAX_BYTES)
			break;
	}
	close(fd);
	err = target_cred_parse(buf, len, c);
	free(buf);
	return err;
}

void target_cred_set(struct target_cred *c, uint32_t fsuid, uint32_t fsgid, const uint32_t *groups,
		     uint32_t ngroups)
{
	memset(c, 0, sizeof(*c));
	c->uid = fsuid;
	c->gid = fsgid;
	c->ngroups = ngroups < TARGET_CRED_MAX_GROUPS ? ngroups : TARGET_CRED_MAX_GROUPS;
	if (c->ngroups)
		memcpy(c->groups, groups, c->ngroups * sizeof(c->groups[0]));
	c->known = true;
}

bool target_root_is_ours(uint32_t kdev, uint64_t ino)
{
	struct stat st;

	return stat("/", &st) == 0 && (uint64_t)st.st_ino == ino &&
	       major(st.st_dev) == kdev >> 20 && minor(st.st_dev) == (kdev & 0xfffffu);
}

void target_ref_self(struct target_ref *t)
{
	memset(t, 0, sizeof(*t));
	t->same_root = true;
	t->cred.known = true;
	t->cred.self = true;
}

int target_ref_init(struct target_ref *t, const char *proc_root, uint32_t pid)
{
	char path[PATH_MAX];
	struct stat a, b;

	memset(t, 0, sizeof(*t));
	t->proc_root = proc_root;
	t->pid = pid;
	snprintf(path, sizeof(path), "%s/%u/root", root_of(t), pid);
	t->same_root = stat(path, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
		       a.st_ino == b.st_ino;
	return target_cred_read(proc_root, pid, &t->cred);
}

/* Ours already (a tool's own files, a program run as the same user):
 * nothing to switch, and nothing that needs privilege. */
static bool is_ours(const struct target_cred *c)
{
	gid_t g[TARGET_CRED_MAX_GROUPS + 1];
	int n;

	if (c->self)
		return true;
	if (c->uid != (uint32_t)geteuid() || c->gid != (uint32_t)getegid())
		return false;
	n = getgroups(TARGET_CRED_MAX_GROUPS + 1, g);
	if (n < 0 || (uint32_t)n != c->ngroups)
		return false;
	for (int i = 0; i < n; i++)
		if (g[i] != c->groups[i])
			return false;
	return true;
}

/* Takes c's filesystem identity on this thread only: glibc's setgroups()
 * would change every thread's, the system call changes the caller's. */
static int become(const struct target_cred *c)
{
	gid_t g[TARGET_CRED_MAX_GROUPS];

	if (is_ours(c))
		return 0;
	for (uint32_t i = 0; i < c->ngroups; i++)
		g[i] = c->groups[i];
	if (syscall(SYS_setgroups, (size_t)c->ngroups, g) != 0)
		return -EPERM;
	(void)syscall(SYS_setfsgid, (gid_t)c->gid);
	if ((uint32_t)syscall(SYS_setfsgid, (gid_t)-1) != c->gid)
		return -EPERM;
	(void)syscall(SYS_setfsuid, (uid_t)c->uid);
	if ((uint32_t)syscall(SYS_setfsuid, (uid_t)-1) != c->uid)
		return -EPERM;
	return 0;
}

/* ---- the open ---- */

static bool pseudo_fs(unsigned long type)
{
	switch (type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case EFIVARFS_MAGIC:
	case PSTOREFS_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
	case DEVPTS_SUPER_MAGIC:
	case BINFMTFS_MAGIC:
	case NSFS_MAGIC:
	case FUSE_CTL_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* A private copy of a FUSE file: reads of it cannot wait on a daemon. */
static int copy_to_memory(int fd, uint64_t size)
{
	char buf[65536];
	uint64_t off = 0;
	int mfd;

	if (size > TARGET_FUSE_COPY_MAX)
		return -EFBIG;
	mfd = memfd_create("ebpf-prof-target-copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -errno;
	while (off < size) {
		size_t want = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t r = pread(fd, buf, want, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (write(mfd, buf, (size_t)r) != r) {
			close(mfd);
			return -EIO;
		}
		off += (uint64_t)r;
	}
	(void)fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	lseek(mfd, 0, SEEK_SET);
	return mfd;
}

/* The regular file behind the O_PATH descriptor pfd, reopened for reading
 * with the current (the program's) credentials. */
static int reopen_checked(int pfd, unsigned flags, uint64_t max_size, struct stat *st)
{
	struct stat b;
	struct statfs sf;
	char self[64];
	int fd;

	if (fstat(pfd, st))
		return -errno;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (S_ISLNK(st->st_mode))
		return -ELOOP;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	if (max_size && (uint64_t)st->st_size > max_size)
		return -EFBIG;
	if (fstatfs(pfd, &sf))
		return -errno;
	if (pseudo_fs((unsigned long)sf.f_type))
		return -EXDEV;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &b) || b.st_dev != st->st_dev || b.st_ino != st->st_ino) {
		close(fd);
		return -ESTALE;
	}
	if ((unsigned long)sf.f_type == FUSE_SUPER_MAGIC && !(flags & TARGET_SLOW_OK)) {
		int mfd = copy_to_memory(fd, (uint64_t)b.st_size);

		close(fd);
		return mfd;
	}
	return fd;
}

static int openat2_path(int dirfd, const char *path, bool nofollow, bool in_root)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_NO_MAGICLINKS | (nofollow ? RESOLVE_NO_SYMLINKS : 0) |
			   (in_root ? RESOLVE_IN_ROOT : 0),
	};
	long fd;

	/* EAGAIN: a rename or mount raced with a ".." resolution; a program
	 * renaming in a loop gets a failed open, not an endless retry. */
	for (int i = 0; i < 3; i++) {
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd < 0 ? -errno : (int)fd;
}

struct open_job {
	struct target_ref t;
	char *proc_root; /* t.proc_root's copy */
	char *path;
	struct target_map m;
	bool is_map;
	unsigned flags;
	uint64_t max_size;
	int fd; /* result: descriptor or -errno */
	struct stat st;
};

/* The directory the path resolves in, opened as ourselves (the program's
 * credentials then apply inside it): its root while it lives, ours for
 * TARGET_OUR_ROOT or once it is gone if it shared ours. *in_root: the
 * path is resolved as if that directory were "/". */
static int open_root(const struct open_job *j, char *name, size_t len, bool *in_root)
{
	int fd;

	*in_root = false;
	if (!(j->flags & TARGET_OUR_ROOT) && j->t.pid) {
		snprintf(name, len, "%s/%u/root", root_of(&j->t), j->t.pid);
		fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			*in_root = true;
			return fd;
		}
		if (!j->t.same_root)
			return errno == ENOENT ? -ENXIO : -errno;
	}
	snprintf(name, len, "/");
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int path_route(const struct open_job *j, int rootfd, const char *rootname, bool in_root,
		      struct stat *st)
{
	bool nofollow = j->flags & TARGET_NO_SYMLINKS;
	const char *rel = j->path;
	int pfd, fd;

	while (*rel == '/')
		rel++;
	if (!*rel)
		return -EISDIR;
	pfd = openat2_path(rootfd, rel, nofollow, in_root);
	if (pfd == -ENOSYS) {
		/* Before Linux 5.6: the path through the root's name; its
		 * symlinks resolve in our root, still with the program's
		 * credentials. */
		char joined[2 * PATH_MAX];

		snprintf(joined, sizeof(joined), "%s/%s", rootname, rel);
		pfd = open(joined, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
		if (pfd < 0)
			pfd = -errno;
	}
	if (pfd < 0)
		return pfd;
	fd = reopen_checked(pfd, j->flags, j->max_size, st);
	close(pfd);
	return fd;
}

static int do_open(struct open_job *j)
{
	char name[PATH_MAX + 64];
	struct target_cred cred = j->t.cred;
	bool in_root = false;
	int pfd = -1, rootfd = -1, fd, err;

	if (!cred.known && !cred.self) {
		err = target_cred_read(root_of(&j->t), j->t.pid, &cred);
		if (err)
			return err == -ENOENT ? -ESRCH : err;
	}
	/* As ourselves: the program's root and its mapping are its own
	 * objects, not paths it can swap. map_files needs CAP_SYS_ADMIN; a
	 * program that made itself undumpable hides it from its own uid. */
	if (j->is_map && j->t.pid && (j->m.start || j->m.end)) {
		snprintf(name, sizeof(name), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, root_of(&j->t),
			 j->t.pid, j->m.start, j->m.end);
		pfd = open(name, O_PATH | O_CLOEXEC);
	}
	if (pfd < 0) {
		if (j->is_map && j->m.deleted)
			return -ENOENT;
		if (j->path[0] != '/')
			return -EINVAL;
		rootfd = open_root(j, name, sizeof(name), &in_root);
		if (rootfd < 0)
			return rootfd;
	}
	err = become(&cred);
	if (err) {
		fd = err;
	} else if (pfd >= 0) {
		fd = reopen_checked(pfd, j->flags, j->max_size, &j->st);
	} else {
		fd = path_route(j, rootfd, name, in_root, &j->st);
		if (fd >= 0 && j->is_map && j->m.ino &&
		    ((uint64_t)j->st.st_ino != j->m.ino ||
		     (j->m.dev && (uint64_t)j->st.st_dev != j->m.dev))) {
			close(fd);
			fd = -ESTALE;
		}
	}
	if (pfd >= 0)
		close(pfd);
	if (rootfd >= 0)
		close(rootfd);
	return fd;
}

static void open_job_free(struct open_job *j)
{
	free(j->proc_root);
	free(j->path);
	free(j);
}

static void open_job_run(void *arg)
{
	struct open_job *j = arg;

	/* This thread's credentials change; it ends right after. */
	j->fd = do_open(j);
}

static void open_job_drop(void *arg)
{
	struct open_job *j = arg;

	if (j->fd >= 0)
		close(j->fd);
	open_job_free(j);
}

/* Local filesystems: opening one of their regular files waits on nothing
 * a process controls (a FUSE daemon, a network server). */
static bool local_fs(unsigned long type)
{
	switch (type) {
	case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC: /* memfd too */
	case RAMFS_MAGIC:
	case HUGETLBFS_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:
	case SQUASHFS_MAGIC:
	case F2FS_SUPER_MAGIC:
	case MSDOS_SUPER_MAGIC:
	case ISOFS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* The calling thread's filesystem identity, to take back after a switch. */
struct saved_cred {
	uint32_t uid, gid;
	int n;
	gid_t *groups;
};

static int save_cred(struct saved_cred *sv)
{
	sv->uid = (uint32_t)syscall(SYS_setfsuid, (uid_t)-1);
	sv->gid = (uint32_t)syscall(SYS_setfsgid, (gid_t)-1);
	sv->n = getgroups(0, NULL);
	sv->groups = sv->n > 0 ? calloc((size_t)sv->n, sizeof(gid_t)) : NULL;
	if (sv->n < 0 || (sv->n > 0 && (!sv->groups || getgroups(sv->n, sv->groups) != sv->n))) {
		free(sv->groups);
		return -ENOMEM;
	}
	return 0;
}

static void restore_cred(struct saved_cred *sv)
{
	/* Root takes its identity back unconditionally; a thread left with
	 * another's would write the outputs as that user: not survivable. */
	if (syscall(SYS_setgroups, (size_t)sv->n, sv->groups) != 0 ||
	    (syscall(SYS_setfsgid, (gid_t)sv->gid), (uint32_t)syscall(SYS_setfsgid, (gid_t)-1)) !=
		    sv->gid ||
	    (syscall(SYS_setfsuid, (uid_t)sv->uid), (uint32_t)syscall(SYS_setfsuid, (uid_t)-1)) !=
		    sv->uid) {
		fprintf(stderr, "ebpf-prof: cannot take back its own credentials after opening a "
				"profiled program's file\n");
		abort();
	}
	free(sv->groups);
}

/* A mapping on a local filesystem, on the calling thread: nothing there
 * can stall (map_files is procfs; the object itself is on a local
 * filesystem), and a thread per open costs ~20x the open (the symbolizer
 * opens each mapped file of each new process). -EAGAIN: take the helper
 * thread's way (no map_files, another filesystem). */
static int map_inline(const struct target_ref *t, const struct target_map *m, unsigned flags,
		      uint64_t max_size, struct stat *st)
{
	struct target_cred cred = t->cred;
	struct saved_cred sv;
	struct statfs sf;
	char name[PATH_MAX];
	int pfd, fd;

	if (!cred.known && !cred.self && target_cred_read(root_of(t), t->pid, &cred))
		return -EAGAIN;
	snprintf(name, sizeof(name), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, root_of(t), t->pid,
		 m->start, m->end);
	pfd = open(name, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -EAGAIN;
	if (fstatfs(pfd, &sf) || !local_fs((unsigned long)sf.f_type)) {
		close(pfd);
		return -EAGAIN;
	}
	if (is_ours(&cred)) {
		fd = reopen_checked(pfd, flags, max_size, st);
	} else if (save_cred(&sv)) {
		fd = -ENOMEM;
	} else {
		fd = become(&cred);
		if (!fd)
			fd = reopen_checked(pfd, flags, max_size, st);
		restore_cred(&sv);
	}
	close(pfd);
	return fd;
}

static int run_open(const struct target_ref *t, const char *path, const struct target_map *m,
		    unsigned flags, uint64_t max_size, struct stat *st)
{
	struct open_job *j;
	struct stat tmp;
	int err, fd;

	if (m && t->pid && (m->start || m->end)) {
		fd = map_inline(t, m, flags, max_size, st ? st : &tmp);
		if (fd != -EAGAIN)
			return fd;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->t = *t;
	j->proc_root = t->proc_root ? strdup(t->proc_root) : NULL;
	j->path = strdup(path ? path : "");
	j->t.proc_root = j->proc_root;
	if (m) {
		j->m = *m;
		j->m.path = j->path;
		j->is_map = true;
	}
	j->flags = flags;
	j->max_size = max_size;
	j->fd = -EIO;
	if (!j->path || (t->proc_root && !j->proc_root)) {
		open_job_free(j);
		return -ENOMEM;
	}
	err = target_run(open_job_run, open_job_drop, j, TARGET_OPEN_TIMEOUT_MS);
	if (err) {
		if (err != -ETIMEDOUT)
			open_job_free(j);
		return err;
	}
	fd = j->fd;
	if (fd >= 0 && st)
		*st = j->st;
	open_job_free(j);
	return fd;
}

int target_open_path(const struct target_ref *t, const char *path, unsigned flags,
		     uint64_t max_size, struct stat *st)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	return run_open(t, path, NULL, flags, max_size, st);
}

int target_open_map(const struct target_ref *t, const struct target_map *m, unsigned flags,
		    uint64_t max_size, struct stat *st)
{
	if (!m->path && !m->start && !m->end)
		return -EINVAL;
	return run_open(t, m->path, m, flags | TARGET_NO_SYMLINKS, max_size, st);
}

const char *target_open_strerror(int err)
{
	switch (err) {
	case -EACCES:
		return "the profiled program may not read it";
	case -ELOOP:
		return "a symbolic link where the program's path has none";
	case -EINVAL:
		return "not a regular file (a FIFO, socket or device)";
	case -EFBIG:
		return "larger than ebpf-prof reads";
	case -EXDEV:
		return "on a kernel pseudo-filesystem";
	case -ETIMEDOUT:
		return "its open did not finish in time";
	case -ESTALE:
		return "replaced since it was mapped";
	case -ESRCH:
		return "the program is gone and its credentials are unknown";
	case -ENXIO:
		return "the program is gone and its root directory was not ours";
	case -EPERM:
		return "cannot take the program's credentials";
	default:
		return strerror(-err);
	}
}

/* ---- the deadline ---- */

struct run_state {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, abandoned;
	void (*fn)(void *);
	void (*drop)(void *);
	void *arg;
};

static void run_state_free(struct run_state *r)
{
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static void *run_thread(void *p)
{
	struct run_state *r = p;
	bool abandoned;

	r->fn(r->arg);
	pthread_mutex_lock(&r->mu);
	r->done = true;
	abandoned = r->abandoned;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	/* Detached by the caller that stopped waiting: everything is ours,
	 * and drop is the last thing done. */
	if (abandoned) {
		void (*drop)(void *) = r->drop;
		void *arg = r->arg;

		run_state_free(r);
		if (drop)
			drop(arg);
	}
	return NULL;
}

int target_run(void (*fn)(void *arg), void (*drop)(void *arg), void *arg, unsigned timeout_ms)
{
	struct run_state *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	pthread_attr_t ta;
	struct timespec dl;
	pthread_t th;
	bool done;
	int err;

	if (!r)
		return -ENOMEM;
	r->fn = fn;
	r->drop = drop;
	r->arg = arg;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&ta);
	pthread_attr_setstacksize(&ta, HELPER_STACK);
	err = pthread_create(&th, &ta, run_thread, r);
	pthread_attr_destroy(&ta);
	if (err) {
		run_state_free(r);
		return -err;
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000l;
	if (dl.tv_nsec >= 1000000000l) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000l;
	}
	pthread_mutex_lock(&r->mu);
	while (!r->done && pthread_cond_timedwait(&r->cv, &r->mu, &dl) != ETIMEDOUT)
		;
	done = r->done;
	if (!done)
		r->abandoned = true;
	pthread_mutex_unlock(&r->mu);
	if (!done) {
		pthread_detach(th);
		return -ETIMEDOUT;
	}
	pthread_join(th, NULL);
	run_state_free(r);
	return 0;
}
