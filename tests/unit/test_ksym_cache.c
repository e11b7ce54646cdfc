// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kallsyms boot cache (user/symbolize/ksym_cache.h) on synthetic files:
 * the core kernel's lines copied by a load, a saved table read back and
 * merged with the rest give the table of the whole file; bad saved tables,
 * files others can write, symlinks and bad iterator samples are refused;
 * a full load writes this boot's file (0600) only with real addresses and
 * removes other boots' files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symbolize/kallsyms.h"
#include "symbolize/ksym_cache.h"

/* Core (in address order, with aliases, data and a zero address), then
 * modules, ftrace and BPF programs, as /proc/kallsyms lists them. */
static const char core_text[] = "ffffffff81000000 T _stext\n"
				"ffffffff81000000 t startup_alias\n"
				"0000000000000000 A fixed_percpu_data\n"
				"ffffffff81000100 T f1\n"
				"ffffffff81000180 D some_data\n"
				"ffffffff81000200 W f2\n"
				"ffffffff81000300 t f3\n"
				"ffffffff81000400 T f4\n"
				"ffffffff81000500 T f5\n"
				"ffffffff81000600 T f6\n"
				"ffffffff81000700 T f7\n"
				"ffffffff81000800 T f8\n";
static const char tail_text[] = "ffffffffc0100080 T mod_other\t[my_mod]\n"
				"ffffffffc0100000 t mod_func\t[my_mod]\n"
				"ffffffffc0100000 T mod_alias\t[my_mod]\n"
				"ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
				"ffffffffc0300000 t bpf_prog_0123456789abcdef_probe_entry\t[bpf]\n";

static FILE *mem(const char *text)
{
	return fmemopen((void *)text, strlen(text), "r");
}

static bool same(const struct kallsyms *a, const struct kallsyms *b)
{
	uint64_t x, y;

	if (kallsyms_count(a) != kallsyms_count(b))
		return false;
	for (size_t i = 0; i < kallsyms_count(a); i++) {
		const char *an = kallsyms_at(a, i, &x), *bn = kallsyms_at(b, i, &y);

		if (x != y || strcmp(an, bn))
			return false;
	}
	return true;
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, data, len) == (ssize_t)len);
	fchmod(fd, mode);
	close(fd);
}

static char *boot_name(void)
{
	static char name[128];
	char id[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		if (!fgets(id, sizeof(id), f))
			id[0] = '\0';
		fclose(f);
	}
	id[strcspn(id, "\n")] = '\0';
	snprintf(name, sizeof(name), "kallsyms-%s", id);
	return name;
}

/* The copy of the core lines + the rest = the whole file; so do the saved
 * core table merged with the rest's table. */
static void test_split_and_merge(const char *dir)
{
	char whole_text[sizeof(core_text) + sizeof(tail_text)], *lines = NULL, path[256];
	struct kallsyms *whole = NULL, *again = NULL, *core = NULL, *saved = NULL, *tail = NULL,
			*merged = NULL;
	size_t len = 0;
	FILE *in[2], *out;
	struct stat st;
	int fd;

	snprintf(whole_text, sizeof(whole_text), "%s%s", core_text, tail_text);
	in[0] = mem(whole_text);
	out = open_memstream(&lines, &len);
	CHECK(in[0] && out);
	if (!in[0] || !out)
		return;
	CHECK_INT_EQ(kallsyms_load_streams(in, 1, out, &whole), 0);
	fclose(in[0]);
	fclose(out);
	/* Text lines of the core with an address: not the data symbol, not
	 * the zero one, no module. */
	CHECK(lines && !strstr(lines, "some_data") && !strstr(lines, "fixed_percpu") &&
	      !strstr(lines, "mod_") && strstr(lines, "startup_alias") && strstr(lines, "f8"));
	in[0] = mem(lines);
	in[1] = mem(tail_text);
	CHECK_INT_EQ(kallsyms_load_streams(in, 2, NULL, &again), 0);
	fclose(in[0]);
	fclose(in[1]);
	CHECK(whole && again && same(whole, again));

	/* Saved and read back, merged with the rest. */
	in[0] = mem(lines);
	CHECK_INT_EQ(kallsyms_load_streams(in, 1, NULL, &core), 0);
	fclose(in[0]);
	snprintf(path, sizeof(path), "%s/saved", dir);
	out = fopen(path, "w");
	CHECK(out && core);
	if (!out || !core)
		goto out;
	CHECK_INT_EQ(kallsyms_save(core, out), 0);
	fclose(out);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && !fstat(fd, &st));
	CHECK_INT_EQ(kallsyms_load_saved(fd, (size_t)st.st_size, &saved), 0);
	close(fd);
	CHECK(saved && same(core, saved));
	in[0] = mem(tail_text);
	CHECK_INT_EQ(kallsyms_load_streams(in, 1, NULL, &tail), 0);
	fclose(in[0]);
	if (saved && tail) {
		CHECK_INT_EQ(kallsyms_merge(saved, tail, &merged), 0);
		CHECK(merged && same(whole, merged));
		/* Which alias a whole file keeps at an address in both tables is
		 * not known from them. */
		kallsyms_free(merged);
		merged = NULL;
		CHECK_INT_EQ(kallsyms_merge(saved, saved, &merged), -EEXIST);
		CHECK(!merged);
	}
