// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profile model: interning, stack dedup, run merging, counters and
 * per-function statistics, all checked against counts worked out by hand. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "profile/profile.h"

static const struct prof_func_stat *
find_stat(const struct profile *p, const struct prof_func_stat *st, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p->frames[st[i].frame].name, name) == 0)
			return &st[i];
	return NULL;
}

static void test_intern(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 99), 0);
	CHECK_INT_EQ(p.period_ns, 10101010);
	int64_t a = profile_intern_frame(&p, "main", "/bin/x", false);
	int64_t b = profile_intern_frame(&p, "main", "/bin/y", false);
	int64_t c = profile_intern_frame(&p, "main", NULL, false);
	int64_t d = profile_intern_frame(&p, "main", "/bin/x", true);
	int64_t e = profile_intern_frame(&p, "main", "", false);
	CHECK(a >= 0 && b >= 0 && c >= 0 && d >= 0 && e >= 0);
	CHECK(a != b && a != c && a != d && b != c && c != e && a != e);
	CHECK_INT_EQ(profile_intern_frame(&p, "main", "/bin/x", false), a);
	CHECK_INT_EQ(profile_intern_frame(&p, "main", NULL, false), c);
	CHECK_INT_EQ(p.nframes, 5);
	/* Strings are copied: the caller's buffer can be reused. */
	char buf[16];
	strcpy(buf, "tmpname");
	int64_t f = profile_intern_frame(&p, buf, NULL, false);
	strcpy(buf, "changed");
	CHECK_STR_EQ(p.frames[f].name, "tmpname");

	/* Enough frames to force several index growths. */
	char name[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		CHECK(profile_intern_frame(&p, name, "/lib", false) == 6 + i);
	}
	snprintf(name, sizeof(name), "fn%d", 1234);
	CHECK_INT_EQ(profile_intern_frame(&p, name, "/lib", false), 6 + 1234);
	CHECK_INT_EQ(p.nframes, 5006);
	profile_free(&p);

	CHECK_INT_EQ(profile_init(&p, 0), -EINVAL);
	profile_free(&p);
}

static void test_threads(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	int64_t t1 = profile_thread(&p, 10, 10, "python");
	int64_t t2 = profile_thread(&p, 10, 11, "worker");
	int64_t t3 = profile_thread(&p, 20, 10, "other");
	CHECK(t1 != t2 && t1 != t3 && t2 != t3);
	CHECK_INT_EQ(profile_thread(&p, 10, 11, NULL), t2);
	CHECK_STR_EQ(p.threads[t2].comm, "worker");
	CHECK_INT_EQ(profile_thread(&p, 10, 11, "renamed"), t2);
	CHECK_STR_EQ(p.threads[t2].comm, "renamed");
	/* A comm filling all 16 bytes (no NUL) is truncated, not overread. */
	char full[PROF_COMM_LEN];
	memset(full, 'z', sizeof(full));
	int64_t t4 = profile_thread(&p, 30, 30, full);
	CHECK_INT_EQ(strlen(p.threads[t4].comm), PROF_COMM_LEN - 1);
	CHECK_INT_EQ(p.nthreads, 4);
	profile_free(&p);
}

