// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-cycle attribution on synthetic streams whose answers are worked out by
 * hand in the comments (times in ms after BASE). */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "cycles/cycle_facts.h"
#include "cycles/cycles.h"

#define MS    1000000ull
#define BASE  (1000ull * MS)
#define T(ms) (BASE + (uint64_t)(ms)*MS)
#define MB    (1024ull * 1024)

static void span(struct cycles_input *in, uint64_t s, uint64_t e, uint32_t tid, uint32_t kind,
		 uint64_t tokens, const char *detail)
{
	struct cyc_span sp = { .start_ns = s,
			       .end_ns = e,
			       .tid = tid,
			       .kind = kind,
			       .tokens = tokens,
			       .name = "probe",
			       .detail = detail };
	CHECK_INT_EQ(cycle_facts_add_span(cycles_input_facts(in), &sp), 0);
}

static uint64_t part_sum(const struct cycle_row *r)
{
	uint64_t s = r->part_gc_ns + r->part_sql_ns + r->part_inference_ns + r->part_probe_ns +
		     r->other_ns;
	for (int k = 0; k < CYC_OFF_REASONS; k++)
		s += r->part_off_cpu_ns[k];
	return s;
}

/* Cycles A [0,100), B [100,300), C [300,...) with no return; facts added
 * newest first so nothing relies on delivery order. */
