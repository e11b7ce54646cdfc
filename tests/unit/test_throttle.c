// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Throttling detector on synthetic timelines whose episodes are known by
 * construction (times in whole seconds so the expected values are exact). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sysmon/throttle.h"

#define S(x)	((uint64_t)(x)*1000000000ull)
#define MS(x)	((uint64_t)(x)*1000000ull)
#define RUN_END S(10)

struct tl {
	struct thr_event ev[4096];
	size_t n;
};

static struct thr_event *add(struct tl *t, uint64_t ts, int type)
{
	struct thr_event *e = &t->ev[t->n++];

	memset(e, 0, sizeof(*e));
	e->ts_ns = ts;
	e->type = (uint16_t)type;
	return e;
}

static void cpu_ev(struct tl *t, uint64_t ts, int type, int cpu, long long a, long long b)
{
	struct thr_event *e = add(t, ts, type);

	e->cpu = cpu;
	e->a = a;
	e->b = b;
}

/* Busy windows of 100 ms covering [from, to). */
static void busy(struct tl *t, int cpu, uint64_t from, uint64_t to, int permille)
{
	for (uint64_t s = from; s < to; s += MS(100)) {
		struct thr_event *e = add(t, s + MS(100), THR_EV_BUSY);

		e->cpu = cpu;
		e->a = permille;
		e->dur_ns = MS(100);
	}
}

static void zone_ev(struct tl *t, uint64_t ts, int type, int id, int idx, long long a, long long b,
		    int trip_type)
{
	struct thr_event *e = add(t, ts, type);

	e->id = id;
	e->idx = idx;
	e->a = a;
	e->b = b;
	e->trip_type = (uint16_t)trip_type;
	strcpy(e->name, "cpu-thermal");
}

static void named(struct tl *t, uint64_t ts, int type, const char *name, long long a,
		  uint32_t cause)
{
	struct thr_event *e = add(t, ts, type);

	snprintf(e->name, sizeof(e->name), "%s", name);
	e->a = a;
	e->cause = cause;
}

static struct thr_result run(const struct tl *t)
{
	struct thr_opts o = { .start_ns = 0, .end_ns = RUN_END };
	struct thr_result r;

	CHECK_INT_EQ(throttle_analyze(t->ev, t->n, &o, &r), 0);
	return r;
}

/* Seeds a 2 GHz CPU (policy = hardware max) running busy at max the whole run. */
static void healthy_cpu(struct tl *t, int cpu)
{
	cpu_ev(t, 0, THR_EV_HW_MAX, cpu, 2000000, 0);
	cpu_ev(t, 0, THR_EV_FREQ_LIMITS, cpu, 400000, 2000000);
	cpu_ev(t, 0, THR_EV_FREQ, cpu, 2000000, 0);
}

static void test_no_throttling(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	healthy_cpu(t, 0);
	busy(t, 0, 0, RUN_END, 1000);
	zone_ev(t, 0, THR_EV_TRIP_DEF, 0, 0, 80000, 2000, THR_TRIP_PASSIVE);
	zone_ev(t, S(1), THR_EV_TEMP, 0, 0, 60000, 0, 0);
	/* An unset x86_pkg_temp trip reads 0 mC: disabled, not "always hot". */
	zone_ev(t, 0, THR_EV_TRIP_DEF, 0, 1, 0, 0, THR_TRIP_PASSIVE);
	zone_ev(t, S(5), THR_EV_TEMP, 0, 0, 79000, 0, 0);
	/* A fan at full speed is cooling, not throttling. */
	named(t, S(2), THR_EV_CDEV, "pwm-fan", 3, 0);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 0);
	CHECK_INT_EQ(r.throttled_ns, 0);
	CHECK_STR_EQ(thr_verdict_name(r.verdict), "not-throttled");
	CHECK(r.inputs & THR_IN_FREQ);
	CHECK(r.inputs & THR_IN_BUSY);
	CHECK(r.inputs & THR_IN_ZONES);
	CHECK(!(r.inputs & THR_IN_COOLING)); /* only a fan */
	throttle_result_free(&r);
	free(t);
}

