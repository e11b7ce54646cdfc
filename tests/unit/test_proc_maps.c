// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/maps parser: well-formed lines, the target-controlled path field
 * (spaces, " (deleted)"), and malformed/hostile input. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proc/proc_maps.h"

static void test_good_lines(void)
{
	struct proc_map m;

	CHECK_INT_EQ(
		proc_maps_parse_line("55d0c0a00000-55d0c0a01000 r-xp 00001000 fd:01 1234567    "
				     "/usr/bin/my prog\n",
				     &m),
		0);
	CHECK_INT_EQ(m.start, 0x55d0c0a00000ull);
	CHECK_INT_EQ(m.end, 0x55d0c0a01000ull);
	CHECK_INT_EQ(m.pgoff, 0x1000);
	CHECK_INT_EQ(m.dev_major, 0xfd);
	CHECK_INT_EQ(m.dev_minor, 1);
	CHECK_INT_EQ(m.inode, 1234567);
	CHECK_STR_EQ(m.perms, "r-xp");
	CHECK_STR_EQ(m.path, "/usr/bin/my prog");
	CHECK_INT_EQ(m.kind, PROC_MAP_FILE);
	CHECK(!m.deleted);
	free(m.path);

	CHECK_INT_EQ(proc_maps_parse_line("7f0000000000-7f0000002000 r-xp 00000000 08:02 77 "
					  "/tmp/lib x.so (deleted)",
					  &m),
		     0);
	CHECK(m.deleted);
	CHECK_STR_EQ(m.path, "/tmp/lib x.so");
	CHECK_STR_EQ(proc_maps_basename(m.path), "lib x.so");
	free(m.path);

	CHECK_INT_EQ(proc_maps_parse_line("7f0000000000-7f0000002000 rw-p 00000000 00:00 0", &m),
		     0);
	CHECK_INT_EQ(m.kind, PROC_MAP_ANON);
	CHECK_STR_EQ(m.path, "");
	free(m.path);
	CHECK_INT_EQ(proc_maps_parse_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0  [vdso]", &m),
		     0);
	CHECK_INT_EQ(m.kind, PROC_MAP_VDSO);
	free(m.path);
	CHECK_INT_EQ(proc_maps_parse_line("1000-2000 rw-p 00000000 00:00 0 [heap]", &m), 0);
	CHECK_INT_EQ(m.kind, PROC_MAP_ANON);
	free(m.path);
	CHECK_INT_EQ(proc_maps_parse_line("1000-2000 r--p 00000000 00:00 0 [vvar]", &m), 0);
	CHECK_INT_EQ(m.kind, PROC_MAP_OTHER);
	free(m.path);
	/* A path without device and inode cannot be a real file. */
	CHECK_INT_EQ(proc_maps_parse_line("1000-2000 r-xp 00000000 00:00 0 /memfd:x", &m), 0);
	CHECK_INT_EQ(m.kind, PROC_MAP_OTHER);
	free(m.path);
}

static void test_bad_lines(void)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"1000 r-xp 00000000 00:00 0",
		"2000-1000 r-xp 00000000 00:00 0 /x",			    /* end before start */
		"1000-1000 r-xp 00000000 00:00 0 /x",			    /* empty */
		"1000-2000 rwxz 00000000 00:00 0 /x",			    /* bad perms */
		"1000-2000 r-x 00000000 00:00 0 /x",			    /* short perms */
		"1000-2000 r-xp zz 00:00 0 /x",				    /* bad offset */
		"1000-2000 r-xp 00000000 0000 0 /x",			    /* bad device */
		"1000-2000 r-xp 00000000 00:00 x /x",			    /* bad inode */
		"1000-2000 r-xp 00000000 00:00 99999999999999999999999 /x", /* inode overflow */
		"11112222333344445-11112222333344446 r-xp 0 00:00 0 /x",    /* 17 hex digits */
		"1000-2000 r-xp ffffffffffffffff 00:00 1 /x",		    /* offset wraps */
		"1000-2000 r-xp 00000000 fffffffff:00 1 /x",		    /* major > 32 bit */
		"-2000 r-xp 00000000 00:00 0",
		"1000-2000",
		"1000-2000 ",
	};
	struct proc_map m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = proc_maps_parse_line(bad[i], &m);

		if (r != -EINVAL)
			fprintf(stderr, "accepted bad line %zu: %s\n", i, bad[i]);
		CHECK_INT_EQ(r, -EINVAL);
	}
}