static void test_samples(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	uint32_t mainf = (uint32_t)profile_intern_frame(&p, "main", "/bin/app", false);
	uint32_t rec = (uint32_t)profile_intern_frame(&p, "rec", "/bin/app", false);
	uint32_t leaf = (uint32_t)profile_intern_frame(&p, "leaf", "/bin/app", false);
	uint32_t sys = (uint32_t)profile_intern_frame(&p, "do_syscall_64", NULL, true);
	uint32_t t = (uint32_t)profile_thread(&p, 1, 1, "app");
	uint32_t u = (uint32_t)profile_thread(&p, 1, 2, "app2");

	uint32_t s1[] = { mainf, rec, rec, rec, leaf }; /* recursion */
	uint32_t s2[] = { mainf, rec, sys };		/* in a syscall */
	uint32_t s3[] = { mainf, rec };

	/* thread t: s1 s1 s1 s2 s1 s3 ; thread u: s1 s1 */
	CHECK_INT_EQ(profile_add_sample(&p, t, 100, s1, 5, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 110, s1, 5, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 120, s1, 5, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 130, s2, 3, 1, true), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 140, s1, 5, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, t, 150, s3, 2, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, u, 105, s1, 5, 0, false), 0);
	CHECK_INT_EQ(profile_add_sample(&p, u, 115, s1, 5, 0, false), 0);

	/* Same frames with a different kernel split is a different stack. */
	uint32_t s2b[] = { mainf, rec, sys };
	CHECK_INT_EQ(profile_add_sample(&p, u, 125, s2b, 3, 0, false), 0);

	CHECK_INT_EQ(p.nstacks, 4);
	CHECK_INT_EQ(p.total_samples, 9);
	CHECK_INT_EQ(p.kernel_samples, 1);
	CHECK_INT_EQ(p.user_samples, 8);

	struct prof_thread *pt = &p.threads[t];
	CHECK_INT_EQ(pt->samples, 6);
	CHECK_INT_EQ(pt->nruns, 4);
	CHECK_INT_EQ(pt->runs[0].count, 3);
	CHECK_INT_EQ(pt->runs[0].first_ts_ns, 100);
	CHECK_INT_EQ(pt->runs[1].count, 1);
	CHECK_INT_EQ(pt->runs[1].first_ts_ns, 130);
	CHECK_INT_EQ(pt->runs[2].stack, pt->runs[0].stack);
	CHECK_INT_EQ(pt->runs[3].first_ts_ns, 150);
	CHECK_INT_EQ(pt->first_ts_ns, 100);
	CHECK_INT_EQ(pt->last_ts_ns, 150);
	CHECK_INT_EQ(p.stacks[pt->runs[0].stack].count, 6); /* 4 on t, 2 on u */
	CHECK_INT_EQ(p.stacks[pt->runs[1].stack].nkernel, 1);
	CHECK_INT_EQ(p.threads[u].nruns, 2);

	struct prof_func_stat *st;
	size_t n;
	CHECK_INT_EQ(profile_func_stats(&p, &st, &n), 0);
	CHECK_INT_EQ(n, 4);
	const struct prof_func_stat *fm = find_stat(&p, st, n, "main");
	const struct prof_func_stat *fr = find_stat(&p, st, n, "rec");
	const struct prof_func_stat *fl = find_stat(&p, st, n, "leaf");
	const struct prof_func_stat *fs = find_stat(&p, st, n, "do_syscall_64");
	CHECK(fm && fr && fl && fs);
	if (fm && fr && fl && fs) {
		CHECK_INT_EQ(fm->self, 0);
		CHECK_INT_EQ(fm->total, 9);
		/* rec appears 3 times in s1 but counts once per sample */
		CHECK_INT_EQ(fr->total, 9);
		CHECK_INT_EQ(fr->self, 1);
		CHECK_INT_EQ(fl->self, 6);
		CHECK_INT_EQ(fl->total, 6);
		CHECK_INT_EQ(fs->self, 2);
	}
	/* sorted by self desc */
	CHECK_STR_EQ(p.frames[st[0].frame].name, "leaf");
	CHECK_STR_EQ(p.frames[st[1].frame].name, "do_syscall_64");
	CHECK_STR_EQ(p.frames[st[2].frame].name, "rec");
	CHECK_STR_EQ(p.frames[st[3].frame].name, "main");
	free(st);

	/* Bad input is rejected without changing anything. */
	uint32_t bad[] = { 9999 };
	CHECK_INT_EQ(profile_add_sample(&p, t, 1, bad, 1, 0, false), -EINVAL);
	CHECK_INT_EQ(profile_add_sample(&p, 77, 1, s3, 2, 0, false), -EINVAL);
	CHECK_INT_EQ(profile_add_sample(&p, t, 1, s3, 2, 3, false), -EINVAL);
	CHECK_INT_EQ(p.total_samples, 9);
	profile_free(&p);
}

static void test_long_run_memory(void)
{
	/* Hours of the same hot loop must stay one run, not one entry per
	 * sample. */
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 1000), 0);
	uint32_t f = (uint32_t)profile_intern_frame(&p, "spin", NULL, false);
	uint32_t t = (uint32_t)profile_thread(&p, 5, 5, "spin");
	for (uint64_t i = 0; i < 200000; i++)
		profile_add_sample(&p, t, i * 1000000, &f, 1, 0, false);
	CHECK_INT_EQ(p.threads[t].nruns, 1);
	CHECK_INT_EQ(p.threads[t].runs[0].count, 200000);
	CHECK_INT_EQ(p.nstacks, 1);
	profile_free(&p);
}

