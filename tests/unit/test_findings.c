// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Each rule of findings.c with a table that must trigger it and one that
 * must not. Tables are built by hand (no attribution involved). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/findings.h"

#define MS 1000000ull
#define MB (1024ull * 1024)

/* n cycles of 100 ms, all "other". */
static struct cycle_table mk(size_t n)
{
	struct cycle_table t = { 0 };
	t.rows = calloc(n, sizeof(*t.rows));
	t.n = n;
	for (size_t i = 0; i < n; i++) {
		t.rows[i].index = (uint32_t)i;
		t.rows[i].start_ns = i * 100 * MS;
		t.rows[i].end_ns = (i + 1) * 100 * MS;
		t.rows[i].wall_ns = 100 * MS;
		t.rows[i].other_ns = 100 * MS;
	}
	return t;
}

/* Moves part of a row's "other" into another part, keeping the sum. */
static void set_part(struct cycle_row *r, uint64_t *part, uint64_t ns)
{
	r->other_ns -= ns;
	*part += ns;
}

static const struct finding *find(const struct findings *f, const char *rule)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].rule, rule) == 0)
			return &f->v[i];
	return NULL;
}

static bool has_cycle(const struct finding *f, uint32_t c)
{
	for (size_t i = 0; f && i < f->ncycles; i++)
		if (f->cycles[i] == c)
			return true;
	return false;
}

static struct findings eval(const struct cycle_table *t, const struct findings_ctx *ctx)
{
	struct findings_cfg cfg;
	findings_default_cfg(&cfg);
	struct findings f;
	CHECK_INT_EQ(findings_evaluate(t, &cfg, ctx, &f), 0);
	/* No finding without evidence. */
	for (size_t i = 0; i < f.n; i++) {
		CHECK(f.v[i].evidence && f.v[i].evidence[0]);
		CHECK(f.v[i].recommendation && f.v[i].recommendation[0]);
		CHECK(f.v[i].title && f.v[i].title[0]);
	}
	return f;
}

static void free_table(struct cycle_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].sql_slowest);
	free(t->rows);
}

static void test_inference(void)
{
	struct cycle_table t = mk(4);
	for (size_t i = 0; i < 4; i++) {
		set_part(&t.rows[i], &t.rows[i].part_inference_ns, (i == 0 ? 90 : 60) * MS);
		t.rows[i].inference_ns = t.rows[i].part_inference_ns;
		t.rows[i].tokens = 10;
	}
	/* 270/400 = 67.5% > 60%: only cycle 0 is above on its own. */
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "inference_dominates");
	CHECK(x != NULL);
	if (x) {
		CHECK_NEAR(x->value, 0.675, 1e-9);
		CHECK_INT_EQ(x->ncycles, 1);
		CHECK(has_cycle(x, 0));
		CHECK(strstr(x->evidence, "per second of inference") != NULL);
		CHECK(strstr(x->recommendation, "quantization") != NULL);
	}
	findings_free(&f);
	/* 0 + 3*60 / 400 = 45%: silent. */
	t.rows[0].other_ns += t.rows[0].part_inference_ns;
	t.rows[0].part_inference_ns = 0;
	f = eval(&t, NULL);
	CHECK(find(&f, "inference_dominates") == NULL);
	findings_free(&f);
	free_table(&t);
}

static void test_sql(void)
{
	struct cycle_table t = mk(3);
	for (size_t i = 0; i < 3; i++) {
		set_part(&t.rows[i], &t.rows[i].part_sql_ns, 20 * MS);
		t.rows[i].sql_count = 4;
	}
	t.rows[1].sql_slowest = strdup("INSERT INTO log VALUES (?)");
	t.rows[1].sql_slowest_ns = 12 * MS;
	t.rows[2].sql_slowest = strdup("SELECT * FROM big");
	t.rows[2].sql_slowest_ns = 15 * MS;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "database_overhead");
	CHECK(x != NULL);
	if (x) {
		CHECK_NEAR(x->value, 0.20, 1e-9);
		/* Worst statement first. */
		const char *a = strstr(x->evidence, "SELECT * FROM big");
		const char *b = strstr(x->evidence, "INSERT INTO log");
		CHECK(a && b && a < b);
		CHECK(strstr(x->evidence, "12 statements") != NULL);
		CHECK(strstr(x->recommendation, "transaction") != NULL);
	}
	findings_free(&f);
	for (size_t i = 0; i < 3; i++) {
		t.rows[i].part_sql_ns = 10 * MS;
		t.rows[i].other_ns = 90 * MS;
	}
	f = eval(&t, NULL);
	CHECK(find(&f, "database_overhead") == NULL);
	findings_free(&f);
	free_table(&t);
}

