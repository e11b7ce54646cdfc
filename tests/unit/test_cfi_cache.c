// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * On-disk cache of unwind tables (user/unwind/cfi_cache.c): a second get is
 * served from the file and equals the compiled table; corrupt, truncated,
 * other-version, other-arch and oversized entries are rejected and
 * replaced; a symlink in place of an entry is never followed; a directory
 * others can write is not used; objects without build-id are keyed by their
 * CFI.
 */
#include "check.h"
#include "unwind/cfi_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char g_dir[64];

static const char *build_dir(void)
{
	const char *b = getenv("EP_BUILD_DIR");
	return b ? b : ".";
}

static int get(struct uw_cache *c, const char *path, struct uw_table *t, bool *hit)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = uw_cache_get(c, fd, t, hit);
	close(fd);
	return rc;
}

static bool same_table(const struct uw_table *a, const struct uw_table *b)
{
	return a->n == b->n && a->arch == b->arch && a->source == b->source &&
	       a->stats.fdes == b->stats.fdes && a->stats.fdes_bad == b->stats.fdes_bad &&
	       a->stats.rows_unsupported == b->stats.rows_unsupported &&
	       (!a->n || !memcmp(a->rows, b->rows, (size_t)a->n * sizeof(*a->rows)));
}

/* The one entry in the cache directory whose name starts with prefix. */
static bool entry_path(const char *prefix, char *out, size_t size)
{
	DIR *d = opendir(g_dir);
	struct dirent *e;
	bool found = false;

	while (d && (e = readdir(d))) {
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			snprintf(out, size, "%s/%s", g_dir, e->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* The entry of dir not among the n known ones. */
static bool new_entry(const char *dir, char known[][1024], int n, char *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	while (d && (e = readdir(d))) {
		char path[1024];
		bool seen = false;
		if (strncmp(e->d_name, "x86_64-", 7))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		for (int i = 0; i < n; i++)
			seen |= !strcmp(known[i], path);
		if (!seen) {
			snprintf(out, 1024, "%s", path);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void patch(const char *path, long off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, bytes, len, off) == (ssize_t)len);
	close(fd);
}

/* After damage at the entry: a miss, the same table rebuilt, then a hit. */
static void expect_rebuilt(struct uw_cache *c, const char *lib, const struct uw_table *ref,
			   const char *what)
{
	struct uw_table t;
	bool hit = true;

	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	if (hit)
		fprintf(stderr, "damaged entry (%s) was trusted\n", what);
	CHECK(!hit);
	CHECK(same_table(&t, ref));
	uw_table_free(&t);
	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	CHECK(hit);
	CHECK(same_table(&t, ref));
	uw_table_free(&t);
}

int main(void)
{
	char lib[1024], entry[1024], victim[1024], nobid[1024], cmd[4096];
	struct uw_cache *c;
	struct uw_table ref, t;
	struct stat st;
	bool hit;

	elf_version(EV_CURRENT);
	snprintf(lib, sizeof(lib), "%s/tests/elf/libcfitest.so", build_dir());
	snprintf(g_dir, sizeof(g_dir), "/tmp/ep-cfi-cache-XXXXXX");
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* The directory is made 0755 by us; mkdtemp's is 0700, also fine. */
	CHECK_INT_EQ(uw_cache_open(&c, g_dir), 0);
	CHECK(c != NULL);

	/* Miss, store, hit; the entry is a 0644 regular file named by build-id. */
	CHECK_INT_EQ(get(c, lib, &ref, &hit), 0);
	CHECK(!hit);
	CHECK(ref.n > 10);
	CHECK(entry_path("x86_64-b", entry, sizeof(entry)));
	CHECK(!lstat(entry, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644);
	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	CHECK(hit);
	CHECK(same_table(&t, &ref));
	CHECK_INT_EQ(t.stats.build_ns, 0);
	uw_table_free(&t);

	/* A flipped byte in the rows. */
	long rows_off = (long)st.st_size - (long)ref.n * (long)sizeof(struct ep_uw_row);
	unsigned char x = 0x5a;
	patch(entry, rows_off + 12 * 3 + 5, &x, 1);
	expect_rebuilt(c, lib, &ref, "flipped row byte");
	/* Truncated (a crash mid-write without rename cannot do it; a full
	 * disk or another tool can). */
	CHECK(!truncate(entry, st.st_size / 2));
	expect_rebuilt(c, lib, &ref, "truncated");
	CHECK(!truncate(entry, 10));
	expect_rebuilt(c, lib, &ref, "shorter than the header");
	/* Header fields: version, magic, arch, row count vs size. */
	uint32_t v = 999;
	patch(entry, 8, &v, 4);
	expect_rebuilt(c, lib, &ref, "version");
	patch(entry, 0, "XXXX", 4);
	expect_rebuilt(c, lib, &ref, "magic");
	v = UW_ARCH_ARM64;
	patch(entry, 16, &v, 4);
	expect_rebuilt(c, lib, &ref, "arch");
	v = ref.n + 1;
	patch(entry, 24, &v, 4);
	expect_rebuilt(c, lib, &ref, "row count");
	v = 0xffffffffu;
	patch(entry, 24, &v, 4);
	expect_rebuilt(c, lib, &ref, "huge row count");
	/* Another object's entry under this name. */
	patch(entry, 48, "x86_64-bdeadbeef.uwt", 21);
	expect_rebuilt(c, lib, &ref, "key");

	/* A symlink in place of the entry: not followed for reading or writing. */
	snprintf(victim, sizeof(victim), "%s/victim", g_dir);
	FILE *f = fopen(victim, "w");
	CHECK(f && fputs("precious", f) >= 0);
	if (f)
		fclose(f);
	CHECK(!unlink(entry));
	CHECK(!symlink(victim, entry));
	expect_rebuilt(c, lib, &ref, "symlink");
	CHECK(!lstat(entry, &st) && S_ISREG(st.st_mode));
	CHECK(!stat(victim, &st) && st.st_size == 8);
	/* A FIFO in place of the entry must not block the collector. */
	CHECK(!unlink(entry));
	CHECK(!mkfifo(entry, 0644));
	expect_rebuilt(c, lib, &ref, "fifo");

	/* No build-id: keyed by the CFI, and still served from the cache. */
	snprintf(nobid, sizeof(nobid), "%s/nobid.so", g_dir);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.gnu.build-id '%s' '%s'", lib,
		 nobid);
	CHECK_INT_EQ(system(cmd), 0);
	CHECK_INT_EQ(get(c, nobid, &t, &hit), 0);
	CHECK(!hit);
	CHECK(same_table(&t, &ref));
	uw_table_free(&t);
	CHECK(entry_path("x86_64-h", entry, sizeof(entry)));
	CHECK_INT_EQ(get(c, nobid, &t, &hit), 0);
	CHECK(hit);
	CHECK(same_table(&t, &ref));
	uw_table_free(&t);

	/* A truncated object (a copy cut inside its CFI): an error or a table,
	 * never a crash. */
	char cut[1100];
	snprintf(cut, sizeof(cut), "%s/cut.so", g_dir);
	snprintf(cmd, sizeof(cmd), "head -c 13000 '%s' > '%s'", lib, cut);
	CHECK_INT_EQ(system(cmd), 0);
	int rc = get(c, cut, &t, &hit);
	CHECK(rc == 0 || rc == -ENOEXEC);
	uw_table_free(&t);

	/* Not an ELF file. */
	CHECK_INT_EQ(get(c, victim, &t, &hit), -ENOEXEC);
	CHECK_INT_EQ(t.n, 0);
	uw_cache_free(c);

	/* A directory others can write: compiled each time, nothing stored. */
	char open_dir[4096];
	snprintf(open_dir, sizeof(open_dir), "%s/shared", g_dir);
	CHECK(!mkdir(open_dir, 0777) && !chmod(open_dir, 0777));
	CHECK_INT_EQ(uw_cache_open(&c, open_dir), 0);
	CHECK(c != NULL);
	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	CHECK(!hit && same_table(&t, &ref));
	uw_table_free(&t);
	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	CHECK(!hit);
	uw_table_free(&t);
	uw_cache_free(c);
	/* A symlink as the directory itself: not used. */
	char link_dir[4096];
	snprintf(link_dir, sizeof(link_dir), "%s/linkdir", g_dir);
	CHECK(!symlink(g_dir, link_dir));
	CHECK_INT_EQ(uw_cache_open(&c, link_dir), 0);
	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	CHECK(!hit);
	uw_table_free(&t);
	uw_cache_free(c);
	/* Pruning: past the size limit the least recently used entries go,
	 * down to 3/4 of it; a hit makes an entry recently used. */
	char pdir[1024], names[4][1024], ibt[1024], dbg[1024];
	off_t sizes[4];
	snprintf(pdir, sizeof(pdir), "%s/prune", g_dir);
	snprintf(ibt, sizeof(ibt), "%s/tests/elf/libcfitest_ibt.so", build_dir());
	snprintf(dbg, sizeof(dbg), "%s/tests/elf/libcfidbg.so", build_dir());
	CHECK_INT_EQ(uw_cache_open(&c, pdir), 0);
	const char *objs[4] = { lib, ibt, dbg, nobid };
	for (int i = 0; i < 3; i++) {
		CHECK_INT_EQ(get(c, objs[i], &t, &hit), 0);
		uw_table_free(&t);
		CHECK(new_entry(pdir, names, i, names[i]));
		CHECK(!stat(names[i], &st));
		sizes[i] = st.st_size;
	}
	/* Ages: A 3 days, B 2 days, C 1 day; then a hit on A refreshes it. */
	time_t now = time(NULL);
	for (int i = 0; i < 3; i++) {
		struct timespec ts[2] = { { now - (3 - i) * 86400, 0 },
					  { now - (3 - i) * 86400, 0 } };
		CHECK(!utimensat(AT_FDCWD, names[i], ts, 0));
	}
	CHECK_INT_EQ(get(c, lib, &t, &hit), 0);
	CHECK(hit);
	uw_table_free(&t);
	CHECK(!stat(names[0], &st) && st.st_mtime >= now - 60);
	/* D's store goes over the limit by a byte. */
	off_t d_size = sizes[0]; /* D has A's rows under another key */
	uint64_t max = (uint64_t)(sizes[0] + sizes[1] + sizes[2] + d_size) - 1;
	uw_cache_set_max_bytes(c, max);
	CHECK_INT_EQ(get(c, nobid, &t, &hit), 0);
	uw_table_free(&t);
	CHECK(new_entry(pdir, names, 3, names[3]));
	CHECK(!stat(names[3], &st));
	sizes[3] = st.st_size;
	uint64_t total = (uint64_t)(sizes[0] + sizes[1] + sizes[2] + sizes[3]);
	bool gone[4] = { false };
	int order[3] = { 1, 2, 0 }; /* oldest first: B, C, then A (refreshed) */
	for (int k = 0; k < 3 && total > max && total > max / 4 * 3; k++) {
		gone[order[k]] = true;
		total -= (uint64_t)sizes[order[k]];
	}
	CHECK(gone[1]); /* at least the oldest went */
	for (int i = 0; i < 4; i++)
		CHECK_INT_EQ(access(names[i], F_OK) == 0, !gone[i]);
	/* A leftover temporary file from an interrupted store: removed when
	 * older than an hour. */
	char stale[1200];
	snprintf(stale, sizeof(stale), "%s/.tmp-1-2-x86_64-bdead.uwt", pdir);
	FILE *sf = fopen(stale, "w");
	if (sf)
		fclose(sf);
	struct timespec old[2] = { { now - 7200, 0 }, { now - 7200, 0 } };
	CHECK(!utimensat(AT_FDCWD, stale, old, 0));
	uw_cache_set_max_bytes(c, 1);
	CHECK_INT_EQ(get(c, ibt, &t, &hit), 0); /* a store: prunes */
	uw_table_free(&t);
	CHECK(access(stale, F_OK) != 0);
	/* Limit 1 byte: everything but the entry just stored. */
	CHECK(access(names[0], F_OK) != 0 && access(names[3], F_OK) != 0);
	uw_cache_free(c);

	/* No cache at all. */
	CHECK_INT_EQ(get(NULL, lib, &t, &hit), 0);
	CHECK(!hit && same_table(&t, &ref));
	uw_table_free(&t);
	uw_table_free(&ref);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	CHECK_INT_EQ(system(cmd), 0);
	return check_report("test_cfi_cache");
}