static void test_thermal_trip(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	zone_ev(t, 0, THR_EV_TRIP_DEF, 3, 0, 50000, 0, THR_TRIP_ACTIVE); /* fan trip: ignored */
	zone_ev(t, 0, THR_EV_TRIP_DEF, 3, 1, 80000, 2000, THR_TRIP_PASSIVE);
	zone_ev(t, S(1), THR_EV_TEMP, 3, 0, 70000, 0, 0);
	zone_ev(t, S(2), THR_EV_TEMP, 3, 0, 81000, 0, 0);
	zone_ev(t, S(3), THR_EV_TEMP, 3, 0, 79000, 0, 0); /* within hysteresis: still on */
	zone_ev(t, S(4), THR_EV_TEMP, 3, 0, 77000, 0, 0); /* below 80 - 2: off */
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(2));
		CHECK_INT_EQ(r.episodes[0].end_ns, S(4));
		CHECK_INT_EQ(r.episodes[0].causes, THR_CAUSE_THERMAL_TRIP);
		CHECK_INT_EQ(r.episodes[0].naffected, 1);
		CHECK_INT_EQ(r.episodes[0].affected[0].kind, THR_ENT_ZONE);
		CHECK_INT_EQ(r.episodes[0].affected[0].id, 3);
		CHECK_STR_EQ(r.episodes[0].affected[0].name, "cpu-thermal");
	}
	CHECK_NEAR(r.share, 0.2, 1e-9);
	CHECK_STR_EQ(thr_verdict_name(r.verdict), "throttled");
	throttle_result_free(&r);
	free(t);
}

static void freq_cap_timeline(struct tl *t)
{
	healthy_cpu(t, 0);
	busy(t, 0, 0, RUN_END, 1000);
	/* A cooling governor lowers the policy max from 3 s to 6 s; the CPU
	 * follows the cap exactly, so only the cap is a cause. */
	cpu_ev(t, S(3), THR_EV_FREQ_LIMITS, 0, 400000, 1200000);
	cpu_ev(t, S(3), THR_EV_FREQ, 0, 1200000, 0);
	cpu_ev(t, S(6), THR_EV_FREQ_LIMITS, 0, 400000, 2000000);
	cpu_ev(t, S(6), THR_EV_FREQ, 0, 2000000, 0);
}

static void check_freq_cap(const struct thr_result *r)
{
	CHECK_INT_EQ(r->nepisodes, 1);
	if (r->nepisodes != 1)
		return;
	CHECK_INT_EQ(r->episodes[0].start_ns, S(3));
	CHECK_INT_EQ(r->episodes[0].end_ns, S(6));
	CHECK_INT_EQ(r->episodes[0].causes, THR_CAUSE_FREQ_CAP);
	CHECK_INT_EQ(r->episodes[0].affected[0].kind, THR_ENT_CPU);
	CHECK_INT_EQ(r->episodes[0].affected[0].id, 0);
	CHECK_NEAR(r->share, 0.3, 1e-9);
}

static void test_freq_cap(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	freq_cap_timeline(t);
	r = run(t);
	check_freq_cap(&r);
	throttle_result_free(&r);
	free(t);
}

static void test_out_of_order(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	freq_cap_timeline(t);
	/* Reverse, then swap pairs: no order survives, ties included. */
	for (size_t i = 0; i < t->n / 2; i++) {
		struct thr_event x = t->ev[i];

		t->ev[i] = t->ev[t->n - 1 - i];
		t->ev[t->n - 1 - i] = x;
	}
	for (size_t i = 0; i + 1 < t->n; i += 2) {
		struct thr_event x = t->ev[i];

		t->ev[i] = t->ev[i + 1];
		t->ev[i + 1] = x;
	}
	r = run(t);
	check_freq_cap(&r);
	throttle_result_free(&r);
	free(t);
}

static void test_overlapping(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	freq_cap_timeline(t); /* cpu0 capped [3, 6) */
	zone_ev(t, 0, THR_EV_TRIP_DEF, 1, 0, 90000, 0, THR_TRIP_HOT);
	zone_ev(t, S(2), THR_EV_TEMP, 1, 0, 95000, 0, 0);
	zone_ev(t, S(4), THR_EV_TEMP, 1, 0, 85000, 0, 0); /* trip [2, 4) */
	/* A processor cooling device [5, 8): joins the same episode. */
	named(t, S(5), THR_EV_CDEV, "Processor", 2, 0);
	named(t, S(8), THR_EV_CDEV, "Processor", 0, 0);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(2));
		CHECK_INT_EQ(r.episodes[0].end_ns, S(8));
		CHECK_INT_EQ(r.episodes[0].causes,
			     THR_CAUSE_THERMAL_TRIP | THR_CAUSE_FREQ_CAP | THR_CAUSE_COOLING);
		CHECK_INT_EQ(r.episodes[0].naffected, 3);
	}
	CHECK_INT_EQ(r.throttled_ns, S(6)); /* union, not the 2 + 3 + 3 sum */
	CHECK_NEAR(throttle_share_between(&r, S(0), S(4)), 0.5, 1e-9);
	CHECK_NEAR(throttle_share_between(&r, S(8), S(10)), 0.0, 1e-9);
	throttle_result_free(&r);

	/* Two separate episodes merge only when the gap is under merge_gap. */
	struct thr_opts o = { .start_ns = 0, .end_ns = RUN_END, .merge_gap_ns = S(1) };

	memset(t, 0, sizeof(*t));
	named(t, S(1), THR_EV_CDEV, "Processor", 1, 0);
	named(t, S(2), THR_EV_CDEV, "Processor", 0, 0);
	named(t, S(2) + MS(500), THR_EV_CDEV, "Processor", 1, 0);
	named(t, S(3), THR_EV_CDEV, "Processor", 0, 0);
	CHECK_INT_EQ(throttle_analyze(t->ev, t->n, &o, &r), 0);
	CHECK_INT_EQ(r.nepisodes, 1);
	CHECK_INT_EQ(r.throttled_ns, MS(1500));
	throttle_result_free(&r);
	o.merge_gap_ns = 0;
	CHECK_INT_EQ(throttle_analyze(t->ev, t->n, &o, &r), 0);
	CHECK_INT_EQ(r.nepisodes, 2);
	throttle_result_free(&r);
	free(t);
}

