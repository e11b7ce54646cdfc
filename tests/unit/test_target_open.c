// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * proc/target_open.h on bad input: the status parser on malformed text,
 * then files a profiled program could name (a symlink, a FIFO, a
 * directory, a file over the size bound, a kernel pseudo-file, a magic
 * link, a file in a root-only directory) opened on behalf of an
 * unprivileged identity, a mapped object through map_files and by its
 * path, and the deadline of target_run on a job that blocks.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proc/proc_maps.h"
#include "proc/target_open.h"

/* Whether this kernel (or emulator) has openat2: without it target_open
 * follows no symlink at all (walk_no_links). */
static bool have_openat2(void)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC };
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd >= 0)
		close((int)fd);
	return fd >= 0 || errno != ENOSYS;
}

#define NOBODY 65534u

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int parse(const char *text, struct target_cred *c)
{
	return target_cred_parse(text, strlen(text), c);
}

static void test_parse(void)
{
	struct target_cred c;
	char big[4096];
	size_t n;

	CHECK_INT_EQ(parse("Name:\tx\nUid:\t1\t2\t3\t4\nGid:\t5\t6\t7\t8\nGroups:\t9 10 \n", &c),
		     0);
	CHECK(c.known && !c.self);
	CHECK_INT_EQ(c.uid, 4); /* the filesystem ids: the fourth field */
	CHECK_INT_EQ(c.gid, 8);
	CHECK_INT_EQ(c.ngroups, 2);
	CHECK_INT_EQ(c.groups[1], 10);
	CHECK_INT_EQ(parse("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n", &c), 0);
	CHECK_INT_EQ(c.ngroups, 0);
	/* No Groups line: none. */
	CHECK_INT_EQ(parse("Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1", &c), 0);
	CHECK_INT_EQ(c.ngroups, 0);
	/* Malformed: every one refused, none half-read as known. */
	static const char *const bad[] = {
		"",
		"Gid:\t1\t1\t1\t1\n",				 /* no Uid */
		"Uid:\t1\t1\t1\t1\n",				 /* no Gid */
		"Uid:\t1\t1\t1\nGid:\t1\t1\t1\t1\n",		 /* three fields */
		"Uid:\t1\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",	 /* five */
		"Uid:\t1\t1\t1\t4294967296\nGid:\t1\t1\t1\t1\n", /* past 32 bits */
		"Uid:\t1\t1\t1\t-1\nGid:\t1\t1\t1\t1\n",
		"Uid:\t1\t1\t1\t1x\nGid:\t1\t1\t1\t1\n",
		"Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t1 x\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.known = true;
		CHECK_INT_EQ(parse(bad[i], &c), -EINVAL);
		CHECK(!c.known);
	}
	/* More groups than kept: the first ones only (less access). */
	n = (size_t)snprintf(big, sizeof(big), "Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:");
	for (int i = 0; i < TARGET_CRED_MAX_GROUPS + 20; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, " %d", 1000 + i);
	CHECK_INT_EQ(parse(big, &c), 0);
	CHECK_INT_EQ(c.ngroups, TARGET_CRED_MAX_GROUPS);
	CHECK_INT_EQ(c.groups[TARGET_CRED_MAX_GROUPS - 1], 1000 + TARGET_CRED_MAX_GROUPS - 1);
	/* Not NUL-terminated: the length bounds the read. */
	memcpy(big, "Uid:\t1\t1\t1\t7\nGid:\t1\t1\t1\t1\nXXXX", 31);
	CHECK_INT_EQ(target_cred_parse(big, 26, &c), 0);
	CHECK_INT_EQ(c.uid, 7);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	CHECK_INT_EQ(chmod(path, mode), 0);
}

static struct target_ref as_uid(uint32_t uid)
{
	struct target_ref t;

	memset(&t, 0, sizeof(t));
	t.same_root = true;
	t.cred.known = true;
	t.cred.uid = uid;
	t.cred.gid = uid;
	return t;
}

