// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The output writer under attack: symlinks planted where results go, writer
 * failures, garbage in SUDO_UID/SUDO_GID; result directories that another
 * user made or can write, or that hold an earlier run's files; a full disk
 * and a quota, named as such. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "report/output.h"

static char base[PATH_MAX];

/* Rotates buffers so two results can be passed to one call (symlink). */
static const char *at(const char *rel)
{
	static char buf[4][PATH_MAX * 2];
	static int next;
	char *b = buf[next++ % 4];
	snprintf(b, sizeof(buf[0]), "%s/%s", base, rel);
	return b;
}

static void put_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Counts leftover temp files (".NAME.tmp.*") in a directory. */
static int count_temps(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp."))
			n++;
	closedir(d);
	return n;
}

static int write_hello(FILE *f, void *ctx)
{
	fprintf(f, "hello %s\n", (const char *)ctx);
	return 0;
}

static int write_fails(FILE *f, void *ctx)
{
	(void)ctx;
	fputs("partial", f);
	return -EPROTO;
}

static void test_write(void)
{
	struct output_dir od;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	/* mkdir -p, with a doubled and a trailing slash */
	CHECK_INT_EQ(output_dir_open(&od, at("a//b/c/")), 0);
	struct stat st;
	CHECK(stat(at("a/b/c"), &st) == 0 && S_ISDIR(st.st_mode));

	CHECK_INT_EQ(output_write(&od, "out.txt", write_hello, "world"), 0);
	CHECK_STR_EQ(slurp(at("a/b/c/out.txt")), "hello world\n");
	/* overwrite in place */
	CHECK_INT_EQ(output_write(&od, "out.txt", write_hello, "again"), 0);
	CHECK_STR_EQ(slurp(at("a/b/c/out.txt")), "hello again\n");
	CHECK_INT_EQ(count_temps(at("a/b/c")), 0);

	/* A symlink planted at the destination is replaced, never written
	 * through: the file it points to keeps its content. */
	put_file(at("victim"), "precious\n");
	CHECK(symlink(at("victim"), at("a/b/c/evil.txt")) == 0);
	CHECK_INT_EQ(output_write(&od, "evil.txt", write_hello, "x"), 0);
	CHECK_STR_EQ(slurp(at("victim")), "precious\n");
	CHECK(lstat(at("a/b/c/evil.txt"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK_STR_EQ(slurp(at("a/b/c/evil.txt")), "hello x\n");

	/* A failing writer leaves neither the file nor its temp. */
	CHECK_INT_EQ(output_write(&od, "bad.txt", write_fails, NULL), -EPROTO);
	CHECK(access(at("a/b/c/bad.txt"), F_OK) != 0);
	CHECK_INT_EQ(count_temps(at("a/b/c")), 0);
	/* ... and does not clobber an existing good file either */
	CHECK_INT_EQ(output_write(&od, "out.txt", write_fails, NULL), -EPROTO);
	CHECK_STR_EQ(slurp(at("a/b/c/out.txt")), "hello again\n");

	/* names that would escape the directory */
	CHECK_INT_EQ(output_write(&od, "../escape", write_hello, "x"), -EINVAL);
	CHECK_INT_EQ(output_write(&od, "..", write_hello, "x"), -EINVAL);
	CHECK_INT_EQ(output_write(&od, "", write_hello, "x"), -EINVAL);
	CHECK_INT_EQ(output_write(&od, NULL, write_hello, "x"), -EINVAL);
	CHECK(access(at("a/b/escape"), F_OK) != 0);

	/* output_remove (--rotate): the file and its entry in the list go;
	 * nothing outside the directory can be named. */
	CHECK_INT_EQ(output_write(&od, "old.txt", write_hello, "x"), 0);
	size_t before = od.nwritten;
	CHECK_INT_EQ(output_remove(&od, "old.txt"), 0);
	CHECK_INT_EQ(od.nwritten, before - 1);
	for (size_t i = 0; i < od.nwritten; i++)
		CHECK(strcmp(od.written[i], "old.txt") != 0);
	CHECK(access(at("a/b/c/old.txt"), F_OK) != 0);
	CHECK_INT_EQ(output_remove(&od, "old.txt"), -ENOENT);
	CHECK_INT_EQ(output_remove(&od, "../escape"), -EINVAL);
	CHECK_INT_EQ(output_remove(&od, ".."), -EINVAL);
	CHECK_INT_EQ(output_remove(&od, NULL), -EINVAL);
	CHECK_STR_EQ(slurp(at("a/b/c/out.txt")), "hello again\n");
	/* A file this run did not write is never deleted (an earlier run's
	 * interval that happens to have the name of one rotated out). */
	put_file(at("a/b/c/interval-000001.pb.gz"), "earlier run\n");
	CHECK_INT_EQ(output_remove(&od, "interval-000001.pb.gz"), -ENOENT);
	CHECK_STR_EQ(slurp(at("a/b/c/interval-000001.pb.gz")), "earlier run\n");
	output_dir_close(&od);
}

/* The result directory of a run: new, or empty, or --force; never one
 * that another user owns or can write. */
static void test_run_dir(void)
{
	struct output_dir od;
	struct stat st;

	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	/* New: created. */
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/new"), 0), 0);
	CHECK(od.created);
	CHECK_INT_EQ(output_write(&od, "report.json", write_hello, "1"), 0);
	output_dir_close(&od);
	/* Existing with files (an earlier run's): refused, files untouched. */
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/new"), 0), -EEXIST);
	CHECK(od.dirfd < 0);
	CHECK_STR_EQ(slurp(at("run/new/report.json")), "hello 1\n");
	/* ... unless forced: written into, the earlier files of other names
	 * stay. */
	put_file(at("run/new/interval-000001.json"), "old\n");
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/new"), OUTPUT_DIR_FORCE), 0);
	CHECK(!od.created);
	CHECK_INT_EQ(output_write(&od, "report.json", write_hello, "2"), 0);
	output_dir_close(&od);
	CHECK_STR_EQ(slurp(at("run/new/report.json")), "hello 2\n");
	CHECK_STR_EQ(slurp(at("run/new/interval-000001.json")), "old\n");
	/* Existing and empty (mktemp -d): used. */
	CHECK(mkdir(at("run/empty"), 0700) == 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/empty"), 0), 0);
	CHECK(!od.created);
	output_dir_close(&od);
	/* Writable by others, empty or not, forced or not: refused. */
	CHECK(mkdir(at("run/open"), 0755) == 0 && chmod(at("run/open"), 0777) == 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/open"), 0), -EPERM);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/open"), OUTPUT_DIR_FORCE), -EPERM);
	CHECK(chmod(at("run/open"), 0775) == 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/open"), 0), -EPERM);
	CHECK(chmod(at("run/open"), 01777) == 0); /* sticky like /tmp: still refused */
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/open"), OUTPUT_DIR_FORCE), -EPERM);
	CHECK(chmod(at("run/open"), 0755) == 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/open"), 0), 0);
	output_dir_close(&od);
	/* The same check on "." and "dir/.": the directory reached. */
	CHECK(chmod(at("run/open"), 0777) == 0);
	{
		char cwd[PATH_MAX];

		CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
		CHECK(chdir(at("run/open")) == 0);
		CHECK_INT_EQ(output_dir_open_run(&od, ".", OUTPUT_DIR_FORCE), -EPERM);
		CHECK(chdir(cwd) == 0);
	}
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/open/."), OUTPUT_DIR_FORCE), -EPERM);
	/* A default name that exists (made by someone else first): a fresh
	 * one, and what was there is not touched. */
	CHECK(mkdir(at("run/ebpf-prof-1-x"), 0777) == 0 &&
	      chmod(at("run/ebpf-prof-1-x"), 0777) == 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/ebpf-prof-1-x"), OUTPUT_DIR_NEW_NAME), 0);
	CHECK(od.created);
	CHECK_STR_EQ(od.path, at("run/ebpf-prof-1-x-2"));
	CHECK_INT_EQ(output_write(&od, "f", write_hello, "n"), 0);
	output_dir_close(&od);
	CHECK_STR_EQ(slurp(at("run/ebpf-prof-1-x-2/f")), "hello n\n");
	CHECK(access(at("run/ebpf-prof-1-x/f"), F_OK) != 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/ebpf-prof-1-x"), OUTPUT_DIR_NEW_NAME), 0);
	CHECK_STR_EQ(od.path, at("run/ebpf-prof-1-x-3"));
	output_dir_close(&od);

	if (geteuid() != 0) {
		fprintf(stderr, "not root: directories of other users not checked\n");
		return;
	}
	/* Owned by another user (nobody pre-created it, 0755): refused, even
	 * forced, even empty. */
	CHECK(mkdir(at("run/foreign"), 0755) == 0 && chown(at("run/foreign"), 65534, 65534) == 0);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/foreign"), 0), -EPERM);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/foreign"), OUTPUT_DIR_FORCE), -EPERM);
	/* ... unless it is the sudo user's own: results go to them anyway. */
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/foreign"), 0), 0);
	output_dir_close(&od);
	/* A directory created for the sudo user is theirs, files included. */
	CHECK_INT_EQ(output_dir_open_run(&od, at("run/mine"), 0), 0);
	CHECK_INT_EQ(output_write(&od, "f", write_hello, "s"), 0);
	output_dir_close(&od);
	CHECK(stat(at("run/mine"), &st) == 0 && st.st_uid == 65534);
	CHECK(stat(at("run/mine/f"), &st) == 0 && st.st_uid == 65534);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
}

static int write_big(FILE *f, void *ctx)
{
	static char block[4096];
	size_t n = *(size_t *)ctx;

	memset(block, 'x', sizeof(block));
	for (size_t i = 0; i < n; i += sizeof(block))
		if (fwrite(block, 1, sizeof(block), f) != sizeof(block))
			return -EIO; /* what writers make of any failed write */
	return 0;
}

/* In a private mount namespace (nothing is left mounted whatever happens):
 * a tmpfs of 256 KiB. */
static bool small_fs(const char *dir, const char *opts)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "no mount namespace: %s\n", strerror(errno));
		return false;
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return false;
	if (mount("tmpfs", dir, "tmpfs", 0, opts)) {
		fprintf(stderr, "mount -t tmpfs -o %s: %s\n", opts, strerror(errno));
		return false;
	}
	return true;
}

/* A full disk says "No space left on device", not the writer's EIO; a
 * file written before keeps its earlier version and stays listed. */
static void test_full(void)
{
	struct output_dir od;
	size_t small = 16 << 10, big = 1 << 20;
	pid_t pid;
	int status = -1;

	if (geteuid() != 0) {
		fprintf(stderr, "not root: full-disk checks skipped\n");
		return;
	}
	/* In a child: its mount namespace goes with it. */
	pid = fork();
	if (pid == 0) {
		bool ok = small_fs(at("full"), "size=256k,mode=0755");

		ok = ok && output_dir_open_run(&od, at("full/run"), 0) == 0;
		ok = ok && output_write(&od, "report.json", write_big, &small) == 0;
		ok = ok && output_write(&od, "profile.pb.gz", write_big, &big) == -ENOSPC;
		ok = ok && od.nfailed == 1 && !strcmp(od.failed[0], "profile.pb.gz") &&
		     od.failed_errs[0] == -ENOSPC;
		ok = ok && count_temps(at("full/run")) == 0 &&
		     access(at("full/run/profile.pb.gz"), F_OK) != 0;
		/* Written again, bigger than the space: the first version stays. */
		ok = ok && output_write(&od, "report.json", write_big, &big) == -ENOSPC;
		ok = ok && od.nfailed == 1 && od.nwritten == 1 &&
		     !strcmp(od.written[0], "report.json");
		{
			struct stat st;

			ok = ok && stat(at("full/run/report.json"), &st) == 0 &&
			     st.st_size == (off_t)small;
		}
		output_dir_close(&od);
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* A user's quota: EDQUOT, named as such (root ignores quotas: the
	 * writer runs as nobody). tmpfs has quotas since Linux 6.6. */
	pid = fork();
	if (pid == 0) {
		if (!small_fs(at("quota"),
			      "size=1m,mode=0777,usrquota,usrquota_block_hardlimit=64k"))
			_exit(77);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		bool ok = output_dir_open_run(&od, at("quota/run"), 0) == 0;
		int e = ok ? output_write(&od, "profile.pb.gz", write_big, &big) : 0;

		if (ok && e != -EDQUOT)
			fprintf(stderr, "quota: output_write returned %d (%s)\n", e, strerror(-e));
		ok = ok && e == -EDQUOT && od.nfailed == 1 && od.failed_errs[0] == -EDQUOT;
		output_dir_close(&od);
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		fprintf(stderr, "tmpfs without quota support here: EDQUOT not checked\n");
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_symlink_dirs(void)
{
	struct output_dir od;
	CHECK(mkdir(at("real"), 0755) == 0);
	CHECK(symlink(at("real"), at("link")) == 0);
	/* planted as the final component: refused, with or without '/' */
	CHECK_INT_EQ(output_dir_open(&od, at("link")), -ELOOP);
	CHECK_INT_EQ(output_dir_open(&od, at("link/")), -ELOOP);
	CHECK(od.dirfd < 0);

	/* A symlink above the final component is trusted only if root made it;
	 * one owned by another user is how /tmp attacks work. */
	if (geteuid() == 0) {
		CHECK_INT_EQ(output_dir_open(&od, at("link/sub")), 0);
		output_dir_close(&od);
		CHECK(access(at("real/sub"), F_OK) == 0);
		CHECK(symlink(at("real"), at("userlink")) == 0);
		CHECK(lchown(at("userlink"), 65534, 65534) == 0);
		CHECK_INT_EQ(output_dir_open(&od, at("userlink/sub2")), -ELOOP);
		CHECK(access(at("real/sub2"), F_OK) != 0);
	}

	/* a regular file in the way */
	put_file(at("plainfile"), "x");
	CHECK_INT_EQ(output_dir_open(&od, at("plainfile/sub")), -ENOTDIR);
	CHECK_INT_EQ(output_dir_open(&od, ""), -EINVAL);
}

static void test_chown(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "not root: chown checks skipped\n");
		return;
	}
	struct output_dir od;
	struct stat st;
	setenv("SUDO_UID", "12345", 1);
	setenv("SUDO_GID", "23456", 1);
	CHECK_INT_EQ(output_dir_open(&od, at("owned/inner")), 0);
	CHECK(od.chown_to_user);
	CHECK_INT_EQ(output_write(&od, "f", write_hello, "u"), 0);
	CHECK(stat(at("owned/inner/f"), &st) == 0 && st.st_uid == 12345 && st.st_gid == 23456);
	CHECK(stat(at("owned/inner"), &st) == 0 && st.st_uid == 12345);
	CHECK(stat(at("owned"), &st) == 0 && st.st_uid == 12345);
	output_dir_close(&od);
	/* an existing directory is not taken over */
	CHECK_INT_EQ(output_dir_open(&od, base), 0);
	output_dir_close(&od);
	CHECK(stat(base, &st) == 0 && st.st_uid == 0);

	setenv("SUDO_UID", "12a", 1);
	CHECK_INT_EQ(output_dir_open(&od, at("owned/inner")), 0);
	CHECK(!od.chown_to_user);
	output_dir_close(&od);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
}

static void test_sudo_ids(void)
{
	uid_t u = 77;
	gid_t g = 77;
	CHECK(output_parse_sudo_ids("1000", "1001", &u, &g));
	CHECK_INT_EQ(u, 1000);
	CHECK_INT_EQ(g, 1001);
	CHECK(output_parse_sudo_ids("0", "0", &u, &g));
	CHECK_INT_EQ(u, 0);
	CHECK(output_parse_sudo_ids("4294967294", "1", &u, &g));
	const char *bad[] = { "",   "-1",	  "12a", "99999999999999999999", " 1", "+1",
			      "1 ", "4294967295", "0x10" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		u = 5;
		CHECK(!output_parse_sudo_ids(bad[i], "1000", &u, &g));
		CHECK(!output_parse_sudo_ids("1000", bad[i], &u, &g));
		CHECK_INT_EQ(u, 5); /* untouched on failure */
	}
	CHECK(!output_parse_sudo_ids(NULL, "1000", &u, &g));
	CHECK(!output_parse_sudo_ids("1000", NULL, &u, &g));
	CHECK(!output_parse_sudo_ids(NULL, NULL, &u, &g));
}

static int rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(base, sizeof(base), "%s/ep-output-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	test_write();
	test_run_dir();
	test_full();
	test_symlink_dirs();
	test_chown();
	test_sudo_ids();
	rm_rf(base);
	return check_report("test_output");
}
