// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer on the ELF layouts met in practice, each in a live process
 * (tests/elf/symexec and its libraries, see tests/elf/CMakeLists.txt):
 *  - non-PIE executable (ET_EXEC at 0x800000) with a segment whose file
 *    offset differs from p_vaddr - base (Debian's /usr/bin/node layout: the
 *    kernel maps it apart, leaving a hole the module must span);
 *  - shared library with a non-zero first p_vaddr (prelinked);
 *  - stripped library with .gnu_debugdata (minidebuginfo) only;
 *  - the non-PIE executable stripped, its symbols in a separate debuginfo
 *    file found by build-id;
 *  - and /usr/bin/node itself when it is a non-PIE executable with .symtab.
 * Expected names come from the target's own function pointers, or from
 * nm for node.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sym_target.h"
#include "symbolize/symbolize.h"

#define N_FNS 7
static const char *const fns[N_FNS] = { "symexec_near",	     "symexec_static",
					"symexec_far",	     "symprelink_exported",
					"symprelink_static", "symmini_exported",
					"symmini_static" };

/* Each function of the target by name, at its entry and one byte in (a
 * caller's return address - 1 lands inside, not on, a symbol). */
static void check_all(struct symbolizer *s, struct target *t, const char *what)
{
	for (int i = 0; i < N_FNS; i++) {
		uint64_t a = val(t, fns[i], 0);
		struct sym_result r;

		CHECK(a != 0);
		sym(s, t->pid, a + 1, &r);
		if (!r.name || strcmp(r.name, fns[i]) != 0)
			fprintf(stderr, "%s: %s at 0x%" PRIx64 " -> %s\n", what, fns[i], a, r.name);
		CHECK_STR_EQ(r.name, fns[i]);
		CHECK(r.resolved);
		CHECK_INT_EQ(r.sym_offset, 1);
	}
}

/* The layout under test must really be there: readelf shows a PT_LOAD whose
 * p_offset is not p_vaddr - 0x800000 (else the test proves nothing). */
static void check_fixture_layout(const char *exe)
{
	char cmd[1200], line[512];
	int odd = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", exe);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, va;

		if (sscanf(line, " LOAD %llx %llx", &off, &va) == 2 && va - 0x800000 != off)
			odd++;
	}
	pclose(p);
	CHECK(odd > 0);
}

static void test_fixtures(const char *dir, const char *tmp)
{
	char exe[1100], stripped[1200], bid[128], cmd[8192], dbgpath[1200];
	struct symbolizer_opts o = { .reload_min_interval_ms = -1 };
	struct symbolizer *s = NULL;
	struct target t = { 0 };
	struct sym_result r;

	snprintf(exe, sizeof(exe), "%s/symexec", dir);
	check_fixture_layout(exe);
	/* The minidebuginfo library really has no .symtab of its own. */
	snprintf(cmd, sizeof(cmd),
		 "readelf -SW '%s/libsymmini.so' | grep -q ' .gnu_debugdata ' && "
		 "! readelf -SW '%s/libsymmini.so' | grep -q ' .symtab '",
		 dir, dir);
	CHECK(run(cmd) == 0);

	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (!s || start_target(&t, exe) < 0) {
		CHECK(!"cannot start symexec");
		goto out;
	}
	check_all(s, &t, "symexec");
	/* A page of the executable mapped again elsewhere, outside the loaded
	 * image (V8's copy of node's builtins): named like the original. */
	CHECK(val(&t, "symexec_alias", 0) != 0);
	sym(s, t.pid, val(&t, "symexec_alias", 0) + 1, &r);
	CHECK_STR_EQ(r.name, "symexec_near");
	CHECK_INT_EQ(r.sym_offset, 1);
	/* Mangled names are demangled once per name, or kept with no_demangle. */
	check_name(s, t.pid, val(&t, "symexec_cxx", 0) + 1, "epdemo::func(int)");
	{
		struct symbolizer_opts raw = o;
		struct symbolizer *s2 = NULL;

		raw.no_demangle = true;
		CHECK_INT_EQ(symbolizer_new(&s2, &raw), 0);
		if (s2)
			check_name(s2, t.pid, val(&t, "symexec_cxx", 0) + 1, "_ZN6epdemo4funcEi");
		symbolizer_free(s2);
	}
	/* Unresolved frames still give the file offset of the address. */
	sym(s, t.pid, val(&t, "symexec_far", 0) + 0x800, &r);
	CHECK(!r.resolved);
	CHECK_INT_EQ(r.offset, file_offset(t.pid, val(&t, "symexec_far", 0) + 0x800));
	stop_target(&t);
	symbolizer_free(s);
	s = NULL;

	/* Stripped non-PIE executable, debuginfo by build-id in a directory
	 * of our own (as /usr/lib/debug/.build-id/ab/cdef.debug). */
	CHECK(build_id(exe, bid, sizeof(bid)) == 0);
	snprintf(stripped, sizeof(stripped), "%s/symexec-stripped", tmp);
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s/dbg/.build-id/%.2s';"
		 "objcopy --only-keep-debug '%s' '%s/dbg/.build-id/%.2s/%s.debug';"
		 "strip --strip-all -o '%s' '%s'",
		 tmp, bid, exe, tmp, bid, bid + 2, stripped, exe);
	CHECK(run(cmd) == 0);
	snprintf(dbgpath, sizeof(dbgpath), ":.debug:%s/dbg", tmp);
	o.debuginfo_path = dbgpath;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (!s || start_target(&t, stripped) < 0) {
		CHECK(!"cannot start stripped symexec");
		goto out;
	}
	check_all(s, &t, "symexec-stripped");
