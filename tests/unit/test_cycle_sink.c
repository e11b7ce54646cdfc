// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cycle facts sink (user/cycles/cycle_sink.c): pairing, the lag before
 * attribution, late facts, pruning (bounded memory on a long stream), caps,
 * the live "closed" list and the --cycle py: return chain, plus --cycle /
 * --cycle-every parsing with bad input. Times in ms after BASE; the
 * expected numbers are worked out in the comments. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "cycles/cycle_sink.h"
#include "cycles/cycle_agg.h"
#include "cycles/cycle_spec.h"

#define MS    1000000ull
#define BASE  (1000ull * MS)
#define T(ms) (BASE + (uint64_t)(ms)*MS)
#define LAG   (100 * MS)

static struct cycle_sink *mk(enum cycle_mode mode, size_t max_facts, bool chain)
{
	struct cycle_sink_cfg cfg = { .mode = mode,
				      .lag_ns = LAG,
				      .period_ns = MS,
				      .max_facts = max_facts,
				      .chain_ends = chain };
	struct cycle_sink *s = cycle_sink_new(&cfg);

	CHECK(s != NULL);
	/* Inactive, a sink takes no facts (a run whose boundaries are not
	 * attached yet). */
	cycle_sink_sample(s, T(0), 1, "f");
	CHECK_INT_EQ(cycle_sink_stats(s)->held_facts + cycle_sink_stats(s)->peak_held_facts, 0);
	cycle_sink_set_active(s, true);
	return s;
}

static void span(struct cycle_sink *s, uint64_t a, uint64_t b, uint32_t tid, uint32_t kind,
		 const char *detail)
{
	struct cyc_span sp = {
		.start_ns = a, .end_ns = b, .tid = tid, .kind = kind, .name = "p", .detail = detail
	};

	cycle_sink_span(s, &sp);
}

/* Two cycles on thread 7: [0,100) and [200,300). SQL 10..30 in the first,
 * a sleep 250..280 in the second, samples in both. Nothing is attributed
 * before end + lag; the rows then carry the facts of their own span. */
static void test_pairs_and_lag(void)
{
	struct cycle_sink *s = mk(CYCLE_MODE_PAIRS, 1000, false);
	const struct cycle_table *t;
	const struct cycle_closed *c;
	size_t n;

	cycle_sink_begin(s, T(0), 7);
	span(s, T(10), T(30), 7, CYC_SPAN_SQL, "INSERT");
	cycle_sink_sample(s, T(40), 7, "f");
	cycle_sink_sample(s, T(41), 7, "f");
	cycle_sink_end(s, T(100), 7);
	/* Closed, shown to the live view at once... */
	c = cycle_sink_take_closed(s, &n);
	CHECK_INT_EQ(n, 1);
	if (n == 1) {
		CHECK_INT_EQ(c[0].no, 0);
		CHECK_INT_EQ(c[0].end_ns - c[0].start_ns, 100 * MS);
	}
	/* ...but attributed only once the rings are drained past end + lag. */
	CHECK_INT_EQ(cycle_sink_flush(s, T(150), false), 0);
	CHECK_INT_EQ(cycle_sink_table(s)->n, 0);
	cycle_sink_begin(s, T(200), 7);
	cycle_sink_offcpu(s, T(250), T(280), 7, CYC_OFF_SLEEP);
	cycle_sink_sample(s, T(210), 7, "g");
	CHECK_INT_EQ(cycle_sink_flush(s, T(200), false), 1);
	t = cycle_sink_table(s);
	CHECK_INT_EQ(t->n, 1);
	CHECK_INT_EQ(t->rows[0].index, 0);
	CHECK_INT_EQ(t->rows[0].wall_ns, 100 * MS);
	CHECK_INT_EQ(t->rows[0].sql_ns, 20 * MS);
	CHECK_INT_EQ(t->rows[0].samples, 2);
	CHECK_INT_EQ(t->rows[0].off_cpu_total_ns, 0);
	CHECK_STR_EQ(t->rows[0].sql_slowest, "INSERT");
	CHECK_INT_EQ(t->rows[0].n_top, 1);
	cycle_sink_end(s, T(300), 7);
	CHECK_INT_EQ(cycle_sink_flush(s, T(399), false), 0);
	CHECK_INT_EQ(cycle_sink_flush(s, T(400), false), 1);
	t = cycle_sink_table(s);
	CHECK_INT_EQ(t->n, 2);
	CHECK_INT_EQ(t->rows[1].index, 1);
	CHECK_INT_EQ(t->rows[1].start_ns, T(200));
	CHECK_INT_EQ(t->rows[1].off_cpu_ns[CYC_OFF_SLEEP], 30 * MS);
	CHECK_INT_EQ(t->rows[1].part_off_cpu_ns[CYC_OFF_SLEEP], 30 * MS);
	CHECK_INT_EQ(t->rows[1].sql_ns, 0);
	CHECK_INT_EQ(t->rows[1].samples, 1);
	CHECK(!t->rows[1].truncated);
	/* A fact for the first cycle, after it was attributed: late. */
	span(s, T(50), T(60), 7, CYC_SPAN_SQL, NULL);
	CHECK_INT_EQ(cycle_sink_stats(s)->late_facts, 1);
	c = cycle_sink_take_closed(s, &n);
	CHECK_INT_EQ(n, 1);
	cycle_sink_free(s);
}