static void test_capped_but_idle(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	healthy_cpu(t, 0);
	busy(t, 0, 0, RUN_END, 100); /* 10 % busy: low clocks are the governor's choice */
	cpu_ev(t, S(3), THR_EV_FREQ_LIMITS, 0, 400000, 800000);
	cpu_ev(t, S(3), THR_EV_FREQ, 0, 400000, 0);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 0);
	CHECK_STR_EQ(thr_verdict_name(r.verdict), "not-throttled");
	throttle_result_free(&r);

	/* A power mode capped from the start (policy max 1.2 of 2 GHz) with the
	 * CPU busy at that cap: not throttling by itself. */
	memset(t, 0, sizeof(*t));
	cpu_ev(t, 0, THR_EV_HW_MAX, 1, 2000000, 0);
	cpu_ev(t, 0, THR_EV_FREQ_LIMITS, 1, 400000, 1200000);
	cpu_ev(t, 0, THR_EV_FREQ, 1, 1200000, 0);
	busy(t, 1, 0, RUN_END, 1000);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 0);
	throttle_result_free(&r);

	/* ...but busy below that allowed max is. */
	cpu_ev(t, S(7), THR_EV_FREQ, 1, 900000, 0);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(7));
		CHECK_INT_EQ(r.episodes[0].end_ns, RUN_END);
		CHECK_INT_EQ(r.episodes[0].causes, THR_CAUSE_BUSY_BELOW_MAX);
		CHECK_INT_EQ(r.episodes[0].affected[0].id, 1);
	}
	throttle_result_free(&r);
	free(t);
}

static void test_missing_events(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;

	/* Busy data stops at 5 s while the cap stays: past 5 s nothing says the
	 * CPU is busy, so the episode ends there rather than running on. */
	healthy_cpu(t, 0);
	busy(t, 0, 0, S(5), 1000);
	cpu_ev(t, S(3), THR_EV_FREQ_LIMITS, 0, 400000, 1000000);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(3));
		CHECK_INT_EQ(r.episodes[0].end_ns, S(5));
		/* the frequency event was lost: 2 GHz is the last known, above the cap */
		CHECK_INT_EQ(r.episodes[0].causes, THR_CAUSE_FREQ_CAP);
	}
	throttle_result_free(&r);

	/* Trip crossed without its definition (seeding failed): the reading
	 * at the crossing stands in for the trip temperature. */
	memset(t, 0, sizeof(*t));
	zone_ev(t, S(1), THR_EV_TEMP, 0, 0, 88000, 0, 0);
	zone_ev(t, S(2), THR_EV_TRIP_CROSSED, 0, 2, 0, 0, THR_TRIP_PASSIVE);
	zone_ev(t, S(3), THR_EV_TEMP, 0, 0, 91000, 0, 0);
	zone_ev(t, S(4), THR_EV_TEMP, 0, 0, 85000, 0, 0);
	/* An active (fan) trip crossing is not a throttle. */
	zone_ev(t, S(6), THR_EV_TRIP_CROSSED, 0, 0, 0, 0, THR_TRIP_ACTIVE);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(2));
		CHECK_INT_EQ(r.episodes[0].end_ns, S(4));
	}
	throttle_result_free(&r);

	/* Crossing with no reading at all: the next reading becomes the
	 * threshold; still hot while it holds. */
	memset(t, 0, sizeof(*t));
	zone_ev(t, S(2), THR_EV_TRIP_CROSSED, 0, 1, 0, 0, THR_TRIP_HOT);
	zone_ev(t, S(3), THR_EV_TEMP, 0, 0, 95000, 0, 0);
	zone_ev(t, S(5), THR_EV_TEMP, 0, 0, 96000, 0, 0);
	zone_ev(t, S(7), THR_EV_TEMP, 0, 0, 90000, 0, 0);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(2));
		CHECK_INT_EQ(r.episodes[0].end_ns, S(7));
	}
	throttle_result_free(&r);

	/* Garbage: negative CPU, unknown type, out-of-range trip, external with
	 * no cause, name without a terminator. Counted and ignored. */
	memset(t, 0, sizeof(*t));
	cpu_ev(t, S(1), THR_EV_FREQ, -5, 1000, 0);
	add(t, S(1), 99);
	zone_ev(t, S(1), THR_EV_TRIP_CROSSED, 0, 400, 0, 0, THR_TRIP_HOT);
	named(t, S(1), THR_EV_EXTERNAL, "gpu", 1, 0);
	named(t, S(1), THR_EV_EXTERNAL, "gpu", 1, 1u << 20);
	memset(add(t, S(1), THR_EV_CDEV)->name, 'x', THR_NAME_LEN);
	r = run(t);
	CHECK_INT_EQ(r.ignored, 5);
	CHECK_INT_EQ(r.nepisodes, 0);
	throttle_result_free(&r);

	/* Events beyond the run are clipped to it. */
	memset(t, 0, sizeof(*t));
	named(t, S(9), THR_EV_CDEV, "Processor", 1, 0);
	named(t, S(30), THR_EV_CDEV, "Processor", 0, 0);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 1);
	CHECK_INT_EQ(r.throttled_ns, S(1));
	throttle_result_free(&r);
	free(t);
}

