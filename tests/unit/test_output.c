// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The output writer under attack: symlinks planted where results go, writer
 * failures, and garbage in SUDO_UID/SUDO_GID. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	output_dir_close(&od);
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
	test_symlink_dirs();
	test_chown();
	test_sudo_ids();
	rm_rf(base);
	return check_report("test_output");
}