/* Per-thread pairing: an end with nothing open is counted; a second begin
 * truncates the open cycle; a cycle open at the end of the run is cut
 * there (truncated); cycles of two threads may overlap. */
static void test_pairing(void)
{
	struct cycle_sink *s = mk(CYCLE_MODE_PAIRS, 1000, false);
	struct cycle_table t;

	cycle_sink_end(s, T(5), 1);    /* unmatched */
	cycle_sink_begin(s, T(10), 1); /* A: 10..20, truncated by the next begin */
	cycle_sink_begin(s, T(20), 1); /* B: 20..50 */
	cycle_sink_begin(s, T(30), 2); /* C: 30..70, other thread, overlaps B */
	cycle_sink_end(s, T(50), 1);
	cycle_sink_end(s, T(70), 2);
	cycle_sink_begin(s, T(80), 2); /* D: 80..run end 90, truncated */
	CHECK_INT_EQ(cycle_sink_flush(s, T(90), true), 4);
	CHECK_INT_EQ(cycle_sink_stats(s)->unmatched_ends, 1);
	cycle_sink_take_table(s, &t);
	CHECK_INT_EQ(t.n, 4);
	CHECK_INT_EQ(t.unmatched_ends, 1);
	if (t.n == 4) {
		/* In start order, numbered in that order. */
		CHECK_INT_EQ(t.rows[0].start_ns, T(10));
		CHECK(t.rows[0].truncated);
		CHECK_INT_EQ(t.rows[0].wall_ns, 10 * MS);
		CHECK_INT_EQ(t.rows[1].start_ns, T(20));
		CHECK(!t.rows[1].truncated);
		CHECK_INT_EQ(t.rows[2].tid, 2);
		CHECK_INT_EQ(t.rows[2].wall_ns, 40 * MS);
		CHECK_INT_EQ(t.rows[3].end_ns, T(90));
		CHECK(t.rows[3].truncated);
		/* Cut by the end of the run, unlike A (cut by a begin). */
		CHECK(t.rows[3].partial);
		CHECK(!t.rows[0].partial && !t.rows[1].partial && !t.rows[2].partial);
		for (size_t i = 0; i < t.n; i++)
			CHECK_INT_EQ(t.rows[i].index, i);
	}
	cycle_table_free(&t);
	/* The sink's table is empty after the move. */
	CHECK_INT_EQ(cycle_sink_table(s)->n, 0);
	cycle_sink_free(s);
}

/* --cycle-every: entry to entry; an entry older than the open cycle is
 * ignored and counted; the last cycle is cut by the end of the run. */