/* A cycle still open at the end of the run (--cycle-every's last one) is
 * cut there: 3 cycles of 100 ms with 60 ms inference, then a partial one of
 * 3000 ms all unattributed. With it, "other" would be 3000+120 of 3300 ms
 * (critical) and it would be the slow one; without, no finding fires. */
static void test_partial_left_out(void)
{
	struct cycle_table t = mk(4);
	for (size_t i = 0; i < 3; i++)
		set_part(&t.rows[i], &t.rows[i].part_inference_ns, 95 * MS);
	t.rows[3].wall_ns = t.rows[3].other_ns = 3000 * MS;
	t.rows[3].end_ns = t.rows[3].start_ns + t.rows[3].wall_ns;
	t.rows[3].truncated = t.rows[3].partial = true;
	struct findings f = eval(&t, NULL);
	CHECK(find(&f, "unattributed_time") == NULL);
	CHECK(find(&f, "slow_cycles") == NULL);
	const struct finding *x = find(&f, "inference_dominates");
	CHECK(x != NULL);
	if (x)
		CHECK(strstr(x->evidence, "285.0 ms of 300.0 ms wall over 3 cycle(s)") != NULL);
	findings_free(&f);
	CHECK_INT_EQ(cycles_wall_percentile(&t, 100), 100 * MS);
	free_table(&t);
}

static void test_other(void)
{
	struct cycle_table t = mk(3);
	/* Nothing probed: all of it is unattributed by construction, which is
	 * information with its evidence, not a problem. */
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "unattributed_time");
	CHECK(x != NULL);
	if (x) {
		CHECK_INT_EQ(x->ncycles, 3);
		CHECK_INT_EQ(x->severity, FIND_INFO);
		CHECK(strstr(x->evidence, "nothing was probed") != NULL);
		CHECK(strstr(x->evidence, "300.0 ms of 300.0 ms wall") != NULL);
	}
	findings_free(&f);
	/* Something probed (20 ms of SQL a cycle) and 80% left unexplained: a
	 * warning, never critical. */
	for (size_t i = 0; i < 3; i++)
		set_part(&t.rows[i], &t.rows[i].part_sql_ns, 20 * MS);
	f = eval(&t, NULL);
	x = find(&f, "unattributed_time");
	CHECK(x && x->severity == FIND_WARNING && !strstr(x->evidence, "nothing was probed"));
	CHECK(x && x->value > 0.79 && x->value < 0.81);
	findings_free(&f);
	for (size_t i = 0; i < 3; i++) {
		t.rows[i].other_ns += t.rows[i].part_sql_ns;
		t.rows[i].part_sql_ns = 0;
	}
	for (size_t i = 0; i < 3; i++)
		set_part(&t.rows[i], &t.rows[i].part_probe_ns, 95 * MS);
	f = eval(&t, NULL);
	CHECK(find(&f, "unattributed_time") == NULL);
	findings_free(&f);
	free_table(&t);
}

/* Five cycles of 100 ms with 30 ms SQL and 60 ms inference; cycle 3 grows
 * to 300 ms by its SQL, cycle 4 to 250 ms by run-queue wait. */
static void test_slow(void)
{
	struct cycle_table t = mk(6);
	for (size_t i = 0; i < 6; i++) {
		set_part(&t.rows[i], &t.rows[i].part_sql_ns, 30 * MS);
		set_part(&t.rows[i], &t.rows[i].part_inference_ns, 60 * MS);
	}
	t.rows[3].wall_ns = 300 * MS;
	t.rows[3].part_sql_ns += 200 * MS;
	t.rows[4].wall_ns = 250 * MS;
	t.rows[4].part_off_cpu_ns[CYC_OFF_RUNQ] = 150 * MS;
	t.rows[5].wall_ns = 140 * MS; /* 140% of the median: not slow */
	t.rows[5].other_ns += 40 * MS;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "slow_cycles");
	CHECK(x != NULL);
	if (x) {
		CHECK_INT_EQ(x->ncycles, 2);
		CHECK(has_cycle(x, 3));
		CHECK(has_cycle(x, 4));
		CHECK(!has_cycle(x, 5));
		CHECK(strstr(x->evidence, "cycle 3: 300.0 ms") != NULL);
		CHECK(strstr(x->evidence, "SQL +200.0 ms") != NULL);
		CHECK(strstr(x->evidence, "run-queue wait +150.0 ms") != NULL);
		CHECK(strstr(x->recommendation, "batch writes") != NULL);
		CHECK_NEAR(x->value, 3.0, 1e-9);
	}
	findings_free(&f);

	struct cycle_table even = mk(5);
	even.rows[2].wall_ns = 149 * MS;
	f = eval(&even, NULL);
	CHECK(find(&f, "slow_cycles") == NULL);
	findings_free(&f);
	/* Two cycles are too few for a median. */
	even.n = 2;
	even.rows[1].wall_ns = 900 * MS;
	f = eval(&even, NULL);
	CHECK(find(&f, "slow_cycles") == NULL);
	findings_free(&f);
	even.n = 5;
	free_table(&even);
	free_table(&t);

	/* Truncated cycles (cut by the end of the run or a missed return) are
	 * not cycle times: not slow, and not in the median. Walls 100, 100,
	 * 100, 160 and three truncated of 900 ms: with them the median would
	 * be 160 and nothing slow; without, it is 100 and 160 is slow. */
	struct cycle_table tr = mk(7);
	tr.rows[3].wall_ns = 160 * MS;
	for (int i = 4; i < 7; i++) {
		tr.rows[i].wall_ns = 900 * MS;
		tr.rows[i].truncated = true;
	}
	f = eval(&tr, NULL);
	x = find(&f, "slow_cycles");
	CHECK(x != NULL);
	if (x) {
		CHECK_INT_EQ(x->ncycles, 1);
		CHECK(has_cycle(x, 3));
		CHECK(strstr(x->title, "median 100.0 ms") != NULL);
	}
	findings_free(&f);
	free_table(&tr);
}

