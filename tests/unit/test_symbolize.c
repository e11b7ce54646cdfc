// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End-to-end symbolizer test against a live process: tests/elf/symtarget (PIE)
 * linking libsymtest.so, plus copies of libsymdl.so dlopen'ed on request
 * after the first lookups (plain, stripped with build-id debuginfo, stripped
 * with .gnu_debuglink, stripped without debuginfo, deleted after loading).
 * Expected names come from the target's own function pointers. Also the
 * build-id cache shared across processes, and two builds of one path.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sym_target.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbolize.h"

/* kallsyms loaded on its own thread (symbolizer_preload_kernel): the first
 * lookup gets the same answer as a lazy load, a second preload is a no-op,
 * a symbolizer freed before any lookup joins the thread without leaking,
 * and an unreadable file still gives unresolved frames. */
static void test_kernel_preload(const char *tmpdir)
{
	struct symbolizer_opts o = { 0 };
	struct symbolizer *s;
	struct sym_result r;
	char path[1100], missing[1100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms.fake", tmpdir);
	snprintf(missing, sizeof(missing), "%s/no-kallsyms", tmpdir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("ffffffff81000000 T alpha_fn\nffffffff81000100 t beta_fn\n"
	      "ffffffff81000200 T gamma_fn\n",
	      f);
	fclose(f);
	o.kallsyms_path = path;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	CHECK_INT_EQ(symbolizer_preload_kernel(s), 0);
	CHECK_INT_EQ(symbolizer_preload_kernel(s), 0);
	CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffff81000110ull, &r), 0);
	CHECK_STR_EQ(r.name, "beta_fn");
	CHECK_INT_EQ(r.sym_offset, 0x10);
	CHECK(r.resolved);
	/* Loaded: another preload does not start a second thread. */
	CHECK_INT_EQ(symbolizer_preload_kernel(s), 0);
	CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffff81000004ull, &r), 0);
	CHECK_STR_EQ(r.name, "alpha_fn");
	symbolizer_free(s);

	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	CHECK_INT_EQ(symbolizer_preload_kernel(s), 0);
	symbolizer_free(s); /* never looked up: joined and freed */

	o.kallsyms_path = missing;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	CHECK_INT_EQ(symbolizer_preload_kernel(s), 0);
	CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffff81000004ull, &r), 0);
	CHECK(!r.resolved);
	CHECK_STR_EQ(r.module, "[kernel.kallsyms]");
	symbolizer_free(s);
	unlink(path);
}

static void test_kernel(void)
{
	struct symbolizer *s;
	struct sym_result r;
	char line[512];
	unsigned long long addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0 && (type == 'T' || type == 't') &&
		    !strchr(line, '['))
			break;
		addr = 0;
	}
	fclose(f);
	CHECK_INT_EQ(symbolizer_new(&s, NULL), 0);
	if (addr == 0) {
		/* kptr_restrict hides addresses (or no schedule symbol) */
		fprintf(stderr,
			"kernel check skipped: no address for schedule in /proc/kallsyms\n");
		CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffff81000000ull, &r), 0);
		CHECK(r.name != NULL);
	} else {
		CHECK_INT_EQ(symbolizer_kernel(s, addr + 4, &r), 0);
		CHECK_STR_EQ(r.name, "schedule");
		CHECK_STR_EQ(r.module, "[kernel.kallsyms]");
		CHECK_INT_EQ(r.sym_offset, 4);
		CHECK(r.resolved);
	}
	/* Repeated kernel lookups are cache hits; the rate is reported only. */
	{
		struct symbolizer_stats k0, k1;
		struct timespec t0, t1;
		const int n = 1000000;

		symbolizer_get_stats(s, &k0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++)
			symbolizer_kernel(s, addr + 4, &r);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		symbolizer_get_stats(s, &k1);
		CHECK_INT_EQ(k1.cache_hits - k0.cache_hits, n);
		if (addr)
			CHECK_STR_EQ(r.name, "schedule");
		fprintf(stderr, "cached kernel lookups: %.1f M/s\n",
			n /
				((double)(t1.tv_sec - t0.tv_sec) +
				 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) /
				1e6);
	}
	symbolizer_free(s);
}

