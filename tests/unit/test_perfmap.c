// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf map (JIT symbol file) parser: format variants, overrides, bounds,
 * malformed lines and the file-opening rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symbolize/perfmap.h"

static void test_parse(void)
{
	static const char text[] = "1000 100 first\n"
				   "0x2000 0x10 with 0x prefix and spaces\r\n"
				   "1000 80 first_replaced\n" /* same start: newer wins */
				   "3000 1000 outer\n"
				   "3100 10 inner\n" /* nested in outer */
				   "zzzz 10 bad_start\n"
				   "4000 0 zero_size\n"
				   "4000 10\n"	/* no name */
				   "4000 10 \n" /* empty name */
				   "fffffffffffffff0 100 wraps\n"
				   "11112222333344445 10 too_long\n"
				   "5000\n"
				   "\n"
				   "6000 10 nul\0inside\n"
				   "7000 8 last_without_newline";
	struct perfmap *pm;
	uint64_t off = 0;

	CHECK_INT_EQ(perfmap_parse(text, sizeof(text) - 1, &pm), 0);
	if (!pm)
		return;
	CHECK_INT_EQ(perfmap_count(pm), 5);
	CHECK_INT_EQ(perfmap_bad_lines(pm), 8);
	CHECK(!perfmap_truncated(pm));
	CHECK_STR_EQ(perfmap_lookup(pm, 0x1010, &off), "first_replaced");
	CHECK_INT_EQ(off, 0x10);
	/* Old entry was 0x100 long, the replacement only 0x80. */
	CHECK(perfmap_lookup(pm, 0x1090, NULL) == NULL);
	CHECK_STR_EQ(perfmap_lookup(pm, 0x200f, NULL), "with 0x prefix and spaces");
	CHECK(perfmap_lookup(pm, 0x2010, NULL) == NULL);
	CHECK(perfmap_lookup(pm, 0xfff, NULL) == NULL);
	CHECK_STR_EQ(perfmap_lookup(pm, 0x3105, NULL), "inner");
	CHECK_STR_EQ(perfmap_lookup(pm, 0x3200, NULL), "outer");
	CHECK_STR_EQ(perfmap_lookup(pm, 0x7007, NULL), "last_without_newline");
	CHECK(perfmap_lookup(pm, 0x7008, NULL) == NULL);
	CHECK(perfmap_lookup(pm, UINT64_MAX, NULL) == NULL);
	perfmap_free(pm);

	CHECK_INT_EQ(perfmap_parse("", 0, &pm), 0);
	if (pm) {
		CHECK_INT_EQ(perfmap_count(pm), 0);
		CHECK(perfmap_lookup(pm, 0x1000, NULL) == NULL);
		perfmap_free(pm);
	}
}

