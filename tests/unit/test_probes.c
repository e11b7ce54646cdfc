// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probes without BPF: spec parsing, ELF symbol lookup on real and hostile
 * files, library matching, and span aggregation from synthetic events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "probes/probes.h"
#include "probes/uprobe_discovery.h"

static void test_presets(void)
{
	uint32_t m = 99;

	CHECK_INT_EQ(probe_parse_presets("none", &m), 0);
	CHECK_INT_EQ(m, 0);
	CHECK_INT_EQ(probe_parse_presets("all", &m), 0);
	CHECK_INT_EQ(m, PROBE_PRESET_ALL);
	CHECK_INT_EQ(probe_parse_presets("sqlite", &m), 0);
	CHECK_INT_EQ(m, PROBE_PRESET_SQLITE);
	CHECK_INT_EQ(probe_parse_presets("llama,sqlite", &m), 0);
	CHECK_INT_EQ(m, PROBE_PRESET_ALL);
	CHECK_INT_EQ(probe_parse_presets("llama,", &m), -EINVAL);
	CHECK_INT_EQ(probe_parse_presets(",llama", &m), -EINVAL);
	CHECK_INT_EQ(probe_parse_presets("llama,,sqlite", &m), -EINVAL);
	CHECK_INT_EQ(probe_parse_presets("postgres", &m), -EINVAL);
	CHECK_INT_EQ(probe_parse_presets("", &m), -EINVAL);
	CHECK_INT_EQ(probe_parse_presets(NULL, &m), -EINVAL);
}