static void test_unknown(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;
	struct thr_opts bad = { .start_ns = S(2), .end_ns = S(1) };

	r = run(t); /* a VM: nothing at all */
	CHECK_STR_EQ(thr_verdict_name(r.verdict), "unknown");
	CHECK_INT_EQ(r.inputs, 0);
	throttle_result_free(&r);
	/* Busy shares alone (no cpufreq) cannot clear anyone. */
	busy(t, 0, 0, RUN_END, 1000);
	r = run(t);
	CHECK_STR_EQ(thr_verdict_name(r.verdict), "unknown");
	throttle_result_free(&r);
	CHECK_INT_EQ(throttle_analyze(t->ev, t->n, &bad, &r), -EINVAL);
	throttle_result_free(&r);
	free(t);
}

static void test_counters_and_external(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct thr_result r;
	struct thr_event *e;

	for (int i = 0; i < 3; i++) {
		e = add(t, S(1 + i), THR_EV_COUNTER);
		e->cpu = 2;
		e->counter = THR_CNT_CORE_THROTTLE;
		e->a = i < 2 ? 5 : 7; /* rose between 2 s and 3 s */
		e = add(t, S(1 + i), THR_EV_COUNTER);
		e->cpu = 2;
		e->counter = THR_CNT_PKG_POWER_LIMIT;
		e->a = i == 0 ? 10 : 11; /* rose between 1 s and 2 s */
	}
	/* Jetson GPU busy below max, from 6 s to 7 s. */
	named(t, S(6), THR_EV_EXTERNAL, "gpu", 1, THR_CAUSE_BUSY_BELOW_MAX);
	named(t, S(7), THR_EV_EXTERNAL, "gpu", 0, THR_CAUSE_BUSY_BELOW_MAX);
	r = run(t);
	CHECK_INT_EQ(r.nepisodes, 2);
	if (r.nepisodes == 2) {
		CHECK_INT_EQ(r.episodes[0].start_ns, S(1));
		CHECK_INT_EQ(r.episodes[0].end_ns, S(3));
		CHECK_INT_EQ(r.episodes[0].causes, THR_CAUSE_POWER_CAP | THR_CAUSE_HW_THERMAL);
		CHECK_INT_EQ(r.episodes[1].start_ns, S(6));
		CHECK_INT_EQ(r.episodes[1].end_ns, S(7));
		CHECK_INT_EQ(r.episodes[1].affected[0].kind, THR_ENT_SOURCE);
		CHECK_STR_EQ(r.episodes[1].affected[0].name, "gpu");
	}
	CHECK(r.inputs & THR_IN_COUNTERS);
	CHECK(r.inputs & THR_IN_EXTERNAL);
	CHECK_STR_EQ(thr_cause_name(r.episodes ? r.episodes[1].causes : 0), "busy_below_max");
	throttle_result_free(&r);
	free(t);
}

static void test_fan_names(void)
{
	CHECK(thr_cdev_is_fan("Fan"));
	CHECK(thr_cdev_is_fan("pwm-fan"));
	CHECK(!thr_cdev_is_fan("Processor"));
	CHECK(!thr_cdev_is_fan("thermal-cpufreq-0"));
	CHECK(!thr_cdev_is_fan("gpu-throttle-alert"));
}

int main(void)
{
	test_no_throttling();
	test_thermal_trip();
	test_freq_cap();
	test_out_of_order();
	test_overlapping();
	test_capped_but_idle();
	test_missing_events();
	test_unknown();
	test_counters_and_external();
	test_fan_names();
	return check_report("test_throttle");
}