/* The timeline's bound: a thread's samples alternate between stacks (each
 * starts a run), far more runs than max_runs. Held runs never reach the
 * bound, counts per (thread, stack) stay exact, each thread's runs stay in
 * time order, and every run starts at one of its own samples. */
static void test_timeline_bound(void)
{
	enum { NT = 3, NS = 8, N = 400000 };
	uint64_t want[NT][NS] = { { 0 } }, got[NT][NS];
	uint32_t fr[NS], th[NT];
	uint64_t seed = 12345;
	struct profile p;
	bool below = true;

	CHECK_INT_EQ(profile_init(&p, 1000), 0);
	p.max_runs = 1024;
	for (int i = 0; i < NS; i++) {
		char n[8];

		snprintf(n, sizeof(n), "f%d", i);
		fr[i] = (uint32_t)profile_intern_frame(&p, n, NULL, false);
	}
	for (int i = 0; i < NT; i++)
		th[i] = (uint32_t)profile_thread(&p, 1, 10 + i, "t");
	for (uint64_t i = 0; i < N; i++) {
		uint32_t t = (uint32_t)(i % NT), k;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		k = (uint32_t)(seed >> 33) % NS;
		/* Sample times on a 1 ms grid shifted by the stack: a run's
		 * start says which stack it was taken with. */
		CHECK_INT_EQ(profile_add_sample(&p, th[t], i * 1000000 + k, &fr[k], 1, 0, false),
			     0);
		want[t][k]++;
		if (p.total_runs >= p.max_runs)
			below = false;
	}
	CHECK(below);
	CHECK(p.compactions > 0 && p.bucket_ns >= 1000000);
	/* The newer part is kept as taken: there, consecutive runs of a
	 * thread differ in stack (run_gap_ns 0: only a change starts one). */
	CHECK(p.merged_until_ns > 0 && p.merged_until_ns < (uint64_t)N * 1000000);
	size_t exact = 0;
	for (int t = 0; t < NT; t++) {
		const struct prof_thread *pt = &p.threads[th[t]];

		for (size_t r = 1; r < pt->nruns; r++)
			if (pt->runs[r - 1].first_ts_ns >= p.merged_until_ns) {
				exact++;
				CHECK(pt->runs[r - 1].stack != pt->runs[r].stack);
			}
	}
	CHECK(exact >= p.max_runs / 4);
	memset(got, 0, sizeof(got));
	size_t held = 0;
	for (int t = 0; t < NT; t++) {
		const struct prof_thread *pt = &p.threads[th[t]];

		held += pt->nruns;
		for (size_t r = 0; r < pt->nruns; r++) {
			const struct prof_run *ru = &pt->runs[r];
			/* Frames were interned first: frame index k is f<k>. */
			uint32_t k = ru->stack < p.nstacks ? p.stacks[ru->stack].frames[0] : NS;

			CHECK(k < NS && ru->first_ts_ns % 1000000 == k &&
			      (ru->first_ts_ns / 1000000) % NT == (uint64_t)t);
			CHECK(!r || pt->runs[r - 1].first_ts_ns <= ru->first_ts_ns);
			got[t][k < NS ? k : 0] += ru->count;
		}
		CHECK_INT_EQ(pt->samples, (N + NT - 1 - t) / NT);
	}
	CHECK_INT_EQ(held, p.total_runs);
	CHECK(memcmp(got, want, sizeof(got)) == 0);
	CHECK_INT_EQ(p.nstacks, NS);
	for (size_t s = 0; s < p.nstacks; s++) {
		uint32_t k = p.stacks[s].frames[0];
		uint64_t sum = 0;

		for (int t = 0; t < NT && k < NS; t++)
			sum += want[t][k];
		CHECK_INT_EQ(p.stacks[s].count, sum);
	}
	profile_free(&p);

	/* More stacks per thread than half the bound: no bucket width can
	 * merge below it; the bound doubles instead of merging at every run,
	 * and counts stay exact. */
	CHECK_INT_EQ(profile_init(&p, 1000), 0);
	p.max_runs = 64;
	uint32_t many[100];
	for (int i = 0; i < 100; i++) {
		char n[8];

		snprintf(n, sizeof(n), "g%d", i);
		many[i] = (uint32_t)profile_intern_frame(&p, n, NULL, false);
	}
	uint32_t t0 = (uint32_t)profile_thread(&p, 1, 1, "t");
	for (uint64_t i = 0; i < 20000; i++)
		CHECK_INT_EQ(profile_add_sample(&p, t0, i * 1000000, &many[i % 100], 1, 0, false),
			     0);
	CHECK(p.max_runs >= 128 && p.total_runs <= p.max_runs);
	CHECK_INT_EQ(p.nstacks, 100);
	for (int i = 0; i < 100; i++)
		CHECK_INT_EQ(p.stacks[i].count, 200); /* first seen in frame order */
	/* Weights beyond a run's u32 count are never merged into an overflow. */
	CHECK_INT_EQ(profile_add_weighted(&p, t0, 20000 * 1000000ull, &many[0], 1, 0,
					  3ull * UINT32_MAX),
		     0);
	CHECK_INT_EQ(p.stacks[0].count, 200 + 3ull * UINT32_MAX); /* g0's stack */
	uint64_t w = 0;
	for (size_t r = 0; r < p.threads[t0].nruns; r++)
		w += p.threads[t0].runs[r].count;
	CHECK_INT_EQ(w, 20000 + 3ull * UINT32_MAX);
	profile_free(&p);
}

