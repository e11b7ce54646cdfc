// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pprof export: the synthetic profile encoded, gzipped, decoded back with
 * protobuf-c and compared with the sample list in synth_profile.h; the
 * build-id note parser on good and bad input; sources and build-id of a
 * real ELF file (tests/elf). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "export/pprof.h"
#include "export/pprof_elf.h"
#include "export/profile.pb-c.h"
#include "synth_profile.h"

typedef Perftools__Profiles__Profile PP;

static const char *str(const PP *pp, int64_t i)
{
	return i >= 0 && (size_t)i < pp->n_string_table ? pp->string_table[i] : NULL;
}

static const Perftools__Profiles__Label *label(const PP *pp, const Perftools__Profiles__Sample *s,
					       const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(str(pp, s->label[i]->key), key))
			return s->label[i];
	return NULL;
}

/* Labels are decimal strings; -1: absent. */
static int64_t num_label(const PP *pp, const Perftools__Profiles__Sample *s, const char *key)
{
	const Perftools__Profiles__Label *l = label(pp, s, key);

	return l && !l->num && str(pp, l->str) ? strtoll(str(pp, l->str), NULL, 10) : -1;
}

static const char *func_name(const PP *pp, uint64_t loc_id)
{
	for (size_t i = 0; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *l = pp->location[i];

		if (l->id != loc_id || l->n_line != 1)
			continue;
		for (size_t f = 0; f < pp->n_function; f++)
			if (pp->function[f]->id == l->line[0]->function_id)
				return str(pp, pp->function[f]->name);
	}
	return NULL;
}

/* Sum of value[v] over samples of tid (0: any) in cycle (-2: any) whose
 * stack, leaf first, is exactly names (NULL: any stack). */
static int64_t total(const PP *pp, size_t v, int64_t tid, int64_t cycle, const char *const *names,
		     size_t n)
{
	int64_t t = 0;

	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		bool match = true;

		if (tid && num_label(pp, s, "thread_id") != tid)
			continue;
		if (cycle != -2 && num_label(pp, s, "cycle") != cycle)
			continue;
		if (names) {
			if (s->n_location_id != n)
				continue;
			for (size_t k = 0; k < n && match; k++) {
				const char *fn = func_name(pp, s->location_id[k]);

				match = fn && !strcmp(fn, names[k]);
			}
		}
		if (match && v < s->n_value)
			t += s->value[v];
	}
	return t;
}