static void test_every(void)
{
	struct cycle_sink *s = mk(CYCLE_MODE_EVERY, 1000, false);
	const struct cycle_table *t;

	cycle_sink_entry(s, T(0), 3);
	cycle_sink_entry(s, T(40), 3);
	cycle_sink_entry(s, T(30), 3); /* out of order */
	cycle_sink_entry(s, T(100), 4);
	CHECK_INT_EQ(cycle_sink_flush(s, T(150), false), 1); /* [0,40) is past the lag */
	CHECK_INT_EQ(cycle_sink_flush(s, T(250), true), 2);
	t = cycle_sink_table(s);
	CHECK_INT_EQ(t->n, 3);
	CHECK_INT_EQ(cycle_sink_stats(s)->reordered, 1);
	if (t->n == 3) {
		CHECK_INT_EQ(t->rows[0].wall_ns, 40 * MS);
		CHECK_INT_EQ(t->rows[1].wall_ns, 60 * MS);
		CHECK_INT_EQ(t->rows[1].tid, 3); /* the thread of the entry that opened it */
		CHECK(!t->rows[1].truncated);
		CHECK_INT_EQ(t->rows[2].wall_ns, 150 * MS);
		CHECK_INT_EQ(t->rows[2].tid, 4);
		CHECK(t->rows[2].truncated);
		CHECK(t->rows[2].partial);
		CHECK(!t->rows[0].partial && !t->rows[1].partial);
	}
	cycle_sink_free(s);
}

/* chain_ends (py: on CPython 3.11): returns only. The first return starts
 * the chain, each further one closes a cycle from the previous one; a
 * begin that does come pairs normally. */
static void test_chain(void)
{
	struct cycle_sink *s = mk(CYCLE_MODE_PAIRS, 1000, true);
	const struct cycle_table *t;

	cycle_sink_end(s, T(10), 5);
	cycle_sink_end(s, T(30), 5); /* 10..30 */
	cycle_sink_end(s, T(60), 5); /* 30..60 */
	cycle_sink_begin(s, T(70), 5);
	cycle_sink_end(s, T(75), 5); /* 70..75, paired */
	cycle_sink_end(s, T(90), 5); /* 75..90 */
	cycle_sink_end(s, T(95), 6); /* other thread: starts its own chain */
	CHECK_INT_EQ(cycle_sink_flush(s, T(100), true), 4);
	t = cycle_sink_table(s);
	CHECK_INT_EQ(t->n, 4);
	CHECK_INT_EQ(cycle_sink_stats(s)->chained, 3);
	CHECK_INT_EQ(cycle_sink_stats(s)->unmatched_ends, 2);
	if (t->n == 4) {
		CHECK_INT_EQ(t->rows[0].wall_ns, 20 * MS);
		CHECK_INT_EQ(t->rows[1].wall_ns, 30 * MS);
		CHECK_INT_EQ(t->rows[2].wall_ns, 5 * MS);
		CHECK_INT_EQ(t->rows[3].start_ns, T(75));
	}
	cycle_sink_free(s);
}

/* A long run: 2000 cycles of 10 ms with 50 spans, 10 samples and an RSS
 * reading each, flushed every 10 ms as the recorder does. What is held
 * stays around lag / cycle = 10 cycles' worth of facts (plus one prune
 * period), however long the run: bounded memory. Every row sees exactly
 * its own facts, and the held RSS reading carries across cycles. */