static void test_full_stream(void)
{
	struct cycles_input *in = cycles_input_new();
	CHECK(in != NULL);
	const uint32_t tid = 100;

	/* GPU: A has two readings (means 60 %, 6000 mW, 45 C). */
	struct cyc_gpu_sample g2 = { T(40), 70, 7000, 50 }, g1 = { T(20), 50, 5000, 40 };
	cycle_facts_add_gpu(cycles_input_facts(in), &g2);
	cycle_facts_add_gpu(cycles_input_facts(in), &g1);
	/* Throttling [90,110) plus a nested [95,105): union is 10 ms in A and
	 * 10 ms in B. */
	cycle_facts_add_throttle(cycles_input_facts(in), T(95), T(105));
	cycle_facts_add_throttle(cycles_input_facts(in), T(90), T(110));
	/* Frequency: A mean of 2000 and 1000; B has no reading and holds 1000. */
	cycle_facts_add_freq(cycles_input_facts(in), T(50), 1000);
	cycle_facts_add_freq(cycles_input_facts(in), T(10), 2000);
	/* RSS: the reading at exactly 100 ms is A's end value and B's start. */
	cycle_facts_add_rss(cycles_input_facts(in), T(250), 150 * MB);
	cycle_facts_add_rss(cycles_input_facts(in), T(100), 120 * MB);
	cycle_facts_add_rss(cycles_input_facts(in), T(50), 110 * MB);
	cycle_facts_add_rss(cycles_input_facts(in), T(0), 100 * MB);
	/* Samples: the one at 100 ms belongs to B (half-open cycles). */
	cycle_facts_add_sample(cycles_input_facts(in), T(100), tid, "h");
	cycle_facts_add_sample(cycles_input_facts(in), T(25), tid, "g");
	cycle_facts_add_sample(cycles_input_facts(in), T(15), 200, "f");
	cycle_facts_add_sample(cycles_input_facts(in), T(5), tid, "f");
	/* Off-CPU: the cycle thread sleeps [80,95); another thread's long
	 * sleep is not the cycle's. B: runqueue wait [200,220) on the thread. */
	cycle_facts_add_offcpu(cycles_input_facts(in), T(200), T(220), tid, CYC_OFF_RUNQ);
	cycle_facts_add_offcpu(cycles_input_facts(in), T(0), T(100), 200, CYC_OFF_SLEEP);
	cycle_facts_add_offcpu(cycles_input_facts(in), T(80), T(95), tid, CYC_OFF_SLEEP);
	/* B: an SQL call that never returns (until B's end, 300). */
	span(in, T(150), 0, tid, CYC_SPAN_SQL, 0, "UPDATE stuck");
	/* Inference [90,130) crosses the A/B edge: 10 ms in A, 30 in B; the call
	 * is A's, its 30 tokens are B's (where it returned). */
	span(in, T(90), T(130), tid, CYC_SPAN_INFERENCE, 30, NULL);
	span(in, T(70), T(75), tid, CYC_SPAN_SQL, 0, "SELECT y");
	span(in, T(60), T(70), tid, CYC_SPAN_SQL, 0, "INSERT x");
	span(in, T(10), T(60), tid, CYC_SPAN_INFERENCE, 50, NULL);
	/* GC on another thread [20,22): inside inference time, wins the
	 * partition. */
	span(in, T(20), T(22), 300, CYC_SPAN_GC, 0, NULL);

	cycles_add_begin(in, T(300), tid);
	cycles_add_end(in, T(300), tid);
	cycles_add_begin(in, T(100), tid);
	cycles_add_end(in, T(100), tid);
	cycles_add_end(in, T(50), 999); /* nobody's cycle */
	cycles_add_begin(in, T(0), tid);

	struct cycles_cfg cfg = { .run_start_ns = T(0), .run_end_ns = T(400), .period_ns = MS };
	struct cycle_table t;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	CHECK_INT_EQ(t.n, 3);
	CHECK(!t.whole_run);
	CHECK_INT_EQ(t.unmatched_ends, 1);
	if (t.n != 3)
		goto out;
	const struct cycle_row *a = &t.rows[0], *b = &t.rows[1], *c = &t.rows[2];

	CHECK_INT_EQ(a->index, 0);
	CHECK_INT_EQ(a->start_ns, T(0));
	CHECK_INT_EQ(a->wall_ns, 100 * MS);
	CHECK(!a->truncated);
	CHECK_INT_EQ(a->inference_ns, 60 * MS);
	CHECK_INT_EQ(a->inference_calls, 2);
	CHECK_INT_EQ(a->tokens, 50);
	CHECK_NEAR(a->tokens_per_s, 50.0 / 0.060, 1e-6);
	CHECK_INT_EQ(a->sql_ns, 15 * MS);
	CHECK_INT_EQ(a->sql_count, 2);
	CHECK_INT_EQ(a->sql_slowest_ns, 10 * MS);
	CHECK_STR_EQ(a->sql_slowest, "INSERT x");
	CHECK_INT_EQ(a->gc_ns, 2 * MS);
	CHECK_INT_EQ(a->gc_count, 1);
	CHECK_INT_EQ(a->off_cpu_ns[CYC_OFF_SLEEP], 15 * MS);
	CHECK_INT_EQ(a->off_cpu_total_ns, 15 * MS);
	/* Partition of A: gc 2, inference 50-2 + 10 = 58, sql 15, sleep
	 * [80,90) = 10 (the rest is under inference), other 100-85 = 15. */
	CHECK_INT_EQ(a->part_gc_ns, 2 * MS);
	CHECK_INT_EQ(a->part_inference_ns, 58 * MS);
	CHECK_INT_EQ(a->part_sql_ns, 15 * MS);
	CHECK_INT_EQ(a->part_off_cpu_ns[CYC_OFF_SLEEP], 10 * MS);
	CHECK_INT_EQ(a->other_ns, 15 * MS);
	CHECK_INT_EQ(part_sum(a), a->wall_ns);
	CHECK_INT_EQ(a->samples, 3);
	CHECK_INT_EQ(a->on_cpu_ns, 3 * MS);
	CHECK_INT_EQ(a->n_top, 2);
	CHECK_STR_EQ(a->top[0].name, "f");
	CHECK_INT_EQ(a->top[0].samples, 2);
	CHECK_STR_EQ(a->top[1].name, "g");
	CHECK(a->has_rss);
	CHECK_INT_EQ(a->rss_end_bytes, 120 * MB);
	CHECK_INT_EQ(a->rss_delta_bytes, 20 * MB);
	CHECK(a->has_freq);
	CHECK_NEAR(a->mhz_mean, 1500, 1e-9);
	CHECK_NEAR(a->mhz_min, 1000, 1e-9);
	CHECK_NEAR(a->throttled_share, 0.10, 1e-12);
	CHECK(a->has_gpu);
	CHECK_NEAR(a->gpu_load_pct, 60, 1e-9);
	CHECK_NEAR(a->gpu_power_mw, 6000, 1e-9);
	CHECK_NEAR(a->gpu_temp_c, 45, 1e-9);
	CHECK_NEAR(a->gpu_energy_mj, 600, 1e-6);

	CHECK_INT_EQ(b->wall_ns, 200 * MS);
	CHECK_INT_EQ(b->inference_ns, 30 * MS);
	CHECK_INT_EQ(b->inference_calls, 0);
	CHECK_INT_EQ(b->tokens, 30);
	CHECK_INT_EQ(b->sql_ns, 150 * MS);
	CHECK_INT_EQ(b->sql_count, 1);
	CHECK_INT_EQ(b->incomplete_spans, 1);
	CHECK_STR_EQ(b->sql_slowest, "UPDATE stuck");
	CHECK_INT_EQ(b->off_cpu_ns[CYC_OFF_RUNQ], 20 * MS);
	/* Runqueue wait [200,220) is inside the stuck SQL call. */
	CHECK_INT_EQ(b->part_off_cpu_ns[CYC_OFF_RUNQ], 0);
	CHECK_INT_EQ(b->part_sql_ns, 150 * MS);
	CHECK_INT_EQ(b->other_ns, 20 * MS);
	CHECK_INT_EQ(part_sum(b), b->wall_ns);
	CHECK_INT_EQ(b->samples, 1);
	CHECK_STR_EQ(b->top[0].name, "h");
	CHECK_INT_EQ(b->rss_end_bytes, 150 * MB);
	CHECK_INT_EQ(b->rss_delta_bytes, 30 * MB);
	CHECK_NEAR(b->mhz_mean, 1000, 1e-9);
	CHECK_NEAR(b->throttled_share, 0.05, 1e-12);
	/* GPU reading held from A. */
	CHECK(b->has_gpu);
	CHECK_NEAR(b->gpu_load_pct, 70, 1e-9);

	/* C opened at 300 and never returned: closed by the end of the run. */
	CHECK(c->truncated);
	CHECK_INT_EQ(c->end_ns, T(400));
	CHECK_INT_EQ(c->sql_count, 0);
	CHECK_INT_EQ(c->other_ns, 100 * MS);
out:
	cycle_table_free(&t);
	cycles_input_free(in);
}

