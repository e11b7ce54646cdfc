// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer on a fake proc root: the maps file is the live symtarget's real
 * one plus hostile entries (truncated ELF, path with spaces, replaced file
 * with another inode, deleted file, device node, FIFO, wrapping offsets,
 * garbage, ELF files with hostile build-id notes). There is no map_files
 * directory, so files are reached through <proc_root>/PID/root, a symlink to
 * "/", as in the non-root fallback; PID/status (a copy of ours) gives the
 * credentials they are opened with.
 */
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "symbolize/symbolize.h"

#define FAKE_PID 4242u
#define BASE	 0x800000000000ull

/* Reads the target's "name 0xADDR" lines up to "ok", keeping two of them. */
static void target_addrs(FILE *out, uint64_t *fn1, uint64_t *alpha)
{
	char line[256], w[64];
	unsigned long long a;

	while (fgets(line, sizeof(line), out)) {
		if (strcmp(line, "ok\n") == 0)
			break;
		if (sscanf(line, "%63s %llx", w, &a) != 2)
			continue;
		if (strcmp(w, "symtarget_func_one") == 0)
			*fn1 = a;
		else if (strcmp(w, "symtest_lib_alpha") == 0)
			*alpha = a;
	}
}

/* A fake /proc/PID under tmp: its root our /, its status ours (whose
 * credentials its files are read with, as the real /proc would say). */
static void fake_pid_dir(const char *tmp, unsigned pid)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/proc/%u' && ln -s / '%s/proc/%u/root' && "
		 "cat /proc/self/status > '%s/proc/%u/status'",
		 tmp, pid, tmp, pid, tmp, pid);
	CHECK(system(cmd) == 0);
}

/* Writes (mode "w") or appends (mode "a") one line to a fake maps file. */
static void put_map(const char *maps, const char *mode, unsigned long long lo,
		    unsigned long long hi, const char *perms, unsigned long long ino,
		    const char *path)
{
	FILE *f = fopen(maps, mode);

	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%llx-%llx %s 00000000 08:01 %llu %s\n", lo, hi, perms, ino, path);
		fclose(f);
	}
}

static void expect(struct symbolizer *s, uint32_t pid, uint64_t addr, const char *name,
		   bool resolved)
{
	struct sym_result r = { 0 };

	CHECK_INT_EQ(symbolizer_user(s, pid, addr, &r), 0);
	CHECK_STR_EQ(r.name, name);
	CHECK_INT_EQ(r.resolved, resolved);
}

/* Our own vDSO: its clock_gettime must resolve (same kernel image as any
 * target's). */
static void test_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct symbolizer *s;
	struct sym_result r = { 0 };

	if (!f) {
		fprintf(stderr, "vdso check skipped: no __vdso_clock_gettime\n");
		return;
	}
	CHECK_INT_EQ(symbolizer_new(&s, NULL), 0);
	if (s) {
		CHECK_INT_EQ(symbolizer_user(s, (uint32_t)getpid(), (uint64_t)(uintptr_t)f + 1, &r),
			     0);
		CHECK(r.resolved && r.name && strstr(r.name, "clock_gettime"));
		CHECK_STR_EQ(r.module, "[vdso]");
		symbolizer_free(s);
	}
	dlclose(h);
}

/* Copy of src at dst with its build-id notes made hostile: how = 0 points
 * every PT_NOTE and SHT_NOTE (libdw reads either) far past the end of the
 * file, how = 1 keeps them in place
 * but claims a huge descriptor size in each note header. Returns the new
 * file's inode, 0 on failure. */