static void test_pair_names(void)
{
	char out[64];

	CHECK_INT_EQ(probe_usdt_pair_end("function__entry", out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "function__return");
	CHECK_INT_EQ(probe_usdt_pair_end("gc__start", out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "gc__done");
	CHECK_INT_EQ(probe_usdt_pair_end("cycle_begin", out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "cycle_end");
	CHECK_INT_EQ(probe_usdt_pair_end("a_b_start", out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "a_b_done");
	/* Not a word of its own, no name before it, nothing to pair, no room. */
	CHECK_INT_EQ(probe_usdt_pair_end("restart", out, sizeof(out)), -ENOENT);
	CHECK_INT_EQ(probe_usdt_pair_end("_start", out, sizeof(out)), -ENOENT);
	CHECK_INT_EQ(probe_usdt_pair_end("start", out, sizeof(out)), -ENOENT);
	CHECK_INT_EQ(probe_usdt_pair_end("tick", out, sizeof(out)), -ENOENT);
	CHECK_INT_EQ(probe_usdt_pair_end("", out, sizeof(out)), -ENOENT);
	CHECK_INT_EQ(probe_usdt_pair_end(NULL, out, sizeof(out)), -ENOENT);
	CHECK_INT_EQ(probe_usdt_pair_end("x_entry", out, 8), -ENAMETOOLONG);
	CHECK_INT_EQ(probe_usdt_pair_end("x_entry", out, 9), 0);
	CHECK_STR_EQ(out, "x_return");
}

static void test_specs(void)
{
	struct probe_def d;
	struct probe_specs ps;
	char err[256];
	const char *specs[] = { "libfoo:do_work,label=work", "usdt:/usr/bin/x:prov:evt,count" };

	CHECK_INT_EQ(probe_parse_spec("libsqlite3:sqlite3_step", &d, err, sizeof(err)), 0);
	CHECK_STR_EQ(d.lib, "libsqlite3");
	CHECK_STR_EQ(d.symbol, "sqlite3_step");
	CHECK_STR_EQ(d.label, "sqlite3_step");
	CHECK_INT_EQ(d.mode, EP_PM_LATENCY);
	free(d.owned);
	CHECK_INT_EQ(probe_parse_spec("/opt/a:b/libx.so:fn,label=L,count", &d, err, sizeof(err)),
		     0);
	CHECK_STR_EQ(d.lib, "/opt/a:b/libx.so");
	CHECK_STR_EQ(d.symbol, "fn");
	CHECK_STR_EQ(d.label, "L");
	CHECK_INT_EQ(d.mode, EP_PM_COUNT);
	free(d.owned);
	CHECK_INT_EQ(probe_parse_spec("usdt:/bin/app:myprov:req_start", &d, err, sizeof(err)), 0);
	CHECK_STR_EQ(d.lib, "/bin/app");
	CHECK_STR_EQ(d.usdt_provider, "myprov");
	CHECK_STR_EQ(d.symbol, "req_start");
	CHECK_INT_EQ(d.kind, EP_PK_USDT);
	free(d.owned);
	/* USDT pairs: explicit end point, or derived from the name. */
	CHECK_INT_EQ(probe_parse_spec("usdt:python3:python:gc__start,pair", &d, err, sizeof(err)),
		     0);
	CHECK_STR_EQ(d.symbol, "gc__start");
	CHECK_STR_EQ(d.usdt_end, "gc__done");
	CHECK_INT_EQ(d.kind, EP_PK_USDT_BEGIN);
	CHECK_INT_EQ(d.mode, EP_PM_LATENCY);
	free(d.owned);
	CHECK_INT_EQ(probe_parse_spec("usdt:/x:p:a,end=b,label=AB,count", &d, err, sizeof(err)), 0);
	CHECK_STR_EQ(d.symbol, "a");
	CHECK_STR_EQ(d.usdt_end, "b");
	CHECK_STR_EQ(d.label, "AB");
	CHECK_INT_EQ(d.kind, EP_PK_USDT_BEGIN);
	CHECK_INT_EQ(d.mode, EP_PM_COUNT);
	free(d.owned);
	CHECK_INT_EQ(probe_parse_spec("usdt:/x:p:function__entry,label=f,pair", &d, err,
				      sizeof(err)),
		     0);
	CHECK_STR_EQ(d.usdt_end, "function__return");
	CHECK_STR_EQ(d.label, "f");
	free(d.owned);
	CHECK(probe_parse_spec("usdt:/x:p:restart,pair", &d, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "end=NAME"));
	/* Malformed: each must fail with a reason and leave nothing owned. */
	static const char *bad[] = { "",
				     "nolib",
				     ":sym",
				     "lib:",
				     "lib:sym,bogus",
				     "lib:sym,label=",
				     "lib:bad sym",
				     "usdt:/x:prov",
				     "usdt:/x:p:",
				     "usdt::p:n",
				     "lib:sym;rm",
				     "lib:f,pair",
				     "lib:f,end=g",
				     "usdt:/x:p:a,end=",
				     "usdt:/x:p:a,end=a",
				     "usdt:/x:p:a,end=b c",
				     "usdt:/x:p:a,end=b,end=c",
				     "usdt:/x:p:a_start,pair,end=b",
				     "usdt:/x:p:a_begin,end=b,pair",
				     "usdt:/x:p:start,pair",
				     "usdt:/x:p:_entry,pair",
				     "usdt:/x:p:x_entry,pair,pair" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_INT_EQ(probe_parse_spec(bad[i], &d, err, sizeof(err)), -EINVAL);
		CHECK(d.owned == NULL);
		CHECK(bad[i][0] == '\0' || err[0] != '\0');
	}
	{
		char *huge = malloc(10000);

		memset(huge, 'a', 9999);
		huge[9999] = '\0';
		huge[5] = ':';
		CHECK_INT_EQ(probe_parse_spec(huge, &d, err, sizeof(err)), -EINVAL);
		free(huge);
	}

	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_SQLITE, specs, 2, "sqlite3_step,work", err,
				       sizeof(err)),
		     0);
	CHECK_INT_EQ(ps.n, 6 + 2);
	for (size_t i = 0; i < ps.n; i++) {
		if (!strcmp(ps.defs[i].symbol, "sqlite3_step") || !strcmp(ps.defs[i].label, "work"))
			CHECK_INT_EQ(ps.defs[i].mode, EP_PM_COUNT);
		else if (ps.defs[i].kind != EP_PK_USDT)
			CHECK_INT_EQ(ps.defs[i].mode, EP_PM_LATENCY);
	}
	probe_specs_free(&ps);
	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_LLAMA, NULL, 0, "sqlite3_step", err,
				       sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "sqlite3_step") != NULL);
	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_ALL, NULL, 0, NULL, err, sizeof(err)), 0);
	/* 12 llama (3 of them count-only set-up calls that send their
	 * parameters, 3 names of the KV-cache clear) + 6 SQLite */
	CHECK_INT_EQ(ps.n, 18);
	size_t decode = 0, clear = 0;
	for (size_t i = 0; i < ps.n; i++) {
		if (ps.defs[i].kind == EP_PK_LLAMA_CTX || ps.defs[i].kind == EP_PK_LLAMA_THREADS)
			CHECK_INT_EQ(ps.defs[i].mode, EP_PM_COUNT);
		/* The batch comes back with the span: entry and return. */
		if (ps.defs[i].kind == EP_PK_LLAMA_DECODE) {
			decode++;
			CHECK_STR_EQ(ps.defs[i].symbol, "llama_decode");
			CHECK_INT_EQ(ps.defs[i].mode, EP_PM_LATENCY);
		}
		clear += !!(ps.defs[i].flags & PROBE_F_KV_CLEAR);
	}
	CHECK_INT_EQ(decode, 1);
	CHECK_INT_EQ(clear, 3);
	probe_specs_free(&ps);
}