static void test_empty_and_names(void)
{
	struct profile p;
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	struct prof_func_stat *st = (void *)1;
	size_t n = 7;
	CHECK_INT_EQ(profile_func_stats(&p, &st, &n), 0);
	CHECK(st == NULL);
	CHECK_INT_EQ(n, 0);
	profile_free(&p);

	CHECK_STR_EQ(profile_drop_name(PROF_DROP_RINGBUF_FULL), "ringbuf_full");
	CHECK_STR_EQ(profile_drop_name(PROF_DROP_USER_STACK), "user_stack_error");
	CHECK_STR_EQ(profile_drop_name(PROF_DROP_KERN_STACK), "kernel_stack_error");
	CHECK_STR_EQ(profile_drop_name(PROF_DROP_TARGET_MAP_FULL), "target_map_full");
	CHECK_STR_EQ(profile_drop_name(PROF_DROP_EVENT_LOST), "event_lost");
	CHECK_STR_EQ(profile_drop_name(PROF_DROP_COLLECTOR), "collector");
}

/* The address-keyed memo gives what interning by text gives: the same
 * frame for the same text at another address, distinct frames for a
 * different module or the kernel flag, and survives evictions. */
static void test_intern_stable(void)
{
	static const char n1[] = "llama_decode", n1b[] = "llama_decode", m1[] = "/lib/libllama.so";
	char names[5000][16];
	struct profile p;
	int64_t a, b;

	CHECK_INT_EQ(profile_init(&p, 99), 0);
	a = profile_intern_frame_stable(&p, n1, m1, false);
	CHECK(a >= 0);
	CHECK_INT_EQ(profile_intern_frame_stable(&p, n1, m1, false), a);
	CHECK_INT_EQ(profile_intern_frame_stable(&p, n1b, m1, false), a);
	CHECK_INT_EQ(profile_intern_frame(&p, "llama_decode", "/lib/libllama.so", false), a);
	b = profile_intern_frame_stable(&p, n1, NULL, false);
	CHECK(b >= 0 && b != a);
	CHECK(profile_intern_frame_stable(&p, n1, m1, true) != a);
	/* More names than memo entries: every one still maps to its frame. */
	for (int i = 0; i < 5000; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			int64_t k = profile_intern_frame_stable(&p, names[i], m1, false);

			CHECK(k >= 0 && !strcmp(p.frames[k].name, names[i]));
		}
	CHECK_INT_EQ(p.nframes, 5003);
	CHECK_INT_EQ(profile_intern_frame_stable(&p, n1, m1, false), a);
	profile_free(&p);
}

int main(void)
{
	test_intern();
	test_intern_stable();
	test_threads();
	test_samples();
	test_long_run_memory();
	test_timeline_bound();
	test_empty_and_names();
	return check_report("test_profile");
}