static void test_cycle_every(void)
{
	struct cycles_input *in = cycles_input_new();
	cycles_add_entry(in, T(35), 1);
	cycles_add_entry(in, T(10), 1);
	cycles_add_entry(in, T(20), 1);
	/* A span straddling two entries is split between the cycles. */
	span(in, T(15), T(25), 1, CYC_SPAN_OTHER, 0, NULL);
	struct cycles_cfg cfg = { .run_start_ns = T(0), .run_end_ns = T(50), .period_ns = MS };
	struct cycle_table t;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	CHECK_INT_EQ(t.n, 3);
	if (t.n == 3) {
		CHECK_INT_EQ(t.rows[0].wall_ns, 10 * MS);
		CHECK_INT_EQ(t.rows[1].wall_ns, 15 * MS);
		CHECK_INT_EQ(t.rows[2].start_ns, T(35));
		CHECK_INT_EQ(t.rows[2].end_ns, T(50));
		CHECK_INT_EQ(t.rows[0].probe_other_ns, 5 * MS);
		CHECK_INT_EQ(t.rows[0].probe_other_calls, 1);
		CHECK_INT_EQ(t.rows[1].probe_other_ns, 5 * MS);
		CHECK_INT_EQ(t.rows[1].probe_other_calls, 0);
		CHECK_INT_EQ(t.rows[1].part_probe_ns, 5 * MS);
		/* The last one runs to the end of the run: partial, so not in
		 * the percentiles (10 and 15 ms are). */
		CHECK(t.rows[2].partial && t.rows[2].truncated);
		CHECK(!t.rows[0].partial && !t.rows[1].partial);
		CHECK_INT_EQ(cycles_wall_percentile(&t, 50), 10 * MS);
		CHECK_INT_EQ(cycles_wall_percentile(&t, 0), 10 * MS);
		CHECK_INT_EQ(cycles_wall_percentile(&t, 100), 15 * MS);
	}
	cycle_table_free(&t);
	cycles_input_free(in);
}

