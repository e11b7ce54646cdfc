// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --alert expressions: accepted forms, every malformed one rejected with a
 * reason, evaluation against live metrics (unknown is not false), and
 * edge-triggered firing with its history. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "top/alerts.h"
#include "check.h"

static void test_parse(void)
{
	struct alert_rule r;
	char why[128];

	CHECK_INT_EQ(alert_parse("rss>80%", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_RSS && r.op == ALERT_OP_GT && r.percent && r.threshold == 80);
	CHECK_INT_EQ(alert_parse(" RSS > 2G ", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_RSS && !r.percent && r.threshold == 2.0 * 1024 * 1024 * 1024);
	CHECK_STR_EQ(r.text, "rss>2g");
	CHECK_INT_EQ(alert_parse("rss>512MiB", &r, why, sizeof(why)), 0);
	CHECK(r.threshold == 512.0 * 1024 * 1024);
	{
		char msg[96];

		/* As many decimals as it takes to tell them apart. */
		alert_describe(&r, 700.0 * 1024 * 1024, msg, sizeof(msg));
		CHECK_STR_EQ(msg, "rss 700 MiB > 512 MiB");
		CHECK_INT_EQ(alert_parse("rss>1M", &r, why, sizeof(why)), 0);
		alert_describe(&r, 1.3 * 1024 * 1024, msg, sizeof(msg));
		CHECK_STR_EQ(msg, "rss 1.3 MiB > 1.0 MiB");
		alert_describe(&r, 1048576 + 4096, msg, sizeof(msg));
		CHECK_STR_EQ(msg, "rss 1.004 MiB > 1.000 MiB");
		alert_describe(&r, 1048577, msg, sizeof(msg));
		CHECK_STR_EQ(msg, "rss 1048577 B > 1048576 B");
	}
	CHECK_INT_EQ(alert_parse("temp>85", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_TEMP && r.threshold == 85);
	CHECK_INT_EQ(alert_parse("temp>85C", &r, why, sizeof(why)), 0);
	CHECK_INT_EQ(alert_parse("gpu_temp>75", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_GPU_TEMP);
	CHECK_INT_EQ(alert_parse("gpu_load>90%", &r, why, sizeof(why)), 0);
	CHECK_INT_EQ(alert_parse("cycle>1.5x", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_CYCLE && r.threshold == 1.5);
	CHECK_INT_EQ(alert_parse("drops>0", &r, why, sizeof(why)), 0);
	CHECK_INT_EQ(alert_parse("throttled", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_THROTTLED && r.op == ALERT_OP_SET);
	CHECK_INT_EQ(alert_parse("disk<5%", &r, why, sizeof(why)), 0);
	CHECK(r.metric == ALERT_DISK && r.op == ALERT_OP_LT && r.threshold == 5);

	static const char *const bad[] = {
		"",
		"   ",
		"rss",
		"rss>",
		"rss>>1",
		"rss=5",
		"rss>-1",
		"rss>+1",
		"rss>abc",
		"rss>80%%",
		"rss>101%",
		"rss>5Q",
		"temp>85F",
		"temp>nan",
		"temp>inf",
		"temp>1e999",
		"cpu>1",
		"disk<5",
		"disk<200%",
		"cycle>1.5",
		"cycle>1.5xx",
		"throttled>0",
		"throttledx",
		"gpu_load>5",
		"drops>0 extra",
		"rss>1111111111111111111111111111111111111111111111111111111",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (alert_parse(bad[i], &r, why, sizeof(why)) == 0)
			fprintf(stderr, "accepted bad alert '%s'\n", bad[i]);
		CHECK(alert_parse(bad[i], &r, why, sizeof(why)) < 0);
		CHECK(why[0] != '\0');
	}
	CHECK(alert_parse(NULL, &r, why, sizeof(why)) < 0);
}

static void test_eval(void)
{
	struct live_metrics l;
	struct alert_rule r;
	struct alert_env env = { .disk_free_pct = NAN };
	double v;

	live_metrics_init(&l);
	/* Nothing known: every metric is unknown, none is "off". */
	static const char *const all[] = { "rss>80%", "temp>85",   "gpu_temp>75", "cycle>1.5x",
					   "drops>0", "throttled", "disk<5%",	  "gpu_load>1%" };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		CHECK_INT_EQ(alert_parse(all[i], &r, NULL, 0), 0);
		CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_UNKNOWN);
		CHECK(isnan(v));
	}
	alert_parse("rss>80%", &r, NULL, 0);
	l.rss_pct = 80;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_OFF); /* strictly greater */
	l.rss_pct = 80.5;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_ON);
	CHECK_NEAR(v, 80.5, 1e-9);
	alert_parse("drops>0", &r, NULL, 0);
	l.drops[LIVE_SRC_SCHED] = 0;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_OFF);
	l.drops[LIVE_SRC_PROBES] = 3;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_ON);
	CHECK_NEAR(v, 3, 1e-9);
	alert_parse("disk<5%", &r, NULL, 0);
	env.disk_free_pct = 4.9;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_ON);
	CHECK_INT_EQ(alert_eval(&r, &l, NULL, &v), ALERT_UNKNOWN);
	alert_parse("throttled", &r, NULL, 0);
	l.throttled = 0;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_OFF);
	l.throttled = 1;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_ON);
	/* cycle: the last against the median of the earlier ones. One cycle
	 * has nothing to compare to. */
	alert_parse("cycle>1.5x", &r, NULL, 0);
	l.ncycles = 1;
	l.cycle_ms[0] = 100;
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_UNKNOWN);
	l.ncycles = 4;
	l.cycle_ms[1] = 300;
	l.cycle_ms[2] = 120;
	l.cycle_ms[3] = 200; /* median(100, 300, 120) = 120: 200/120 = 1.67 */
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_ON);
	CHECK_NEAR(v, 200.0 / 120.0, 1e-9);
	l.cycle_ms[3] = 170; /* 1.42 */
	CHECK_INT_EQ(alert_eval(&r, &l, &env, &v), ALERT_OFF);
}