static void test_bounded(void)
{
	struct cycle_sink *s = mk(CYCLE_MODE_PAIRS, 1u << 20, false);
	const struct cycle_table *t;
	const size_t ncyc = 2000;
	size_t max_held = 0;

	for (size_t i = 0; i < ncyc; i++) {
		uint64_t c0 = T(i * 10);

		cycle_sink_begin(s, c0, 1);
		for (int k = 0; k < 50; k++)
			span(s, c0 + (uint64_t)k * 100000, c0 + (uint64_t)k * 100000 + 50000, 1,
			     CYC_SPAN_OTHER, NULL);
		for (int k = 0; k < 10; k++)
			cycle_sink_sample(s, c0 + (uint64_t)k * MS, 1, k % 2 ? "odd" : "even");
		if (i % 100 == 0)
			cycle_sink_rss(s, 0, c0 + MS, (uint64_t)(i + 1) << 20);
		cycle_sink_end(s, c0 + 9 * MS + MS / 2, 1);
		CHECK(cycle_sink_flush(s, c0 + 10 * MS, false) >= 0);
		if (cycle_sink_stats(s)->held_facts > max_held)
			max_held = cycle_sink_stats(s)->held_facts;
	}
	CHECK(cycle_sink_flush(s, T(ncyc * 10 + 1000), true) >= 0);
	t = cycle_sink_table(s);
	CHECK_INT_EQ(t->n, ncyc);
	/* lag 100 ms + prune period 100 ms = 20 cycles of 61 facts, plus one
	 * reading held; 2000 cycles would be 122k. */
	CHECK(max_held <= 25 * 61);
	CHECK_INT_EQ(cycle_sink_stats(s)->late_facts, 0);
	CHECK_INT_EQ(cycle_sink_stats(s)->dropped_facts, 0);
	for (size_t i = 0; i < t->n; i++) {
		const struct cycle_row *r = &t->rows[i];

		if (r->probe_other_calls != 50 || r->samples != 10 ||
		    r->probe_other_ns != 50 * 50000 || !r->has_rss ||
		    r->rss_end_bytes != (uint64_t)(i / 100 * 100 + 1) << 20) {
			CHECK(!"row attributed wrongly");
			fprintf(stderr, "  row %zu: calls %u samples %llu rss %llu\n", i,
				r->probe_other_calls, (unsigned long long)r->samples,
				(unsigned long long)r->rss_end_bytes);
			break;
		}
	}
	cycle_sink_free(s);
}

/* Facts over max_facts are counted, not kept; a fact before any cycle and
 * older than the horizon is simply not needed (not late); NULL sinks and
 * bad facts are ignored. */