/* Many slow cycles: the listing starts with the worst, stops at
 * max_listed, and the evidence counts what explains all of them. */
static void test_slow_worst_first(void)
{
	struct cycle_table t = mk(40);
	for (size_t i = 0; i < 40; i++)
		set_part(&t.rows[i], &t.rows[i].part_inference_ns, 60 * MS);
	for (size_t i = 20; i < 34; i++) { /* 14 slow by inference, 200..330 ms */
		t.rows[i].wall_ns = (200 + 10 * (i - 20)) * MS;
		t.rows[i].part_inference_ns += t.rows[i].wall_ns - 100 * MS;
	}
	t.rows[3].wall_ns = 500 * MS; /* the worst, early, by SQL */
	t.rows[3].part_sql_ns += 400 * MS;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "slow_cycles");
	CHECK(x != NULL);
	if (x) {
		const char *worst = strstr(x->evidence, "cycle 3: 500.0 ms");
		const char *second = strstr(x->evidence, "cycle 33: 330.0 ms");

		CHECK_INT_EQ(x->ncycles, 15);
		CHECK(strstr(x->evidence, "explained by inference in 14, SQL in 1") != NULL);
		CHECK(worst && second && worst < second);
		CHECK(strstr(x->evidence, "cycle 20:") == NULL); /* 15th: beyond the 10 listed */
		CHECK(strstr(x->evidence, "and 5 more") != NULL);
		CHECK(strstr(x->recommendation, "batch writes") != NULL);
		CHECK_NEAR(x->value, 5.0, 1e-9);
	}
	findings_free(&f);
	free_table(&t);
}

static void test_slow_explained_by_throttling(void)
{
	struct cycle_table t = mk(4);
	t.rows[2].wall_ns = 200 * MS;
	t.rows[2].other_ns = 110 * MS;
	t.rows[2].throttled_share = 0.9;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "slow_cycles");
	CHECK(x && strstr(x->evidence, "throttling +180.0 ms") != NULL);
	findings_free(&f);
	free_table(&t);
}

static void test_memory_pressure(void)
{
	struct cycle_table t = mk(3);
	for (size_t i = 0; i < 3; i++) {
		t.rows[i].has_rss = true;
		t.rows[i].rss_end_bytes = (i == 1 ? 900 : 700) * MB;
	}
	struct findings_ctx ctx = { .mem_total_bytes = 1000 * MB };
	struct findings f = eval(&t, &ctx);
	const struct finding *x = find(&f, "memory_pressure");
	CHECK(x != NULL);
	if (x) {
		CHECK_INT_EQ(x->severity, FIND_CRITICAL);
		CHECK(has_cycle(x, 1));
		CHECK_NEAR(x->value, 0.9, 1e-9);
	}
	/* Critical findings come first. */
	CHECK(f.n > 0 && f.v[0].severity == FIND_CRITICAL);
	findings_free(&f);
	ctx.mem_total_bytes = 2000 * MB;
	f = eval(&t, &ctx);
	CHECK(find(&f, "memory_pressure") == NULL);
	findings_free(&f);
	/* RAM unknown: no claim. */
	f = eval(&t, NULL);
	CHECK(find(&f, "memory_pressure") == NULL);
	findings_free(&f);
	free_table(&t);
}

