// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The live view without a terminal: the decaying window's numbers (derived
 * by hand from the samples below) and the text frame the renderer draws,
 * including sort, kernel toggle, panes and tiny terminal sizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "profile/profile.h"
#include "top/top_view.h"

enum { MAIN, WORK, LEAF_A, LEAF_B, KFN, REC, NF };

static uint32_t fr[NF];

static void add(struct profile *p, uint32_t th, const uint32_t *st, uint32_t depth, uint32_t nk,
		int times)
{
	for (int i = 0; i < times; i++)
		CHECK_INT_EQ(profile_add_sample(p, th, 1000 + (uint64_t)i, st, depth, nk, nk > 0),
			     0);
}

static const struct top_func_row *find(const struct top_func_row *r, size_t n, uint32_t f)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].frame == f)
			return &r[i];
	return NULL;
}

static void test_window(void)
{
	struct profile p;
	struct top_window w;
	struct top_func_row *r;
	size_t n;
	uint32_t th;

	CHECK_INT_EQ(profile_init(&p, 100), 0);
	fr[MAIN] = (uint32_t)profile_intern_frame(&p, "main", "/bin/app", false);
	fr[WORK] = (uint32_t)profile_intern_frame(&p, "work", "/bin/app", false);
	fr[LEAF_A] = (uint32_t)profile_intern_frame(&p, "leaf_a", "/bin/app", false);
	fr[LEAF_B] = (uint32_t)profile_intern_frame(&p, "leaf_b", "/lib/libb.so", false);
	fr[KFN] = (uint32_t)profile_intern_frame(&p, "kfn", "[kernel.kallsyms]", true);
	fr[REC] = (uint32_t)profile_intern_frame(&p, "rec", "/bin/app", false);
	th = (uint32_t)profile_thread(&p, 10, 10, "app");
	uint32_t s_a[] = { fr[MAIN], fr[WORK], fr[LEAF_A] };
	uint32_t s_b[] = { fr[MAIN], fr[LEAF_B] };
	uint32_t s_k[] = { fr[MAIN], fr[WORK], fr[KFN] };
	uint32_t s_r[] = { fr[MAIN], fr[REC], fr[REC] };

	CHECK_INT_EQ(top_window_init(&w, 0.5), 0);
	CHECK(top_window_init(&(struct top_window){ 0 }, 1.5) < 0);
	/* Round 1: a x6, b x2, k x2 (kernel leaf under work). */
	add(&p, th, s_a, 3, 0, 6);
	add(&p, th, s_b, 2, 0, 2);
	add(&p, th, s_k, 3, 1, 2);
	CHECK_INT_EQ(top_window_update(&w, &p), 0);
	CHECK_NEAR(w.total, 10, 1e-9);
	CHECK_INT_EQ((int)w.last_delta, 10);
	CHECK_INT_EQ(top_window_funcs(&w, &p, true, TOP_SORT_SELF, &r, &n), 0);
	CHECK_INT_EQ((int)n, 5);
	/* self: leaf_a 6; leaf_b and kfn 2 each with equal total: frame order. */
	CHECK(n == 5 && r[0].frame == fr[LEAF_A] && r[1].frame == fr[LEAF_B] &&
	      r[2].frame == fr[KFN] && r[3].frame == fr[MAIN] && r[4].frame == fr[WORK]);
	CHECK_NEAR(find(r, n, fr[WORK])->total, 8, 1e-9);
	CHECK_NEAR(find(r, n, fr[MAIN])->total, 10, 1e-9);
	CHECK_NEAR(find(r, n, fr[MAIN])->self, 0, 1e-9);
	free(r);
	CHECK_INT_EQ(top_window_funcs(&w, &p, true, TOP_SORT_TOTAL, &r, &n), 0);
	CHECK(n == 5 && r[0].frame == fr[MAIN] && r[1].frame == fr[WORK] &&
	      r[2].frame == fr[LEAF_A]);
	free(r);
	/* Kernel frames off: kfn gone, its time is work's own. */
	CHECK_INT_EQ(top_window_funcs(&w, &p, false, TOP_SORT_SELF, &r, &n), 0);
	CHECK_INT_EQ((int)n, 4);
	CHECK(find(r, n, fr[KFN]) == NULL);
	CHECK_NEAR(find(r, n, fr[WORK])->self, 2, 1e-9);
	/* work (self 2, total 8) beats leaf_b (2, 2) on the total tie-break. */
	CHECK(n == 4 && r[0].frame == fr[LEAF_A] && r[1].frame == fr[WORK] &&
	      r[2].frame == fr[LEAF_B]);
	free(r);

	/* Round 2: b x4 and one recursive sample; old weight halves. */
	add(&p, th, s_b, 2, 0, 4);
	add(&p, th, s_r, 3, 0, 1);
	CHECK_INT_EQ(top_window_update(&w, &p), 0);
	CHECK_NEAR(w.total, 5 + 4 + 1, 1e-9);
	CHECK_INT_EQ(top_window_funcs(&w, &p, true, TOP_SORT_SELF, &r, &n), 0);
	CHECK(n >= 2 && r[0].frame == fr[LEAF_B] && r[1].frame == fr[LEAF_A]);
	CHECK_NEAR(find(r, n, fr[LEAF_B])->self, 1 + 4, 1e-9);
	CHECK_NEAR(find(r, n, fr[LEAF_A])->self, 3, 1e-9);
	/* Recursion counts once in total. */
	CHECK_NEAR(find(r, n, fr[REC])->total, 1, 1e-9);
	CHECK_NEAR(find(r, n, fr[REC])->self, 1, 1e-9);
	free(r);
	/* The hottest stack through work is the leaf_a one (3 vs 1). */
	int64_t hs = top_window_hot_stack(&w, &p, fr[WORK]);

	CHECK(hs >= 0 && p.stacks[hs].frames[p.stacks[hs].depth - 1] == fr[LEAF_A]);
	CHECK_INT_EQ((int)top_window_hot_stack(&w, &p, 9999), -1);
	/* Nothing new: everything only decays. */
	CHECK_INT_EQ(top_window_update(&w, &p), 0);
	CHECK_INT_EQ((int)w.last_delta, 0);
	CHECK_NEAR(w.total, 5, 1e-9);
	top_window_free(&w);
	profile_free(&p);
}