/* Two processes of one PIE linking one library: after the first is
 * symbolized, the second gets the same names from the build-id cache,
 * without opening any ELF file for libdwfl. */
static void test_buildid_shared(const char *exe)
{
	static const char *const fns[] = {
		"symtarget_func_one", "symtarget_static_two",  "main",		"symtest_lib_alpha",
		"symtest_lib_beta",   "symtest_static_helper", "symtest_padded"
	};
	enum { NF = sizeof(fns) / sizeof(fns[0]) };
	struct symbolizer_opts o = { .reload_min_interval_ms = -1 };
	struct target a = { 0 }, b = { 0 };
	struct symbolizer_stats st0, st1;
	struct sym_result ra[NF + 1], rb;
	struct symbolizer *s;
	uint64_t pa, pb;

	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (!s)
		return;
	if (start_target(&a, exe) < 0 || start_target(&b, exe) < 0) {
		CHECK(!"cannot start two symtargets");
		goto out;
	}
	/* Mid-function addresses, and one no symbol covers (past the 1-byte
	 * symtest_padded): unresolved answers are shared too. */
	for (int i = 0; i <= NF; i++) {
		pa = i < NF ? val(&a, fns[i], 0) + (i & 1) : val(&a, "symtest_padded", 0) + 32;
		sym(s, a.pid, pa, &ra[i]);
		CHECK_INT_EQ(ra[i].resolved, i < NF);
		if (i < NF)
			CHECK_STR_EQ(ra[i].name, fns[i]);
	}
	symbolizer_get_stats(s, &st0);
	/* The PIE and libsymtest.so were read for the first process. */
	CHECK(st0.elf_opens >= 2);
	CHECK(st0.buildid_reads >= 2);
	for (int i = 0; i <= NF; i++) {
		pb = i < NF ? val(&b, fns[i], 0) + (i & 1) : val(&b, "symtest_padded", 0) + 32;
		pa = i < NF ? val(&a, fns[i], 0) + (i & 1) : val(&a, "symtest_padded", 0) + 32;
		/* Same file offsets, else the comparison says nothing. */
		CHECK_INT_EQ(file_offset(b.pid, pb), file_offset(a.pid, pa));
		sym(s, b.pid, pb, &rb);
		CHECK_STR_EQ(rb.name, ra[i].name);
		CHECK_STR_EQ(rb.module, ra[i].module);
		CHECK_INT_EQ(rb.offset, ra[i].offset);
		CHECK_INT_EQ(rb.sym_offset, ra[i].sym_offset);
		CHECK_INT_EQ(rb.resolved, ra[i].resolved);
	}
	symbolizer_get_stats(s, &st1);
	CHECK_INT_EQ(st1.buildid_hits - st0.buildid_hits, NF + 1);
	CHECK_INT_EQ(st1.elf_opens, st0.elf_opens);
	/* The second process's files have known identities: no note re-read. */
	CHECK_INT_EQ(st1.buildid_reads, st0.buildid_reads);
	fprintf(stderr, "build-id cache: %llu hits, %llu ELF opens, %llu notes read\n",
		(unsigned long long)st1.buildid_hits, (unsigned long long)st1.elf_opens,
		(unsigned long long)st1.buildid_reads);
out:
	stop_target(&a);
	stop_target(&b);
	symbolizer_free(s);
}

/* libsymdl_b.so is libsymdl.so with its static function renamed: same code
 * offsets, another build-id. Installed at one path in turn, the builds must
 * not share names; identical content at that path later must again. */