static void test_set(void)
{
	const char *exprs[] = { "temp>85", "cycle>1.5x" };
	const char *bad[] = { "temp>85", "oops" };
	struct alert_set s;
	struct alert_fire out[4];
	struct live_metrics l;
	char why[128], msg[160];
	size_t n;

	CHECK(alert_set_init(&s, bad, 2, why, sizeof(why)) < 0);
	CHECK(strstr(why, "'oops'") != NULL);
	alert_set_free(&s);
	CHECK_INT_EQ(alert_set_init(&s, exprs, 2, why, sizeof(why)), 0);
	live_metrics_init(&l);
	l.temp_c = 80;
	/* First round: cycle has no data: said once, temp is below. */
	n = alert_set_step(&s, 100, &l, NULL, out, 4);
	CHECK_INT_EQ((int)n, 1);
	CHECK(n == 1 && out[0].rule == 1 && out[0].unavailable);
	CHECK(s.evaluated[0] && !s.evaluated[1]);
	CHECK_INT_EQ((int)alert_set_step(&s, 200, &l, NULL, out, 4), 0);
	/* Crossing fires once; staying above does not fire again. */
	l.temp_c = 90;
	n = alert_set_step(&s, 300, &l, NULL, out, 4);
	CHECK(n == 1 && out[0].rule == 0 && !out[0].unavailable && out[0].value == 90);
	CHECK_INT_EQ((int)alert_set_step(&s, 400, &l, NULL, out, 4), 0);
	l.temp_c = 70;
	CHECK_INT_EQ((int)alert_set_step(&s, 500, &l, NULL, out, 4), 0);
	l.temp_c = 86;
	CHECK_INT_EQ((int)alert_set_step(&s, 600, &l, NULL, out, 4), 1);
	CHECK_INT_EQ((int)s.nevents, 2);
	CHECK(s.nevents == 2 && s.events[0].ts_ns == 300 && s.events[1].ts_ns == 600);
	alert_describe(&s.rules[0], 86, msg, sizeof(msg));
	CHECK_STR_EQ(msg, "temperature 86.0 C > 85 C");
	/* The history is bounded and counts what it could not keep. */
	for (int i = 0; i < 2 * ALERT_MAX_EVENTS + 10; i++) {
		l.temp_c = i % 2 ? 70 : 90;
		alert_set_step(&s, 1000 + (uint64_t)i, &l, NULL, out, 4);
	}
	CHECK_INT_EQ((int)s.nevents, ALERT_MAX_EVENTS);
	CHECK(s.dropped > 0);
	alert_set_free(&s);
}