static uint64_t hostile_notes(const char *src, const char *dst, int how)
{
	FILE *f = fopen(src, "rb");
	unsigned char *buf = malloc(1u << 20);
	size_t len = f && buf ? fread(buf, 1, 1u << 20, f) : 0;
	Elf64_Ehdr eh;
	struct stat st;
	int patched = 0;

	if (f)
		fclose(f);
	if (len < sizeof(eh)) {
		free(buf);
		return 0;
	}
	memcpy(&eh, buf, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		size_t at = eh.e_phoff + (size_t)i * sizeof(Elf64_Phdr);
		Elf64_Phdr ph;

		if (at + sizeof(ph) > len)
			break;
		memcpy(&ph, buf + at, sizeof(ph));
		if (ph.p_type != PT_NOTE)
			continue;
		if (how == 0) {
			ph.p_offset = 0xfffffffffff00000ull;
			ph.p_filesz = 0x7fffffffull;
			memcpy(buf + at, &ph, sizeof(ph));
			patched++;
		} else if (ph.p_offset + sizeof(Elf64_Nhdr) <= len) {
			Elf64_Nhdr nh;

			memcpy(&nh, buf + ph.p_offset, sizeof(nh));
			nh.n_descsz = 0xfffffff0u;
			memcpy(buf + ph.p_offset, &nh, sizeof(nh));
			patched++;
		}
	}
	for (unsigned i = 0; how == 0 && i < eh.e_shnum; i++) {
		size_t at = eh.e_shoff + (size_t)i * sizeof(Elf64_Shdr);
		Elf64_Shdr sh;

		if (at + sizeof(sh) > len)
			break;
		memcpy(&sh, buf + at, sizeof(sh));
		if (sh.sh_type != SHT_NOTE)
			continue;
		sh.sh_offset = 0xfffffffffff00000ull;
		sh.sh_size = 0x7fffffffull;
		memcpy(buf + at, &sh, sizeof(sh));
	}
	f = fopen(dst, "wb");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
	free(buf);
	return patched && stat(dst, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* A hostile note must neither crash nor produce a build-id that would share
 * names: the lookup gives the file's own answer (its symbols are intact). */
static void expect_own_answer(struct symbolizer *s, uint64_t addr, const char *good,
			      const char *unknown)
{
	struct sym_result r = { 0 };

	CHECK_INT_EQ(symbolizer_user(s, FAKE_PID, addr, &r), 0);
	CHECK(r.name && (strcmp(r.name, good) == 0 || strcmp(r.name, unknown) == 0));
	CHECK_INT_EQ(r.resolved, r.name && strcmp(r.name, good) == 0);
}

int main(void)
{
	char tmp[] = "/tmp/ep-symfake-XXXXXX", path[1200], trunc[1200], fifo[1200], cmd[4096];
	char exe[1100], lib[1100], garbage[1200], note0[1200], note1[1200];
	uint64_t ino_note0, ino_note1;
	struct stat st_garbage;
	struct symbolizer_stats sst0, sst1;
	const char *b = getenv("EP_BUILD_DIR");
	struct symbolizer *s = NULL;
	struct symbolizer_opts o = { 0 };
	struct stat st_lib, st_trunc;
	uint64_t alpha, fn1, alpha_off = 0;
	int to[2], from[2];
	FILE *in, *out, *maps, *m;
	pid_t pid;
	char line[1024];

	snprintf(exe, sizeof(exe), "%s/tests/elf/symtarget", b ? b : ".");
	snprintf(lib, sizeof(lib), "%s/tests/elf/libsymtest.so", b ? b : ".");
	if (!mkdtemp(tmp) || stat(lib, &st_lib) < 0 || pipe(to) < 0 || pipe(from) < 0) {
		CHECK(!"setup");
		return check_report("test_symbolize_fake");
	}
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	in = fdopen(to[1], "w");
	out = fdopen(from[0], "r");
	fn1 = alpha = 0;
	if (in && out)
		target_addrs(out, &fn1, &alpha);
	CHECK(fn1 && alpha);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);

	/* Build the fake proc tree. */
	fake_pid_dir(tmp, FAKE_PID);
	/* The executable, as the symbolizer checks it for an exec since. */
	snprintf(cmd, sizeof(cmd), "ln -s '%s' '%s/proc/%u/exe'", exe, tmp, FAKE_PID);
	CHECK(system(cmd) == 0);
	snprintf(trunc, sizeof(trunc), "%s/trunc lib.so", tmp);
	snprintf(cmd, sizeof(cmd), "head -c 2000 '%s' > '%s'", lib, trunc);
	CHECK(system(cmd) == 0);
	CHECK(stat(trunc, &st_trunc) == 0);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	CHECK(mkfifo(fifo, 0600) == 0);
	snprintf(garbage, sizeof(garbage), "%s/garbage.so", tmp);
	snprintf(cmd, sizeof(cmd), "head -c 8192 /dev/urandom > '%s'", garbage);
	CHECK(system(cmd) == 0);
	CHECK(stat(garbage, &st_garbage) == 0);
	snprintf(note0, sizeof(note0), "%s/note0.so", tmp);
	snprintf(note1, sizeof(note1), "%s/note1.so", tmp);
	ino_note0 = hostile_notes(lib, note0, 0);
	ino_note1 = hostile_notes(lib, note1, 1);
	CHECK(ino_note0 && ino_note1);

	snprintf(cmd, sizeof(cmd), "%s/proc/%u/maps", tmp, FAKE_PID);
	maps = fopen(cmd, "w");
	m = fopen(path, "r");
	CHECK(maps && m);
	if (!maps || !m)
		goto out;
	while (fgets(line, sizeof(line), m)) {
		unsigned long long lo, hi, off;

		/* vsyscall sits at the very top: keep the file sorted for our lines. */
		if (strstr(line, "[vsyscall]"))
			continue;
		fputs(line, maps);
		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 && alpha >= lo &&
		    alpha < hi)
			alpha_off = alpha - lo + off;
	}
	fclose(m);
	m = NULL;
	fprintf(maps, "not a maps line\n");
	fprintf(maps, "%llx-%llx r--p 00000000 08:01 %llu %s\n", BASE, BASE + 0x1000,
		(unsigned long long)st_trunc.st_ino, trunc);
	fprintf(maps, "%llx-%llx r-xp 00001000 08:01 %llu %s\n", BASE + 0x1000, BASE + 0x2000,
		(unsigned long long)st_trunc.st_ino, trunc);
	/* libsymtest.so mapped whole at BASE+0x100000, once with its real inode
	 * and once claiming another inode (file replaced since mapping). */
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 %llu %s\n", BASE + 0x100000,
		BASE + 0x100000 + 0x10000, (unsigned long long)st_lib.st_ino, lib);
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 %llu %s\n", BASE + 0x200000,
		BASE + 0x200000 + 0x10000, (unsigned long long)st_lib.st_ino + 1, lib);
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 77 /nonexistent/dir/libgone.so (deleted)\n",
		BASE + 0x300000, BASE + 0x301000);
	fprintf(maps, "%llx-%llx r--s 00000000 00:05 4 /dev/zero\n", BASE + 0x400000,
		BASE + 0x401000);
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 9 %s\n", BASE + 0x500000, BASE + 0x501000,
		fifo);
	fprintf(maps, "%llx-%llx r-xp fffffffffffff000 08:01 9 /x/wraps.so\n", BASE + 0x600000,
		BASE + 0x601000);
	fprintf(maps, "%llx-%llx r-xp ffffffffffff0000 08:01 9 /x/huge.so\n", BASE + 0x700000,
		BASE + 0x701000);
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 %llu %s\n", BASE + 0x800000, BASE + 0x802000,
		(unsigned long long)st_garbage.st_ino, garbage);
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 %llu %s\n", BASE + 0x900000,
		BASE + 0x900000 + 0x10000, (unsigned long long)ino_note0, note0);
	fprintf(maps, "%llx-%llx r-xp 00000000 08:01 %llu %s\n", BASE + 0xa00000,
		BASE + 0xa00000 + 0x10000, (unsigned long long)ino_note1, note1);
	fclose(maps);

	snprintf(cmd, sizeof(cmd), "%s/proc", tmp);
	o.proc_root = cmd;
	o.perfmap_dir = tmp;
	o.reload_min_interval_ms = -1;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (!s)
		goto out;

	/* Real entries reached through PID/root. */
	expect(s, FAKE_PID, fn1, "symtarget_func_one", true);

	/* Truncated ELF: file offset form, no crash. */
	expect(s, FAKE_PID, BASE + 0x1010, "[unknown] trunc lib.so+0x1010", false);
	expect(s, FAKE_PID, BASE + 0x10, "[unknown] trunc lib.so+0x10", false);

	/* In this remap the text segment's vaddr equals its file offset (ld's
	 * layout for shared objects), so alpha sits at BASE+its file offset. The
	 * same address must have a name with the real inode and none with the
	 * wrong one. */
	CHECK(alpha_off != 0);
	{
		expect(s, FAKE_PID, BASE + 0x100000 + alpha_off, "symtest_lib_alpha", true);
		snprintf(path, sizeof(path), "[unknown] libsymtest.so+0x%" PRIx64, alpha_off);
		expect(s, FAKE_PID, BASE + 0x200000 + alpha_off, path, false);
	}
	{
		struct sym_result r = { 0 };

		CHECK_INT_EQ(symbolizer_user(s, FAKE_PID, BASE + 0x300010, &r), 0);
		CHECK_STR_EQ(r.name, "[unknown] libgone.so+0x10");
		CHECK_STR_EQ(r.module, "/nonexistent/dir/libgone.so");
	}
	expect(s, FAKE_PID, BASE + 0x400010, "[unknown] zero+0x10", false);
	expect(s, FAKE_PID, BASE + 0x500010, "[unknown] fifo+0x10", false);
	/* The wrapping line is dropped, so nothing maps this address. */
	expect(s, FAKE_PID, BASE + 0x600010, "[unknown] 0x800000600010", false);
	expect(s, FAKE_PID, BASE + 0x700010, "[unknown] huge.so+0xffffffffffff0010", false);
	/* Hostile build-id notes and a file that is no ELF at all. */
	symbolizer_get_stats(s, &sst0);
	expect(s, FAKE_PID, BASE + 0x800010, "[unknown] garbage.so+0x10", false);
	snprintf(path, sizeof(path), "[unknown] note0.so+0x%" PRIx64, alpha_off);
	expect_own_answer(s, BASE + 0x900000 + alpha_off, "symtest_lib_alpha", path);
	snprintf(path, sizeof(path), "[unknown] note1.so+0x%" PRIx64, alpha_off);
	expect_own_answer(s, BASE + 0xa00000 + alpha_off, "symtest_lib_alpha", path);
	symbolizer_get_stats(s, &sst1);
	/* The three files were opened and their notes looked at... */
	CHECK_INT_EQ(sst1.buildid_reads - sst0.buildid_reads, 3);
	/* ...and none of them matched libsymtest.so's cached names. */
	CHECK_INT_EQ(sst1.buildid_hits, sst0.buildid_hits);

	/* No such process under this root. */
	expect(s, FAKE_PID + 1, 0x1000, "[unknown] 0x1000", false);
	symbolizer_forget_pid(s, FAKE_PID + 1);
	symbolizer_forget_pid(s, 999999); /* unknown pid: no-op */

	/* The process exited while its samples are drained: its maps read
	 * empty (a zombie's) and its root, exe and map_files are gone. An unknown
	 * address forces a re-read; the maps read before must stay (s), and a
	 * session prepared while it ran (s2) opens its files by their paths,
	 * which it saw from the same root. */
	{
		struct symbolizer *s2 = NULL, *s4 = NULL;
		struct symbolizer_opts o4 = o;

		CHECK_INT_EQ(symbolizer_new(&s2, &o), 0);
		if (s2)
			symbolizer_prepare_pid(s2, FAKE_PID);
		/* The default re-read interval, as in a recording: an unknown
		 * address soon after the maps were read asks whether the
		 * process exec'ed. */
		o4.reload_min_interval_ms = 0;
		CHECK_INT_EQ(symbolizer_new(&s4, &o4), 0);
		if (s4)
			symbolizer_prepare_pid(s4, FAKE_PID);
		snprintf(cmd, sizeof(cmd), "%s/proc/%u/maps", tmp, FAKE_PID);
		maps = fopen(cmd, "w");
		CHECK(maps != NULL);
		if (maps)
			fclose(maps);
		snprintf(cmd, sizeof(cmd), "%s/proc/%u/root", tmp, FAKE_PID);
		CHECK(unlink(cmd) == 0);
		/* Its exe is gone too: an unknown address must not pass for
		 * an exec (a state started over would have no maps at all). */
		snprintf(cmd, sizeof(cmd), "%s/proc/%u/exe", tmp, FAKE_PID);
		CHECK(unlink(cmd) == 0);
		expect(s, FAKE_PID, 0x10, "[unknown] 0x10", false);
		expect(s, FAKE_PID, fn1, "symtarget_func_one", true);
		expect(s, FAKE_PID, BASE + 0x100000 + alpha_off, "symtest_lib_alpha", true);
		/* A new process's own state is not dropped at its fork. */
		symbolizer_fork_pid(s, FAKE_PID);
		expect(s, FAKE_PID, fn1, "symtarget_func_one", true);
		if (s2) {
			expect(s2, FAKE_PID, fn1, "symtarget_func_one", true);
			/* Mapped with another inode than the file's: still refused. */
			snprintf(path, sizeof(path), "[unknown] libsymtest.so+0x%" PRIx64,
				 alpha_off);
			expect(s2, FAKE_PID, BASE + 0x200000 + alpha_off, path, false);
			/* Retired, then its pid is a new process's: dropped. */
			symbolizer_retire_pid(s2, FAKE_PID);
			expect(s2, FAKE_PID, fn1, "symtarget_func_one", true);
			symbolizer_fork_pid(s2, FAKE_PID);
			snprintf(path, sizeof(path), "[unknown] 0x%" PRIx64, fn1);
			expect(s2, FAKE_PID, fn1, path, false);
			symbolizer_free(s2);
		}
		if (s4) {
			expect(s4, FAKE_PID, 0x10, "[unknown] 0x10", false);
			expect(s4, FAKE_PID, fn1, "symtarget_func_one", true);
			/* Retired at its exit event: still named, until
			 * SYMBOLIZER_RETIRED_MAX more have exited. */
			symbolizer_retire_pid(s4, FAKE_PID);
			expect(s4, FAKE_PID, fn1, "symtarget_func_one", true);
			for (uint32_t p = 1; p <= SYMBOLIZER_RETIRED_MAX; p++) {
				expect(s4, FAKE_PID + 100 + p, 0x1000, "[unknown] 0x1000", false);
				symbolizer_retire_pid(s4, FAKE_PID + 100 + p);
			}
			snprintf(path, sizeof(path), "[unknown] 0x%" PRIx64, fn1);
			expect(s4, FAKE_PID, fn1, path, false);
			symbolizer_free(s4);
		}
	}

	/* A library mapped after the maps were read (dlopen): with the
	 * default re-read interval an address in it stays unknown until the
	 * interval passes, unless the kernel's count of executable mappings
	 * (symbolizer_set_mmap_gen) moved: then it is named at once. */
	{
		struct symbolizer *s3 = NULL;
		struct symbolizer_opts o3 = o;
		volatile uint64_t gen = 7;
		uint64_t a = BASE + 0x100000 + alpha_off;
		char bare[64];

		fake_pid_dir(tmp, FAKE_PID + 2);
		snprintf(cmd, sizeof(cmd), "%s/proc/%u/maps", tmp, FAKE_PID + 2);
		put_map(cmd, "w", BASE, BASE + 0x1000, "r-xp", 77, "/x/other.so");
		o3.reload_min_interval_ms = 0; /* the default: 250 ms */
		snprintf(path, sizeof(path), "%s/proc", tmp);
		o3.proc_root = path;
		CHECK_INT_EQ(symbolizer_new(&s3, &o3), 0);
		if (s3) {
			symbolizer_set_mmap_gen(s3, &gen);
			snprintf(bare, sizeof(bare), "[unknown] 0x%" PRIx64, a);
			expect(s3, FAKE_PID + 2, a, bare, false);
			put_map(cmd, "a", BASE + 0x100000, BASE + 0x100000 + 0x10000, "r-xp",
				(unsigned long long)st_lib.st_ino, lib);
			/* No mapping made as far as the kernel says: rate limited. */
			expect(s3, FAKE_PID + 2, a, bare, false);
			gen++;
			expect(s3, FAKE_PID + 2, a, "symtest_lib_alpha", true);
			symbolizer_free(s3);
		}
	}

	/* The maps read while dlopen had ld.so.cache mapped (read-only) where
	 * the library then landed: the address is in no executable mapping,
	 * so once the kernel says code was mapped, the maps are read again. */
	{
		struct symbolizer *s5 = NULL;
		struct symbolizer_opts o5 = o;
		volatile uint64_t gen = 3;
		uint64_t a = BASE + 0x100000 + alpha_off;
		char stale[128];
		struct stat st_host;

		CHECK(stat("/etc/passwd", &st_host) == 0);
		fake_pid_dir(tmp, FAKE_PID + 3);
		snprintf(cmd, sizeof(cmd), "%s/proc/%u/maps", tmp, FAKE_PID + 3);
		put_map(cmd, "w", BASE + 0x100000, BASE + 0x100000 + 0x10000, "r--p",
			(unsigned long long)st_host.st_ino, "/etc/passwd");
		o5.reload_min_interval_ms = 0;
		snprintf(path, sizeof(path), "%s/proc", tmp);
		o5.proc_root = path;
		CHECK_INT_EQ(symbolizer_new(&s5, &o5), 0);
		if (s5) {
			symbolizer_set_mmap_gen(s5, &gen);
			snprintf(stale, sizeof(stale), "[unknown] passwd+0x%" PRIx64, alpha_off);
			expect(s5, FAKE_PID + 3, a, stale, false);
			put_map(cmd, "w", BASE + 0x100000, BASE + 0x100000 + 0x10000, "r-xp",
				(unsigned long long)st_lib.st_ino, lib);
			gen++;
			expect(s5, FAKE_PID + 3, a, "symtest_lib_alpha", true);
			symbolizer_free(s5);
		}
	}

out:
	symbolizer_free(s);
	fprintf(in, "quit\n");
	fclose(in);
	fclose(out);
	waitpid(pid, NULL, 0);
	test_vdso();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	CHECK(system(cmd) == 0);
	return check_report("test_symbolize_fake");
}