static void test_whole_run(void)
{
	struct cycles_input *in = cycles_input_new();
	cycle_facts_add_offcpu(cycles_input_facts(in), T(10), T(30), 7, CYC_OFF_BLOCKED);
	cycle_facts_add_offcpu(cycles_input_facts(in), T(0), T(100), 8, CYC_OFF_SLEEP);
	struct cycles_cfg cfg = { .run_start_ns = T(0), .run_end_ns = T(100), .period_ns = MS };
	struct cycle_table t;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	CHECK(t.whole_run);
	CHECK_INT_EQ(t.n, 1);
	if (t.n == 1) {
		/* No thread for the cycle: totals over every thread, partition
		 * left to "other". */
		CHECK_INT_EQ(t.rows[0].off_cpu_total_ns, 120 * MS);
		CHECK_INT_EQ(t.rows[0].other_ns, 100 * MS);
	}
	cycle_table_free(&t);

	cfg.main_tid = 7;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	if (t.n == 1) {
		CHECK_INT_EQ(t.rows[0].off_cpu_total_ns, 20 * MS);
		CHECK_INT_EQ(t.rows[0].part_off_cpu_ns[CYC_OFF_BLOCKED], 20 * MS);
		CHECK_INT_EQ(t.rows[0].other_ns, 80 * MS);
	}
	cycle_table_free(&t);
	cycles_input_free(in);
}

/* Missing return: a second begin closes the first cycle; threads pair
 * independently; overlapping cycles of two threads are both kept. */
static void test_missing_return_and_threads(void)
{
	struct cycles_input *in = cycles_input_new();
	cycles_add_begin(in, T(0), 1);
	cycles_add_begin(in, T(5), 2);
	cycles_add_begin(in, T(10), 1);
	cycles_add_end(in, T(20), 1);
	cycles_add_end(in, T(25), 2);
	struct cycles_cfg cfg = { .run_start_ns = T(0), .run_end_ns = T(100), .period_ns = MS };
	struct cycle_table t;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	CHECK_INT_EQ(t.n, 3);
	if (t.n == 3) {
		CHECK_INT_EQ(t.rows[0].tid, 1);
		CHECK(t.rows[0].truncated);
		CHECK_INT_EQ(t.rows[0].wall_ns, 10 * MS);
		CHECK_INT_EQ(t.rows[1].tid, 2);
		CHECK_INT_EQ(t.rows[1].wall_ns, 20 * MS);
		CHECK(!t.rows[1].truncated);
		CHECK_INT_EQ(t.rows[2].start_ns, T(10));
		CHECK(!t.rows[2].truncated);
		CHECK_INT_EQ(t.rows[2].index, 2);
	}
	cycle_table_free(&t);
	cycles_input_free(in);
}

static void test_top_functions(void)
{
	struct cycles_input *in = cycles_input_new();
	static const char *const names[] = { "a", "b", "c", "d", "e", "f", "g" };
	/* Function k gets k+1 samples: the top five are g..c. */
	for (int k = 0; k < 7; k++)
		for (int j = 0; j <= k; j++)
			cycle_facts_add_sample(cycles_input_facts(in), T(k * 10 + j), 1, names[k]);
	cycle_facts_add_sample(cycles_input_facts(in), T(99), 1, NULL); /* counted, unnamed */
	struct cycles_cfg cfg = { .run_start_ns = T(0), .run_end_ns = T(100), .period_ns = 2 * MS };
	struct cycle_table t;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	if (t.n == 1) {
		CHECK_INT_EQ(t.rows[0].samples, 29);
		CHECK_INT_EQ(t.rows[0].on_cpu_ns, 58 * MS);
		CHECK_INT_EQ(t.rows[0].n_top, 5);
		CHECK_STR_EQ(t.rows[0].top[0].name, "g");
		CHECK_INT_EQ(t.rows[0].top[0].samples, 7);
		CHECK_STR_EQ(t.rows[0].top[4].name, "c");
		CHECK_INT_EQ(t.rows[0].top[4].samples, 3);
	}
	cycle_table_free(&t);
	cycles_input_free(in);
}