out:
	free(lines);
	kallsyms_free(whole);
	kallsyms_free(again);
	kallsyms_free(core);
	kallsyms_free(saved);
	kallsyms_free(tail);
	kallsyms_free(merged);
}

static int load_saved_bytes(const char *path, const void *data, size_t len)
{
	struct kallsyms *ks = NULL;
	int fd, err;

	write_file(path, data, len, 0600);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	err = kallsyms_load_saved(fd, len, &ks);
	close(fd);
	kallsyms_free(ks);
	return err;
}

/* Saved tables that are not what kallsyms_save writes. */
static void test_bad_saved(const char *dir)
{
	/* header: magic, n = 2, names_len = 6; addrs; offs; names "a\0bcd\0" */
	struct {
		char magic[8];
		uint64_t n, names_len;
		uint64_t addrs[2];
		uint32_t offs[2];
		char names[6];
	} __attribute__((packed))
	good = { "EPKSYM1", 2, 6, { 0x1000, 0x2000 }, { 0, 2 }, "a\0bcd" },
	b;
	char path[256], big[sizeof(good) + 1];

	snprintf(path, sizeof(path), "%s/bad_saved", dir);
	CHECK_INT_EQ(load_saved_bytes(path, &good, sizeof(good)), 0);
	CHECK_INT_EQ(load_saved_bytes(path, &good, 10), -EINVAL); /* cut in the header */
	CHECK_INT_EQ(load_saved_bytes(path, &good, sizeof(good) - 1), -EINVAL);
	memcpy(big, &good, sizeof(good));
	big[sizeof(good)] = 'x';
	CHECK_INT_EQ(load_saved_bytes(path, big, sizeof(big)), -EINVAL); /* trailing byte */
	b = good;
	b.magic[0] = 'X';
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
	b = good;
	b.addrs[1] = 0x1000; /* not ascending */
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
	b = good;
	b.addrs[0] = 0; /* address 0 */
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
	b = good;
	b.offs[1] = 6; /* past the names */
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
	b = good;
	b.offs[1] = 1; /* an empty name */
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
	b = good;
	b.names[5] = 'e'; /* the last name not terminated */
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
	b = good;
	b.n = 1u << 30; /* sizes that do not add up */
	CHECK_INT_EQ(load_saved_bytes(path, &b, sizeof(b)), -EINVAL);
}

static void test_sample(void)
{
	struct kallsyms *core = NULL;
	FILE *in = mem(core_text);
	char many[2048] = "", line[128];

	CHECK(in != NULL);
	if (!in)
		return;
	CHECK_INT_EQ(kallsyms_load_streams(&in, 1, NULL, &core), 0);
	fclose(in);
	if (!core)
		return;
	/* The iterator's sample: every text line, aliases included. */
	for (int i = 0; i <= 8; i++) {
		snprintf(line, sizeof(line), "C ffffffff81000%x00 T f%d\n", i, i);
		strcat(many, line);
	}
	strcat(many, "C ffffffff81000000 t startup_alias\n");
	CHECK(ksym_cache_sample_ok(core, many, strlen(many)));
	/* Fewer than 8: proves too little. */
	CHECK(!ksym_cache_sample_ok(core, many, strlen("C ffffffff81000000 T f0\n") * 3));
	/* kptr_restrict: zeros. */
	{
		char zeros[sizeof(many)];

		memcpy(zeros, many, sizeof(many));
		memcpy(zeros + 2, "0000000000000000", 16);
		CHECK(!ksym_cache_sample_ok(core, zeros, strlen(zeros)));
	}
	/* Another layout: an address the table does not have. */
	{
		char moved[2048];

		snprintf(moved, sizeof(moved), "%sC ffffffff81000010 T f0\n", many);
		CHECK(!ksym_cache_sample_ok(core, moved, strlen(moved)));
		snprintf(moved, sizeof(moved), "%sfoo\n", many); /* not a sample line */
		CHECK(!ksym_cache_sample_ok(core, moved, strlen(moved)));
		snprintf(moved, sizeof(moved), "%sC zz T f0\n", many);
		CHECK(!ksym_cache_sample_ok(core, moved, strlen(moved)));
	}
	CHECK(!ksym_cache_sample_ok(core, "", 0));
	kallsyms_free(core);
}

/* The first lines of /proc/kallsyms against a saved core table
 * (ksym_cache_load_core): per-CPU and data lines pass over, text lines
 * must be in the table; a cut last line is not judged. */
