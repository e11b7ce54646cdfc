// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The per-process uprobe bookkeeping shared by the probes, cycles and alloc
 * modules (user/probes/uprobe_target.c): a mapped file is new once per
 * (dev, inode) whatever its path; records of the module's own type are
 * found by pid after the array moved, a pid is added once, the module's
 * part of each record is freed with it; links kept, unwound to a count and
 * handed over leave the record with none (NULL links here: a real one
 * needs a loaded program, which the modules' BPF tests attach); a maps file
 * lists its executable files once each, bad lines and all, and a process
 * without one is gone. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "probes/uprobe_discovery.h"
#include "probes/uprobe_target.h"

/* A module's record: its own fields around the shared part. */
struct rec {
	char tag[3];
	struct uprobe_target ut;
	uint32_t pid;
	uint32_t seq;
	char *owned;
};

static size_t nfini;

static void fini_rec(void *p)
{
	struct rec *r = p;

	free(r->owned);
	nfini++;
}

static void test_seen(void)
{
	struct uprobe_target t = { 0 };
	struct ud_file a = { .dev = 8, .inode = 100, .path = "/usr/lib/libc.so.6" };
	struct ud_file a_again = { .dev = 8, .inode = 100, .path = "/lib/libc.so.6" };
	struct ud_file other_dev = { .dev = 9, .inode = 100, .path = "/usr/lib/libc.so.6" };
	struct ud_file other_ino = { .dev = 8, .inode = 101, .path = "/usr/lib/libc.so.6" };

	CHECK(!uprobe_target_seen(&t, &a));
	CHECK(uprobe_target_seen(&t, &a));
	CHECK(uprobe_target_seen(&t, &a_again));
	CHECK(!uprobe_target_seen(&t, &other_dev));
	CHECK(!uprobe_target_seen(&t, &other_ino));
	CHECK(uprobe_target_seen(&t, &other_dev));
	CHECK_INT_EQ(t.nseen, 3);
	/* Many files: each new once. */
	for (uint64_t i = 0; i < 1000; i++) {
		struct ud_file f = { .dev = 1, .inode = i, .path = "x" };

		CHECK(!uprobe_target_seen(&t, &f));
		CHECK(uprobe_target_seen(&t, &f));
	}
	CHECK_INT_EQ(t.nseen, 1003);
	uprobe_target_free(&t);
	CHECK(t.nseen == 0 && !t.seen);
}

static void test_links(void)
{
	struct uprobe_target t = { 0 };
	struct link_list out = { 0 };

	for (int i = 0; i < 5; i++)
		CHECK_INT_EQ(uprobe_target_keep(&t, NULL), 0);
	CHECK_INT_EQ(t.nlinks, 5);
	/* A probe that failed halfway: back to the count before it. */
	uprobe_target_unwind(&t, 3);
	CHECK_INT_EQ(t.nlinks, 3);
	uprobe_target_unwind(&t, 4);
	CHECK_INT_EQ(t.nlinks, 3);
	uprobe_target_take_links(&t, &out);
	CHECK_INT_EQ(t.nlinks, 0);
	CHECK_INT_EQ(out.n, 0); /* NULL links are no links */
	CHECK_INT_EQ(uprobe_target_keep(&t, NULL), 0);
	uprobe_target_unwind(&t, 0);
	CHECK_INT_EQ(t.nlinks, 0);
	uprobe_target_free(&t);
	free(out.v);
}

static void test_set(void)
{
	enum { N = 20000 };
	struct uprobe_targets s;

	UPROBE_TARGETS_INIT(&s, struct rec, pid, ut);
	CHECK(uprobe_targets_find(&s, 1) == NULL);
	for (uint32_t i = 0; i < N; i++) {
		struct rec r = { .pid = 100 + 2 * i, .seq = i };

		r.owned = malloc(8);
		CHECK_INT_EQ(uprobe_targets_add(&s, &r), 0);
		if (i % 3 == 0) {
			/* The same pid again: not added (the caller keeps
			 * what it allocated). */
			struct rec again = { .pid = r.pid, .seq = N + i };

			CHECK_INT_EQ(uprobe_targets_add(&s, &again), 0);
		}
	}
	CHECK_INT_EQ(s.n, N);
	for (uint32_t i = 0; i < N; i += 37) {
		struct rec *r = uprobe_targets_find(&s, 100 + 2 * i);

		CHECK(r && r->seq == i && r->pid == 100 + 2 * i);
		CHECK(r == uprobe_targets_at(&s, i));
		CHECK(&r->ut == uprobe_targets_ut(&s, i));
		CHECK(uprobe_targets_find(&s, 101 + 2 * i) == NULL);
	}
	/* Every record's links: handed over, or destroyed. */
	for (size_t i = 0; i < s.n; i += 1000) {
		uprobe_target_keep(uprobe_targets_ut(&s, i), NULL);
		uprobe_target_keep(uprobe_targets_ut(&s, i), NULL);
	}
	{
		struct link_list out = { 0 };

		uprobe_targets_take_links(&s, &out);
		free(out.v);
	}
	for (size_t i = 0; i < s.n; i++)
		if (uprobe_targets_ut(&s, i)->nlinks)
			CHECK(!"a link left after take_links");
	uprobe_target_keep(uprobe_targets_ut(&s, 5), NULL);
	uprobe_targets_destroy_links(&s);
	CHECK_INT_EQ(uprobe_targets_ut(&s, 5)->nlinks, 0);
	nfini = 0;
	uprobe_targets_free(&s, fini_rec);
	CHECK_INT_EQ(nfini, N);
	CHECK(s.n == 0 && uprobe_targets_find(&s, 100) == NULL);
}

/* A maps file under a proc root of our own: its executable file mappings,
 * each file once, whatever else the file holds. */
static void test_files(void)
{
	char root[] = "/tmp/test_uprobe_target.XXXXXX", path[256];
	struct proc_maps pm;
	struct ud_file *files;
	size_t n;
	FILE *f;

	if (!mkdtemp(root)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/42", root);
	CHECK_INT_EQ(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/42/maps", root);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("00400000-00401000 r--p 00000000 08:02 173521 /usr/bin/app\n"
	      "00401000-00452000 r-xp 00001000 08:02 173521 /usr/bin/app\n"
	      "00452000-00453000 r-xp 00052000 08:02 173521 /usr/bin/app\n"
	      "not a maps line at all\n"
	      "7f0000000000-7f0000100000 r-xp 00000000 08:02 9 /usr/lib/libc.so.6\n"
	      "7f0000200000-7f0000300000 rw-p 00000000 00:00 0 \n"
	      "7f0000300000-7f0000301000 r-xp 00000000 00:05 7 /memfd:jit (deleted)\n"
	      "7ffff7fc0000-7ffff7fc1000 r-xp 00000000 00:00 0 [vdso]\n",
	      f);
	fclose(f);
	CHECK_INT_EQ(uprobe_target_files(root, 42, 1 << 20, 16, &pm, &files, &n), 0);
	CHECK_INT_EQ(n, 3);
	if (n == 3) {
		CHECK_STR_EQ(files[0].path, "/usr/bin/app");
		CHECK(files[0].dev == makedev(8, 2) && files[0].inode == 173521 &&
		      files[0].start == 0x401000 && files[0].pgoff == 0x1000);
		CHECK_STR_EQ(files[1].path, "/usr/lib/libc.so.6");
		CHECK(files[2].inode == 7 && files[2].deleted);
	}
	free(files);
	proc_maps_free(&pm);
	/* At most max_files. */
	CHECK_INT_EQ(uprobe_target_files(root, 42, 1 << 20, 1, &pm, &files, &n), 0);
	CHECK_INT_EQ(n, 1);
	free(files);
	proc_maps_free(&pm);
	/* Larger than allowed: nothing listed. */
	CHECK_INT_EQ(uprobe_target_files(root, 42, 64, 16, &pm, &files, &n), -EFBIG);
	CHECK(!files && !n);
	/* No such process: gone. */
	CHECK_INT_EQ(uprobe_target_files(root, 43, 1 << 20, 16, &pm, &files, &n), -ENOENT);
	CHECK(!files && !n);
	unlink(path);
	snprintf(path, sizeof(path), "%s/42", root);
	rmdir(path);
	rmdir(root);
	/* Our own maps: this test's executable is among the files. */
	CHECK_INT_EQ(uprobe_target_files("/proc", (uint32_t)getpid(), 64 << 20, 4096, &pm, &files,
					 &n),
		     0);
	CHECK(n >= 2);
	free(files);
	proc_maps_free(&pm);
}

int main(void)
{
	test_seen();
	test_files();
	test_links();
	test_set();
	return check_report("test_uprobe_target");
}