static void test_files(void)
{
	char dir[] = "/tmp/ep-target-open-XXXXXX", p[512], q[512];
	struct target_ref self, nobody = as_uid(NOBODY), other = as_uid(NOBODY - 1), gone;
	struct stat st;
	uint64_t t0;
	char buf[16];
	int fd;

	target_ref_self(&self);
	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT_EQ(chmod(dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/ok", dir);
	write_file(p, "hello", 0644);

	fd = target_open_path(&self, p, 0, 0, &st);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_INT_EQ(read(fd, buf, sizeof(buf)), 5);
		CHECK_INT_EQ(st.st_size, 5);
		close(fd);
	}
	CHECK_INT_EQ(target_open_path(&self, "ok", 0, 0, NULL), -EINVAL); /* relative */
	/* Over the size bound, at the bound. */
	CHECK_INT_EQ(target_open_path(&self, p, 0, 4, NULL), -EFBIG);
	fd = target_open_path(&self, p, 0, 5, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	/* A symlink: refused where the path is canonical, followed (inside
	 * the root, with the same rights) where it may be one. */
	snprintf(q, sizeof(q), "%s/link", dir);
	CHECK_INT_EQ(symlink(p, q), 0);
	CHECK_INT_EQ(target_open_path(&self, q, TARGET_NO_SYMLINKS, 0, NULL), -ELOOP);
	fd = target_open_path(&self, q, 0, 0, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* A symlinked directory on the way, too. */
	snprintf(q, sizeof(q), "%s/dlink", dir);
	CHECK_INT_EQ(symlink(dir, q), 0);
	snprintf(q, sizeof(q), "%s/dlink/ok", dir);
	/* Without openat2 (only an emulator: every supported kernel has it)
	 * only the last component is opened with O_NOFOLLOW: a symlink on the
	 * way, /proc/self, a magic link are refused where openat2 exists. */
	if (have_openat2())
		CHECK_INT_EQ(target_open_path(&self, q, TARGET_NO_SYMLINKS, 0, NULL), -ELOOP);
	else
		fprintf(stderr, "no openat2 here: symlinks on the way are not refused\n");

	/* A FIFO: refused at once, no wait for a writer. */
	snprintf(q, sizeof(q), "%s/fifo", dir);
	CHECK_INT_EQ(mkfifo(q, 0666), 0);
	t0 = now_ms();
	CHECK_INT_EQ(target_open_path(&self, q, 0, 0, NULL), -EINVAL);
	CHECK(now_ms() - t0 < 500);
	/* A directory, a device. */
	CHECK_INT_EQ(target_open_path(&self, dir, 0, 0, NULL), -EISDIR);
	CHECK_INT_EQ(target_open_path(&self, "/dev/null", 0, 0, NULL), -EINVAL);
	/* Kernel pseudo-files: the name reaches ours through /proc/self. */
	CHECK_INT_EQ(target_open_path(&self, "/proc/self/status", 0, 0, NULL), -EXDEV);
	if (have_openat2())
		CHECK_INT_EQ(target_open_path(&self, "/proc/self/status", TARGET_NO_SYMLINKS, 0,
					      NULL),
			     -ELOOP);
	/* A magic link: never followed by name. */
	fd = open(p, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	snprintf(q, sizeof(q), "/proc/%d/fd/%d", (int)getpid(), fd);
	/* Without openat2 (only an emulator: every supported kernel has it)
	 * a path that may hold symlinks is opened by name, which follows a
	 * magic link too: checked where openat2 exists. */
	if (have_openat2())
		CHECK_INT_EQ(target_open_path(&self, q, 0, 0, NULL), -ELOOP);
	else
		fprintf(stderr, "no openat2 here: the magic-link refusal is not checked\n");
	if (fd >= 0)
		close(fd);
	CHECK_INT_EQ(target_open_path(&self, "/nonexistent/x", 0, 0, NULL), -ENOENT);

	/* Credentials unknown (never read, the process gone): refused. */
	memset(&gone, 0, sizeof(gone));
	gone.pid = 999999999;
	gone.same_root = true;
	CHECK_INT_EQ(target_open_path(&gone, p, 0, 0, NULL), -ESRCH);

	if (geteuid() != 0) {
		fprintf(stderr, "not root: the credential checks are skipped\n");
		goto out;
	}
	/* Someone else's identity: a world-readable file is read... */
	fd = target_open_path(&nobody, p, 0, 0, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* ...not one only root reads, nor one in a directory only root may
	 * enter (the profiled program's own open would fail the same). */
	snprintf(q, sizeof(q), "%s/secret", dir);
	write_file(q, "secret", 0600);
	CHECK_INT_EQ(target_open_path(&nobody, q, 0, 0, NULL), -EACCES);
	snprintf(q, sizeof(q), "%s/private", dir);
	CHECK_INT_EQ(mkdir(q, 0700), 0);
	snprintf(q, sizeof(q), "%s/private/model", dir);
	write_file(q, "GGUF", 0644);
	CHECK_INT_EQ(target_open_path(&nobody, q, 0, 0, NULL), -EACCES);
	/* A symlink the program planted to it: the same refusal. */
	snprintf(p, sizeof(p), "%s/to-private", dir);
	CHECK_INT_EQ(symlink(q, p), 0);
	CHECK_INT_EQ(target_open_path(&nobody, p, 0, 0, NULL), -EACCES);
	/* Its own file: read; another user's private file: not. */
	snprintf(q, sizeof(q), "%s/own", dir);
	write_file(q, "mine", 0600);
	CHECK_INT_EQ(chown(q, NOBODY, NOBODY), 0);
	fd = target_open_path(&nobody, q, 0, 0, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT_EQ(target_open_path(&other, q, 0, 0, NULL), -EACCES);
	/* A supplementary group counts, as for the program. */
	CHECK_INT_EQ(chmod(q, 0640), 0);
	CHECK_INT_EQ(chown(q, 0, 4242), 0);
	CHECK_INT_EQ(target_open_path(&other, q, 0, 0, NULL), -EACCES);
	other.cred.ngroups = 1;
	other.cred.groups[0] = 4242;
	fd = target_open_path(&other, q, 0, 0, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* The opening thread alone took those credentials: ours are whole. */
	{
		struct target_cred mine;

		CHECK_INT_EQ(target_cred_read("/proc", (uint32_t)getpid(), &mine), 0);
		CHECK_INT_EQ(mine.uid, 0);
		CHECK_INT_EQ(mine.gid, 0);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
	}
out:
	snprintf(q, sizeof(q), "rm -rf '%s'", dir);
	CHECK_INT_EQ(system(q), 0);
}

/* A file only root may read, mapped by us: through map_files (on the
 * calling thread) as nobody it is refused, as ourselves read, and the
 * calling thread is itself again afterwards. */
static void test_mapped_private(void)
{
	char path[] = "/tmp/ep-target-map-XXXXXX";
	int fd = mkstemp(path), got;
	struct target_ref who;
	struct target_cred mine;
	void *p = MAP_FAILED;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT_EQ(write(fd, "private bytes", 13), 13);
	CHECK_INT_EQ(fchmod(fd, 0600), 0);
	p = mmap(NULL, 13, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		struct target_map tm = { .path = path,
					 .start = (uint64_t)(uintptr_t)p,
					 .end = (uint64_t)(uintptr_t)p + 4096 };

		CHECK_INT_EQ(target_ref_init(&who, "/proc", (uint32_t)getpid()), 0);
		got = target_open_map(&who, &tm, 0, 0, NULL);
		CHECK(got >= 0);
		if (got >= 0)
			close(got);
		who.cred.uid = who.cred.gid = NOBODY;
		who.cred.ngroups = 0;
		CHECK_INT_EQ(target_open_map(&who, &tm, 0, 0, NULL), -EACCES);
		CHECK_INT_EQ(target_cred_read("/proc", (uint32_t)getpid(), &mine), 0);
		CHECK_INT_EQ(mine.uid, 0);
		CHECK_INT_EQ(mine.gid, 0);
		/* Still root with its capabilities: another user's private file
		 * opens (CAP_DAC_OVERRIDE, dropped with a non-zero fsuid). */
		CHECK_INT_EQ(chown(path, NOBODY - 1, NOBODY - 1), 0);
		got = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(got >= 0);
		if (got >= 0)
			close(got);
		munmap(p, 13);
	}
	close(fd);
	unlink(path);
}

/* A mapped object: through map_files (the object itself), by its path
 * with the mapped inode, and a path that leads elsewhere now. */
static void test_mapped(void)
{
	struct proc_maps m = { 0 };
	struct target_ref me;
	char *buf = NULL;
	size_t len = 0;
	const struct proc_map *lib = NULL;
	struct stat st, want;
	int fd;

	CHECK_INT_EQ(target_ref_init(&me, "/proc", (uint32_t)getpid()), 0);
	CHECK(me.cred.known && me.same_root);
	CHECK_INT_EQ(proc_maps_read_file("/proc/self/maps", 1u << 24, &buf, &len), 0);
	CHECK_INT_EQ(proc_maps_parse_buf(buf, len, 1u << 16, &m), 0);
	for (size_t i = 0; i < m.n && !lib; i++)
		if (m.maps[i].kind == PROC_MAP_FILE && m.maps[i].pgoff == 0 &&
		    strstr(m.maps[i].path, "libc"))
			lib = &m.maps[i];
	CHECK(lib != NULL);
	if (lib && stat(lib->path, &want) == 0) {
		struct target_map tm = {
			.path = lib->path, .start = lib->start, .end = lib->end, .ino = lib->inode
		};

		fd = target_open_map(&me, &tm, 0, TARGET_ELF_MAX_BYTES, &st);
		CHECK(fd >= 0);
		CHECK(st.st_ino == want.st_ino);
		if (fd >= 0)
			close(fd);
		/* No mapping named: by path, which must lead to the inode. */
		tm.start = tm.end = 0;
		fd = target_open_map(&me, &tm, 0, TARGET_ELF_MAX_BYTES, &st);
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
		tm.ino = want.st_ino + 1; /* replaced since it was mapped */
		CHECK_INT_EQ(target_open_map(&me, &tm, 0, TARGET_ELF_MAX_BYTES, NULL), -ESTALE);
		tm.deleted = true; /* and no path to it */
		CHECK_INT_EQ(target_open_map(&me, &tm, 0, TARGET_ELF_MAX_BYTES, NULL), -ENOENT);
		/* Over the bound through map_files too. */
		tm = (struct target_map){ .path = lib->path, .start = lib->start, .end = lib->end };
		CHECK_INT_EQ(target_open_map(&me, &tm, 0, 16, NULL), -EFBIG);
	}
	proc_maps_free(&m);
	free(buf);
	if (geteuid() == 0)
		test_mapped_private();
}

struct blocker {
	int rfd, done_fd;
	char got;
};

static void blocker_run(void *arg)
{
	struct blocker *b = arg;

	/* Blocks until the test writes: a stalled read. */
	if (read(b->rfd, &b->got, 1) != 1)
		b->got = 0;
}

static void blocker_drop(void *arg)
{
	struct blocker *b = arg;

	/* Told by the thread itself once it is done with b. */
	if (write(b->done_fd, "d", 1) != 1)
		abort();
	close(b->rfd);
	free(b);
}

static void quick_run(void *arg)
{
	*(int *)arg = 42;
}

static void test_run(void)
{
	int in[2], done[2], v = 0;
	struct blocker *b = calloc(1, sizeof(*b));
	uint64_t t0;
	char c;

	CHECK_INT_EQ(target_run(quick_run, NULL, &v, 1000), 0);
	CHECK_INT_EQ(v, 42);
	CHECK(b != NULL);
	if (!b || pipe(in) || pipe(done)) {
		CHECK(0);
		free(b);
		return;
	}
	b->rfd = in[0];
	b->done_fd = done[1];
	t0 = now_ms();
	CHECK_INT_EQ(target_run(blocker_run, blocker_drop, b, 100), -ETIMEDOUT);
	CHECK(now_ms() - t0 >= 100);
	CHECK(now_ms() - t0 < 1000);
	/* Released: the abandoned job finishes and frees itself. */
	CHECK_INT_EQ(write(in[1], "x", 1), 1);
	CHECK_INT_EQ(read(done[0], &c, 1), 1);
	close(in[1]);
	close(done[0]);
	close(done[1]);
}

int main(void)
{
	test_parse();
	test_files();
	test_mapped();
	test_run();
	return check_report("test_target_open");
}