static void test_caps_and_bad_input(void)
{
	struct cycle_sink *s = mk(CYCLE_MODE_PAIRS, 3, false);

	cycle_sink_begin(s, T(0), 1);
	for (int k = 0; k < 5; k++)
		cycle_sink_sample(s, T(k), 1, "f");
	CHECK_INT_EQ(cycle_sink_stats(s)->dropped_facts, 2);
	cycle_sink_offcpu(s, T(5), T(4), 1, CYC_OFF_SLEEP); /* ends before it starts */
	cycle_sink_offcpu(s, T(5), T(6), 1, 99);	    /* no such reason */
	span(s, T(1), T(2), 1, 42, NULL);		    /* no such kind */
	cycle_sink_freq(s, T(1), -5);			    /* not a frequency */
	cycle_sink_end(s, T(10), 1);
	CHECK_INT_EQ(cycle_sink_flush(s, T(500), false), 1);
	CHECK_INT_EQ(cycle_sink_table(s)->rows[0].samples, 3);
	CHECK_INT_EQ(cycle_sink_table(s)->rows[0].off_cpu_total_ns, 0);
	CHECK(!cycle_sink_table(s)->rows[0].has_freq);
	cycle_sink_free(s);

	s = mk(CYCLE_MODE_PAIRS, 10, false);
	CHECK_INT_EQ(cycle_sink_flush(s, T(1000), false), 0);
	cycle_sink_sample(s, T(1), 1, "old"); /* before the horizon, no cycle ever */
	CHECK_INT_EQ(cycle_sink_stats(s)->late_facts, 0);
	CHECK_INT_EQ(cycle_sink_stats(s)->held_facts, 0);
	cycle_sink_free(s);

	/* RSS of other processes than the main one is not the cycle's. */
	s = mk(CYCLE_MODE_PAIRS, 10, false);
	cycle_sink_set_main_pid(s, 100);
	cycle_sink_begin(s, T(0), 1);
	cycle_sink_rss(s, 200, T(1), 999);
	cycle_sink_rss(s, 100, T(2), 5);
	cycle_sink_end(s, T(10), 1);
	CHECK_INT_EQ(cycle_sink_flush(s, T(10), true), 1);
	CHECK_INT_EQ(cycle_sink_table(s)->rows[0].rss_end_bytes, 5);
	cycle_sink_free(s);

	/* A full table: the first max_rows / 2 rows stay, the last
	 * ones replace each other in a ring, and every cycle is in the
	 * aggregates, so statistics and findings cover the whole run. */
	{
		struct cycle_sink_cfg cfg = { .mode = CYCLE_MODE_EVERY,
					      .lag_ns = LAG,
					      .period_ns = MS,
					      .max_facts = 10,
					      .max_rows = 2 };
		const struct cycle_agg *ag;

		s = cycle_sink_new(&cfg);
		cycle_sink_set_active(s, true);
		for (int i = 0; i < 5; i++)
			cycle_sink_entry(s, T(i * 10), 1);
		CHECK_INT_EQ(cycle_sink_flush(s, T(50), true), 5);
		CHECK_INT_EQ(cycle_sink_table(s)->n, 2);
		CHECK_INT_EQ(cycle_sink_table(s)->rows[0].index, 0);
		CHECK_INT_EQ(cycle_sink_table(s)->rows[1].index, 4);
		CHECK(cycle_sink_table(s)->rows[1].partial);
		CHECK_INT_EQ(cycle_sink_stats(s)->rows_not_kept, 3);
		CHECK_INT_EQ(cycle_sink_stats(s)->attributed, 5);
		CHECK_INT_EQ(cycle_sink_stats(s)->closed, 5);
		ag = cycle_sink_agg(s);
		/* The partial last cycle is not a cycle time. */
		CHECK_INT_EQ(ag->n, 4);
		CHECK_INT_EQ(ag->sum[CA_WALL], 40 * MS);
		cycle_sink_free(s);
	}
	/* Many cycles through a small ring, flushed as the run goes: the rows
	 * kept are the first 5 and the last 5, in index order; the aggregates
	 * hold all 1000, the slowest among them too. */
	{
		struct cycle_sink_cfg cfg = { .mode = CYCLE_MODE_EVERY,
					      .lag_ns = LAG,
					      .period_ns = MS,
					      .max_facts = 10,
					      .max_rows = 10 };
		const struct cycle_table *t;
		const struct cycle_agg *ag;
		uint64_t at = 0, sum = 0;

		s = cycle_sink_new(&cfg);
		cycle_sink_set_active(s, true);
		for (int i = 0; i <= 1000; i++) {
			/* Cycle 500 takes 50 ms, the others 1 to 3 ms. */
			uint64_t w = i == 500 ? 50 : 1 + (uint64_t)(i % 3);

			cycle_sink_entry(s, T(at), 1);
			if (i < 1000)
				sum += w * MS;
			at += w;
			CHECK(cycle_sink_flush(s, T(at), false) >= 0);
		}
		CHECK(cycle_sink_flush(s, T(at + 1), true) >= 0);
		t = cycle_sink_table(s);
		CHECK_INT_EQ(t->n, 10);
		for (size_t i = 0; i < 5 && t->n == 10; i++) {
			CHECK_INT_EQ(t->rows[i].index, i);
			CHECK_INT_EQ(t->rows[5 + i].index, 996 + i);
		}
		ag = cycle_sink_agg(s);
		CHECK_INT_EQ(ag->n, 1000);
		CHECK_INT_EQ(ag->sum[CA_WALL], sum);
		CHECK_INT_EQ(ag->slowest[0].index, 500);
		CHECK_INT_EQ(ag->slowest[0].part[CA_WALL], 50 * MS);
		cycle_sink_free(s);
	}

	cycle_sink_begin(NULL, 1, 1);
	cycle_sink_end(NULL, 1, 1);
	cycle_sink_entry(NULL, 1, 1);
	cycle_sink_sample(NULL, 1, 1, "x");
	cycle_sink_offcpu(NULL, 1, 2, 1, 0);
	cycle_sink_rss(NULL, 1, 1, 1);
	cycle_sink_freq(NULL, 1, 1);
	cycle_sink_throttle(NULL, 1, 2);
	cycle_sink_gpu(NULL, NULL);
	span(NULL, 1, 2, 1, 0, NULL);
	CHECK_INT_EQ(cycle_sink_flush(NULL, 1, true), 0);
	cycle_sink_free(NULL);
}