static void test_buffer(void)
{
	/* Unsorted/overlapping entries and an embedded NUL are dropped, the rest kept. */
	static const char buf[] = "1000-2000 r--p 00000000 08:01 5 /lib/a.so\n"
				  "not a maps line at all\n"
				  "2000-3000 r-xp 00001000 08:01 5 /lib/a.so\n"
				  "2800-2900 r-xp 00000000 08:01 6 /lib/overlap.so\n"
				  "\n"
				  "5000-6000 rw-p 00000000 00:00 0 \0hidden\n"
				  "7000-8000 rw-p 00000000 00:00 0\n"
				  "9000-a000 r-xp 00000000 08:01 7 /lib/last.so"; /* no newline */
	struct proc_maps pm;
	const struct proc_map *m;

	CHECK_INT_EQ(proc_maps_parse_buf(buf, sizeof(buf) - 1, 1000, &pm), 0);
	CHECK_INT_EQ(pm.n, 4);
	CHECK_INT_EQ(pm.bad_lines, 3);
	m = proc_maps_find(&pm, 0x2fff);
	CHECK(m && m->pgoff == 0x1000);
	CHECK(proc_maps_find(&pm, 0x3000) == NULL);
	CHECK(proc_maps_find(&pm, 0xfff) == NULL);
	m = proc_maps_find(&pm, 0x9000);
	CHECK(m && strcmp(m->path, "/lib/last.so") == 0);
	proc_maps_free(&pm);

	/* Entry cap: a huge maps file cannot make us allocate without bound. */
	CHECK_INT_EQ(proc_maps_parse_buf(buf, sizeof(buf) - 1, 2, &pm), 0);
	CHECK_INT_EQ(pm.n, 2);
	proc_maps_free(&pm);
}

static void test_read_file(void)
{
	char *buf;
	size_t len;

	CHECK(proc_maps_read_file("/proc/self/maps", 64u << 20, &buf, &len) == 0);
	if (buf) {
		struct proc_maps pm;

		CHECK(len > 0 && strlen(buf) == len);
		CHECK_INT_EQ(proc_maps_parse_buf(buf, len, 100000, &pm), 0);
		/* Our own code must be found in a file mapping. */
		CHECK(pm.bad_lines == 0);
		{
			const struct proc_map *m =
				proc_maps_find(&pm, (uint64_t)(uintptr_t)&test_read_file);

			CHECK(m && m->kind == PROC_MAP_FILE && strchr(m->perms, 'x'));
		}
		proc_maps_free(&pm);
		free(buf);
	}
	CHECK_INT_EQ(proc_maps_read_file("/nonexistent/maps", 1024, &buf, &len), -ENOENT);
	CHECK_INT_EQ(proc_maps_read_file("/proc/self/maps", 16, &buf, &len), -EFBIG);
}