static void test_fit(void)
{
	double x[] = { 0, 1, 2, 3 }, y[] = { 1, 3, 5, 7 }, r2;
	CHECK_NEAR(findings_fit_slope(x, y, 4, &r2), 2.0, 1e-12);
	CHECK_NEAR(r2, 1.0, 1e-12);
	double yn[] = { 1, 3, 1, 3 };
	/* Slope of the alternating series: cov(x,y)/var(x) = 0.4; r2 0.2. */
	CHECK_NEAR(findings_fit_slope(x, yn, 4, &r2), 0.4, 1e-12);
	CHECK_NEAR(r2, 0.2, 1e-12);
	CHECK_NEAR(findings_fit_slope(x, y, 1, &r2), 0, 0);
	double xs[] = { 2, 2 };
	CHECK_NEAR(findings_fit_slope(xs, y, 2, &r2), 0, 0);
}

static void test_leak(void)
{
	struct cycle_table t = mk(10);
	for (size_t i = 0; i < 10; i++) {
		t.rows[i].has_rss = true;
		t.rows[i].rss_end_bytes = (100 + 2 * i) * MB;
	}
	struct findings_ctx ctx = { .mem_total_bytes = 1000 * MB };
	struct findings f = eval(&t, &ctx);
	const struct finding *x = find(&f, "memory_growth");
	CHECK(x != NULL);
	if (x) {
		CHECK_NEAR(x->value, 2.0, 1e-9);
		CHECK(strstr(x->evidence, "2.00 MB/cycle") != NULL);
		/* (1000 - 118) / 2 = 441 cycles left. */
		CHECK(strstr(x->evidence, "about 441 more cycles") != NULL);
	}
	findings_free(&f);
	/* Up and down by 20 MB with no trend. */
	for (size_t i = 0; i < 10; i++)
		t.rows[i].rss_end_bytes = (i % 2 ? 120 : 100) * MB;
	f = eval(&t, &ctx);
	CHECK(find(&f, "memory_growth") == NULL);
	findings_free(&f);
	/* A clean trend over too few cycles is not a leak yet. */
	for (size_t i = 0; i < 10; i++)
		t.rows[i].rss_end_bytes = (100 + 5 * i) * MB;
	t.n = 4;
	f = eval(&t, &ctx);
	CHECK(find(&f, "memory_growth") == NULL);
	findings_free(&f);
	t.n = 10;
	free_table(&t);
}

static void test_throttle(void)
{
	struct cycle_table t = mk(4);
	for (size_t i = 0; i < 4; i++) {
		t.rows[i].has_freq = true;
		t.rows[i].mhz_mean = i >= 2 ? 1000 : 2000;
	}
	t.rows[2].throttled_share = 0.5;
	t.rows[2].wall_ns = 150 * MS;
	t.rows[3].throttled_share = 0.5;
	t.rows[3].wall_ns = 150 * MS;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "throttling");
	CHECK(x != NULL);
	if (x) {
		CHECK_INT_EQ(x->ncycles, 2);
		CHECK(has_cycle(x, 2) && has_cycle(x, 3));
		CHECK(strstr(x->evidence, "cost +50.0 ms/cycle") != NULL);
		CHECK(strstr(x->evidence, "1000 MHz throttled vs 2000 MHz") != NULL);
		CHECK_NEAR(x->value, 150.0, 1e-9); /* ms throttled in total */
	}
	findings_free(&f);
	t.rows[2].throttled_share = 0.005;
	t.rows[3].throttled_share = 0;
	f = eval(&t, NULL);
	CHECK(find(&f, "throttling") == NULL);
	findings_free(&f);
	free_table(&t);
}

static void test_oversub(void)
{
	struct cycle_table t = mk(3);
	t.rows[1].off_cpu_ns[CYC_OFF_RUNQ] = 30 * MS;
	struct findings f = eval(&t, NULL); /* 30/300 = 10% > 5% */
	const struct finding *x = find(&f, "cpu_oversubscription");
	CHECK(x != NULL);
	if (x) {
		CHECK_INT_EQ(x->ncycles, 1);
		CHECK(has_cycle(x, 1));
	}
	findings_free(&f);
	t.rows[1].off_cpu_ns[CYC_OFF_RUNQ] = 3 * MS;
	f = eval(&t, NULL);
	CHECK(find(&f, "cpu_oversubscription") == NULL);
	findings_free(&f);
	struct findings_ctx ctx = { .ncpus = 4, .max_runnable = 8 };
	f = eval(&t, &ctx);
	x = find(&f, "cpu_oversubscription");
	CHECK(x && strstr(x->evidence, "8 runnable threads on 4 CPUs") != NULL);
	findings_free(&f);
	ctx = (struct findings_ctx){ .ncpus = 4, .max_runnable = 4, .runq_p99_ns = 5 * MS };
	f = eval(&t, &ctx);
	CHECK(find(&f, "cpu_oversubscription") == NULL);
	findings_free(&f);
	ctx.runq_p99_ns = 25 * MS;
	f = eval(&t, &ctx);
	CHECK(find(&f, "cpu_oversubscription") != NULL);
	findings_free(&f);
	free_table(&t);
}