static void test_bad_input(void)
{
	struct cycles_input *in = cycles_input_new();
	struct cyc_span bad = { .start_ns = 5, .end_ns = 6, .kind = 99 };
	CHECK_INT_EQ(cycle_facts_add_span(cycles_input_facts(in), &bad), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_offcpu(cycles_input_facts(in), 10, 5, 1, 0), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_throttle(cycles_input_facts(in), 10, 5), -EINVAL);
	CHECK_INT_EQ(cycle_facts_add_freq(cycles_input_facts(in), 10, -1), -EINVAL);
	/* A return before its entry is dropped: the call counts as missing its
	 * return, and an out-of-range reason becomes "other". */
	struct cyc_span rev = { .start_ns = T(10), .end_ns = T(5), .kind = CYC_SPAN_SQL };
	CHECK_INT_EQ(cycle_facts_add_span(cycles_input_facts(in), &rev), 0);
	CHECK_INT_EQ(cycle_facts_add_offcpu(cycles_input_facts(in), T(1), T(2), 0, 77), 0);
	/* A run whose end precedes its start gives an empty cycle, not a huge one. */
	struct cycles_cfg cfg = { .run_start_ns = T(50), .run_end_ns = T(20), .period_ns = MS };
	struct cycle_table t;
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	CHECK_INT_EQ(t.n, 1);
	if (t.n == 1) {
		CHECK_INT_EQ(t.rows[0].wall_ns, 0);
		CHECK_INT_EQ(part_sum(&t.rows[0]), 0);
	}
	cycle_table_free(&t);
	cfg = (struct cycles_cfg){ .run_start_ns = T(0), .run_end_ns = T(20), .period_ns = MS };
	CHECK_INT_EQ(cycles_compute(in, &cfg, &t), 0);
	if (t.n == 1) {
		CHECK_INT_EQ(t.rows[0].incomplete_spans, 1);
		CHECK_INT_EQ(t.rows[0].sql_ns, 10 * MS);
		CHECK_INT_EQ(t.rows[0].off_cpu_ns[CYC_OFF_OTHER], 1 * MS);
	}
	cycle_table_free(&t);
	CHECK_STR_EQ(cycles_off_reason_name(CYC_OFF_BLOCKED), "uninterruptible");
	CHECK_STR_EQ(cycles_off_reason_name(12), "unknown");
	cycles_input_free(in);
}

/* Property check on random streams: the same facts added in two different
 * orders give identical tables (delivery order does not matter), and every
 * cycle's partition sums to its wall time. */