static const struct top_view_func funcs[] = {
	{ "burn_a", "/t/cpu_tree", 61.5, 61.5, false },
	{ "burn_b", "/t/cpu_tree", 30.25, 35.0, false },
	{ "do_syscall_64", "[kernel.kallsyms]", 2.0, 8.5, true },
	{ "main", "/t/cpu_tree", 0.0, 100.0, false },
};

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void test_render(void)
{
	struct top_frame f;
	struct live_metrics l;
	const char *stack[] = { "burn_a", "work_outer", "main" };
	struct top_model m = {
		.target = "pid 42 (cpu_tree), 2 threads",
		.elapsed_s = 3725.4,
		.samples_per_s = 99,
		.lost = 0,
		.funcs = funcs,
		.nfuncs = 4,
		.show_kernel = true,
	};

	CHECK_INT_EQ(top_frame_init(&f, 12, 100), 0);
	top_render(&m, &f);
	CHECK_STR_EQ(top_frame_line(&f, 0),
		     "ebpf-prof top  pid 42 (cpu_tree), 2 threads  01:02:05  99 samples/s  lost 0");
	CHECK(starts(top_frame_line(&f, 1), "  SELF%  total%  function"));
	CHECK(starts(top_frame_line(&f, 2), " 61.50%  61.50%  burn_a "));
	CHECK(strstr(top_frame_line(&f, 2), " cpu_tree") != NULL);
	CHECK(starts(top_frame_line(&f, 3), " 30.25%  35.00%  burn_b"));
	CHECK(starts(top_frame_line(&f, 5), "  0.00% 100.00%  main"));
	CHECK_INT_EQ(f.sel_row, 2);
	CHECK(starts(top_frame_line(&f, 11), "q quit"));
	CHECK_STR_EQ(top_frame_line(&f, 6), "");
	/* Wide terminal: the name column stops at 60 so the module stays
	 * near: 17 columns of percentages, 60 of name, a blank. */
	{
		struct top_frame wide;

		CHECK_INT_EQ(top_frame_init(&wide, 12, 200), 0);
		top_render(&m, &wide);
		const char *ln = top_frame_line(&wide, 2), *mod = strstr(ln, "cpu_tree");

		CHECK(mod && mod - ln == 17 + 60 + 1);
		top_frame_free(&wide);
	}
	/* Unknown live figures are left out, not shown as zero. */
	live_metrics_init(&l);
	m.live = &l;
	top_render(&m, &f);
	CHECK(starts(top_frame_line(&f, 1), "  SELF%"));
	l.rss_bytes = 3 * 1048576.0;
	l.rss_pct = 1.5;
	l.temp_c = 71;
	top_render(&m, &f);
	CHECK_STR_EQ(top_frame_line(&f, 1), "rss 3.0 MiB (1.5%)  71 C");
	/* LLM timing once a decode's batch was read: its own line, instead
	 * of the sampler's tokens/s; unknown figures left out. */
	l.tokens_per_s = 12;
	top_render(&m, &f);
	CHECK_STR_EQ(top_frame_line(&f, 2), "12.0 tokens/s");
	l.llm_on = true;
	l.llm_prompts = 3;
	l.llm_prompt_tps = 5400;
	l.llm_gen_tps = 1100.3;
	l.llm_ttft_p50_ms = 21.46;
	l.llm_kv_used = 114;
	top_render(&m, &f);
	CHECK_STR_EQ(
		top_frame_line(&f, 2),
		"LLM  3 prompts  prefill 5400 tok/s  gen 1100.3 tok/s  TTFT p50 21.5 ms  KV 114");
	l.llm_itl_p50_ms = 0.29;
	l.llm_kv_size = 512;
	top_render(&m, &f);
	CHECK(strstr(top_frame_line(&f, 2), "  ITL p50 0.29 ms  KV 114/512") != NULL);
	l.llm_on = false;
	l.tokens_per_s = NAN;
	/* Sort by total: the header marks the key. */
	m.sort = TOP_SORT_TOTAL;
	top_render(&m, &f);
	CHECK(starts(top_frame_line(&f, 2), "  self%  TOTAL%"));
	m.sort = TOP_SORT_SELF;
	/* Selected line's stack, leaf first, in the lower half. */
	m.selected = 1;
	m.expanded = true;
	m.stack = stack;
	m.nstack = 3;
	top_render(&m, &f);
	CHECK_INT_EQ(f.sel_row, 4);
	{
		int at = -1;

		for (int r = 0; r < f.rows; r++)
			if (starts(top_frame_line(&f, r), "stack (leaf first)"))
				at = r;
		CHECK(at > 4);
		CHECK_STR_EQ(top_frame_line(&f, at + 1), "  burn_a");
		CHECK_STR_EQ(top_frame_line(&f, at + 3), "  main");
	}
	m.expanded = false;
	/* Alert line above the key line; paused marker in the header. */
	m.alert = "[5s] temperature 86.0 C > 85 C";
	m.paused = true;
	top_render(&m, &f);
	CHECK_STR_EQ(top_frame_line(&f, 10), "ALERT [5s] temperature 86.0 C > 85 C");
	CHECK(strstr(top_frame_line(&f, 0), "[paused]") != NULL);
	CHECK(strstr(top_frame_line(&f, 0), "[user frames]") == NULL);
	m.show_kernel = false;
	top_render(&m, &f);
	CHECK(strstr(top_frame_line(&f, 0), "[user frames]  [paused]") != NULL);
	m.show_kernel = true;
	/* Threads pane. */
	struct top_view_thread th[] = { { 42, 43, "worker", 75.0 }, { 42, 42, "cpu_tree", 25.0 } };

	m.threads = th;
	m.nthreads = 2;
	m.pane = TOP_PANE_THREADS;
	top_render(&m, &f);
	CHECK(strstr(top_frame_line(&f, 2), "cpu%") != NULL);
	CHECK(starts(top_frame_line(&f, 3), "  75.0%       42       43  worker"));
	/* Cycles pane only with cycle data: otherwise the functions stay. */
	m.pane = TOP_PANE_CYCLES;
	top_render(&m, &f);
	CHECK(!top_has_cycles(&m));
	CHECK(strstr(top_frame_line(&f, 2), "function") != NULL);
	l.cycle_no = 7;
	l.ncycles = 3;
	l.cycle_ms[0] = 100;
	l.cycle_ms[1] = 200;
	l.cycle_ms[2] = 50;
	top_render(&m, &f);
	CHECK(top_has_cycles(&m));
	/* Header: last 50, median of 50/100/200 = 100. */
	CHECK(starts(top_frame_line(&f, 2), "cycle 7  last 50 ms  median 100 ms"));
	{
		int r5 = -1;

		for (int r = 0; r < f.rows; r++)
			if (starts(top_frame_line(&f, r), "6 "))
				r5 = r;
		CHECK(r5 > 0);
		/* cycle 6 is the longest: the full bar, 100 - 24 columns. */
		CHECK(r5 > 0 && strlen(strchr(top_frame_line(&f, r5), '#')) == 76);
	}
	/* Help replaces the main pane. */
	m.help = true;
	top_render(&m, &f);
	CHECK(starts(top_frame_line(&f, 3), "keys:"));
	top_frame_free(&f);
}