/* Our probes' share of the target's CPU: a finding above 2%, critical
 * above 10%; for py: cycles the marker is recommended; the unattributed
 * time names it; no finding recommends an option that does not exist. */
static void test_probe_overhead(void)
{
	struct cycle_table t = mk(3);
	struct findings_ctx ctx = { .probe_share = 0.55,
				    .probe_hits = 240000,
				    .probe_ns = 3e8,
				    .target_cpu_ns = 550 * MS,
				    .cycle_spec = "py:generate" };
	struct findings f = eval(&t, &ctx);
	const struct finding *x = find(&f, "probe_overhead");
	CHECK(x && x->severity == FIND_CRITICAL && x->value == 0.55);
	CHECK(x && strstr(x->recommendation, "marker") && strstr(x->evidence, "240000"));
	x = find(&f, "unattributed_time");
	CHECK(x && strstr(x->evidence, "profiler's own probes"));
	for (size_t i = 0; i < f.n; i++)
		CHECK(!strstr(f.v[i].recommendation, "--probe py:") &&
		      !strstr(f.v[i].recommendation, "or py:FUNCTION"));
	findings_free(&f);
	ctx.probe_share = 0.05;
	ctx.cycle_spec = NULL;
	f = eval(&t, &ctx);
	x = find(&f, "probe_overhead");
	CHECK(x && x->severity == FIND_WARNING && strstr(x->recommendation, "--probe-count-only"));
	findings_free(&f);
	ctx.probe_share = 0.019;
	f = eval(&t, &ctx);
	CHECK(find(&f, "probe_overhead") == NULL);
	x = find(&f, "unattributed_time");
	CHECK(x && !strstr(x->evidence, "profiler's own probes"));
	findings_free(&f);
	/* --alloc's allocator probes above their own threshold have their own
	 * finding (alloc_probe_cost): probe_overhead is about the rest, and
	 * only when the rest is above its threshold. */
	ctx = (struct findings_ctx){ .probe_share = 0.50,
				     .probe_hits = 244000,
				     .probe_ns = 5.4e8,
				     .target_cpu_ns = 1085 * MS,
				     .alloc_probe_share = 0.49,
				     .alloc_probe_hits = 243000,
				     .alloc_probe_ns = 5.3e8,
				     .alloc_probe_threshold = 0.03 };
	f = eval(&t, &ctx);
	CHECK(find(&f, "probe_overhead") == NULL);
	x = find(&f, "unattributed_time");
	CHECK(x && strstr(x->evidence, "(alloc_probe_cost)"));
	findings_free(&f);
	ctx.alloc_probe_share = 0.42;
	ctx.alloc_probe_hits = 200000;
	ctx.alloc_probe_ns = 4.3e8;
	f = eval(&t, &ctx);
	x = find(&f, "probe_overhead");
	CHECK(x && x->severity == FIND_WARNING && x->value > 0.0799 && x->value < 0.0801);
	CHECK(x && strstr(x->evidence, "44000 probe hits") &&
	      strstr(x->evidence, "alloc_probe_cost"));
	findings_free(&f);
	/* Under the allocator threshold: no alloc finding, all of it here. */
	ctx.alloc_probe_share = 0.025;
	f = eval(&t, &ctx);
	x = find(&f, "probe_overhead");
	CHECK(x && x->value == 0.50 && strstr(x->evidence, "244000 probe hits"));
	findings_free(&f);
	free_table(&t);
}

/* Figures that cannot be: a critical self_check finding instead of the
 * share findings built on them. */
