// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cycle facts store (user/cycles/cycle_facts.c) shared by the sink and
 * the attribution's input: facts kept with their names interned, those
 * that cannot be refused, a name that cannot be kept failing its fact or,
 * with keep_unnamed, leaving it without a name (counted), clearing that
 * keeps the names. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "cycles/cycle_facts.h"

static void test_add(void)
{
	struct cycle_facts f;
	struct cyc_span sp = { .start_ns = 10,
			       .end_ns = 0,
			       .tid = 7,
			       .kind = CYC_SPAN_SQL,
			       .tokens = 3,
			       .name = "sqlite3_step",
			       .detail = "SELECT 1" };
	struct cyc_gpu_sample g = { 5, 50.0, 1000.0, 40.0 };

	cycle_facts_init(&f, 0, false);
	CHECK_INT_EQ(cycle_facts_add_span(&f, &sp), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&f, 11, 7, "main"), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&f, 12, 8, NULL), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&f, 13, 7, "sqlite3_step"), 0);
	CHECK_INT_EQ(cycle_facts_add_offcpu(&f, 20, 30, 7, CYC_OFF_RUNQ), 0);
	CHECK_INT_EQ(cycle_facts_add_rss(&f, 40, 4096), 0);
	CHECK_INT_EQ(cycle_facts_add_freq(&f, 41, 1200.5), 0);
	CHECK_INT_EQ(cycle_facts_add_throttle(&f, 50, 0), 0);
	CHECK_INT_EQ(cycle_facts_add_gpu(&f, &g), 0);
	CHECK_INT_EQ(cycle_facts_count(&f), 9);
	/* As given (end 0: the return was not seen). */
	CHECK(f.spans.n == 1 && f.spans.v[0].start == 10 && f.spans.v[0].end == 0 &&
	      f.spans.v[0].tid == 7 && f.spans.v[0].kind == CYC_SPAN_SQL &&
	      f.spans.v[0].tokens == 3);
	CHECK_STR_EQ(cycle_facts_str(&f, f.spans.v[0].name), "sqlite3_step");
	CHECK_STR_EQ(cycle_facts_str(&f, f.spans.v[0].detail), "SELECT 1");
	/* One name, one id: the sample's function is the span's name. */
	CHECK_INT_EQ(f.samples.v[2].func, f.spans.v[0].name);
	CHECK_INT_EQ(f.samples.v[1].func, 0);
	CHECK(cycle_facts_str(&f, 0) == NULL);
	CHECK_INT_EQ(cycle_facts_nnames(&f), 3);
	CHECK(f.offs.v[0].start == 20 && f.offs.v[0].end == 30 &&
	      f.offs.v[0].reason == CYC_OFF_RUNQ);
	CHECK(f.rss.v[0].ts == 40 && f.rss.v[0].v == 4096.0);
	CHECK(f.freq.v[0].ts == 41 && f.freq.v[0].v == 1200.5);
	CHECK(f.thr.v[0].start == 50 && f.thr.v[0].end == 0);
	CHECK(f.gpu.v[0].ts_ns == 5 && f.gpu.v[0].power_mw == 1000.0);
	/* Cleared: no fact, the names kept with their ids. */
	cycle_facts_clear(&f);
	CHECK_INT_EQ(cycle_facts_count(&f), 0);
	CHECK_INT_EQ(cycle_facts_nnames(&f), 3);
	CHECK_INT_EQ(cycle_facts_add_sample(&f, 1, 1, "main"), 0);
	CHECK_STR_EQ(cycle_facts_str(&f, f.samples.v[0].func), "main");
	CHECK_INT_EQ(cycle_facts_nnames(&f), 3);
	cycle_facts_free(&f);
}

/* Two names at most: a third fails its fact, or leaves it unnamed. */
static void test_names_full(void)
{
	struct cycle_facts strict, keep;
	struct cyc_span sp = { .start_ns = 1, .end_ns = 2, .name = "c", .detail = "a" };

	cycle_facts_init(&strict, 2, false);
	cycle_facts_init(&keep, 2, true);
	CHECK_INT_EQ(cycle_facts_add_sample(&strict, 1, 1, "a"), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&strict, 2, 1, "b"), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&strict, 3, 1, "c"), -ENOMEM);
	CHECK_INT_EQ(cycle_facts_add_span(&strict, &sp), -ENOMEM);
	CHECK_INT_EQ(cycle_facts_add_sample(&strict, 4, 1, "a"), 0);
	CHECK_INT_EQ(strict.samples.n, 3);
	CHECK_INT_EQ(strict.spans.n, 0);
	CHECK_INT_EQ(strict.names_dropped, 0);

	CHECK_INT_EQ(cycle_facts_add_sample(&keep, 1, 1, "a"), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&keep, 2, 1, "b"), 0);
	CHECK_INT_EQ(cycle_facts_add_sample(&keep, 3, 1, "c"), 0);
	CHECK_INT_EQ(cycle_facts_add_span(&keep, &sp), 0);
	CHECK_INT_EQ(keep.samples.n, 3);
	CHECK_INT_EQ(keep.samples.v[2].func, 0);
	/* The span's name could not be kept, its detail (known) could. */
	CHECK(keep.spans.n == 1 && keep.spans.v[0].name == 0);
	CHECK_STR_EQ(cycle_facts_str(&keep, keep.spans.v[0].detail), "a");
	CHECK_INT_EQ(keep.names_dropped, 2);
	cycle_facts_free(&strict);
	cycle_facts_free(&keep);
}

/* What cannot be: refused, nothing kept; what is only damaged: kept. */
static void test_bad(void)
{
	struct cycle_facts f;
	struct cyc_span kind = { .start_ns = 1, .end_ns = 2, .kind = CYC_SPAN__COUNT };
	struct cyc_span rev = { .start_ns = 5, .end_ns = 3, .kind = CYC_SPAN_OTHER };

	cycle_facts_init(&f, 0, false);
	CHECK_INT_EQ(cycle_facts_add_span(&f, NULL), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_span(&f, &kind), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_offcpu(&f, 10, 5, 1, CYC_OFF_SLEEP), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_throttle(&f, 10, 5), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_freq(&f, 10, -1), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_gpu(&f, NULL), -EINVAL);
	CHECK_INT_EQ(cycle_facts_count(&f), 0);
	/* A return before its entry: the call kept, its end dropped. */
	CHECK_INT_EQ(cycle_facts_add_span(&f, &rev), 0);
	CHECK(f.spans.n == 1 && f.spans.v[0].start == 5 && f.spans.v[0].end == 0);
	/* An unknown off-CPU reason: "other". */
	CHECK_INT_EQ(cycle_facts_add_offcpu(&f, 1, 2, 1, 77), 0);
	CHECK_INT_EQ(f.offs.v[0].reason, CYC_OFF_OTHER);
	/* Still throttled at the end: kept with end 0. */
	CHECK_INT_EQ(cycle_facts_add_throttle(&f, 10, 0), 0);
	CHECK_INT_EQ(cycle_facts_count(&f), 3);
	cycle_facts_free(&f);
}

int main(void)
{
	test_add();
	test_bad();
	test_names_full();
	return check_report("test_cycle_facts");
}