struct fact {
	int type;
	uint64_t a, b;
	uint32_t tid, kind;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void feed(struct cycles_input *in, const struct fact *f, size_t n)
{
	static const char *const fn[] = { "a", "b", "c", "d", "e", "f", "g" };
	for (size_t i = 0; i < n; i++) {
		const struct fact *x = &f[i];
		struct cyc_span sp = {
			x->a, x->b, x->tid, x->kind, 1, "p", x->kind == 1 ? "q" : NULL
		};
		switch (x->type) {
		case 0:
			cycles_add_begin(in, x->a, x->tid);
			break;
		case 1:
			cycles_add_end(in, x->a, x->tid);
			break;
		case 2:
			cycle_facts_add_span(cycles_input_facts(in), &sp);
			break;
		case 3:
			cycle_facts_add_offcpu(cycles_input_facts(in), x->a, x->b ? x->b : x->a,
					       x->tid, x->kind);
			break;
		case 4:
			cycle_facts_add_sample(cycles_input_facts(in), x->a, x->tid,
					       fn[x->kind % 7]);
			break;
		case 5:
			cycle_facts_add_rss(cycles_input_facts(in), x->a, x->b);
			break;
		default:
			cycle_facts_add_throttle(cycles_input_facts(in), x->a, x->b);
			break;
		}
	}
}

static void test_random_order_independence(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 30; round++) {
		size_t n = 50 + rnd(&seed) % 400;
		struct fact *f = calloc(n, sizeof(*f));
		for (size_t i = 0; i < n; i++) {
			f[i].type = (int)(rnd(&seed) % 7);
			f[i].a = T(rnd(&seed) % 1000);
			uint64_t len = (rnd(&seed) % 80) * MS;
			/* Some spans never return, some throttling never ends. */
			f[i].b = rnd(&seed) % 8 ? f[i].a + len : 0;
			if (f[i].type == 5)
				f[i].b = rnd(&seed) % (512 * MB);
			f[i].tid = 1 + (uint32_t)(rnd(&seed) % 3);
			f[i].kind = (uint32_t)(rnd(&seed) % (f[i].type == 2 ? CYC_SPAN__COUNT : 5));
		}
		struct cycles_input *in1 = cycles_input_new(), *in2 = cycles_input_new();
		feed(in1, f, n);
		/* Reverse order, then a few swaps. */
		for (size_t i = 0; i < n / 2; i++) {
			struct fact t = f[i];
			f[i] = f[n - 1 - i];
			f[n - 1 - i] = t;
		}
		feed(in2, f, n);
		struct cycles_cfg cfg = {
			.run_start_ns = T(0), .run_end_ns = T(1100), .period_ns = MS, .main_tid = 1
		};
		struct cycle_table t1, t2;
		CHECK_INT_EQ(cycles_compute(in1, &cfg, &t1), 0);
		CHECK_INT_EQ(cycles_compute(in2, &cfg, &t2), 0);
		CHECK_INT_EQ(t1.n, t2.n);
		CHECK_INT_EQ(t1.unmatched_ends, t2.unmatched_ends);
		for (size_t i = 0; i < t1.n && i < t2.n; i++) {
			const struct cycle_row *a = &t1.rows[i], *b = &t2.rows[i];
			CHECK_INT_EQ(part_sum(a), a->wall_ns);
			CHECK_INT_EQ(a->start_ns, b->start_ns);
			CHECK_INT_EQ(a->end_ns, b->end_ns);
			CHECK_INT_EQ(a->inference_ns, b->inference_ns);
			CHECK_INT_EQ(a->sql_ns, b->sql_ns);
			CHECK_INT_EQ(a->sql_slowest_ns, b->sql_slowest_ns);
			CHECK_INT_EQ(a->gc_ns, b->gc_ns);
			CHECK_INT_EQ(a->off_cpu_total_ns, b->off_cpu_total_ns);
			CHECK_INT_EQ(a->other_ns, b->other_ns);
			CHECK_INT_EQ(a->samples, b->samples);
			CHECK_INT_EQ(a->rss_end_bytes, b->rss_end_bytes);
			CHECK_NEAR(a->throttled_share, b->throttled_share, 1e-12);
			CHECK(a->throttled_share >= 0 && a->throttled_share <= 1);
			CHECK_INT_EQ(a->n_top, b->n_top);
			for (uint32_t k = 0; k < a->n_top && k < b->n_top; k++)
				CHECK_STR_EQ(a->top[k].name, b->top[k].name);
		}
		cycle_table_free(&t1);
		cycle_table_free(&t2);
		cycles_input_free(in1);
		cycles_input_free(in2);
		free(f);
	}
}

int main(void)
{
	test_random_order_independence();
	test_full_stream();
	test_cycle_every();
	test_whole_run();
	test_missing_return_and_threads();
	test_top_functions();
	test_bad_input();
	return check_report("test_cycles");
}