static void test_scroll_and_probes(void)
{
	struct top_view_func many[40];
	char names[40][16];
	struct top_frame f;
	struct live_metrics l;
	struct top_model m = { .target = "t", .lost = -1, .funcs = many, .nfuncs = 40 };

	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "fn%02d", i);
		many[i] = (struct top_view_func){ names[i], NULL, 40 - i, 40 - i, false };
	}
	CHECK_INT_EQ(top_frame_init(&f, 10, 80), 0);
	m.selected = 30;
	top_render(&m, &f);
	/* The selection is kept on screen. */
	CHECK(f.sel_row > 0 && f.sel_row < 9);
	CHECK(strstr(top_frame_line(&f, f.sel_row), "fn30") != NULL);
	CHECK(strstr(top_frame_line(&f, 0), "lost") == NULL);
	top_frame_free(&f);

	live_metrics_init(&l);
	l.nprobes = 1;
	snprintf(l.probes[0].name, sizeof(l.probes[0].name), "sqlite3_step");
	l.probes[0].rate_hz = 12.5;
	l.probes[0].p50_ns = 1500;
	l.probes[0].p99_ns = 2.5e6;
	snprintf(l.slowest_sql, sizeof(l.slowest_sql), "SELECT 1");
	l.slowest_sql_ns = 3e9;
	m.live = &l;
	m.selected = 0;
	CHECK_INT_EQ(top_frame_init(&f, 20, 80), 0);
	top_render(&m, &f);
	CHECK(starts(top_frame_line(&f, 16), "probe"));
	CHECK(starts(top_frame_line(&f, 17), "sqlite3_step"));
	CHECK(strstr(top_frame_line(&f, 17), " 12.5 ") != NULL);
	CHECK(strstr(top_frame_line(&f, 17), "1.5us") != NULL);
	CHECK(strstr(top_frame_line(&f, 17), "2.5ms") != NULL);
	CHECK_STR_EQ(top_frame_line(&f, 18), "slowest SQL (3.00s): SELECT 1");
	top_frame_free(&f);
	/* --alloc: the memory pane above the probes. */
	l.alloc_on = true;
	l.alloc_rate_bps = 3 * 1048576.0;
	l.alloc_live_bytes = 20 * 1048576.0;
	l.alloc_growth_bps = 2 * 1048576.0;
	l.nalloc = 2;
	snprintf(l.alloc[0].name, sizeof(l.alloc[0].name), "leak_some");
	l.alloc[0].live_bytes = 19 * 1048576.0;
	l.alloc[0].alloc_bytes = 19 * 1048576.0;
	snprintf(l.alloc[1].name, sizeof(l.alloc[1].name), "churn");
	l.alloc[1].live_bytes = 0;
	l.alloc[1].alloc_bytes = 40 * 1048576.0;
	CHECK_INT_EQ(top_frame_init(&f, 20, 80), 0);
	top_render(&m, &f);
	CHECK_STR_EQ(top_frame_line(&f, 12),
		     "alloc: 3.0 MiB/s allocated, 20.0 MiB live (+2.0 MiB/s)");
	CHECK(starts(top_frame_line(&f, 13), "allocated by"));
	CHECK(starts(top_frame_line(&f, 14), "leak_some"));
	CHECK(strstr(top_frame_line(&f, 14), "19.0 MiB") != NULL);
	CHECK(starts(top_frame_line(&f, 15), "churn"));
	CHECK(strstr(top_frame_line(&f, 15), "40.0 MiB") != NULL);
	CHECK(starts(top_frame_line(&f, 16), "probe"));
	top_frame_free(&f);
	l.alloc_on = false;
	/* Too small for the probe pane: the functions win. */
	CHECK_INT_EQ(top_frame_init(&f, 8, 80), 0);
	top_render(&m, &f);
	for (int r = 0; r < f.rows; r++)
		CHECK(!starts(top_frame_line(&f, r), "probe"));
	top_frame_free(&f);
}