out:
	stop_target(&t);
	symbolizer_free(s);
}

/* /usr/bin/node, when it is the non-PIE, .symtab-carrying executable some
 * distributions ship (NodeSource's repack on Debian): functions of its
 * .text (far from the first segment, past a hole in its mappings) are
 * named as nm names them. Skipped when node is not that kind of file. */
static void test_node(const char *tmp)
{
	static const char *const want[] = { "uv_run", "uv_loop_init", "uv_now" };
	char cmd[1200], line[512];
	struct symbolizer_opts o = { .reload_min_interval_ms = -1 };
	struct symbolizer *s = NULL;
	uint64_t addr[3] = { 0 };
	int found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -hW /usr/bin/node 2>/dev/null | grep -q 'EXEC (Executable' && "
		 "nm /usr/bin/node 2>/dev/null > '%s/node.nm'",
		 tmp);
	if (system(cmd) != 0) {
		fprintf(stderr, "node check skipped: /usr/bin/node is not ET_EXEC with .symtab\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s/node.nm", tmp);
	p = fopen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 ||
		    (type != 'T' && type != 't'))
			continue;
		for (int i = 0; i < 3; i++)
			if (!addr[i] && strcmp(name, want[i]) == 0) {
				addr[i] = a;
				found++;
			}
	}
	if (p)
		fclose(p);
	CHECK_INT_EQ(found, 3);
	/* node -e reading stdin stays alive until we close it. */
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (!s)
		return;
	{
		int to[2];
		pid_t pid;

		CHECK(pipe(to) == 0);
		pid = fork();
		if (pid == 0) {
			dup2(to[0], 0);
			close(to[1]);
			execl("/usr/bin/node", "node", "-e",
			      "process.stdin.on('data',()=>{});process.stdin.on('end',()=>{})",
			      (char *)NULL);
			_exit(127);
		}
		close(to[0]);
		/* Mapped by the kernel at exec: wait for the exec, not for node.
		 * Not /proc/PID/exe: it names node before the exec maps node's
		 * text (seen failing under ASan), so wait for the text itself. */
		for (int i = 0; i < 2000; i++) {
			char path[64], line[512];
			bool mapped = false;
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
			f = fopen(path, "r");
			while (f && !mapped && fgets(line, sizeof(line), f))
				mapped = strstr(line, " r-xp ") && strstr(line, " /usr/bin/node");
			if (f)
				fclose(f);
			if (mapped)
				break;
			usleep(1000);
		}
		for (int i = 0; i < 3; i++) {
			struct sym_result r;

			if (!addr[i])
				continue;
			sym(s, pid, addr[i] + 1, &r);
			CHECK_STR_EQ(r.name, want[i]);
			CHECK_STR_EQ(r.module, "/usr/bin/node");
		}
		close(to[1]);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	symbolizer_free(s);
}

int main(void)
{
	char dir[1024], tmp[] = "/tmp/ep-symlayout-XXXXXX", cmd[1200];

	unsetenv("DEBUGINFOD_URLS");
	elf_dir(dir, sizeof(dir));
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_fixtures(dir, tmp);
	test_node(tmp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	run(cmd);
	return check_report("test_symbolize_layouts");
}