static void test_lib_match(void)
{
	CHECK(ud_lib_matches("libsqlite3", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6"));
	CHECK(ud_lib_matches("libsqlite3.so", "/usr/lib/libsqlite3.so.0"));
	/* The soname stem, not a prefix: libllama-common is another library. */
	CHECK(!ud_lib_matches("libggml-cpu", "/x/libggml-cpu-haswell.so"));
	CHECK(ud_lib_matches("libggml-cpu-haswell", "/x/libggml-cpu-haswell.so"));
	CHECK(ud_lib_matches("libllama", "/n/libllama.v0.5.0.so"));
	CHECK(!ud_lib_matches("libllama", "/n/libllama-common.so"));
	CHECK(!ud_lib_matches("libllama", "/n/libllama_x.so"));
	CHECK(ud_lib_matches("python3", "/usr/bin/python3.11"));
	/* Relative paths, as in the README's --cycle ./my-experiment:step. */
	CHECK(ud_lib_matches("./my-experiment", "/home/u/exp/my-experiment"));
	CHECK(ud_lib_matches("././my-experiment", "/home/u/exp/my-experiment"));
	CHECK(ud_lib_matches("exp/my-experiment", "/home/u/exp/my-experiment"));
	CHECK(!ud_lib_matches("./my-experiment", "/home/u/exp/not-my-experiment"));
	CHECK(!ud_lib_matches("./my-experiment", "my-experiment"));
	CHECK(!ud_lib_matches("./", "/a/b"));
	CHECK(!ud_lib_matches("../no/such/dir/x", "/x"));
	CHECK(ud_lib_matches("app", "/opt/app"));
	CHECK(!ud_lib_matches("libsqlite", "/usr/lib/libsqlite3.so.0"));
	CHECK(!ud_lib_matches("libfoo", "/usr/lib/libfoobar.so"));
	CHECK(ud_lib_matches("/usr/lib/libz.so.1", "/usr/lib/libz.so.1"));
	CHECK(!ud_lib_matches("/usr/lib/libz.so", "/usr/lib/libz.so.1"));
	CHECK(!ud_lib_matches("", "/a"));
	CHECK(!ud_lib_matches("a", ""));
}

/* A function in this very binary (unit tests are not stripped). */
__attribute__((noinline)) int probes_test_marker(int x)
{
	return x * 3 + 1;
}

static int write_tmp(const void *data, size_t len, char *path)
{
	int fd;

	strcpy(path, "/tmp/ep-probes-elf.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void test_elf(void)
{
	const char *names[] = { "probes_test_marker", "main", "no_such_function_xyz" };
	uint64_t off[3];
	char path[64];
	unsigned char *img;
	ssize_t len;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT_EQ(ud_find_functions(fd, names, 3, off), 2);
	CHECK(off[0] != 0 && off[1] != 0 && off[2] == 0);
	/* The offset must point at the function's bytes in the file. */
	{
		unsigned char a[16], b[16];

		CHECK(pread(fd, a, sizeof(a), (off_t)off[0]) == (ssize_t)sizeof(a));
		memcpy(b, (const void *)probes_test_marker, sizeof(b));
		CHECK(memcmp(a, b, sizeof(a)) == 0);
	}
	/* Hostile copies: truncated at many points, random bytes in the
	 * headers and tables. Nothing may crash; lookups fail or still point
	 * inside the file. */
	len = lseek(fd, 0, SEEK_END);
	img = malloc((size_t)len);
	CHECK(img && pread(fd, img, (size_t)len, 0) == len);
	close(fd);
	if (!img)
		return;
	{
		static const size_t cuts[] = { 0, 1, 16, 63, 64, 200, 4096, 65536 };
		uint64_t seed = 12345;

		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			int t = write_tmp(img, cuts[i] < (size_t)len ? cuts[i] : (size_t)len, path);
			int n;

			if (t < 0)
				continue;
			n = ud_find_functions(t, names, 3, off);
			CHECK(n == -ENOEXEC || (n >= 0 && n <= 2));
			for (int k = 0; k < 3; k++)
				CHECK(off[k] < (uint64_t)len);
			close(t);
			unlink(path);
		}
		for (int round = 0; round < 40; round++) {
			unsigned char *copy = malloc((size_t)len);
			int t, n;

			memcpy(copy, img, (size_t)len);
			for (int k = 0; k < 64; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				/* Mostly the ELF and section headers, sometimes anywhere. */
				size_t pos = (seed >> 33) % (k % 4 ? 256 : (uint64_t)len);

				copy[pos] = (unsigned char)(seed >> 24);
			}
			t = write_tmp(copy, (size_t)len, path);
			free(copy);
			if (t < 0)
				continue;
			n = ud_find_functions(t, names, 3, off);
			CHECK(n == -ENOEXEC || (n >= 0 && n <= 3));
			close(t);
			unlink(path);
		}
	}
	free(img);
	/* Not a regular file. */
	fd = open("/dev/null", O_RDONLY);
	CHECK_INT_EQ(ud_find_functions(fd, names, 3, off), -ENOEXEC);
	close(fd);
}

/* A data object for ud_find_symbols (ld.so's _r_debug is one). */
int probes_test_datum = 7;

static void test_elf_symbols(void)
{
	const char *names[] = { "probes_test_marker", "probes_test_datum", "no_such_symbol_xyz" };
	uint64_t v[3], off[3];
	char path[64];
	unsigned char *img;
	ssize_t len;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT_EQ(ud_find_symbols(fd, names, 3, v), 2);
	CHECK(v[0] && v[1] && !v[2]);
	/* Link-time addresses: their distance is the one in memory. */
	CHECK((uintptr_t)&probes_test_datum - (uintptr_t)probes_test_marker == v[1] - v[0]);
	/* Functions only for uprobes: the object is not one. */
	CHECK_INT_EQ(ud_find_functions(fd, names, 3, off), 1);
	CHECK(off[0] && !off[1]);
	len = lseek(fd, 0, SEEK_END);
	img = malloc((size_t)len);
	CHECK(img && pread(fd, img, (size_t)len, 0) == len);
	close(fd);
	if (!img)
		return;
	/* Hostile copies: cut short, random bytes in the headers. */
	{
		static const size_t cuts[] = { 0, 1, 16, 64, 4096, 65536 };
		uint64_t seed = 777;

		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			int t = write_tmp(img, cuts[i] < (size_t)len ? cuts[i] : (size_t)len, path);
			int n;

			if (t < 0)
				continue;
			n = ud_find_symbols(t, names, 3, v);
			CHECK(n == -ENOEXEC || (n >= 0 && n <= 2));
			close(t);
			unlink(path);
		}
		for (int round = 0; round < 20; round++) {
			unsigned char *copy = malloc((size_t)len);
			int t, n;

			if (!copy)
				break;
			memcpy(copy, img, (size_t)len);
			for (int k = 0; k < 64; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				size_t pos = (seed >> 33) % (k % 4 ? 256 : (uint64_t)len);

				copy[pos] = (unsigned char)(seed >> 24);
			}
			t = write_tmp(copy, (size_t)len, path);
			free(copy);
			if (t < 0)
				continue;
			n = ud_find_symbols(t, names, 3, v);
			CHECK(n == -ENOEXEC || (n >= 0 && n <= 3));
			close(t);
			unlink(path);
		}
	}
	free(img);
	fd = open("/dev/null", O_RDONLY);
	CHECK_INT_EQ(ud_find_symbols(fd, names, 3, v), -ENOEXEC);
	close(fd);
}

static void test_exec_files(void)
{
	const char *maps =
		"00400000-00401000 r-xp 00000000 08:01 100 /usr/bin/app\n"
		"00401000-00402000 r--p 00001000 08:01 100 /usr/bin/app\n"
		"7f0000000000-7f0000001000 r-xp 00000000 08:01 200 /lib/libsqlite3.so.0\n"
		"7f0000002000-7f0000003000 r-xp 00000000 08:01 200 /lib/libsqlite3.so.0\n"
		"7f0000004000-7f0000005000 rw-p 00000000 08:01 300 /lib/data.bin\n"
		"7f0000006000-7f0000007000 r-xp 00000000 00:00 0 \n"
		"7f0000008000-7f0000009000 r-xp 00000000 08:01 400 /tmp/gone.so (deleted)\n"
		"garbage line\n";
	struct proc_maps pm = { 0 };
	struct ud_file f[8];
	size_t n;

	CHECK_INT_EQ(proc_maps_parse_buf(maps, strlen(maps), 100, &pm), 0);
	n = ud_exec_files(&pm, f, 8);
	CHECK_INT_EQ(n, 3);
	if (n == 3) {
		CHECK_STR_EQ(f[0].path, "/usr/bin/app");
		CHECK_STR_EQ(f[1].path, "/lib/libsqlite3.so.0");
		CHECK_INT_EQ(f[1].inode, 200);
		CHECK(f[2].deleted);
	}
	CHECK_INT_EQ(ud_exec_files(&pm, f, 1), 1);
	proc_maps_free(&pm);
	/* The mapping's file offset comes along (ld.so's code is at 0x1000). */
	{
		const char *ld = "7f1000000000-7f1000001000 r--p 00000000 08:01 500 /lib/ld.so\n"
				 "7f1000001000-7f1000027000 r-xp 00001000 08:01 500 /lib/ld.so\n";
		struct proc_maps lm = { 0 };

		CHECK_INT_EQ(proc_maps_parse_buf(ld, strlen(ld), 10, &lm), 0);
		CHECK_INT_EQ(ud_exec_files(&lm, f, 8), 1);
		CHECK(f[0].start == 0x7f1000001000ull && f[0].pgoff == 0x1000);
		proc_maps_free(&lm);
	}
}

static struct ep_span span(uint32_t id, uint32_t tid, uint64_t start, uint64_t dur, int64_t ret,
			   uint64_t obj, uint16_t flags)
{
	struct ep_span s = { 0 };

	s.hdr.type = EP_EV_SPAN;
	s.hdr.pid = 10;
	s.hdr.tid = tid;
	s.hdr.ts_ns = start;
	s.dur_ns = dur;
	s.ret = ret;
	s.obj = obj;
	s.probe_id = id;
	s.flags = flags;
	return s;
}

static struct ep_span_sql sql_span(uint32_t id, uint64_t start, uint64_t dur, uint64_t stmt,
				   const char *text, int nbyte, uint16_t flags)
{
	struct ep_span_sql s;

	memset(&s, 0, sizeof(s));
	s.span = span(id, 10, start, dur, 0, stmt, flags);
	s.span.hdr.type = EP_EV_SPAN_SQL;
	s.nbyte = nbyte;
	snprintf(s.sql, sizeof(s.sql), "%s", text);
	s.sql_len = (int)strlen(s.sql) + 1;
	return s;
}

static void test_stats(void)
{
	struct probe_specs ps;
	char err[128];
	struct probe_stats *st = probe_stats_new(100, 3);
	const struct probe_def *prep = NULL, *step = NULL, *fin = NULL, *exec = NULL, *tok = NULL;
	const struct probe_stat *s;
	struct ep_span e;
	struct ep_span_sql q;
	double tps;
	cJSON *root;

	CHECK(st != NULL);
	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_ALL, NULL, 0, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < ps.n; i++) {
		const char *y = ps.defs[i].symbol;

		prep = !strcmp(y, "sqlite3_prepare_v2") ? &ps.defs[i] : prep;
		step = !strcmp(y, "sqlite3_step") ? &ps.defs[i] : step;
		fin = !strcmp(y, "sqlite3_finalize") ? &ps.defs[i] : fin;
		exec = !strcmp(y, "sqlite3_exec") ? &ps.defs[i] : exec;
		tok = !strcmp(y, "llama_sampler_sample") ? &ps.defs[i] : tok;
	}
	CHECK(prep && step && fin && exec && tok);
	if (!prep || !step || !fin || !exec || !tok)
		return;
	CHECK_INT_EQ(probe_stats_set_probe(st, 0, prep, "/lib/libsqlite3.so.0"), 0);
	CHECK_INT_EQ(probe_stats_set_probe(st, 1, step, "/lib/libsqlite3.so.0"), 0);
	CHECK_INT_EQ(probe_stats_set_probe(st, 2, fin, "/lib/libsqlite3.so.0"), 0);
	CHECK_INT_EQ(probe_stats_set_probe(st, 3, exec, "/lib/libsqlite3.so.0"), 0);
	CHECK_INT_EQ(probe_stats_set_probe(st, 4, tok, "/lib/libllama.so"), 0);
	CHECK_INT_EQ(probe_stats_set_probe(st, 4, tok, "/lib/libllama.so"), -EEXIST);
	CHECK_INT_EQ(probe_stats_set_probe(st, EP_PROBE_MAX, tok, "x"), -E2BIG);

	/* prepare (nByte cuts the text), 3 rows, done, finalize. */
	q = sql_span(0, 100, 50, 0xabc, "SELECT 1; junk", 8, 0);
	CHECK_INT_EQ(probe_stats_add_event(st, &q, sizeof(q)), 0);
	for (int i = 0; i < 3; i++) {
		e = span(1, 10, 200 + i * 100, 10, 100, 0xabc, 0);
		CHECK_INT_EQ(probe_stats_add_event(st, &e, sizeof(e)), 0);
	}
	e = span(1, 10, 600, 20, 101, 0xabc, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	e = span(2, 10, 700, 5, 0, 0xabc, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	/* Same pointer reused by a new statement after finalize. */
	q = sql_span(0, 800, 40, 0xabc, "DELETE FROM t", -1, 0);
	probe_stats_add_event(st, &q, sizeof(q));
	e = span(1, 10, 900, 7, 19 /* SQLITE_CONSTRAINT */, 0xabc, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	/* exec with a nested prepare+step that must not count again. */
	q = sql_span(3, 1000, 500, 0, "UPDATE t SET a=1", -1, 0);
	{
		struct ep_span_sql inner =
			sql_span(0, 1001, 30, 0xdef, "UPDATE t SET a=1", -1, EP_SPAN_F_NESTED_SQL);

		probe_stats_add_event(st, &inner, sizeof(inner));
		e = span(1, 10, 1040, 100, 101, 0xdef, EP_SPAN_F_NESTED_SQL);
		probe_stats_add_event(st, &e, sizeof(e));
	}
	probe_stats_add_event(st, &q, sizeof(q));

	s = probe_stats_get(st, 1);
	CHECK_INT_EQ(s->spans, 6);
	CHECK_INT_EQ(s->rows, 3);
	CHECK_INT_EQ(s->done, 2);
	CHECK_INT_EQ(s->errors, 1);
	CHECK_INT_EQ(s->nested_sql, 1);
	CHECK_INT_EQ(s->total_ns, 10 * 3 + 20 + 7 + 100);
	CHECK_INT_EQ(probe_stats_nsql(st), 3);
	for (size_t i = 0; i < probe_stats_nsql(st); i++) {
		const struct sql_stmt_stat *x = probe_stats_sql(st, i);

		if (!strcmp(x->text, "SELECT 1")) {
			CHECK_INT_EQ(x->count, 1);
			CHECK_INT_EQ(x->rows, 3);
			CHECK_INT_EQ(x->total_ns, 50 + 30 + 20 + 5);
			CHECK_INT_EQ(x->prepares, 1);
		} else if (!strcmp(x->text, "DELETE FROM t")) {
			CHECK_INT_EQ(x->count, 1);
			CHECK_INT_EQ(x->errors, 1);
		} else {
			CHECK_STR_EQ(x->text, "UPDATE t SET a=1");
			CHECK_INT_EQ(x->count, 1);
			CHECK_INT_EQ(x->prepares, 0);
			CHECK_INT_EQ(x->total_ns, 500);
		}
	}
	/* Statement cap: the 4th distinct text and later pool together. */
	q = sql_span(3, 2000, 1, 0, "A", -1, 0);
	probe_stats_add_event(st, &q, sizeof(q));
	q = sql_span(3, 2001, 1, 0, "B", -1, 0);
	probe_stats_add_event(st, &q, sizeof(q));
	CHECK_INT_EQ(probe_stats_nsql(st), 4);
	CHECK_STR_EQ(probe_stats_sql(st, 3)->text, "(other statements)");
	CHECK_INT_EQ(probe_stats_sql(st, 3)->count, 2);

	/* A statement prepared before attach: its steps, rows and time land in
	 * one shared entry; the cap above does not swallow it. */
	e = span(1, 10, 3000, 11, 100 /* SQLITE_ROW */, 0x5150, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	e = span(1, 10, 3020, 13, 101 /* SQLITE_DONE */, 0x5150, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	e = span(1, 10, 3040, 17, 101, 0x6160, 0); /* another one, same entry */
	probe_stats_add_event(st, &e, sizeof(e));
	e = span(2, 10, 3060, 2, 0, 0x5150, 0); /* finalize */
	probe_stats_add_event(st, &e, sizeof(e));
	CHECK_INT_EQ(probe_stats_nsql(st), 5);
	CHECK_STR_EQ(probe_stats_sql(st, 4)->text, PROBE_SQL_UNKNOWN_TEXT);
	CHECK_INT_EQ(probe_stats_sql(st, 4)->count, 2);
	CHECK_INT_EQ(probe_stats_sql(st, 4)->rows, 1);
	CHECK_INT_EQ(probe_stats_sql(st, 4)->prepares, 0);
	CHECK_INT_EQ(probe_stats_sql(st, 4)->total_ns, 11 + 13 + 17 + 2);
	/* The pointer prepared again: its own text from then on. */
	q = sql_span(0, 3100, 40, 0x5150, "A", -1, 0);
	probe_stats_add_event(st, &q, sizeof(q));
	e = span(1, 10, 3200, 5, 101, 0x5150, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	CHECK_INT_EQ(probe_stats_sql(st, 4)->count, 2);
	CHECK_INT_EQ(probe_stats_sql(st, 3)->count, 3); /* "A" is pooled in other */

	/* Recursion: nested calls of the same probe add to count, not total. */
	e = span(4, 11, 10000, 1000, 0, 0, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	e = span(4, 11, 10100, 500, 0, 0, EP_SPAN_F_NESTED_SAME);
	probe_stats_add_event(st, &e, sizeof(e));
	e = span(4, 11, 12000, 1000, 0, 0, 0);
	probe_stats_add_event(st, &e, sizeof(e));
	s = probe_stats_get(st, 4);
	CHECK_INT_EQ(s->spans, 3);
	CHECK_INT_EQ(s->total_ns, 2000);
	CHECK_INT_EQ(probe_stats_tokens(st, &tps), 3);
	CHECK_NEAR(tps, 2 * 1e9 / 2000.0, 1e-6);

	/* Malformed records are counted, never trusted. */
	e = span(77, 10, 1, 1, 0, 0, 0);
	CHECK_INT_EQ(probe_stats_add_event(st, &e, sizeof(e)), -EINVAL);
	CHECK_INT_EQ(probe_stats_add_event(st, &e, 8), -EINVAL);
	e = span(1, 10, 1, 1, 0, 0, 0);
	e.hdr.type = EP_EV_SPAN_SQL;
	CHECK_INT_EQ(probe_stats_add_event(st, &e, sizeof(e)), -EINVAL);
	q = sql_span(0, 1, 1, 0, "x", -1, 0);
	memset(q.sql, 0xff, sizeof(q.sql)); /* no NUL, not UTF-8 */
	CHECK_INT_EQ(probe_stats_add_event(st, &q, sizeof(q)), 0);
	CHECK_INT_EQ(probe_stats_bad_events(st), 3);
	probe_stats_add_open(st, 10, 12, 1, 5000, 9000);
	CHECK_INT_EQ(probe_stats_get(st, 1)->open, 1);

	/* Spans another module's queue could not take are a cause of their
	 * own, in the total with the bad events. */
	probe_stats_set_module_lost(st, 4);
	root = cJSON_CreateObject();
	CHECK_INT_EQ(probe_stats_report_json(st, root), 0);
	{
		char *txt = cJSON_PrintUnformatted(root);
		cJSON *back = txt ? cJSON_Parse(txt) : NULL;
		cJSON *dr = cJSON_GetObjectItem(cJSON_GetObjectItem(back, "probes"), "dropped");

		CHECK(back != NULL);
		CHECK(cJSON_GetObjectItem(back, "sql") != NULL);
		CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "probes"), "tokens") != NULL);
		CHECK_INT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(dr, "by_cause"),
						 "module_queue_full")
				     ->valuedouble,
			     4);
		CHECK_INT_EQ(cJSON_GetObjectItem(dr, "total")->valuedouble, 4 + 3);
		cJSON_Delete(back);
		free(txt);
	}
	cJSON_Delete(root);
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		bool first = true;

		CHECK_INT_EQ(probe_stats_trace_events(st, f, &first), 0);
		fclose(f);
		CHECK(strstr(buf, "\"ph\":\"X\"") != NULL);
		CHECK(strstr(buf, "\"open\":true") != NULL);
		CHECK(strstr(buf, "\"ts\":0.100,\"dur\":0.050") != NULL);
		free(buf);
		/* A preset function never called: no row of zeros, one line. */
		for (size_t i = 0; i < ps.n; i++)
			if (!strcmp(ps.defs[i].symbol, "sqlite3_prepare_v3"))
				CHECK_INT_EQ(probe_stats_set_probe(st, 9, &ps.defs[i],
								   "/l/libsqlite3.so"),
					     0);
		/* ggml_graph_compute in three per-ISA variants, none called:
		 * named once. llama_init_from_model counted once, not timed:
		 * its row says so instead of dashes. */
		uint32_t id = 10;
		for (size_t i = 0; i < ps.n; i++) {
			if (!strcmp(ps.defs[i].symbol, "ggml_graph_compute"))
				for (int k = 0; k < 3; k++) {
					char lib[64];

					snprintf(lib, sizeof(lib), "/l/libggml-cpu-v%d.so", k);
					CHECK_INT_EQ(probe_stats_set_probe(st, id++, &ps.defs[i],
									   lib),
						     0);
				}
			if (!strcmp(ps.defs[i].symbol, "llama_init_from_model")) {
				CHECK(ps.defs[i].mode == EP_PM_COUNT);
				CHECK_INT_EQ(probe_stats_set_probe(st, 20, &ps.defs[i],
								   "/l/libllama.so"),
					     0);
				probe_stats_set_calls(st, 20, 1);
			}
		}
		f = open_memstream(&buf, &len);
		probe_stats_summary(st, f);
		fclose(f);
		CHECK(strstr(buf, "sqlite3_step") != NULL);
		CHECK(strstr(buf, "  sqlite3_prepare_v3 ") == NULL);
		CHECK(strstr(buf, "not called: sqlite3_prepare_v3, ggml_graph_compute\n") != NULL);
		{
			const char *g = strstr(buf, "ggml_graph_compute");
			CHECK(g && !strstr(g + 1, "ggml_graph_compute"));
			const char *l = strstr(buf, "  llama_init_from_model ");
			const char *eol = l ? strchr(l, '\n') : NULL;
			CHECK(l && eol);
			if (l && eol) {
				CHECK(memmem(l, (size_t)(eol - l), "1   (counted, not timed)",
					     24) != NULL);
				CHECK(memchr(l, '-', (size_t)(eol - l)) == NULL);
			}
		}
		CHECK(strstr(buf, "tokens: 3") != NULL);
		free(buf);
	}
	probe_stats_free(st);
	probe_specs_free(&ps);
}

/* trace.json keeps the first max spans; the rest are counted, and the file
 * and summary say where and how many (a hot probe made 134 MB in
 * 8 s). Statistics still count every call. */
static void test_trace_cap(void)
{
	struct probe_specs ps;
	char err[128], *buf = NULL;
	size_t len = 0, nx = 0;
	struct probe_stats *st = probe_stats_new(5, 3);
	const struct probe_def *step = NULL;
	FILE *f;
	bool first = true;
	cJSON *root, *pr;

	CHECK(st != NULL);
	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_ALL, NULL, 0, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < ps.n; i++)
		step = !strcmp(ps.defs[i].symbol, "sqlite3_step") ? &ps.defs[i] : step;
	if (!st || !step) {
		CHECK(!"setup");
		return;
	}
	CHECK_INT_EQ(probe_stats_set_probe(st, 0, step, "/lib/libsqlite3.so.0"), 0);
	for (int i = 0; i < 12; i++) {
		struct ep_span e = span(0, 11, 1000000 + (uint64_t)i * 1000, 10, 101, 0xabc, 0);

		CHECK_INT_EQ(probe_stats_add_event(st, &e, sizeof(e)), 0);
	}
	CHECK_INT_EQ(probe_stats_get(st, 0)->spans, 12);
	f = open_memstream(&buf, &len);
	CHECK_INT_EQ(probe_stats_trace_events(st, f, &first), 0);
	fclose(f);
	for (const char *p = buf; (p = strstr(p, "\"ph\":\"X\"")); p++)
		nx++;
	CHECK_INT_EQ(nx, 5);
	/* The note sits at the first span not kept: the 6th, at 1005 us. */
	CHECK(strstr(buf, "\"name\":\"probe spans not kept from here: 7 (trace.json keeps the "
			  "first 5") != NULL);
	CHECK(strstr(buf, "\"ph\":\"i\",\"s\":\"g\",\"ts\":1005.000,\"pid\":10,\"tid\":11") !=
	      NULL);
	free(buf);
	root = cJSON_CreateObject();
	CHECK_INT_EQ(probe_stats_report_json(st, root), 0);
	pr = cJSON_GetObjectItem(root, "probes");
	CHECK_INT_EQ(cJSON_GetObjectItem(pr, "trace_spans_not_kept")->valuedouble, 7);
	CHECK_INT_EQ(cJSON_GetObjectItem(pr, "trace_max_spans")->valuedouble, 5);
	cJSON_Delete(root);
	f = open_memstream(&buf, &len);
	probe_stats_summary(st, f);
	fclose(f);
	CHECK(strstr(buf, "trace.json: the first 5 probe spans kept, 7 later ones not") != NULL);
	free(buf);
	probe_stats_free(st);
	probe_specs_free(&ps);
}

int main(void)
{
	test_trace_cap();
	test_presets();
	test_pair_names();
	test_specs();
	test_lib_match();
	test_elf();
	test_elf_symbols();
	test_exec_files();
	test_stats();
	CHECK(probes_test_marker(1) == 4);
	return check_report("probes");
}