/* Every size from nothing to small: no line longer than the width, no
 * write outside the frame (ASan), the title first when a row exists. */
static void test_small_sizes(void)
{
	struct live_metrics l;
	const char *stack[] = { "a", "b" };
	struct top_model m = { .target = "pid 1 (x)",
			       .funcs = funcs,
			       .nfuncs = 4,
			       .alert = "something long enough to be cut",
			       .expanded = true,
			       .stack = stack,
			       .nstack = 2,
			       .selected = 3 };

	live_metrics_init(&l);
	l.rss_bytes = 1e9;
	l.nprobes = 2;
	l.alloc_on = true;
	l.nalloc = 1;
	l.ncycles = 2;
	l.cycle_ms[0] = l.cycle_ms[1] = 5;
	m.live = &l;
	for (int pane = 0; pane < 3; pane++)
		for (int rows = 0; rows <= 12; rows++)
			for (int cols = 0; cols <= 30; cols++) {
				struct top_frame f;
				bool ok = true;

				m.pane = (enum top_pane)pane;
				if (top_frame_init(&f, rows, cols)) {
					CHECK(0);
					continue;
				}
				top_render(&m, &f);
				for (int r = 0; r < rows; r++)
					ok &= strlen(top_frame_line(&f, r)) <= (size_t)cols;
				if (rows && cols >= 9)
					ok &= starts(top_frame_line(&f, 0), "ebpf-prof");
				CHECK(ok);
				CHECK(f.sel_row < rows);
				top_frame_free(&f);
			}
	CHECK_STR_EQ(top_frame_line(&(struct top_frame){ .rows = 0 }, 3), "");
	CHECK(top_frame_init(&(struct top_frame){ 0 }, -1, 5) < 0);
}

