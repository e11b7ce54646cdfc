// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kallsyms loader on synthetic files: lookup, module names, aliases, gaps,
 * kptr_restrict (all zero), malformed lines, non-text symbols, and a large
 * shuffled file checked against an independent reference. Also the
 * symbolizer's kernel path on those files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(text, 1, len, f) == len);
	fclose(f);
}

/* Data, rodata and bss symbols sit between functions in real files; a code
 * address after one of them belongs to the preceding function. */
static void test_non_text(const char *path)
{
	static const char text[] = "ffffffff81000000 T func_a\n"
				   "ffffffff81000080 D data_in_text\n"
				   "ffffffff81000100 t func_b\n"
				   "ffffffff81000180 r rodata_sym\n"
				   "ffffffff81000200 b bss_sym\n"
				   "ffffffff81000280 B big_bss\n"
				   "ffffffff81000300 W weak_func\n"
				   "ffffffff81000380 d local_data\n"
				   "ffffffff81000400 V weak_object\n"
				   "ffffffff81000480 w weak_local\n"
				   "ffffffff81000500 R ro_global\n"
				   "0000000000000000 T zero_text\n";
	struct kallsyms *ks;
	uint64_t off = 0;

	write_file(path, text, sizeof(text) - 1);
	CHECK_INT_EQ(kallsyms_load(path, &ks), 0);
	if (!ks)
		return;
	CHECK_INT_EQ(kallsyms_count(ks), 4);
	CHECK_INT_EQ(kallsyms_skipped(ks), 8);
	CHECK(!kallsyms_restricted(ks));
	CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000090ull, &off), "func_a");
	CHECK_INT_EQ(off, 0x90);
	CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000190ull, NULL), "func_b");
	CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000280ull, NULL), "func_b");
	CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000390ull, NULL), "weak_func");
	CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000400ull, NULL), "weak_func");
	CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000500ull, NULL), "weak_local");
	/* 12 bytes per symbol plus the names: nothing proportional to the file. */
	CHECK(kallsyms_bytes(ks) <= 4 * 12 + sizeof("func_a") + sizeof("func_b") +
					    sizeof("weak_func") + sizeof("weak_local"));
	kallsyms_free(ks);
}

/* Many symbols in shuffled order (as module symbols are), each at a unique
 * address with an alias of lower preference listed elsewhere in the file. */