static void test_cpu(const struct profile *p)
{
	/* A at 1000-2000 and B at 1500 in cycle 0, 3000-5000 in cycle 1;
	 * D (7000, 8000) in none. */
	struct pprof_cycle cyc[] = { { 0, 1800, 0 }, { 1800, 5000, 1 } };
	struct pprof_opts o = { .kind = PPROF_CPU,
				.time_nanos = 123,
				.duration_nanos = 456,
				.cycles = cyc,
				.ncycles = 2 };
	static const char *const mw[] = { "work", "main" };
	static const char *const mws[] = { "sys_read", "work", "main" };
	uint8_t *buf;
	size_t len;
	PP *pp;

	CHECK_INT_EQ(pprof_encode(p, &o, &buf, &len), 0);
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK(pp != NULL);
	free(buf);
	if (!pp)
		return;
	CHECK(pp->n_string_table > 0 && !strcmp(pp->string_table[0], ""));
	CHECK_INT_EQ(pp->n_sample_type, 2);
	CHECK_STR_EQ(str(pp, pp->sample_type[0]->type), "samples");
	CHECK_STR_EQ(str(pp, pp->sample_type[0]->unit), "count");
	CHECK_STR_EQ(str(pp, pp->sample_type[1]->type), "cpu");
	CHECK_STR_EQ(str(pp, pp->sample_type[1]->unit), "nanoseconds");
	CHECK(pp->period_type && !strcmp(str(pp, pp->period_type->type), "cpu"));
	CHECK_INT_EQ(pp->period, SYNTH_PERIOD);
	CHECK_INT_EQ(pp->time_nanos, 123);
	CHECK_INT_EQ(pp->duration_nanos, 456);
	/* 13 samples, each one period of CPU time. */
	CHECK_INT_EQ(total(pp, 0, 0, -2, NULL, 0), 13);
	CHECK_INT_EQ(total(pp, 1, 0, -2, NULL, 0), 13 * (int64_t)SYNTH_PERIOD);
	/* Per thread: A 4, B 6, C 1, D 2. */
	CHECK_INT_EQ(total(pp, 0, 100, -2, NULL, 0), 4);
	CHECK_INT_EQ(total(pp, 0, 101, -2, NULL, 0), 6);
	CHECK_INT_EQ(total(pp, 0, 200, -2, NULL, 0), 1);
	CHECK_INT_EQ(total(pp, 0, 300, -2, NULL, 0), 2);
	/* Leaf-first stacks, split by cycle: A's [main,work] at 1000+2000
	 * (cycle 0) and 4000 (cycle 1); its kernel sample at 3000. */
	CHECK_INT_EQ(total(pp, 0, 100, 0, mw, 2), 2);
	CHECK_INT_EQ(total(pp, 0, 100, 1, mw, 2), 1);
	CHECK_INT_EQ(total(pp, 0, 100, 1, mws, 3), 1);
	/* B: "a;b" x2 from 1500 in cycle 0, the rest in cycle 1. */
	CHECK_INT_EQ(total(pp, 0, 101, 0, NULL, 0), 2);
	CHECK_INT_EQ(total(pp, 0, 101, 1, NULL, 0), 4);
	/* D's samples fall in no cycle: no cycle label. */
	CHECK_INT_EQ(total(pp, 0, 300, -1, NULL, 0), 2);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		const Perftools__Profiles__Label *tn = label(pp, s, "thread_name");

		CHECK(tn && str(pp, tn->str));
		if (num_label(pp, s, "thread_id") == 300)
			CHECK_STR_EQ(str(pp, tn->str), "we;ird");
		if (num_label(pp, s, "thread_id") == 101)
			CHECK_INT_EQ(num_label(pp, s, "pid"), 100);
	}
	/* One mapping per module file; frames without a module have none. */
	CHECK_INT_EQ(pp->n_mapping, 3);
	for (size_t i = 0; i < pp->n_mapping; i++) {
		CHECK_INT_EQ(pp->mapping[i]->id, i + 1);
		CHECK(pp->mapping[i]->has_functions);
		CHECK(str(pp, pp->mapping[i]->filename)[0] == '/');
	}
	CHECK_INT_EQ(pp->n_location, p->nframes);
	for (size_t i = 0; i < pp->n_location; i++) {
		const char *mod = p->frames[pp->location[i]->id - 1].module;
		uint64_t mid = pp->location[i]->mapping_id;

		CHECK(mod ? mid && !strcmp(str(pp, pp->mapping[mid - 1]->filename), mod) : !mid);
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

static void test_offcpu_gz(const struct profile *p)
{
	struct pprof_opts o = { .kind = PPROF_OFFCPU };
	unsigned char out[65536];
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	z_stream z = { 0 };
	PP *pp;

	CHECK_INT_EQ(export_pprof(p, &o, m), 0);
	fclose(m);
	CHECK(len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
	CHECK_INT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	CHECK_INT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
	pp = perftools__profiles__profile__unpack(NULL, z.total_out, out);
	inflateEnd(&z);
	free(buf);
	CHECK(pp != NULL);
	if (!pp)
		return;
	CHECK_INT_EQ(pp->n_sample_type, 1);
	CHECK_STR_EQ(str(pp, pp->sample_type[0]->type), "off_cpu");
	CHECK_STR_EQ(str(pp, pp->sample_type[0]->unit), "nanoseconds");
	/* Off-CPU profiles count in units of period_ns: values are times. */
	CHECK_INT_EQ(total(pp, 0, 0, -2, NULL, 0), 13 * (int64_t)SYNTH_PERIOD);
	CHECK_INT_EQ(total(pp, 0, 0, 0, NULL, 0), 0); /* no cycles given: no label */
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

static void test_empty(void)
{
	struct profile p;
	struct pprof_opts o = { .kind = PPROF_CPU };
	uint8_t *buf;
	size_t len;
	PP *pp;

	CHECK_INT_EQ(profile_init(&p, 99), 0);
	CHECK_INT_EQ(pprof_encode(&p, &o, &buf, &len), 0);
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK(pp && pp->n_sample == 0 && pp->n_sample_type == 2);
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	free(buf);
	profile_free(&p);
}

static const Perftools__Profiles__Location *loc_by_id(const PP *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_location; i++)
		if (pp->location[i]->id == id)
			return pp->location[i];
	return NULL;
}

static const Perftools__Profiles__Function *fn_by_id(const PP *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_function; i++)
		if (pp->function[i]->id == id)
			return pp->function[i];
	return NULL;
}

/* Python frames as pprof means them: the qualified name in Function.name,
 * the file in Function.filename, the line in Location.Line.line, one
 * Function per Python function whatever the line (two lines of
 * StandIn.run: two Locations, one Function); the same name in another
 * file is another Function; native and kernel frames keep their names. */
static void test_python(void)
{
	static const struct {
		const char *name, *module;
		bool kernel;
		const char *want_name, *want_file;
		int64_t want_line;
		int fn; /* Function group: same number, same Function */
	} fr[] = {
		{ "StandIn.run (experiment.py:321)", "/w/exp/experiment.py", false, "StandIn.run",
		  "/w/exp/experiment.py", 321, 1 },
		{ "StandIn.run (experiment.py:325)", "/w/exp/experiment.py", false, "StandIn.run",
		  "/w/exp/experiment.py", 325, 1 },
		{ "<module> (experiment.py)", "/w/exp/experiment.py", false, "<module>",
		  "/w/exp/experiment.py", 0, 2 },
		{ "StandIn.run (other.py:9)", "/w/exp/other.py", false, "StandIn.run",
		  "/w/exp/other.py", 9, 3 },
		{ "main.<locals>.step (experiment.py:40)", "experiment.py", false,
		  "main.<locals>.step", "experiment.py", 40, 4 },
		/* Not Python: another file named, no " (", kernel, no module. */
		{ "f (experiment.py:3)", "/w/exp/lib.so", false, "f (experiment.py:3)", "", 0, 5 },
		{ "vfs_read (x.py:1)", "x.py", true, "vfs_read (x.py:1)", "", 0, 6 },
		{ "g(experiment.py:3)", "/w/exp/experiment.py", false, "g(experiment.py:3)", "", 0,
		  7 },
		{ " (experiment.py:3)", "/w/exp/experiment.py", false, " (experiment.py:3)", "", 0,
		  8 },
		{ "h (experiment.py:x3)", "/w/exp/experiment.py", false, "h (experiment.py:x3)", "",
		  0, 9 },
		{ "main", "/bin/x", false, "main", "", 0, 10 },
		{ "k (experiment.py:1)", NULL, false, "k (experiment.py:1)", "", 0, 11 },
	};
	const size_t n = sizeof(fr) / sizeof(fr[0]);
	struct pprof_opts o = { .kind = PPROF_CPU };
	const Perftools__Profiles__Function *seen[16] = { 0 };
	uint32_t ids[sizeof(fr) / sizeof(fr[0])], t;
	struct profile p;
	uint8_t *buf;
	size_t len;
	PP *pp;

	CHECK_INT_EQ(profile_init(&p, 1000), 0);
	t = (uint32_t)profile_thread(&p, 1, 1, "python3");
	for (size_t i = 0; i < n; i++) {
		ids[i] = (uint32_t)profile_intern_frame(&p, fr[i].name, fr[i].module, fr[i].kernel);
		CHECK_INT_EQ(profile_add_sample(&p, t, 1000000 * (i + 1), &ids[i], 1,
						fr[i].kernel ? 1 : 0, fr[i].kernel),
			     0);
	}
	CHECK_INT_EQ(pprof_encode(&p, &o, &buf, &len), 0);
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK(pp != NULL);
	free(buf);
	if (pp) {
		CHECK_INT_EQ(pp->n_location, n);
		CHECK_INT_EQ(pp->n_function, n - 1);
		for (size_t i = 0; i < n; i++) {
			const Perftools__Profiles__Location *l = loc_by_id(pp, ids[i] + 1);
			const Perftools__Profiles__Function *f;

			CHECK(l && l->n_line == 1);
			if (!l || l->n_line != 1)
				continue;
			f = fn_by_id(pp, l->line[0]->function_id);
			CHECK(f != NULL);
			if (!f)
				continue;
			CHECK_STR_EQ(str(pp, f->name), fr[i].want_name);
			CHECK_STR_EQ(str(pp, f->filename), fr[i].want_file);
			CHECK_INT_EQ(l->line[0]->line, fr[i].want_line);
			if (seen[fr[i].fn])
				CHECK(seen[fr[i].fn] == f);
			else
				seen[fr[i].fn] = f;
		}
		perftools__profiles__profile__free_unpacked(pp, NULL);
	}
	profile_free(&p);
}

/* Identical samples either side of a pause (a cycle boundary after a sleep)
 * are two runs with run_gap_ns set, so each gets its own cycle label. */
static void test_gap(void)
{
	struct pprof_cycle cyc[] = { { 0, 5000000, 0 }, { 5000000, 9000000, 1 } };
	struct pprof_opts o = { .kind = PPROF_CPU, .cycles = cyc, .ncycles = 2 };
	static const char *const m[] = { "main" };
	struct profile p;
	uint8_t *buf;
	size_t len;
	uint32_t f, t;
	PP *pp;

	CHECK_INT_EQ(profile_init(&p, 1000), 0); /* 1 ms period */
	p.run_gap_ns = 2 * p.period_ns;
	f = (uint32_t)profile_intern_frame(&p, "main", "/bin/x", false);
	t = (uint32_t)profile_thread(&p, 1, 1, "x");
	/* 1, 2, 3 ms; pause; 6, 7 ms; out of order 6.5 ms merges. */
	CHECK_INT_EQ(profile_add_sample(&p, t, 1000000, &f, 1, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 2000000, &f, 1, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 3000000, &f, 1, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 6000000, &f, 1, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 7000000, &f, 1, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 6500000, &f, 1, 0, false), 0);
	CHECK_INT_EQ(p.threads[t].nruns, 2);
	CHECK_INT_EQ(pprof_encode(&p, &o, &buf, &len), 0);
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK(pp != NULL);
	if (pp) {
		CHECK_INT_EQ(total(pp, 0, 1, 0, m, 1), 3);
		CHECK_INT_EQ(total(pp, 0, 1, 1, m, 1), 3);
		perftools__profiles__profile__free_unpacked(pp, NULL);
	}
	free(buf);
	profile_free(&p);
}

static size_t put_note(uint8_t *b, uint32_t namesz, uint32_t descsz, uint32_t type,
		       const char *name, const uint8_t *desc)
{
	size_t off = 12;

	memcpy(b, &namesz, 4);
	memcpy(b + 4, &descsz, 4);
	memcpy(b + 8, &type, 4);
	if (namesz > 4 || descsz > 4)
		return off; /* a bad header: sizes that run past any buffer */
	memcpy(b + off, name, namesz);
	off += (namesz + 3) & ~3u;
	memcpy(b + off, desc, descsz);
	return off + ((descsz + 3) & ~3u);
}

static void test_notes(void)
{
	static const uint8_t id[4] = { 0xde, 0xad, 0xbe, 0xef };
	uint8_t b[256] = { 0 };
	char hex[2 * PPROF_BUILD_ID_MAX + 1];
	size_t n;

	/* Another note first (NT_GNU_ABI_TAG), then the build-id. */
	n = put_note(b, 4, 4, 1, "GNU", id);
	n += put_note(b + n, 4, 4, 3, "GNU", id);
	CHECK_INT_EQ(pprof_notes_build_id(b, n, hex, sizeof(hex)), 0);
	CHECK_STR_EQ(hex, "deadbeef");
	/* Bad input: cut inside the descriptor, a size running past the end,
	 * a wrong owner name, an empty buffer, a tiny output buffer. */
	CHECK_INT_EQ(pprof_notes_build_id(b, n - 2, hex, sizeof(hex)), -ENOENT);
	CHECK_STR_EQ(hex, "");
	n = put_note(b, 4, 0xfffffff0u, 3, "GNU", id);
	CHECK_INT_EQ(pprof_notes_build_id(b, sizeof(b), hex, sizeof(hex)), -ENOENT);
	memset(b, 0, sizeof(b));
	n = put_note(b, 0xffffffffu, 4, 3, "GNU", id);
	CHECK_INT_EQ(pprof_notes_build_id(b, sizeof(b), hex, sizeof(hex)), -ENOENT);
	n = put_note(b, 4, 4, 3, "XYZ", id);
	CHECK_INT_EQ(pprof_notes_build_id(b, n, hex, sizeof(hex)), -ENOENT);
	CHECK_INT_EQ(pprof_notes_build_id(b, 0, hex, sizeof(hex)), -ENOENT);
	n = put_note(b, 4, 4, 3, "GNU", id);
	CHECK_INT_EQ(pprof_notes_build_id(b, n, hex, 5), 0);
	CHECK_STR_EQ(hex, "dead");
}

static void copy_file(const char *from, const char *to)
{
	char cmd[8400];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.tmp' && mv '%s.tmp' '%s'", from, to, to, to);
	CHECK_INT_EQ(system(cmd), 0);
}

/* The cache answers again what the file says, and forgets a file that was
 * replaced (another inode): a rebuilt library is read anew. */
static void test_elf_cache(const char *bd)
{
	char lib[4096], other[4096], tmp[] = "/tmp/ep-pprof-cache.XXXXXX", path[4200];
	char hex1[2 * PPROF_BUILD_ID_MAX + 1], hex2[2 * PPROF_BUILD_ID_MAX + 1];
	struct pprof_elf_cache *c;
	struct profile p;

	snprintf(lib, sizeof(lib), "%s/tests/elf/libsymtest.so", bd);
	snprintf(other, sizeof(other), "%s/tests/elf/libsymdl.so", bd);
	if (!mkdtemp(tmp)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/lib.so", tmp);
	copy_file(lib, path);
	CHECK_INT_EQ(pprof_elf_cache_new(&c), 0);
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	profile_intern_frame(&p, "symtest_lib_alpha", path, false);
	profile_intern_frame(&p, "no_such_function", path, false);
	for (int round = 0; round < 3; round++) {
		struct pprof_src src[2] = { { 0 } };

		if (round == 2)
			copy_file(other, path); /* replaced: new inode */
		pprof_elf_sources(&p, src, c);
		if (round < 2) {
			CHECK(src[0].file && strstr(src[0].file, "symtest_lib.c"));
			CHECK_INT_EQ(src[0].line, 13);
		} else {
			CHECK(!src[0].file); /* libsymdl has no symtest_lib_alpha */
		}
		CHECK(!src[1].file);
		free(src[0].file);
		free(src[1].file);
	}
	CHECK_INT_EQ(pprof_elf_build_id(lib, hex1, sizeof(hex1)), 0);
	copy_file(lib, path);
	CHECK_INT_EQ(pprof_elf_build_id_cached(c, path, hex2, sizeof(hex2)), 0);
	CHECK_STR_EQ(hex2, hex1);
	CHECK_INT_EQ(pprof_elf_build_id_cached(c, path, hex2, sizeof(hex2)), 0);
	CHECK_STR_EQ(hex2, hex1);
	copy_file(other, path);
	CHECK_INT_EQ(pprof_elf_build_id_cached(c, path, hex2, sizeof(hex2)), 0);
	CHECK(strcmp(hex2, hex1) != 0);
	pprof_elf_cache_free(c);
	profile_free(&p);
	unlink(path);
	rmdir(tmp);
}

/* Prefetch over profiles sharing names (one frame in both, one in each)
 * answers each profile's lookups as reading it alone does. */
static void test_elf_prefetch(const char *bd)
{
	char lib[4096];
	struct pprof_elf_cache *c;
	struct profile a, b;
	struct pprof_src sa[2] = { { 0 } }, sb[3] = { { 0 } };
	const struct profile *both[3] = { &a, NULL, &b };

	snprintf(lib, sizeof(lib), "%s/tests/elf/libsymtest.so", bd);
	CHECK_INT_EQ(pprof_elf_cache_new(&c), 0);
	CHECK_INT_EQ(profile_init(&a, 100), 0);
	CHECK_INT_EQ(profile_init(&b, 100), 0);
	profile_intern_frame(&a, "symtest_lib_alpha", lib, false);
	profile_intern_frame(&a, "no_such_function", lib, false);
	profile_intern_frame(&b, "symtest_static_helper", lib, false);
	profile_intern_frame(&b, "symtest_lib_alpha", lib, false);
	profile_intern_frame(&b, "symtest_lib_alpha", "[kernel.kallsyms]", true);
	pprof_elf_prefetch(c, both, 3);
	pprof_elf_prefetch(NULL, both, 3); /* no cache: nothing to fill */
	pprof_elf_sources(&a, sa, c);
	pprof_elf_sources(&b, sb, c);
	CHECK(sa[0].file && strstr(sa[0].file, "symtest_lib.c"));
	CHECK_INT_EQ(sa[0].line, 13);
	CHECK(!sa[1].file);
	CHECK(sb[0].file && strstr(sb[0].file, "symtest_lib.c"));
	CHECK_INT_EQ(sb[0].line, 7);
	CHECK(sb[1].file && strstr(sb[1].file, "symtest_lib.c"));
	CHECK_INT_EQ(sb[1].line, 13);
	CHECK(!sb[2].file);
	for (int i = 0; i < 3; i++) {
		free(sb[i].file);
		if (i < 2)
			free(sa[i].file);
	}
	pprof_elf_cache_free(c);
	profile_free(&a);
	profile_free(&b);
}

struct parsed {
	int n;
	char last_name[64], last_file[64];
	int64_t last_line;
};

static void parsed_add(void *ctx, const char *name, const char *file, int64_t line)
{
	struct parsed *p = ctx;

	p->n++;
	snprintf(p->last_name, sizeof(p->last_name), "%s", name);
	snprintf(p->last_file, sizeof(p->last_file), "%s", file ? file : "(none)");
	p->last_line = line;
}

/* Lines the parser must refuse, each alone, then good lines around them. */
static void test_src_cache_parse(void)
{
	static const char *const bad[] = {
		"no tabs at all\n", "one\ttab\n",   "\t1\tempty name\n",    "f\t\tf.c\n",
		"f\t1x\tf.c\n",	    "f\t-1\tf.c\n", "f\t1234567890\tf.c\n", "cut short\t1\tf.c",
	};
	char big[2000];
	struct parsed p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&p, 0, sizeof(p));
		CHECK_INT_EQ(pprof_src_cache_parse(bad[i], strlen(bad[i]), parsed_add, &p), 1);
		CHECK_INT_EQ(p.n, 0);
	}
	memset(&p, 0, sizeof(p));
	CHECK_INT_EQ(pprof_src_cache_parse("f\0g\t1\tf.c\n", 10, parsed_add, &p), 1);
	memset(big, 'a', sizeof(big));
	memcpy(big + sizeof(big) - 7, "\t1\tf.c\n", 7);
	CHECK_INT_EQ(pprof_src_cache_parse(big, sizeof(big), parsed_add, &p),
		     1); /* name too long */
	CHECK_INT_EQ(p.n, 0);
	static const char good[] = "alpha\t13\t/src/a.c\nbroken\nbeta\t0\t\ngamma\t7\tdir/g\tc.c\n";
	CHECK_INT_EQ(pprof_src_cache_parse(good, sizeof(good) - 1, parsed_add, &p), 1);
	CHECK_INT_EQ(p.n, 3);
	CHECK_STR_EQ(p.last_name, "gamma");
	CHECK_STR_EQ(p.last_file, "dir/g\tc.c"); /* a tab in the file is the file's */
	CHECK_INT_EQ(p.last_line, 7);
	CHECK_INT_EQ(pprof_src_cache_parse("", 0, parsed_add, &p), 0);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, ch;

	if (!f)
		return -1;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* The cache directory: answers are written for a module with DWARF, read
 * back by a later cache before any DWARF is opened (the file edited here
 * shows which was used), and ignored when others could have written it. */
static void test_src_cache_disk(const char *bd)
{
	char lib[4096], dir[] = "/tmp/ep-pprof-src.XXXXXX", path[4200],
			hex[2 * PPROF_BUILD_ID_MAX + 1];
	struct pprof_elf_cache *c;
	struct profile p;
	int dfd;

	snprintf(lib, sizeof(lib), "%s/tests/elf/libsymtest.so", bd);
	if (!mkdtemp(dir) || pprof_elf_build_id(lib, hex, sizeof(hex))) {
		CHECK(0);
		return;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "%s/pprof-src2-%s", dir, hex);
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	profile_intern_frame(&p, "symtest_lib_alpha", lib, false);
	profile_intern_frame(&p, "no_such_function", lib, false);
	for (int round = 0; round < 4; round++) {
		struct pprof_src src[2] = { { 0 } };

		CHECK_INT_EQ(pprof_elf_cache_new(&c), 0);
		pprof_elf_cache_set_dir(c, dfd);
		pprof_elf_sources(&p, src, c);
		if (round == 0) {
			/* Both answers written, the miss too (the module has DWARF). */
			CHECK_INT_EQ(count_lines(path), 2);
			CHECK(src[0].file && strstr(src[0].file, "symtest_lib.c"));
			FILE *f = fopen(path, "w");

			CHECK(f != NULL);
			if (f) {
				fputs("symtest_lib_alpha\t99\t/from/disk.c\nno_such_function\t0\t\n",
				      f);
				fclose(f);
			}
		} else if (round == 1) {
			CHECK(src[0].file && !strcmp(src[0].file, "/from/disk.c"));
			CHECK_INT_EQ(src[0].line, 99);
			CHECK_INT_EQ(count_lines(path), 2); /* nothing new to add */
			chmod(path, 0666);
		} else if (round == 2) {
			/* Writable by others: not believed, DWARF read again. */
			CHECK(src[0].file && strstr(src[0].file, "symtest_lib.c"));
			CHECK_INT_EQ(src[0].line, 13);
			unlink(path);
			CHECK_INT_EQ(symlink("/etc/passwd", path), 0);
		} else {
			/* A symlink in its place: not followed, nothing written. */
			CHECK(src[0].file && strstr(src[0].file, "symtest_lib.c"));
			struct stat st;

			CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
		}
		CHECK(!src[1].file);
		free(src[0].file);
		free(src[1].file);
		pprof_elf_cache_free(c);
	}
	unlink(path);
	close(dfd);
	rmdir(dir);
	profile_free(&p);
}

/* A real shared library built with -g by gcc (tests/elf). */
/* A module with a build-id and no debuginfo anywhere, no debuginfod
 * server configured: naming its sources must not load libdw's debuginfod
 * client (curl, gnutls: ~7 MB, ~5 ms) only to find no server. */
static void test_no_debuginfod(const char *lib)
{
	char dir[] = "/tmp/ep-pprof-XXXXXX", out[256], cmd[9200];
	struct pprof_src src[1] = { { 0 } };
	struct profile p;

	unsetenv("DEBUGINFOD_URLS");
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(out, sizeof(out), "%s/libnodebug.so", dir);
	/* The host's objcopy, or the cross one for an arm64 build's library
	 * (its unit tests run under qemu-user on the build host). */
	snprintf(cmd, sizeof(cmd),
		 "objcopy --strip-debug '%s' '%s' 2>/dev/null || "
		 "aarch64-linux-gnu-objcopy --strip-debug '%s' '%s'",
		 lib, out, lib, out);
	CHECK_INT_EQ(system(cmd), 0);
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	profile_intern_frame(&p, "symtest_lib_alpha", out, false);
	pprof_elf_sources(&p, src, NULL);
	CHECK(!src[0].file);
	free(src[0].file);
	profile_free(&p);
	CHECK(dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL);
	unlink(out);
	rmdir(dir);
}

static void test_elf(void)
{
	const char *bd = getenv("EP_BUILD_DIR");
	char path[4096], hex[2 * PPROF_BUILD_ID_MAX + 1];
	struct pprof_src src[3] = { { 0 } };
	struct profile p;

	if (!bd) {
		fprintf(stderr, "EP_BUILD_DIR unset: ELF checks skipped\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/tests/elf/libsymtest.so", bd);
	CHECK_INT_EQ(pprof_elf_build_id(path, hex, sizeof(hex)), 0);
	CHECK_INT_EQ(strlen(hex), 40); /* --build-id: SHA-1 */
	CHECK(pprof_elf_build_id("/nonexistent/lib.so", hex, sizeof(hex)) < 0);
	CHECK_STR_EQ(hex, "");
	/* A kernel pseudo-file is refused before any read (target_open.h). */
	CHECK_INT_EQ(pprof_elf_build_id("/proc/self/status", hex, sizeof(hex)), -EXDEV);

	CHECK_INT_EQ(profile_init(&p, 100), 0);
	profile_intern_frame(&p, "symtest_lib_alpha", path, false);
	profile_intern_frame(&p, "symtest_static_helper", path, false);
	profile_intern_frame(&p, "[unknown] libsymtest.so+0x10", path, false);
	pprof_elf_sources(&p, src, NULL);
	CHECK(src[0].file && strstr(src[0].file, "symtest_lib.c"));
	CHECK_INT_EQ(src[0].line, 13); /* symtest_lib_alpha's definition */
	CHECK(src[1].file && strstr(src[1].file, "symtest_lib.c"));
	CHECK_INT_EQ(src[1].line, 7);
	CHECK(!src[2].file);
	for (int i = 0; i < 3; i++)
		free(src[i].file);
	/* In the profile: the file in Function.filename, the function's first
	 * line in start_line and in the Location's line (frames keep no
	 * address: the best file:line known); none where DWARF has none. */
	{
		struct pprof_opts o = { .kind = PPROF_CPU, .read_elf = true };
		uint32_t t = (uint32_t)profile_thread(&p, 1, 1, "x");
		uint8_t *buf;
		size_t len;
		PP *pp;

		for (uint32_t f = 0; f < 3; f++)
			CHECK_INT_EQ(profile_add_sample(&p, t, 1000000 * (f + 1), &f, 1, 0, false),
				     0);
		CHECK_INT_EQ(pprof_encode(&p, &o, &buf, &len), 0);
		pp = perftools__profiles__profile__unpack(NULL, len, buf);
		CHECK(pp != NULL);
		free(buf);
		for (uint64_t id = 1; pp && id <= 3; id++) {
			const Perftools__Profiles__Location *l = loc_by_id(pp, id);
			const Perftools__Profiles__Function *fn =
				l && l->n_line == 1 ? fn_by_id(pp, l->line[0]->function_id) : NULL;
			static const int64_t want[] = { 13, 7, 0 };

			CHECK(fn != NULL);
			if (!fn)
				continue;
			CHECK_INT_EQ(l->line[0]->line, want[id - 1]);
			CHECK_INT_EQ(fn->start_line, want[id - 1]);
			CHECK(id == 3 ? !str(pp, fn->filename)[0]
				      : strstr(str(pp, fn->filename), "symtest_lib.c") != NULL);
		}
		if (pp)
			perftools__profiles__profile__free_unpacked(pp, NULL);
	}
	profile_free(&p);
	test_no_debuginfod(path);
	test_elf_cache(bd);
	test_elf_prefetch(bd);
	test_src_cache_disk(bd);
}

int main(void)
{
	test_src_cache_parse();
	struct profile p;
	struct synth_frames fr = { 0 };

	CHECK_INT_EQ(synth_build(&p, &fr), 0);
	test_cpu(&p);
	test_offcpu_gz(&p);
	profile_free(&p);
	test_empty();
	test_gap();
	test_python();
	test_notes();
	test_elf();
	return check_report("test_pprof");
}