static void test_self_check(void)
{
	struct cycle_table t = mk(3);
	char why[200];
	for (size_t i = 0; i < 3; i++)
		set_part(&t.rows[i], &t.rows[i].part_inference_ns, 95 * MS);
	CHECK_INT_EQ(cycles_self_check(&t, 1, why, sizeof(why)), 0);
	/* Inference counted twice in the sum: 190 ms in a 100 ms cycle. */
	t.rows[1].inference_ns = 190 * MS;
	CHECK_INT_EQ(cycles_self_check(&t, 0, why, sizeof(why)), 0); /* threads unknown */
	CHECK_INT_EQ(cycles_self_check(&t, 2, why, sizeof(why)), 0); /* two threads may */
	CHECK_INT_EQ(cycles_self_check(&t, 1, why, sizeof(why)), 1);
	CHECK(strstr(why, "cycle 1: inference 190.000 ms") != NULL);
	struct findings_ctx ctx = { .nthreads = 1 };
	struct findings f = eval(&t, &ctx);
	const struct finding *x = find(&f, "self_check");
	CHECK(x && x->severity == FIND_CRITICAL && strstr(x->evidence, "cycle 1"));
	CHECK(find(&f, "inference_dominates") == NULL);
	findings_free(&f);
	/* A partition that does not add up to the wall time. */
	t.rows[1].inference_ns = 95 * MS;
	t.rows[2].other_ns += MS;
	CHECK_INT_EQ(cycles_self_check(&t, 1, why, sizeof(why)), 1);
	CHECK(strstr(why, "cycle 2: its parts sum to 101.000 ms") != NULL);
	free_table(&t);
}

static void test_no_cycles_and_empty(void)
{
	struct cycle_table t = mk(1);
	t.whole_run = true;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "no_cycles");
	CHECK(x && x->severity == FIND_INFO && strstr(x->recommendation, "--cycle") != NULL);
	findings_free(&f);
	/* A spec was given but gave nothing: not "no --cycle was given". */
	struct findings_ctx sc = { .cycle_spec = "./exp:step",
				   .cycle_problem = "never attached: no traced process maps a file "
						    "that matches the LIB part" };
	f = eval(&t, &sc);
	x = find(&f, "no_cycles");
	CHECK(x && strstr(x->title, "./exp:step") && strstr(x->evidence, "never attached") &&
	      !strstr(x->evidence, "no --cycle"));
	findings_free(&f);
	t.whole_run = false;
	f = eval(&t, NULL);
	CHECK(find(&f, "no_cycles") == NULL);
	findings_free(&f);
	free_table(&t);

	struct cycle_table empty = { 0 };
	f = eval(&empty, NULL);
	CHECK_INT_EQ(f.n, 0);
	findings_free(&f);
	struct findings_cfg cfg;
	findings_default_cfg(&cfg);
	CHECK_INT_EQ(findings_evaluate(NULL, &cfg, NULL, &f), -EINVAL);
	CHECK_STR_EQ(finding_severity_name(FIND_WARNING), "warning");
}

/* A run past the table's cap: 10000 cycles, the table keeps
 * the first and last 5; the aggregates of all of them make the findings.
 * Cycle 6000 (not in the table) is the slow one, SQL grows from cycle
 * 5000 on, RSS grows 1 MB a cycle: each is found over the whole run. */
static void test_whole_run_from_aggregates(void)
{
	struct cycle_table all = mk(10000), kept = mk(10);
	struct findings_cfg cfg;
	struct cycle_agg *ag = malloc(sizeof(*ag));
	struct findings f;
	const struct finding *x;

	findings_default_cfg(&cfg);
	if (!ag) {
		CHECK(!"malloc");
		return;
	}
	findings_agg_init(ag, &cfg);
	for (size_t i = 0; i < all.n; i++) {
		struct cycle_row *r = &all.rows[i];

		if (i >= 5000)
			set_part(r, &r->part_sql_ns, 40 * MS);
		r->has_rss = true;
		r->rss_end_bytes = (100 + i) * MB;
		if (i == 6000) {
			r->wall_ns = 400 * MS;
			r->other_ns += 300 * MS;
		}
		CHECK_INT_EQ(cycle_agg_add(ag, r), 0);
	}
	for (size_t i = 0; i < 10; i++)
		kept.rows[i] = all.rows[i < 5 ? i : 9990 + i];
	CHECK_INT_EQ(findings_evaluate_agg(&kept, ag, &cfg, NULL, &f), 0);
	x = find(&f, "slow_cycles");
	CHECK(x != NULL);
	CHECK(has_cycle(x, 6000));
	CHECK(x && strstr(x->title, "1 slow cycle(s)") != NULL);
	x = find(&f, "database_overhead");
	CHECK(x != NULL);
	/* 5000 x 40 ms of 10000 x 100 ms + 300 ms: 19.99%. */
	CHECK(x && strstr(x->evidence, "over 10000 cycle(s) (20.0%") != NULL);
	/* Not cycle 6000: 40 of its 400 ms. */
	CHECK(x && strstr(x->evidence, "above the threshold in 4999 cycle(s): #5000") != NULL);
	CHECK(x && strstr(x->evidence, "and 4989 more") != NULL);
	CHECK(x && x->ncycles == CYC_AGG_IDS);
	x = find(&f, "memory_growth");
	CHECK(x != NULL);
	CHECK(x && strstr(x->evidence, "over 10000 cycles (0..9999): 1.00 MB/cycle") != NULL);
	findings_free(&f);
	/* The kept rows alone say none of it. */
	f = eval(&kept, NULL);
	CHECK(find(&f, "slow_cycles") == NULL);
	CHECK(find(&f, "memory_growth") != NULL); /* 10 kept rows fit too */
	findings_free(&f);
	cycle_agg_free(ag);
	free(ag);
	free(kept.rows);
	free_table(&all);
}