/* cycle>1.5x judges each cycle closed since the last step, in order: a
 * slow cycle followed by normal ones within one refresh still fires, once,
 * with its own ratio; two slow ones apart within one refresh fire twice;
 * steps without a new cycle keep the state. */
static void test_cycle_steps(void)
{
	const char *exprs[] = { "cycle>1.5x" };
	struct alert_set s;
	struct alert_fire out[4];
	struct live_metrics l;
	char why[128];

	CHECK_INT_EQ(alert_set_init(&s, exprs, 1, why, sizeof(why)), 0);
	live_metrics_init(&l);
	/* Cycles 0..3 of 100 ms: nothing slow. */
	l.ncycles = 4;
	l.cycle_no = 3;
	for (int i = 0; i < 4; i++)
		l.cycle_ms[i] = 100;
	CHECK_INT_EQ((int)alert_set_step(&s, 1, &l, NULL, out, 4), 0);
	/* Within one refresh: cycle 4 takes 300 ms, 5 and 6 are back to 100. */
	l.ncycles = 7;
	l.cycle_no = 6;
	l.cycle_ms[4] = 300;
	l.cycle_ms[5] = l.cycle_ms[6] = 100;
	CHECK_INT_EQ((int)alert_set_step(&s, 2, &l, NULL, out, 4), 1);
	CHECK_NEAR(out[0].value, 3.0, 1e-9);
	CHECK_INT_EQ((int)s.nevents, 1);
	/* Cycles 5 and 6 were normal again: off. No new cycle: no new
	 * judgement, no event. */
	CHECK(!s.active[0]);
	CHECK_INT_EQ((int)alert_set_step(&s, 3, &l, NULL, out, 4), 0);
	/* A normal cycle clears it; the next slow one fires again. */
	l.ncycles = 8;
	l.cycle_no = 7;
	l.cycle_ms[7] = 100;
	CHECK_INT_EQ((int)alert_set_step(&s, 4, &l, NULL, out, 4), 0);
	CHECK(!s.active[0]);
	/* Cycles 8 (250 ms), 9 (100), 10 (400) in one refresh: two events. */
	l.ncycles = 11;
	l.cycle_no = 10;
	l.cycle_ms[8] = 250;
	l.cycle_ms[9] = 100;
	l.cycle_ms[10] = 400;
	CHECK_INT_EQ((int)alert_set_step(&s, 5, &l, NULL, out, 4), 2);
	CHECK_NEAR(out[0].value, 2.5, 1e-9);
	CHECK_NEAR(out[1].value, 4.0, 1e-9);
	CHECK_INT_EQ((int)s.nevents, 3);
	/* The strip is full: it shifts, newest last. */
	l.ncycles = LIVE_MAX_CYCLES;
	l.cycle_no = 40;
	for (int i = 0; i < LIVE_MAX_CYCLES; i++)
		l.cycle_ms[i] = 100;
	l.cycle_ms[LIVE_MAX_CYCLES - 2] = 200; /* cycle 39 */
	CHECK_INT_EQ((int)alert_set_step(&s, 5, &l, NULL, out, 4), 1);
	CHECK_NEAR(out[0].value, 2.0, 1e-9);
	alert_set_free(&s);
}

int main(void)
{
	test_parse();
	test_eval();
	test_set();
	test_cycle_steps();
	return check_report("test_alerts");
}
