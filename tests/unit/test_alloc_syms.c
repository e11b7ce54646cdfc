// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Which allocator functions a file gets probed on (alloc_syms.h): on
 * synthetic symbol sets (glibc, tcmalloc's aliases, jemalloc's own API,
 * prefixed builds, mimalloc), and on a built ELF library exporting
 * prefixed names (tests/targets/prefixed_alloc_lib.c) read by the same
 * discovery as --alloc; the mmap wrappers a mapping's stack starts in. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/alloc_syms.h"
#include "check.h"
#include "probes/uprobe_discovery.h"

#define MAXS 64

static int idx(const char *name)
{
	for (size_t i = 0; i < alloc_nsyms; i++)
		if (!strcmp(alloc_syms[i].name, name))
			return (int)i;
	return -1;
}

/* Offsets from "name=off" pairs; returns the picked names, space-separated
 * in table order. */
static const char *pick(const char *const *defs, size_t n)
{
	static char out[1024];
	uint64_t off[MAXS] = { 0 };
	bool probe[MAXS];
	size_t k;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char name[64];
		unsigned long long o;
		int j;

		CHECK(sscanf(defs[i], "%63[^=]=%llx", name, &o) == 2);
		j = idx(name);
		CHECK(j >= 0);
		if (j >= 0)
			off[j] = o;
	}
	k = alloc_pick_syms(off, probe);
	for (size_t i = 0; i < alloc_nsyms; i++)
		if (probe[i]) {
			if (out[0])
				strcat(out, " ");
			strcat(out, alloc_syms[i].name);
			k--;
		}
	CHECK(k == 0);
	return out;
}

