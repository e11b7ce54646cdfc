// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Probe spans as cycle facts (user/probes/probes_cycles.c): which part of a cycle
 * a call is, the statement text of a step, and the calls left out because
 * an outer call already holds their time. One cycle [0, 10 ms) on thread
 * 10; the expected numbers are in the comments. */
#include <string.h>

#include "check.h"
#include "cycles/cycle_sink.h"
#include "probes/probes.h"

#define US 1000ull
#define MS 1000000ull

static struct ep_span span(uint32_t id, uint64_t start, uint64_t dur, uint64_t obj, uint16_t flags,
			   uint16_t depth)
{
	struct ep_span s = { 0 };

	s.hdr.type = EP_EV_SPAN;
	s.hdr.pid = 10;
	s.hdr.tid = 10;
	s.hdr.ts_ns = start;
	s.dur_ns = dur;
	s.obj = obj;
	s.probe_id = id;
	s.flags = flags;
	s.depth = depth;
	return s;
}

static void feed(struct probe_stats *st, struct cycle_sink *sink, const void *ev, size_t size)
{
	CHECK_INT_EQ(probe_stats_add_event(st, ev, size), 0);
	probes_cycle_fact(st, ev, size, sink);
}

int main(void)
{
	struct probe_specs ps;
	struct probe_def user;
	char err[128];
	struct probe_stats *st = probe_stats_new(100, 10);
	struct cycle_sink_cfg cfg = { CYCLE_MODE_PAIRS, 100 * MS, MS, 1000, false };
	struct cycle_sink *sink = cycle_sink_new(&cfg);
	const char *want[] = { "llama_decode",	     "ggml_graph_compute", "llama_sampler_sample",
			       "sqlite3_prepare_v2", "sqlite3_step",	   "sqlite3_exec" };
	const struct probe_def *d[6] = { 0 };
	struct ep_span e;
	struct ep_span_sql q;

	CHECK(st && sink);
	if (!st || !sink)
		return 1;
	cycle_sink_set_active(sink, true);
	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_ALL, NULL, 0, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < ps.n; i++)
		for (int k = 0; k < 6; k++)
			if (!strcmp(ps.defs[i].symbol, want[k]))
				d[k] = &ps.defs[i];
	for (int k = 0; k < 6; k++) {
		CHECK(d[k] != NULL);
		if (!d[k])
			return 1;
		CHECK_INT_EQ(probe_stats_set_probe(st, (uint32_t)k, d[k], "/lib/x.so"), 0);
	}
	CHECK_INT_EQ(probe_parse_spec("libfoo:step_fn", &user, err, sizeof(err)), 0);
	CHECK_INT_EQ(probe_stats_set_probe(st, 6, &user, "/lib/libfoo.so"), 0);

	cycle_sink_begin(sink, 0, 10);
	/* Inference: llama_decode 1 ms with a ggml compute inside (flagged
	 * by the kernel as inside a call of its class: left out), two sampled
	 * tokens of 100 us. -> 1.2 ms, 3 calls, 2 tokens. The decode runs
	 * inside a --probe'd step (depth 1, another class): it counts. */
	e = span(1, 1 * MS + 100 * US, 800 * US, 0, EP_SPAN_F_NESTED_CLASS, 2);
	feed(st, sink, &e, sizeof(e));
	e = span(0, 1 * MS, 1 * MS, 0, 0, 1);
	feed(st, sink, &e, sizeof(e));
	for (int i = 0; i < 2; i++) {
		e = span(2, 3 * MS + (uint64_t)i * 200 * US, 100 * US, 0, 0, 0);
		feed(st, sink, &e, sizeof(e));
	}
	/* SQL: prepare 50 us, step 2 ms on that statement (its text is the
	 * slowest), an exec 1 ms whose own step (nested) is left out.
	 * -> 3.05 ms, 3 calls. */
	q = (struct ep_span_sql){ .span = span(3, 5 * MS, 50 * US, 0xabc, 0, 0) };
	q.span.hdr.type = EP_EV_SPAN_SQL;
	q.nbyte = -1;
	strcpy(q.sql, "SELECT 1");
	q.sql_len = 9;
	feed(st, sink, &q, sizeof(q));
	e = span(4, 5 * MS + 100 * US, 2 * MS, 0xabc, 0, 0);
	e.ret = 101;
	feed(st, sink, &e, sizeof(e));
	q = (struct ep_span_sql){ .span = span(5, 8 * MS, 1 * MS, 0, 0, 0) };
	q.span.hdr.type = EP_EV_SPAN_SQL;
	q.nbyte = -1;
	strcpy(q.sql, "UPDATE t SET a = 1");
	q.sql_len = 19;
	feed(st, sink, &q, sizeof(q));
	e = span(4, 8 * MS + 100 * US, 500 * US, 0xdef, EP_SPAN_F_NESTED_SQL, 1);
	feed(st, sink, &e, sizeof(e));
	/* A --probe: other probes, 300 us; a recursive inner call of it
	 * (nested same) left out. */
	e = span(6, 9 * MS, 300 * US, 0, 0, 0);
	feed(st, sink, &e, sizeof(e));
	e = span(6, 9 * MS + 10 * US, 100 * US, 0, EP_SPAN_F_NESTED_SAME, 1);
	feed(st, sink, &e, sizeof(e));
	/* NULL sink: nothing happens. */
	probes_cycle_fact(st, &e, sizeof(e), NULL);
	cycle_sink_end(sink, 10 * MS, 10);
	CHECK_INT_EQ(cycle_sink_flush(sink, 10 * MS, true), 1);
	const struct cycle_table *t = cycle_sink_table(sink);
	if (t->n == 1) {
		const struct cycle_row *r = &t->rows[0];

		CHECK_INT_EQ(r->inference_ns, 1200 * US);
		CHECK_INT_EQ(r->inference_calls, 3);
		CHECK_INT_EQ(r->tokens, 2);
		CHECK_INT_EQ(r->sql_ns, 3050 * US);
		CHECK_INT_EQ(r->sql_count, 3);
		CHECK_INT_EQ(r->sql_slowest_ns, 2 * MS);
		CHECK_STR_EQ(r->sql_slowest, "SELECT 1");
		CHECK_INT_EQ(r->probe_other_ns, 300 * US);
		CHECK_INT_EQ(r->probe_other_calls, 1);
	} else {
		CHECK_INT_EQ(t->n, 1);
	}
	cycle_sink_free(sink);
	probe_stats_free(st);
	probe_specs_free(&ps);
	free(user.owned);
	return check_report("test_probes_cycles");
}