/* The cycle pane with the cycles module's figures: a line with the count,
 * median, p95 and slowest over every cycle, the legend, and bars that show
 * each attributed cycle's breakdown (cycle 11: 40% inference, 20% SQL,
 * 30% off-CPU, 10% other of a full 76-column bar) and '#' for one not
 * attributed yet. */
static void test_cycle_pane(void)
{
	struct top_frame f;
	struct live_metrics l;
	struct top_model m = { .target = "t", .lost = -1, .pane = TOP_PANE_CYCLES };
	const char *bar;
	int r11 = -1, r12 = -1;

	live_metrics_init(&l);
	m.live = &l;
	l.ncycles = 2;
	l.cycle_no = 12;
	l.cycle_ms[0] = 200;
	l.cycle_ms[1] = 100;
	l.cycle_p50_ms = 110;
	l.cycle_p95_ms = 190;
	l.cycle_max_ms = 200;
	l.cycle_max_no = 11;
	l.cycle_part[0][LIVE_CYC_INFER] = 0.4;
	l.cycle_part[0][LIVE_CYC_SQL] = 0.2;
	l.cycle_part[0][LIVE_CYC_OFFCPU] = 0.3;
	l.cycle_part[0][LIVE_CYC_PROBE] = 0;
	l.cycle_part[0][LIVE_CYC_OTHER] = 0.1;
	CHECK_INT_EQ(top_frame_init(&f, 14, 100), 0);
	top_render(&m, &f);
	/* Header: the running median, not the strip's. */
	CHECK(starts(top_frame_line(&f, 1), "cycle 12  last 100 ms  median 110 ms"));
	for (int r = 0; r < f.rows; r++) {
		if (starts(top_frame_line(&f, r), "11 "))
			r11 = r;
		if (starts(top_frame_line(&f, r), "12 "))
			r12 = r;
	}
	CHECK(r11 > 3 && r12 == r11 + 1);
	CHECK(starts(top_frame_line(&f, r11 - 2),
		     "13 cycles  median 110.0 ms  p95 190.0 ms  slowest #11 200.0 ms"));
	CHECK(strstr(top_frame_line(&f, r11 - 1), "I inference  S SQL  O off-CPU") != NULL);
	if (r11 > 0) {
		bar = strchr(top_frame_line(&f, r11), 'I');
		CHECK(bar != NULL);
		/* 76 columns, ends rounded cumulatively: I to 30.4 -> 30, S to
		 * 45.6 -> 46, O to 68.4 -> 68, P none, '.' the rest. */
		CHECK(bar && strlen(bar) == 76);
		CHECK(bar && !strncmp(bar + 29, "IS", 2) && !strncmp(bar + 45, "SO", 2) &&
		      !strncmp(bar + 67, "O.", 2) && bar[75] == '.');
	}
	if (r12 > 0) {
		bar = strchr(top_frame_line(&f, r12), '#');
		CHECK(bar && strlen(bar) == 38);
	}
	/* The snapshot line (non-TTY) with the last walls. */
	{
		char line[200];

		top_cycle_summary(&l, line, sizeof(line), 8);
		CHECK_STR_EQ(line,
			     "13 cycles  median 110.0 ms  p95 190.0 ms  slowest #11 200.0 ms  "
			     "last 200.0 100.0 ms");
		l.ncycles = 0;
		top_cycle_summary(&l, line, sizeof(line), 8);
		CHECK_STR_EQ(line, "");
	}
	top_frame_free(&f);
}

int main(void)
{
	test_cycle_pane();
	test_window();
	test_render();
	test_scroll_and_probes();
	test_small_sizes();
	return check_report("test_top_view");
}