static void test_shuffled(const char *path)
{
	enum { N = 20000 };
	uint32_t *perm = malloc(N * sizeof(*perm));
	struct kallsyms *ks;
	uint64_t seed = 12345, off = 0;
	FILE *f;
	char want[32];

	CHECK(perm != NULL);
	if (!perm)
		return;
	for (uint32_t i = 0; i < N; i++)
		perm[i] = i;
	for (uint32_t i = N - 1; i > 0; i--) {
		uint32_t j, t;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		j = (uint32_t)((seed >> 33) % (i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f) {
		free(perm);
		return;
	}
	/* Symbol k lives at BASE + 0x40*k; the "t" alias of the odd ones comes
	 * first in the file but must lose to the "T" symbol. */
	for (uint32_t i = 0; i < N; i++) {
		uint32_t k = perm[i];

		if (k & 1)
			fprintf(f, "%016llx t alias_%u\n", 0xffffffff81000000ull + 0x40ull * k, k);
	}
	for (uint32_t i = 0; i < N; i++) {
		uint32_t k = perm[N - 1 - i];

		fprintf(f, "%016llx T sym_%u\n", 0xffffffff81000000ull + 0x40ull * k, k);
	}
	fclose(f);
	free(perm);
	CHECK_INT_EQ(kallsyms_load(path, &ks), 0);
	if (!ks)
		return;
	CHECK_INT_EQ(kallsyms_count(ks), N);
	for (uint32_t k = 0; k < N; k++) {
		const char *got =
			kallsyms_lookup(ks, 0xffffffff81000000ull + 0x40ull * k + 7, &off);

		snprintf(want, sizeof(want), "sym_%u", k);
		if (!got || strcmp(got, want) != 0 || off != 7) {
			CHECK_STR_EQ(got, want);
			break;
		}
	}
	kallsyms_free(ks);
}

/* The usual layout: the core kernel in address order, then module and BPF
 * symbols out of order, some below core addresses, one an alias (of higher
 * preference) of a core symbol. Only the tail is sorted and merged in. */
static void test_sorted_core_unsorted_tail(const char *path)
{
	enum { CORE = 3000, TAIL = 200 };
	const uint64_t base = 0xffffffff81000000ull;
	struct kallsyms *ks;
	uint64_t off = 0;
	char want[32];
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	/* Core: even slots 0, 2, 4, ... as local text. */
	for (uint32_t k = 0; k < CORE; k++)
		fprintf(f, "%016llx t core_%u\n", (unsigned long long)(base + 0x80ull * k), k);
	/* Tail: odd slots, descending (so below the core's last addresses),
	 * then one global alias of core_10. */
	for (uint32_t i = 0; i < TAIL; i++) {
		uint32_t k = TAIL - 1 - i;

		fprintf(f, "%016llx t mod_%u\t[m]\n",
			(unsigned long long)(base + 0x80ull * k + 0x40), k);
	}
	fprintf(f, "%016llx T core_alias_10\n", (unsigned long long)(base + 0x80ull * 10));
	fclose(f);
	CHECK_INT_EQ(kallsyms_load(path, &ks), 0);
	if (!ks)
		return;
	CHECK_INT_EQ(kallsyms_count(ks), CORE + TAIL);
	for (uint32_t k = 0; k < CORE; k++) {
		const char *got = kallsyms_lookup(ks, base + 0x80ull * k + 3, &off);

		if (k == 10)
			snprintf(want, sizeof(want), "core_alias_10");
		else
			snprintf(want, sizeof(want), "core_%u", k);
		if (!got || strcmp(got, want) != 0 || off != 3) {
			CHECK_STR_EQ(got, want);
			break;
		}
		if (k >= TAIL)
			continue;
		got = kallsyms_lookup(ks, base + 0x80ull * k + 0x41, &off);
		snprintf(want, sizeof(want), "mod_%u [m]", k);
		if (!got || strcmp(got, want) != 0 || off != 1) {
			CHECK_STR_EQ(got, want);
			break;
		}
	}
	kallsyms_free(ks);
}

int main(void)
{
	char dir[] = "/tmp/ep-kallsyms-XXXXXX", good[64], zero[64], bad[64];
	/* Deliberately unsorted, with aliases, a module and absolute symbols. */
	static const char good_text[] = "ffffffff81000100 T second_func\n"
					"ffffffff81000000 T _stext\n"
					"ffffffff81000000 t startup_alias\n"
					"0000000000000000 A fixed_percpu_data\n"
					"ffffffff81000200 W weak_one\n"
					"ffffffffc0100000 t mod_func\t[my_mod]\n"
					"ffffffffc0100080 T mod_other\t[my_mod]\n";
	static const char zero_text[] = "0000000000000000 T _stext\n"
					"0000000000000000 T schedule\n"
					"0000000000000000 t mod_func\t[my_mod]\n";
	/* NUL in a name, overlong address, missing fields, bad module syntax. */
	static const char bad_text[] = "ffffffff81000000 T ok_one\n"
				       "zzzz T bad_addr\n"
				       "ffffffff81000010 T\n"
				       "ffffffff81000020 TT two_letter_type\n"
				       "fffffffff81000030000 T too_long_addr\n"
				       "ffffffff81000040 T name with spaces\n"
				       "ffffffff81000050 t modname\t[unclosed\n"
				       "ffffffff81000060 T nul\0name\n"
				       "\n"
				       "ffffffff81000100 T ok_two";
	struct kallsyms *ks;
	struct symbolizer *s;
	struct symbolizer_opts o = { 0 };
	struct sym_result r;
	uint64_t off = 99;
	char *big;

	if (!mkdtemp(dir))
		return 1;
	snprintf(good, sizeof(good), "%s/good", dir);
	snprintf(zero, sizeof(zero), "%s/zero", dir);
	snprintf(bad, sizeof(bad), "%s/bad", dir);
	write_file(good, good_text, sizeof(good_text) - 1);
	write_file(zero, zero_text, sizeof(zero_text) - 1);
	write_file(bad, bad_text, sizeof(bad_text) - 1);

	CHECK_INT_EQ(kallsyms_load(good, &ks), 0);
	if (ks) {
		CHECK(!kallsyms_restricted(ks));
		/* The absolute symbol is dropped, and of the two aliases at _stext
		 * only the preferred one is kept. */
		CHECK_INT_EQ(kallsyms_count(ks), 5);
		CHECK_INT_EQ(kallsyms_skipped(ks), 1);
		CHECK(kallsyms_lookup(ks, 0xffffffff80ffffffull, NULL) == NULL);
		/* Among aliases the global text symbol wins. */
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000010ull, &off), "_stext");
		CHECK_INT_EQ(off, 0x10);
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000100ull, &off), "second_func");
		CHECK_INT_EQ(off, 0);
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff810001ffull, NULL), "second_func");
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000300ull, NULL), "weak_one");
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffffc0100004ull, NULL), "mod_func [my_mod]");
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffffc0100090ull, NULL),
			     "mod_other [my_mod]");
		/* Far beyond any symbol (between core kernel and modules). */
		CHECK(kallsyms_lookup(ks, 0xffffffffa0000000ull, NULL) == NULL);
		kallsyms_free(ks);
	}

	CHECK_INT_EQ(kallsyms_load(zero, &ks), 0);
	if (ks) {
		CHECK(kallsyms_restricted(ks));
		CHECK(kallsyms_lookup(ks, 0xffffffff81000010ull, NULL) == NULL);
		kallsyms_free(ks);
	}

	CHECK_INT_EQ(kallsyms_load(bad, &ks), 0);
	if (ks) {
		CHECK_INT_EQ(kallsyms_count(ks), 2);
		CHECK_INT_EQ(kallsyms_bad_lines(ks), 7);
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000050ull, NULL), "ok_one");
		CHECK_STR_EQ(kallsyms_lookup(ks, 0xffffffff81000100ull, NULL), "ok_two");
		kallsyms_free(ks);
	}
	CHECK_INT_EQ(kallsyms_load("/nonexistent/kallsyms", &ks), -ENOENT);
	CHECK(ks == NULL);

	/* A very long line is rejected, not truncated into a different name. */
	big = malloc(100000);
	if (big) {
		memset(big, 'a', 100000);
		memcpy(big, "ffffffff81000000 T ", 19);
		big[99999] = '\n';
		write_file(bad, big, 100000);
		free(big);
		CHECK_INT_EQ(kallsyms_load(bad, &ks), 0);
		if (ks) {
			CHECK_INT_EQ(kallsyms_count(ks), 0);
			CHECK_INT_EQ(kallsyms_bad_lines(ks), 1);
			CHECK(kallsyms_lookup(ks, 0xffffffff81000000ull, NULL) == NULL);
			kallsyms_free(ks);
		}
	}

	test_non_text(bad);
	test_shuffled(bad);
	test_sorted_core_unsorted_tail(bad);

	/* Symbolizer kernel path. */
	o.kallsyms_path = good;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (s) {
		CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffffc0100084ull, &r), 0);
		CHECK_STR_EQ(r.name, "mod_other [my_mod]");
		CHECK_STR_EQ(r.module, "[kernel.kallsyms]");
		CHECK_INT_EQ(r.sym_offset, 4);
		CHECK(r.resolved);
		CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffff80000000ull, &r), 0);
		CHECK_STR_EQ(r.name, "[unknown] [kernel]+0xffffffff80000000");
		CHECK(!r.resolved);
		symbolizer_free(s);
	}
	o.kallsyms_path = zero;
	CHECK_INT_EQ(symbolizer_new(&s, &o), 0);
	if (s) {
		struct symbolizer_stats st;

		for (int i = 0; i < 3; i++) {
			CHECK_INT_EQ(symbolizer_kernel(s, 0xffffffff81000010ull, &r), 0);
			CHECK_STR_EQ(r.name, "[unknown] [kernel]");
			CHECK(!r.resolved);
		}
		symbolizer_get_stats(s, &st);
		CHECK_INT_EQ(st.lookups, 3);
		CHECK_INT_EQ(st.unresolved, 3);
		symbolizer_free(s);
	}

	unlink(good);
	unlink(zero);
	unlink(bad);
	rmdir(dir);
	return check_report("test_kallsyms");
}