/* Grouping the mappings of one loaded ELF file into one module. */
static void test_file_group(void)
{
	/* Debian's /usr/bin/node (non-PIE): a one-page hole between the second
	 * and third segments, .bss and [heap] after .data; then libc, a second
	 * instance of a file mapped from offset 0, a file whose offsets go
	 * backwards, and one mapping separated by more anonymous entries than
	 * a single image has. */
	static const char buf[] =
		"00400000-00b6f000 r--p 00000000 fe:00 247823 /usr/bin/node\n"
		"00b6f000-00b71000 r-xp 0076f000 fe:00 247823 /usr/bin/node\n"
		"00b72000-025fe000 r-xp 00772000 fe:00 247823 /usr/bin/node\n"
		"02600000-02601000 r-xp 02200000 fe:00 247823 /usr/bin/node\n"
		"02601000-0563a000 r--p 02201000 fe:00 247823 /usr/bin/node\n"
		"0563a000-0563e000 r--p 05239000 fe:00 247823 /usr/bin/node\n"
		"0563e000-0565d000 rw-p 0523d000 fe:00 247823 /usr/bin/node\n"
		"0565d000-05689000 rw-p 00000000 00:00 0\n"
		"42da0000-43063000 rw-p 00000000 00:00 0 [heap]\n"
		"7f0000000000-7f0000028000 r--p 00000000 fe:00 11 /usr/lib/libc.so.6\n"
		"7f0000028000-7f000017d000 r-xp 00028000 fe:00 11 /usr/lib/libc.so.6\n"
		"7f0000200000-7f0000201000 r--p 00000000 fe:00 11 /usr/lib/libc.so.6\n"
		"7f0000300000-7f0000301000 r--p 00000000 fe:00 12 /x/a.so\n"
		"7f0000301000-7f0000302000 r-xp 00003000 fe:00 12 /x/a.so\n"
		"7f0000302000-7f0000303000 r--p 00001000 fe:00 12 /x/a.so\n"
		"7f0000400000-7f0000401000 r--p 00000000 fe:00 13 /x/b.so\n"
		"7f0000410000-7f0000411000 rw-p 00000000 00:00 0\n"
		"7f0000420000-7f0000421000 rw-p 00000000 00:00 0\n"
		"7f0000430000-7f0000431000 rw-p 00000000 00:00 0\n"
		"7f0000440000-7f0000441000 rw-p 00000000 00:00 0\n"
		"7f0000450000-7f0000451000 rw-p 00000000 00:00 0\n"
		"7f0000460000-7f0000461000 r-xp 00001000 fe:00 13 /x/b.so\n"
		"7f0000500000-7f0000501000 r--p 00000000 fe:00 14 /x/c.so\n"
		"7f0000501000-7f0000502000 r-xp 00001000 fe:01 14 /x/c.so\n";
	struct proc_maps pm;
	size_t last = 99;

	CHECK_INT_EQ(proc_maps_parse_buf(buf, sizeof(buf) - 1, 1000, &pm), 0);
	CHECK_INT_EQ(pm.n, 24);
	/* node: every segment, across the hole, up to .data's end. */
	CHECK_INT_EQ(proc_maps_file_group(&pm, 0, &last), 0x565d000);
	CHECK_INT_EQ(last, 6);
	/* libc: the third entry maps offset 0 again, a second instance. */
	CHECK_INT_EQ(proc_maps_file_group(&pm, 9, &last), 0x7f000017d000ull);
	CHECK_INT_EQ(last, 10);
	CHECK_INT_EQ(proc_maps_file_group(&pm, 11, &last), 0x7f0000201000ull);
	CHECK_INT_EQ(last, 11);
	/* a.so: offsets going backwards end the group. */
	CHECK_INT_EQ(proc_maps_file_group(&pm, 12, &last), 0x7f0000302000ull);
	CHECK_INT_EQ(last, 13);
	/* b.so: five anonymous entries in between are too many. */
	CHECK_INT_EQ(proc_maps_file_group(&pm, 15, &last), 0x7f0000401000ull);
	CHECK_INT_EQ(last, 15);
	/* V8's copy of node's builtins: the loaded image's .text covers it. */
	{
		static const char nb[] =
			"00400000-00b6f000 r--p 00000000 fe:00 247823 /usr/bin/node\n"
			"00b72000-025fe000 r-xp 00772000 fe:00 247823 /usr/bin/node\n"
			"7efeeb600000-7efeeb792000 r-xp 014c4000 fe:00 247823 /usr/bin/node\n"
			"7f0000000000-7f0000001000 r-xp 014c4000 fe:00 999 /usr/bin/other\n";
		struct proc_maps nm;
		const struct proc_map *a;

		CHECK_INT_EQ(proc_maps_parse_buf(nb, sizeof(nb) - 1, 1000, &nm), 0);
		a = proc_maps_find_alias(&nm, &nm.maps[2], 0x14c608e);
		CHECK(a == &nm.maps[1]);
		/* Not covered by any other mapping of the file; another file. */
		CHECK(proc_maps_find_alias(&nm, &nm.maps[2], 0x21fe000) == NULL);
		CHECK(proc_maps_find_alias(&nm, &nm.maps[3], 0x14c4000) == NULL);
		proc_maps_free(&nm);
	}
	/* c.so: same path and inode on another device is another file. */
	CHECK_INT_EQ(proc_maps_file_group(&pm, 22, &last), 0x7f0000502000ull - 0x1000);
	CHECK_INT_EQ(last, 22);
	proc_maps_free(&pm);
}

int main(void)
{
	test_good_lines();
	test_file_group();
	test_bad_lines();
	test_buffer();
	test_read_file();
	return check_report("test_proc_maps");
}