static void test_load(void)
{
	char dir[] = "/tmp/ep-perfmap-XXXXXX", path[64], link[64];
	struct perfmap *pm;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(link, sizeof(link), "%s/perf-2.map", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		/* The last line is being written by the JIT: not yet complete. */
		fputs("a000 20 jitted\nb000 20 half_writ", f);
		fclose(f);
	}
	CHECK_INT_EQ(perfmap_load(path, (uid_t)-1, &pm), 0);
	if (pm) {
		CHECK_STR_EQ(perfmap_lookup(pm, 0xa001, NULL), "jitted");
		CHECK(perfmap_lookup(pm, 0xb001, NULL) == NULL);
		perfmap_free(pm);
	}
	/* Owned by someone other than root or the target: refused when we are
	 * root (the file is ours, so a different expected uid must fail unless
	 * the file is owned by root, which is always trusted). */
	if (geteuid() != 0) {
		CHECK_INT_EQ(perfmap_load(path, geteuid() + 1, &pm), -EPERM);
		CHECK(pm == NULL);
	} else {
		CHECK_INT_EQ(perfmap_load(path, 12345, &pm), 0);
		perfmap_free(pm);
		if (chown(path, 4242, 4242) == 0) {
			CHECK_INT_EQ(perfmap_load(path, 12345, &pm), -EPERM);
			CHECK_INT_EQ(perfmap_load(path, 4242, &pm), 0);
			perfmap_free(pm);
		}
	}
	/* Symlinks are not followed (anyone can plant /tmp/perf-PID.map). */
	CHECK(symlink(path, link) == 0);
	CHECK_INT_EQ(perfmap_load(link, (uid_t)-1, &pm), -ELOOP);
	CHECK_INT_EQ(perfmap_load(dir, (uid_t)-1, &pm), -EPERM);
	CHECK_INT_EQ(perfmap_load("/nonexistent/perf-1.map", (uid_t)-1, &pm), -ENOENT);
	/* Nor is a symlink anywhere on the path: a directory planted by
	 * another user, or one inside a target's root leading out of it. */
	{
		char sub[64], lnk[80], viaroot[64];
		int rootfd;

		snprintf(sub, sizeof(sub), "%s/real", dir);
		snprintf(lnk, sizeof(lnk), "%s/alias/perf-1.map", dir);
		CHECK(mkdir(sub, 0700) == 0);
		snprintf(viaroot, sizeof(viaroot), "%s/real/perf-3.map", dir);
		f = fopen(viaroot, "w");
		if (f) {
			fputs("c000 10 in_root\n", f);
			fclose(f);
		}
		snprintf(sub, sizeof(sub), "%s/alias", dir);
		CHECK(symlink("real", sub) == 0);
		snprintf(lnk, sizeof(lnk), "%s/alias/perf-3.map", dir);
		CHECK_INT_EQ(perfmap_load(lnk, (uid_t)-1, &pm), -ELOOP);
		rootfd = open(dir, O_PATH | O_DIRECTORY);
		CHECK(rootfd >= 0);
		/* Inside the root: found; through the symlink: refused; ".."
		 * stays in the root. */
		CHECK_INT_EQ(perfmap_load_at(rootfd, "/real/perf-3.map", (uid_t)-1, &pm), 0);
		if (pm) {
			CHECK_STR_EQ(perfmap_lookup(pm, 0xc001, NULL), "in_root");
			perfmap_free(pm);
		}
		CHECK_INT_EQ(perfmap_load_at(rootfd, "/alias/perf-3.map", (uid_t)-1, &pm), -ELOOP);
		CHECK_INT_EQ(perfmap_load_at(rootfd, "/../../../real/perf-3.map", (uid_t)-1, &pm),
			     0);
		perfmap_free(pm);
		/* Paths that name no file, or climb above a relative start. */
		CHECK_INT_EQ(perfmap_load_at(rootfd, "/", (uid_t)-1, &pm), -EISDIR);
		CHECK_INT_EQ(perfmap_load_at(rootfd, "/..//./", (uid_t)-1, &pm), -EISDIR);
		CHECK_INT_EQ(perfmap_load("../x/perf-1.map", (uid_t)-1, &pm), -EXDEV);
		{
			char deep[400] = "";

			for (int i = 0; i < 70; i++)
				strcat(deep, "/d");
			CHECK_INT_EQ(perfmap_load_at(rootfd, deep, (uid_t)-1, &pm), -ENAMETOOLONG);
		}
		close(rootfd);
		unlink(sub);
		unlink(viaroot);
		snprintf(sub, sizeof(sub), "%s/real", dir);
		rmdir(sub);
	}
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void test_bounds(void)
{
	/* More entries than the cap: parsing stops and says so. */
	size_t n = PERFMAP_MAX_ENTRIES + 10, cap = n * 16 + 1, len = 0;
	char *buf = malloc(cap);
	struct perfmap *pm;

	if (!buf) {
		CHECK(!"malloc");
		return;
	}
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%zx 1 f\n", i + 1);
	CHECK_INT_EQ(perfmap_parse(buf, len, &pm), 0);
	if (pm) {
		CHECK_INT_EQ(perfmap_count(pm), PERFMAP_MAX_ENTRIES);
		CHECK(perfmap_truncated(pm));
		/* The 10 lines after the cap, "200001 1 f\n" to "20000a 1 f\n". */
		CHECK_INT_EQ(perfmap_unread_bytes(pm), 10 * 11);
		perfmap_free(pm);
	}
	free(buf);
}

/* A map over PERFMAP_MAX_BYTES is read up to it and says how much was left
 * (it used to be cut silently). 256-byte lines: the cut falls between
 * two lines. */
static void test_big_file(void)
{
	char path[] = "/tmp/ep-pm-big-XXXXXX", line[257];
	size_t nlines = (PERFMAP_MAX_BYTES >> 8) + 100;
	struct perfmap *pm = NULL;
	const size_t blk = 4096;
	char *buf = malloc(blk * 256);
	int fd = mkstemp(path);

	if (fd < 0 || !buf) {
		CHECK(!"mkstemp/malloc");
		free(buf);
		return;
	}
	for (size_t i = 0; i < nlines; i += blk) {
		size_t n = nlines - i < blk ? nlines - i : blk;

		for (size_t j = 0; j < n; j++) {
			int w = snprintf(line, sizeof(line), "%08zx 10 f", (i + j + 1) * 16);

			memset(line + w, 'x', 255 - (size_t)w);
			line[255] = '\n';
			memcpy(buf + j * 256, line, 256);
		}
		CHECK(write(fd, buf, n * 256) == (ssize_t)(n * 256));
	}
	close(fd);
	free(buf);
	CHECK_INT_EQ(perfmap_load(path, (uid_t)-1, &pm), 0);
	if (pm) {
		CHECK(perfmap_truncated(pm));
		CHECK_INT_EQ(perfmap_count(pm), PERFMAP_MAX_BYTES >> 8);
		CHECK_INT_EQ(perfmap_unread_bytes(pm), 100 * 256);
		perfmap_free(pm);
	}
	unlink(path);
}

/* Buffers whose last byte is the last readable one (a PROT_NONE page
 * follows): a parser reading past len faults here, in any build (fuzzing
 * found "1000 10 foo" without a newline, or a last line that is all hex digits,
 * was read beyond len). */
static void test_no_overread(void)
{
	static const char *const cases[] = {
		"1000 10 foo",
		"abcdef",
		"0",
		"0x",
		"1000",
		"1000 ",
		"1000 1f",
		"1000 1f ",
		"10 20 a\n0x1234abcd",
		"10 20 a\n10 fffffffffffffffff",
	};
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	if (map == MAP_FAILED) {
		CHECK(!"mmap");
		return;
	}
	CHECK(mprotect(map + pg, (size_t)pg, PROT_NONE) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i]);
		char *buf = map + pg - len;
		struct perfmap *pm = NULL;

		memcpy(buf, cases[i], len);
		CHECK_INT_EQ(perfmap_parse(buf, len, &pm), 0);
		if (i == 0 && pm) {
			uint64_t off;
			const char *n = perfmap_lookup(pm, 0x1005, &off);

			CHECK(n && !strcmp(n, "foo") && off == 5);
		}
		perfmap_free(pm);
	}
	munmap(map, (size_t)pg * 2);
}

int main(void)
{
	test_no_overread();
	test_parse();
	test_load();
	test_bounds();
	test_big_file();
	return check_report("test_perfmap");
}
