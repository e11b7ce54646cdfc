// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Nested probed calls counted once per thread and class (probe_nest.h),
 * and through probe_stats: llama_decode with its ggml_graph_compute inside
 * is the double counting (1441 ms reported for 740 ms). */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "cycles/cycles.h"
#include "probes/probes.h"
#include "probes/probe_nest.h"

#define MS 1000000ull

static void test_nest(void)
{
	struct probe_nest *n = probe_nest_new();
	const unsigned INF = CYC_SPAN_INFERENCE, SQL = CYC_SPAN_SQL, OTH = CYC_SPAN_OTHER;

	CHECK(n != NULL);
	if (!n)
		return;
	/* Thread 1: decode [0,10) with compute [1,9) inside (ends first). */
	CHECK_INT_EQ(probe_nest_add(n, 1, INF, 1 * MS, 9 * MS, 1), 0);
	CHECK_INT_EQ(probe_nest_add(n, 1, INF, 0, 10 * MS, 0), 0);
	CHECK_INT_EQ(probe_nest_ns(n, INF), 10 * MS);
	CHECK_INT_EQ(probe_nest_calls(n, INF), 1);
	/* Thread 2 at the same time: its own time (two threads may overlap). */
	CHECK_INT_EQ(probe_nest_add(n, 2, INF, 2 * MS, 6 * MS, 0), 0);
	CHECK_INT_EQ(probe_nest_ns(n, INF), 14 * MS);
	/* Recursion three deep on thread 1: [20,30) [21,29) [22,28). */
	probe_nest_add(n, 1, INF, 22 * MS, 28 * MS, 2);
	probe_nest_add(n, 1, INF, 21 * MS, 29 * MS, 1);
	probe_nest_add(n, 1, INF, 20 * MS, 30 * MS, 0);
	CHECK_INT_EQ(probe_nest_ns(n, INF), 24 * MS);
	CHECK_INT_EQ(probe_nest_calls(n, INF), 3);
	/* Two sibling calls inside an outer one of another class: SQL steps
	 * [41,43) [44,46) inside a user probe [40,50): SQL 4 ms, other 10 ms
	 * (classes are counted apart; the partition orders them). */
	probe_nest_add(n, 1, SQL, 41 * MS, 43 * MS, 1);
	probe_nest_add(n, 1, SQL, 44 * MS, 46 * MS, 1);
	probe_nest_add(n, 1, OTH, 40 * MS, 50 * MS, 0);
	CHECK_INT_EQ(probe_nest_ns(n, SQL), 4 * MS);
	CHECK_INT_EQ(probe_nest_calls(n, SQL), 2);
	CHECK_INT_EQ(probe_nest_ns(n, OTH), 10 * MS);
	/* A call after a depth-0 one is not inside it, even with start at
	 * the same instant as the previous end. */
	probe_nest_add(n, 1, OTH, 50 * MS, 51 * MS, 0);
	CHECK_INT_EQ(probe_nest_ns(n, OTH), 11 * MS);
	/* Many inner calls inside one outer: more than the stack holds. */
	for (uint64_t i = 0; i < 10000; i++)
		probe_nest_add(n, 3, SQL, 100 * MS + i * 10, 100 * MS + i * 10 + 5, 1);
	probe_nest_add(n, 3, SQL, 100 * MS - 1, 100 * MS + 100000, 0);
	CHECK_INT_EQ(probe_nest_ns(n, SQL), 4 * MS + 100001);
	CHECK_INT_EQ(probe_nest_calls(n, SQL), 3);
	/* Bad input. */
	CHECK_INT_EQ(probe_nest_add(n, 1, PROBE_NEST_CLASSES, 0, 1, 0), -EINVAL);
	CHECK_INT_EQ(probe_nest_add(n, 1, INF, 5, 4, 0), -EINVAL);
	CHECK_INT_EQ(probe_nest_add(NULL, 1, INF, 0, 1, 0), -EINVAL);
	CHECK_INT_EQ(probe_nest_ns(n, 7), 0);
	CHECK_INT_EQ(probe_nest_ns(NULL, INF), 0);
	probe_nest_free(n);
	probe_nest_free(NULL);
}

static struct ep_span span(uint32_t id, uint32_t tid, uint64_t start, uint64_t dur, uint32_t depth)
{
	struct ep_span s = { 0 };

	s.hdr.type = EP_EV_SPAN;
	s.hdr.pid = 10;
	s.hdr.tid = tid;
	s.hdr.ts_ns = start;
	s.dur_ns = dur;
	s.probe_id = id;
	s.depth = depth;
	return s;
}

/* Through probe_stats: 12 decodes of 60 ms, each with a 58 ms compute
 * inside: inference 720 ms (not 1416), 12 calls; report.json has it. */
static void test_stats_classes(void)
{
	struct probe_specs ps;
	char err[128];
	struct probe_stats *st = probe_stats_new(100, 3);
	const struct probe_def *dec = NULL, *comp = NULL;
	uint64_t calls = 0;
	struct ep_span e;

	CHECK_INT_EQ(probe_specs_build(&ps, PROBE_PRESET_ALL, NULL, 0, NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < ps.n; i++) {
		dec = !strcmp(ps.defs[i].symbol, "llama_decode") ? &ps.defs[i] : dec;
		comp = !strcmp(ps.defs[i].symbol, "ggml_graph_compute") ? &ps.defs[i] : comp;
	}
	CHECK(st && dec && comp);
	if (!st || !dec || !comp)
		goto out;
	probe_stats_set_probe(st, 0, dec, "/lib/libllama.so");
	probe_stats_set_probe(st, 1, comp, "/lib/libggml-cpu.so");
	for (uint64_t i = 0; i < 12; i++) {
		uint64_t t0 = i * 100 * MS;

		e = span(1, 7, t0 + MS, 58 * MS, 1);
		CHECK_INT_EQ(probe_stats_add_event(st, &e, sizeof(e)), 0);
		e = span(0, 7, t0, 60 * MS, 0);
		CHECK_INT_EQ(probe_stats_add_event(st, &e, sizeof(e)), 0);
	}
	CHECK_INT_EQ(probe_stats_class_ns(st, CYC_SPAN_INFERENCE, &calls), 720 * MS);
	CHECK_INT_EQ(calls, 12);
	/* Each probe's own total is still its own. */
	CHECK_INT_EQ(probe_stats_get(st, 0)->total_ns, 720 * MS);
	CHECK_INT_EQ(probe_stats_get(st, 1)->total_ns, 696 * MS);
	{
		cJSON *root = cJSON_CreateObject();
		const cJSON *inf;

		CHECK_INT_EQ(probe_stats_report_json(st, root), 0);
		inf = cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "probes"),
								"classes"),
					    "inference"),
			"ns");
		CHECK(cJSON_IsNumber(inf) && inf->valuedouble == 720.0 * MS);
		cJSON_Delete(root);
	}
out:
	probe_stats_free(st);
	probe_specs_free(&ps);
}

int main(void)
{
	test_nest();
	test_stats_classes();
	return check_report("test_probe_nest");
}