static void test_spec(void)
{
	struct cycle_spec c;
	char err[256];
	static const char *const bad[] = {
		"",
		"py:",
		"py:1abc",
		"py:a-b",
		"py:a b",
		"py:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"py:Cls.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"py:Cls.",
		"py:.run",
		"py:a..b",
		"py::run",
		"py:mod:",
		"py:a:b:c",
		"py:f.<locals>",
		"no colon",
		"no-colon",
		"1abc",
		":sym",
		"lib:",
		"lib:bad sym",
		"lib:f,count",
		"lib:f,bogus",
		"usdt:x",
		"\xff\xfe",
	};

	CHECK_INT_EQ(cycle_spec_parse(NULL, false, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_AUTO);
	CHECK_INT_EQ(cycle_spec_parse("marker", false, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_MARKER);
	CHECK_INT_EQ(cycle_spec_parse("marker", true, &c, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "--cycle-every") != NULL);
	CHECK_INT_EQ(cycle_spec_parse("py:run_cycle", false, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_PY);
	CHECK_STR_EQ(c.py_name, "run_cycle");
	/* Qualified names: the kernel's USDT filter gets the last part. */
	CHECK_INT_EQ(cycle_spec_parse("py:mod.sub:StandIn.run", false, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_PY);
	CHECK_STR_EQ(c.py_name, "run");
	CHECK_STR_EQ(c.py.module, "mod.sub");
	CHECK_STR_EQ(c.py.qual, "StandIn.run");
	CHECK_INT_EQ(cycle_spec_parse("libfoo:step_fn", true, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_UPROBE);
	CHECK(c.every);
	CHECK_STR_EQ(c.def.lib, "libfoo");
	CHECK_STR_EQ(c.def.symbol, "step_fn");
	cycle_spec_free(&c);
	/* A bare symbol: any mapped file, as the probe presets. */
	CHECK_INT_EQ(cycle_spec_parse("llama_tokenize", true, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_UPROBE);
	CHECK(c.def.lib == NULL);
	CHECK_STR_EQ(c.def.symbol, "llama_tokenize");
	cycle_spec_free(&c);
	CHECK_INT_EQ(cycle_spec_parse("./my-experiment:step", false, &c, err, sizeof(err)), 0);
	CHECK_STR_EQ(c.def.lib, "./my-experiment");
	cycle_spec_free(&c);
	CHECK_INT_EQ(cycle_spec_parse("usdt:/bin/x:prov:name", true, &c, err, sizeof(err)), 0);
	CHECK_INT_EQ(c.src, CYC_SRC_USDT);
	cycle_spec_free(&c);
	/* A USDT point has no return: not a --cycle. */
	CHECK_INT_EQ(cycle_spec_parse("usdt:/bin/x:prov:name", false, &c, err, sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "no return") != NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (cycle_spec_parse(bad[i], false, &c, err, sizeof(err)) != -EINVAL) {
			CHECK(!"bad spec accepted");
			fprintf(stderr, "  accepted: '%s'\n", bad[i]);
			cycle_spec_free(&c);
		}
		CHECK(err[0] != '\0');
	}
}

int main(void)
{
	test_pairs_and_lag();
	test_pairing();
	test_every();
	test_chain();
	test_bounded();
	test_caps_and_bad_input();
	test_spec();
	return check_report("test_cycle_sink");
}