static size_t n_critical(const struct findings *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].severity == FIND_CRITICAL;
	return n;
}

/* A CPU-bound program run with no probes and no cycles (one whole-run
 * cycle, on CPU throughout), and `ebpf-prof -- true` (a short run that
 * is mostly our own start-up, partly off CPU): findings, but no critical
 * one and no warning. */
static void test_unprobed_runs_not_critical(void)
{
	struct cycle_table t = mk(1);
	t.whole_run = true;
	t.rows[0].wall_ns = t.rows[0].other_ns = 2000 * MS;
	t.rows[0].end_ns = t.rows[0].start_ns + t.rows[0].wall_ns;
	struct findings_ctx ctx = { .mem_total_bytes = 8000 * MB, .ncpus = 2, .nthreads = 1 };
	struct findings f = eval(&t, &ctx);
	CHECK_INT_EQ(n_critical(&f), 0);
	for (size_t i = 0; i < f.n; i++)
		CHECK_INT_EQ(f.v[i].severity, FIND_INFO);
	CHECK(find(&f, "no_cycles") != NULL);
	const struct finding *x = find(&f, "unattributed_time");
	CHECK(x && x->severity == FIND_INFO && x->value == 1.0);
	findings_free(&f);
	/* `-- true`: 984.9 ms, 300 ms of it asleep. */
	t.rows[0].wall_ns = 984900000ull;
	t.rows[0].part_off_cpu_ns[CYC_OFF_SLEEP] = 300 * MS;
	t.rows[0].other_ns = t.rows[0].wall_ns - 300 * MS;
	t.rows[0].end_ns = t.rows[0].start_ns + t.rows[0].wall_ns;
	f = eval(&t, &ctx);
	CHECK_INT_EQ(n_critical(&f), 0);
	for (size_t i = 0; i < f.n; i++)
		CHECK_INT_EQ(f.v[i].severity, FIND_INFO);
	x = find(&f, "unattributed_time");
	CHECK(x && strstr(x->title, "70%") != NULL);
	findings_free(&f);
	free_table(&t);
}

/* 98% inference in every cycle: with the cycle defined as py:generate (the
 * model's generation) or by a llama.cpp function, "inference takes 98%"
 * restates the definition and is not a finding; the same table with cycles
 * from the marker, or py: around a function that is not all inference, is
 * one (a warning: a share alone is not critical). */
static void test_cycle_is_the_component(void)
{
	struct cycle_table t = mk(4);
	for (size_t i = 0; i < 4; i++) {
		set_part(&t.rows[i], &t.rows[i].part_inference_ns, (i == 1 ? 95 : 98) * MS);
		t.rows[i].inference_ns = t.rows[i].part_inference_ns;
	}
	struct findings_ctx ctx = { .cycle_spec = "py:generate", .py_watch = true };
	struct findings f = eval(&t, &ctx);
	CHECK(find(&f, "inference_dominates") == NULL);
	CHECK(find(&f, "unattributed_time") == NULL);
	CHECK_INT_EQ(n_critical(&f), 0);
	findings_free(&f);
	ctx.cycle_spec = "libllama:llama_decode";
	f = eval(&t, &ctx);
	CHECK(find(&f, "inference_dominates") == NULL);
	findings_free(&f);
	/* Marker cycles: no spec, the share is a finding. */
	f = eval(&t, NULL);
	const struct finding *x = find(&f, "inference_dominates");
	CHECK(x && x->severity == FIND_WARNING && strstr(x->title, "97%"));
	findings_free(&f);
	/* One cycle only 70% inference: py:generate is not all inference. */
	t.rows[2].part_inference_ns -= 28 * MS;
	t.rows[2].other_ns += 28 * MS;
	ctx.cycle_spec = "py:generate";
	f = eval(&t, &ctx);
	x = find(&f, "inference_dominates");
	CHECK(x && x->severity == FIND_WARNING);
	findings_free(&f);
	/* --cycle-every llama_decode: each cycle is a decode step and what
	 * follows it up to the next; inference is still the definition. */
	ctx.cycle_spec = "llama_decode";
	f = eval(&t, &ctx);
	CHECK(find(&f, "inference_dominates") == NULL);
	findings_free(&f);
	free_table(&t);

	/* The same for SQL: cycles of sqlite3_step calls. */
	struct cycle_table q = mk(3);
	for (size_t i = 0; i < 3; i++)
		set_part(&q.rows[i], &q.rows[i].part_sql_ns, 60 * MS);
	struct findings_ctx sq = { .cycle_spec = "libsqlite3:sqlite3_step" };
	f = eval(&q, &sq);
	CHECK(find(&f, "database_overhead") == NULL);
	findings_free(&f);
	sq.cycle_spec = "py:handle";
	f = eval(&q, &sq);
	x = find(&f, "database_overhead");
	CHECK(x && x->severity == FIND_WARNING);
	findings_free(&f);
	free_table(&q);
}