static void test_head(void)
{
	struct kallsyms *core = NULL;
	FILE *in = mem(core_text);
	char head[4096] = "0000000000000000 A fixed_percpu_data\n", line[128];

	CHECK(in != NULL);
	if (!in)
		return;
	CHECK_INT_EQ(kallsyms_load_streams(&in, 1, NULL, &core), 0);
	fclose(in);
	if (!core)
		return;
	for (int i = 0; i <= 8; i++) {
		snprintf(line, sizeof(line), "ffffffff81000%x00 T f%d\n", i, i);
		strcat(head, line);
		strcat(head, "ffffffff82000000 D some_data\n");
	}
	CHECK(ksym_cache_head_ok(core, head, strlen(head)));
	/* Cut in the middle of a line: that line is left out. */
	CHECK(ksym_cache_head_ok(core, head, strlen(head) - 3));
	/* Fewer than 8 text lines. */
	CHECK(!ksym_cache_head_ok(core, head, 200));
	{
		char bad[sizeof(head) + 128];

		/* A text symbol at an address the table lacks: another kernel. */
		snprintf(bad, sizeof(bad), "%sffffffff81000010 t moved\n", head);
		CHECK(!ksym_cache_head_ok(core, bad, strlen(bad)));
		/* kptr_restrict: every address zero. */
		snprintf(bad, sizeof(bad), "%s", head);
		for (char *p = bad; (p = strstr(p, "ffffffff81000")); p++)
			memcpy(p, "0000000000000000", 16);
		CHECK(!ksym_cache_head_ok(core, bad, strlen(bad)));
		/* A module's text line (tab, [module]) is not the core's. */
		snprintf(bad, sizeof(bad), "%sffffffffc0000000 t modfn\t[mod]\n", head);
		CHECK(ksym_cache_head_ok(core, bad, strlen(bad)));
	}
	CHECK(!ksym_cache_head_ok(core, "", 0));
	CHECK(!ksym_cache_head_ok(core, "zz\n\n\n", 5));
	kallsyms_free(core);
}

/* A full load writes this boot's table (0600) and removes other boots';
 * a file that shows zeros writes nothing; ksym_cache_load refuses what it
 * cannot trust before it reads any iterator. */
static void test_files(const char *dir)
{
	static const char zero_text[] = "0000000000000000 T _stext\n0000000000000000 T f1\n";
	char src[256], zero[256], path[512], other[512];
	struct kallsyms *ks = NULL, *core = NULL;
	const char *name = boot_name();
	struct stat st;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	FILE *in;

	CHECK(dfd >= 0);
	if (dfd < 0)
		return;
	snprintf(src, sizeof(src), "%s/kallsyms", dir);
	snprintf(zero, sizeof(zero), "%s/kallsyms_zero", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(other, sizeof(other), "%s/kallsyms-another-boot", dir);
	write_file(src, core_text, strlen(core_text), 0600);
	write_file(zero, zero_text, strlen(zero_text), 0600);
	write_file(other, "x", 1, 0600);
	CHECK(!ksym_cache_present(dfd));

	CHECK_INT_EQ(ksym_cache_full_load(dfd, zero, &ks), 0);
	CHECK(ks && kallsyms_restricted(ks));
	kallsyms_free(ks);
	CHECK(stat(path, &st) != 0); /* zeros: nothing written */

	CHECK_INT_EQ(ksym_cache_full_load(dfd, src, &ks), 0);
	CHECK(ks && kallsyms_count(ks) == 9);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(stat(other, &st) != 0); /* another boot's: removed */
	CHECK(ksym_cache_present(dfd));
	in = mem(core_text);
	if (in && !kallsyms_load_streams(&in, 1, NULL, &core)) {
		int fd = open(path, O_RDONLY);
		struct kallsyms *saved = NULL;

		CHECK(fd >= 0 && !fstat(fd, &st));
		CHECK_INT_EQ(kallsyms_load_saved(fd, (size_t)st.st_size, &saved), 0);
		CHECK(saved && same(saved, core));
		kallsyms_free(saved);
		if (fd >= 0)
			close(fd);
	}
	if (in)
		fclose(in);
	kallsyms_free(core);
	kallsyms_free(ks);

	/* Refused before any iterator is read (the fd passed is not one). */
	ks = NULL;
	CHECK_INT_EQ(ksym_cache_load(dfd, -1, &ks), -ENOTSUP); /* no iterator */
	CHECK_INT_EQ(ksym_cache_load(-1, 0, &ks), -ENOENT);
	chmod(path, 0620);
	CHECK_INT_EQ(ksym_cache_load(dfd, 0, &ks), -EPERM);
	chmod(path, 0600);
	truncate(path, 100);
	CHECK_INT_EQ(ksym_cache_load(dfd, 0, &ks), -EINVAL);
	unlink(path);
	CHECK_INT_EQ(ksym_cache_load(dfd, 0, &ks), -ENOENT);
	CHECK(!symlink(src, path));
	CHECK_INT_EQ(ksym_cache_load(dfd, 0, &ks), -ELOOP);
	CHECK(!ks);
	unlink(path);
	unlink(src);
	unlink(zero);
	close(dfd);
}

int main(void)
{
	test_head();
	char dir[] = "/tmp/ep-ksym-cache-XXXXXX", path[256];

	if (!mkdtemp(dir))
		return 1;
	test_split_and_merge(dir);
	test_bad_saved(dir);
	test_sample();
	test_files(dir);
	snprintf(path, sizeof(path), "%s/saved", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bad_saved", dir);
	unlink(path);
	rmdir(dir);
	return check_report("test_ksym_cache");
}