#define PICK(...)                                  \
	pick((const char *const[]){ __VA_ARGS__ }, \
	     sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static void test_table(void)
{
	CHECK(alloc_nsyms <= MAXS);
	CHECK(!strcmp(alloc_syms[0].name, "malloc") && !alloc_syms[0].prefixed);
	for (size_t i = 0; i < alloc_nsyms; i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(alloc_syms[i].name, alloc_syms[j].name));
}

static void test_pick(void)
{
	/* glibc: memalign and aligned_alloc one function. */
	CHECK_STR_EQ(PICK("malloc=100", "calloc=200", "realloc=300", "memalign=400",
			  "aligned_alloc=400", "posix_memalign=500", "free=600"),
		     "malloc calloc realloc memalign posix_memalign free");
	/* tcmalloc: tc_* are malloc's aliases; operator new is its own. */
	CHECK_STR_EQ(PICK("malloc=100", "tc_malloc=100", "free=200", "tc_free=200", "_Znwm=300",
			  "tc_calloc=400", "_ZdlPv=200"),
		     "malloc free _Znwm");
	/* Debian's jemalloc: malloc and its own API, new and delete. */
	CHECK_STR_EQ(PICK("malloc=10", "free=20", "mallocx=30", "rallocx=40", "dallocx=50",
			  "sdallocx=60", "_Znwm=70", "_ZdlPvm=80"),
		     "malloc free mallocx rallocx dallocx sdallocx _Znwm _ZdlPvm");
	/* Prefixed jemalloc beside glibc: a file without malloc. */
	CHECK_STR_EQ(PICK("je_malloc=10", "je_free=20", "je_mallocx=30", "je_sdallocx=40"),
		     "je_malloc je_free je_mallocx je_sdallocx");
	/* mimalloc linked as an API (no override). */
	CHECK_STR_EQ(
		PICK("mi_malloc=10", "mi_zalloc=20", "mi_calloc=30", "mi_mallocn=40",
		     "mi_realloc=50", "mi_malloc_aligned=60", "mi_free=70"),
		"mi_malloc mi_zalloc mi_calloc mi_mallocn mi_realloc mi_malloc_aligned mi_free");
	/* mimalloc overriding malloc: its mi_* are malloc's callees. */
	CHECK_STR_EQ(PICK("malloc=10", "mi_malloc=20", "free=30", "mi_free=30"), "malloc free");
	/* libstdc++: operator new without malloc (it calls the libc's). */
	CHECK_STR_EQ(PICK("_Znwm=10", "_ZdlPv=20"), "");
	CHECK_STR_EQ(PICK("calloc=10"), "");
	/* Kinds: the size or pointer in the right argument. */
	CHECK(alloc_syms[idx("mi_malloc_aligned")].kind == EP_AK_MALLOC);
	CHECK(alloc_syms[idx("mi_mallocn")].kind == EP_AK_CALLOC);
	CHECK(alloc_syms[idx("je_rallocx")].kind == EP_AK_REALLOC);
	CHECK(alloc_syms[idx("sdallocx")].kind == EP_AK_NONE);
	CHECK(alloc_syms[idx("_ZnwmSt11align_val_t")].kind == EP_AK_MALLOC);
}

/* The ELF: found by ud_find_functions under these names, then picked. */
static void test_elf(void)
{
	const char *dir = getenv("EP_TARGETS_DIR");
	const char *names[MAXS];
	uint64_t off[MAXS] = { 0 };
	bool probe[MAXS];
	char path[512];
	int fd, n;

	if (!dir) {
		fprintf(stderr, "test_alloc_syms: EP_TARGETS_DIR not set\n");
		CHECK(!getenv("CI"));
		return;
	}
	snprintf(path, sizeof(path), "%s/prefixed_alloc_lib", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* Cross builds (qemu-user) build no targets: the library is read in
	 * the native run. */
	if (fd < 0 && getenv("EP_EMULATED")) {
		fprintf(stderr, "test_alloc_syms: no %s in a cross build: skipped\n", path);
		return;
	}
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	for (size_t i = 0; i < alloc_nsyms; i++)
		names[i] = alloc_syms[i].name;
	n = ud_find_functions(fd, names, alloc_nsyms, off);
	close(fd);
	/* je_malloc, je_calloc, je_mallocx, je_free, mi_free, mi_zalloc,
	 * mi_malloc_aligned. */
	CHECK_INT_EQ(n, 7);
	CHECK(off[idx("malloc")] == 0);
	CHECK(off[idx("je_free")] && off[idx("je_free")] == off[idx("mi_free")]);
	CHECK_INT_EQ((int)alloc_pick_syms(off, probe), 6);
	CHECK(probe[idx("je_malloc")] && probe[idx("je_calloc")] && probe[idx("je_mallocx")]);
	CHECK(probe[idx("mi_zalloc")] && probe[idx("mi_malloc_aligned")]);
	CHECK(probe[idx("je_free")] != probe[idx("mi_free")]);

	/* Bad input: not an ELF file. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(ud_find_functions(fd, names, alloc_nsyms, off) < 0);
		close(fd);
	}
}

/* jemalloc's operator new[] is "jmp operator new": probing both would
 * count each new[] twice. */
static void test_tail_wrappers(void)
{
	const uint8_t jmp32[] = { 0xe9, 0x1b, 0xff, 0xff, 0xff }; /* at adf10: jmp ade30 */
	const uint8_t jmp8[] = { 0xeb, 0x10 };
	const uint8_t push[] = { 0x41, 0x54, 0x55 };
	uint64_t off[MAXS] = { 0 }, jump[MAXS] = { 0 };
	bool probe[MAXS];

	CHECK(alloc_tail_jump_x86(jmp32, sizeof(jmp32), 0xadf10) == 0xade30);
	CHECK(alloc_tail_jump_x86(jmp32, 4, 0xadf10) == 0); /* truncated */
	CHECK(alloc_tail_jump_x86(jmp8, sizeof(jmp8), 0x100) == 0x112);
	CHECK(alloc_tail_jump_x86(push, sizeof(push), 0x100) == 0);
	CHECK(alloc_tail_jump_x86(push, 0, 0x100) == 0);

	off[idx("malloc")] = 0x23910;
	off[idx("free")] = 0x27c60;
	off[idx("_Znwm")] = 0xade30;
	off[idx("_Znam")] = 0xadf10;
	off[idx("_ZdaPv")] = 0xae0e0;
	CHECK_INT_EQ((int)alloc_pick_syms(off, probe), 5);
	jump[idx("_Znam")] = 0xade30;  /* to _Znwm, probed: dropped */
	jump[idx("_ZdaPv")] = 0x90c0;  /* to free@plt, not a probed offset: kept */
	jump[idx("malloc")] = 0x50000; /* to code not probed: kept */
	CHECK_INT_EQ((int)alloc_drop_tail_wrappers(off, jump, probe), 4);
	CHECK(!probe[idx("_Znam")] && probe[idx("_Znwm")] && probe[idx("_ZdaPv")] &&
	      probe[idx("malloc")]);
}

static void test_mmap_wrappers(void)
{
	CHECK(alloc_is_mmap_wrapper("mmap64"));
	CHECK(alloc_is_mmap_wrapper("__mmap64"));
	CHECK(alloc_is_mmap_wrapper("syscall"));
	CHECK(!alloc_is_mmap_wrapper("map_anon"));
	CHECK(!alloc_is_mmap_wrapper("mmap_region"));
	CHECK(!alloc_is_mmap_wrapper(""));
	CHECK(!alloc_is_mmap_wrapper(NULL));
}

int main(void)
{
	test_table();
	test_pick();
	test_elf();
	test_tail_wrappers();
	test_mmap_wrappers();
	return check_report("test_alloc_syms");
}