/* What costs the user time or data stays critical: a slow cycle with a
 * cause, throttling that lengthens cycles, memory pressure, our probes
 * taking over 10% (test_probe_overhead), figures that fail the self-check
 * (test_self_check). A slow cycle nothing explains is a warning. */
static void test_true_criticals(void)
{
	struct cycle_table t = mk(5);
	for (size_t i = 0; i < 5; i++)
		set_part(&t.rows[i], &t.rows[i].part_sql_ns, 20 * MS);
	t.rows[2].wall_ns = 500 * MS; /* 5x the median, by SQL */
	t.rows[2].part_sql_ns += 400 * MS;
	struct findings f = eval(&t, NULL);
	const struct finding *x = find(&f, "slow_cycles");
	CHECK(x && x->severity == FIND_CRITICAL && strstr(x->evidence, "SQL +400.0 ms"));
	CHECK(f.n && f.v[0].severity == FIND_CRITICAL);
	findings_free(&f);
	/* The same 500 ms, grown by unattributed time: no cause, a warning. */
	t.rows[2].part_sql_ns -= 400 * MS;
	t.rows[2].other_ns += 400 * MS;
	f = eval(&t, NULL);
	x = find(&f, "slow_cycles");
	CHECK(x && x->severity == FIND_WARNING && strstr(x->evidence, "unattributed +400.0 ms"));
	findings_free(&f);
	t.rows[2].wall_ns = 100 * MS;
	t.rows[2].other_ns -= 400 * MS;
	/* Throttled cycles 50% longer. */
	t.rows[3].throttled_share = t.rows[4].throttled_share = 0.5;
	t.rows[3].wall_ns = t.rows[4].wall_ns = 150 * MS;
	t.rows[3].other_ns = t.rows[4].other_ns = 130 * MS;
	f = eval(&t, NULL);
	x = find(&f, "throttling");
	CHECK(x && x->severity == FIND_CRITICAL);
	findings_free(&f);
	free_table(&t);

	/* Lost samples: 80 of 1000 (8%) critical, 30 (3%) a warning, 5 (0.5%)
	 * none; a plain run with none lost has no such finding. */
	struct cycle_table w = mk(1);
	w.whole_run = true;
	struct findings_ctx ctx = { .samples_total = 920, .samples_lost = 80 };
	f = eval(&w, &ctx);
	x = find(&f, "samples_lost");
	CHECK(x && x->severity == FIND_CRITICAL && strstr(x->evidence, "80 of 1000 samples lost"));
	CHECK(x && strstr(x->title, "8%") != NULL);
	findings_free(&f);
	ctx = (struct findings_ctx){ .samples_total = 970, .samples_lost = 30 };
	f = eval(&w, &ctx);
	x = find(&f, "samples_lost");
	CHECK(x && x->severity == FIND_WARNING);
	findings_free(&f);
	ctx = (struct findings_ctx){ .samples_total = 995, .samples_lost = 5 };
	f = eval(&w, &ctx);
	CHECK(find(&f, "samples_lost") == NULL);
	findings_free(&f);
	ctx.samples_lost = 0;
	f = eval(&w, &ctx);
	CHECK(find(&f, "samples_lost") == NULL);
	findings_free(&f);
	free_table(&w);
}

int main(void)
{
	test_unprobed_runs_not_critical();
	test_cycle_is_the_component();
	test_true_criticals();
	test_whole_run_from_aggregates();
	test_inference();
	test_sql();
	test_other();
	test_partial_left_out();
	test_probe_overhead();
	test_self_check();
	test_slow();
	test_slow_worst_first();
	test_slow_explained_by_throttling();
	test_memory_pressure();
	test_fit();
	test_leak();
	test_throttle();
	test_oversub();
	test_no_cycles_and_empty();
	return check_report("test_findings");
}