static void test_buildid_differs(const char *dir, const char *exe, const char *tmp)
{
	struct symbolizer_opts o = { .reload_min_interval_ms = -1 };
	char la[1100], lb[1100], same[1100], cmd[8192], ida[128], idb[128];
	struct target a = { 0 }, b = { 0 }, c = { 0 };
	struct symbolizer_stats st0, st1;
	struct symbolizer *s = NULL;
	struct sym_result r;
	uint64_t off_a = 0;

	snprintf(la, sizeof(la), "%s/libsymdl.so", dir);
	snprintf(lb, sizeof(lb), "%s/libsymdl_b.so", dir);
	snprintf(same, sizeof(same), "%s/libsame.so", tmp);
	CHECK(build_id(la, ida, sizeof(ida)) == 0);
	CHECK(build_id(lb, idb, sizeof(idb)) == 0);
	CHECK(strcmp(ida, idb) != 0);
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", la, same);
	if (!s || run(cmd) != 0 || start_target(&a, exe) < 0 || command(&a, "dlopen %s", same)) {
		CHECK(!"setup for build A");
		goto out;
	}
	check_name(s, a.pid, val(&a, "dl", 1), "symdl_hidden");
	check_name(s, a.pid, val(&a, "dl", 0) + 1, "symdl_func");
	off_a = file_offset(a.pid, val(&a, "dl", 1));

	/* Replaced by rename, as package managers do: a new inode. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.new' && mv '%s.new' '%s'", lb, same, same, same);
	if (run(cmd) != 0 || start_target(&b, exe) < 0 || command(&b, "dlopen %s", same)) {
		CHECK(!"setup for build B");
		goto out;
	}
	CHECK_INT_EQ(file_offset(b.pid, val(&b, "dl", 1)), off_a);
	symbolizer_get_stats(s, &st0);
	check_name(s, b.pid, val(&b, "dl", 1), "symdl_hidden_b");
	check_name(s, b.pid, val(&b, "dl", 0) + 1, "symdl_func");
	symbolizer_get_stats(s, &st1);
	CHECK_INT_EQ(st1.buildid_hits, st0.buildid_hits);
	CHECK(st1.elf_opens > st0.elf_opens);
	/* Both processes still answer for their own build. */
	check_name(s, a.pid, val(&a, "dl", 1), "symdl_hidden");
	stop_target(&b);

	/* Build A written over B's inode in place, with another mtime: the file
	 * identity changes although dev and inode do not, so its build-id is
	 * read again and matches A's cached names. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && touch -d @1000000000 '%s'", la, same, same);
	if (run(cmd) != 0 || start_target(&c, exe) < 0 || command(&c, "dlopen %s", same)) {
		CHECK(!"setup for build A again");
		goto out;
	}
	symbolizer_get_stats(s, &st0);
	sym(s, c.pid, val(&c, "dl", 1), &r);
	CHECK_STR_EQ(r.name, "symdl_hidden");
	CHECK_STR_EQ(r.module, same);
	symbolizer_get_stats(s, &st1);
	CHECK_INT_EQ(st1.buildid_hits - st0.buildid_hits, 1);
	CHECK_INT_EQ(st1.elf_opens, st0.elf_opens);
out:
	stop_target(&a);
	stop_target(&b);
	stop_target(&c);
	symbolizer_free(s);
}

/* A process symbolized before exec (the recorder sees a launched command
 * first as a fork of itself) must be symbolized against its new image right
 * after exec, well inside the maps-reload rate limit. */
static void test_exec(const char *exe)
{
	struct symbolizer *s = NULL;
	struct sym_result r;
	struct target t = { 0 };
	int go[2], to[2], from[2];
	char c;

	if (symbolizer_new(&s, NULL) || pipe(go) || pipe(to) || pipe(from)) {
		CHECK(!"setup");
		symbolizer_free(s);
		return;
	}
	t.pid = fork();
	if (t.pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(to[0]);
	close(from[1]);
	/* Before exec the child is this test program. */
	CHECK_INT_EQ(symbolizer_user(s, (uint32_t)t.pid, (uint64_t)(uintptr_t)&test_exec, &r), 0);
	CHECK_STR_EQ(r.name, "test_exec");
	CHECK(write(go[1], "g", 1) == 1);
	close(go[1]);
	t.in = fdopen(to[1], "w");
	t.out = fdopen(from[0], "r");
	CHECK(t.in && t.out && read_reply(&t) == 0);
	CHECK_INT_EQ(symbolizer_user(s, (uint32_t)t.pid, val(&t, "symtarget_func_one", 0), &r), 0);
	CHECK_STR_EQ(r.name, "symtarget_func_one");
	stop_target(&t);
	symbolizer_free(s);
}

int main(void)
{
	char dir[1024], exe[1100], lib[1100], tmp[] = "/tmp/ep-symtest-XXXXXX", cmd[32768];
	char p_plain[1100], p_bid[1100], p_link[1100], p_none[1100], p_del[1100], dbg[1100];
	char bid[128], perfdir[1100], pmpath[1200], dbgpath[1200];
	struct symbolizer *s = NULL, *s_nodbg = NULL;
	struct symbolizer_opts o = { 0 }, o_nodbg = { 0 };
	struct symbolizer_stats st0, st1;
	struct sym_result r;
	struct target t = { 0 };
	uint64_t fn1, st2, mainp, alpha, beta, helper, padded, a;
	const char *kept_name;
	bool is_root = geteuid() == 0;

	/* No debuginfod server: the local debuginfo search alone (below: a
	 * module with no debuginfo anywhere must not load libdebuginfod). */
	unsetenv("DEBUGINFOD_URLS");

	elf_dir(dir, sizeof(dir));
	snprintf(exe, sizeof(exe), "%s/symtarget", dir);
	snprintf(lib, sizeof(lib), "%s/libsymdl.so", dir);
	CHECK(access(exe, X_OK) == 0);
	test_exec(exe);
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}

	/* Library variants, made with binutils as a distro would. */
	snprintf(p_plain, sizeof(p_plain), "%s/libplain.so", tmp);
	snprintf(p_bid, sizeof(p_bid), "%s/libbid.so", tmp);
	snprintf(p_link, sizeof(p_link), "%s/liblink.so", tmp);
	snprintf(p_none, sizeof(p_none), "%s/libnone.so", tmp);
	snprintf(p_del, sizeof(p_del), "%s/libdel.so", tmp);
	snprintf(perfdir, sizeof(perfdir), "%s/perf", tmp);
	mkdir(perfdir, 0700);
	CHECK(build_id(lib, bid, sizeof(bid)) == 0);
	snprintf(dbg, sizeof(dbg), "%s/dbg/.build-id/%.2s", tmp, bid);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cp '%s' '%s'; cp '%s' '%s'; mkdir -p '%s';"
		 "objcopy --only-keep-debug '%s' '%s/%s.debug';"
		 "strip --strip-all -o '%s' '%s';"
		 "objcopy --only-keep-debug '%s' '%s/liblink.debug';"
		 "strip --strip-all -o '%s' '%s';"
		 "cd '%s' && objcopy --add-gnu-debuglink=liblink.debug '%s';"
		 "strip --strip-all -o '%s' '%s'",
		 lib, p_plain, lib, p_del, dbg, lib, dbg, bid + 2, p_bid, lib, lib, tmp, p_link,
		 lib, tmp, p_link, p_none, lib);
	CHECK(run(cmd) == 0);

	snprintf(dbgpath, sizeof(dbgpath), ":.debug:%s/dbg", tmp);
	o.debuginfo_path = dbgpath;
	o.perfmap_dir = perfdir;
	o.reload_min_interval_ms = -1; /* every miss may re-read maps: deterministic */
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	/* No build-id directory at all: only .gnu_debuglink can find debuginfo. */
	o_nodbg.debuginfo_path = ":.debug:/nonexistent-ep-debug";
	o_nodbg.perfmap_dir = perfdir;
	o_nodbg.reload_min_interval_ms = -1;
	CHECK_INT_EQ(symbolizer_new(&s_nodbg, &o_nodbg), 0);
	if (!s || !s_nodbg || start_target(&t, exe) < 0) {
		CHECK(!"cannot start symtarget");
		goto out;
	}
	fn1 = val(&t, "symtarget_func_one", 0);
	st2 = val(&t, "symtarget_static_two", 0);
	mainp = val(&t, "main", 0);
	alpha = val(&t, "symtest_lib_alpha", 0);
	beta = val(&t, "symtest_lib_beta", 0);
	helper = val(&t, "symtest_static_helper", 0);
	padded = val(&t, "symtest_padded", 0);

	/* PIE executable and shared library, incl. static (.symtab-only) functions;
	 * mid-function addresses as a caller's return_address - 1 would be. */
	check_name(s, t.pid, fn1, "symtarget_func_one");
	check_name(s, t.pid, st2 + 1, "symtarget_static_two");
	check_name(s, t.pid, mainp + 2, "main");
	check_name(s, t.pid, alpha, "symtest_lib_alpha");
	check_name(s, t.pid, beta + 3, "symtest_lib_beta");
	check_name(s, t.pid, helper + 1, "symtest_static_helper");
	check_name(s, t.pid, padded, "symtest_padded");
	sym(s, t.pid, alpha, &r);
	CHECK(r.module && strstr(r.module, "/libsymtest.so"));
	CHECK_INT_EQ(r.offset, file_offset(t.pid, alpha));
	CHECK_INT_EQ(r.sym_offset, 0);

	/* Past the 1-byte symtest_padded: no symbol covers it. */
	a = padded + 32;
	sym(s, t.pid, a, &r);
	snprintf(cmd, sizeof(cmd), "[unknown] libsymtest.so+0x%" PRIx64, file_offset(t.pid, a));
	CHECK_STR_EQ(r.name, cmd);
	CHECK(!r.resolved);

	/* dlopen after the first lookups: the miss must trigger a maps re-read. */
	symbolizer_get_stats(s, &st0);
	CHECK(command(&t, "dlopen %s", p_plain) == 0);
	check_name(s, t.pid, val(&t, "dl", 0) + 1, "symdl_func");
	check_name(s, t.pid, val(&t, "dl", 1), "symdl_hidden");
	symbolizer_get_stats(s, &st1);
	CHECK(st1.reloads > st0.reloads);
	sym(s, t.pid, val(&t, "dl", 0), &r);
	CHECK_STR_EQ(r.module, p_plain);

	/* Every copy below has libsymdl.so's build-id, so a symbolizer that has
	 * seen one copy names the others from its build-id cache. How each
	 * copy's own symbols are found is therefore tested with a fresh
	 * symbolizer (and no build-id cache hit). */

	/* Stripped: symdl_hidden is only in the separate debuginfo. */
	CHECK(command(&t, "dlopen %s", p_bid) == 0);
	symbolizer_free(s);
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	check_name(s, t.pid, val(&t, "dl", 1), "symdl_hidden");
	check_name(s, t.pid, val(&t, "dl", 0), "symdl_func");
	symbolizer_get_stats(s, &st1);
	CHECK_INT_EQ(st1.buildid_hits, 0);
	CHECK(command(&t, "dlopen %s", p_link) == 0);
	check_name(s_nodbg, t.pid, val(&t, "dl", 1), "symdl_hidden");
	CHECK(command(&t, "dlopen %s", p_none) == 0);
	symbolizer_free(s_nodbg);
	CHECK_INT_EQ(symbolizer_new(&s_nodbg, &o_nodbg), 0);
	a = val(&t, "dl", 1);
	sym(s_nodbg, t.pid, a, &r);
	snprintf(cmd, sizeof(cmd), "[unknown] libnone.so+0x%" PRIx64, file_offset(t.pid, a));
	CHECK_STR_EQ(r.name, cmd);
	/* .dynsym still names the exported function. */
	check_name(s_nodbg, t.pid, val(&t, "dl", 0), "symdl_func");
	/* Nothing found locally for a module with a build-id, and no server
	 * configured: libdw's debuginfod client (curl, gnutls, libcrypto: ~7 MB
	 * resident) must not have been loaded to find that out. */
	CHECK(dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL);

	/* Deleted after loading: only /proc/PID/map_files still reaches it. */
	CHECK(command(&t, "dlopen %s", p_del) == 0);
	CHECK(unlink(p_del) == 0);
	symbolizer_free(s);
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	a = val(&t, "dl", 0);
	sym(s, t.pid, a, &r);
	CHECK_STR_EQ(r.module, p_del);
	if (is_root) {
		CHECK_STR_EQ(r.name, "symdl_func");
	} else {
		snprintf(cmd, sizeof(cmd), "[unknown] libdel.so+0x%" PRIx64, file_offset(t.pid, a));
		CHECK_STR_EQ(r.name, cmd);
	}

	/* JIT code in anonymous memory, described by a perf map written later. */
	CHECK(command(&t, "anon", NULL) == 0);
	a = val(&t, "anon", 0);
	sym(s, t.pid, a + 0x1000, &r);
	CHECK(starts_with(r.name, "[unknown] [anon]+0x"));
	CHECK(!r.resolved);
	snprintf(pmpath, sizeof(pmpath), "%s/perf-%d.map", perfdir, (int)t.pid);
	{
		FILE *pm = fopen(pmpath, "w");

		CHECK(pm != NULL);
		if (pm) {
			fprintf(pm, "%" PRIx64 " 80 jit_one\n", a + 0x100);
			fprintf(pm, "garbage line here\n");
			fprintf(pm, "0x%" PRIx64 " 0x40 Interpreter::call(int, float)\n",
				a + 0x200);
			fclose(pm);
		}
	}
	check_name(s, t.pid, a + 0x120, "jit_one");
	sym(s, t.pid, a + 0x120, &r);
	CHECK_STR_EQ(r.module, "[perf-map]");
	CHECK_INT_EQ(r.sym_offset, 0x20);
	check_name(s, t.pid, a + 0x23f, "Interpreter::call(int, float)");
	sym(s, t.pid, a + 0x240, &r);
	CHECK(starts_with(r.name, "[unknown] [anon]+0x"));
	symbolizer_get_stats(s, &st0);
	CHECK_INT_EQ(st0.perfmaps_cut, 0);

	/* A map over the size cap: its head is used, the cut is counted (issue
	 * 17: it was silent). 256-byte padding lines of far-away symbols. */
	{
		FILE *pm = fopen(pmpath, "w");
		char pad[256];

		CHECK(pm != NULL);
		if (pm) {
			fprintf(pm, "%" PRIx64 " 80 jit_head\n", a + 0x100);
			for (size_t i = 0; i < (PERFMAP_MAX_BYTES >> 8) + 10; i++) {
				int w = snprintf(pad, sizeof(pad), "%016zx 10 p", (i + 1) << 8);

				memset(pad + w, 'x', 255 - (size_t)w);
				fwrite(pad, 1, 255, pm);
				fputc('\n', pm);
			}
			fprintf(pm, "%" PRIx64 " 40 jit_tail\n", a + 0x300);
			fclose(pm);
		}
	}
	sym(s, t.pid, a + 0x310, &r); /* a miss: maps and map re-read */
	CHECK(starts_with(r.name, "[unknown] [anon]+0x"));
	check_name(s, t.pid, a + 0x130, "jit_head"); /* not cached yet */
	symbolizer_get_stats(s, &st0);
	CHECK_INT_EQ(st0.perfmaps_cut, 1);
	/* 11 lines of 256 bytes beyond 64 MiB, minus the first one's length
	 * (its line shifts the rest), plus the tail line. */
	CHECK(st0.perfmap_unread_bytes > 9 * 256 && st0.perfmap_unread_bytes < 12 * 256);
	unlink(pmpath);

	/* Strings survive forgetting the pid; a new session gives the same answers. */
	sym(s, t.pid, alpha, &r);
	kept_name = r.name;
	symbolizer_forget_pid(s, (uint32_t)t.pid);
	CHECK_STR_EQ(kept_name, "symtest_lib_alpha");
	check_name(s, t.pid, alpha, "symtest_lib_alpha");

	/* Cache: repeated lookups of one address, reported, not asserted on time. */
	{
		struct timespec t0, t1;
		const int n = 1000000;
		double secs;

		symbolizer_get_stats(s, &st0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++)
			symbolizer_user(s, (uint32_t)t.pid, alpha, &r);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		symbolizer_get_stats(s, &st1);
		CHECK_INT_EQ(st1.cache_hits - st0.cache_hits, n);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		fprintf(stderr, "cached lookups: %.1f M/s\n", n / secs / 1e6);
	}

out:
	stop_target(&t);
	symbolizer_free(s);
	symbolizer_free(s_nodbg);

	/* Rate limit: with a long interval, a dlopen right after the first load
	 * is not seen yet (the address stays unknown, no reload happens). */
	o.reload_min_interval_ms = 600000;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (s && start_target(&t, exe) == 0) {
		check_name(s, t.pid, val(&t, "symtest_lib_alpha", 0), "symtest_lib_alpha");
		CHECK(command(&t, "dlopen %s", p_plain) == 0);
		sym(s, t.pid, val(&t, "dl", 0), &r);
		CHECK(starts_with(r.name, "[unknown] 0x"));
		symbolizer_get_stats(s, &st1);
		CHECK_INT_EQ(st1.reloads, 0);
		stop_target(&t);
	}
	symbolizer_free(s);

	test_kernel();
	test_kernel_preload(tmp);
	test_buildid_shared(exe);
	test_buildid_differs(dir, exe, tmp);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	run(cmd);
	return check_report("test_symbolize");
}
