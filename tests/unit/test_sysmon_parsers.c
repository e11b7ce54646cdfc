// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc parsers of the memory and thermal monitors (good and hostile text),
 * memory bookkeeping (peak, exec, timeline bound), busy-share merging and the
 * Jetson signal to throttle-event conversion. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sysmon/memory.h"
#include "sysmon/thermal.h"

static void test_statm(void)
{
	int64_t vm = -1, rss = -1;

	CHECK_INT_EQ(mem_parse_statm("2500 300 100 10 0 200 0\n", 4096, &vm, &rss), 0);
	CHECK_INT_EQ(vm, 2500LL * 4096);
	CHECK_INT_EQ(rss, 300LL * 4096);
	CHECK_INT_EQ(mem_parse_statm("", 4096, &vm, &rss), -EINVAL);
	CHECK_INT_EQ(mem_parse_statm("abc def", 4096, &vm, &rss), -EINVAL);
	CHECK_INT_EQ(mem_parse_statm("12", 4096, &vm, &rss), -EINVAL);
	CHECK_INT_EQ(mem_parse_statm("-1 2 3", 4096, &vm, &rss), -EINVAL);
	CHECK_INT_EQ(mem_parse_statm("99999999999999999999999 1", 4096, &vm, &rss), -EINVAL);
	CHECK_INT_EQ(mem_parse_statm("9000000000000000 1", 4096, &vm, &rss), -ERANGE);
	CHECK_INT_EQ(mem_parse_statm("10 20", 4096, &vm, &rss), -ERANGE); /* rss > size */
	CHECK_INT_EQ(mem_parse_statm(NULL, 4096, &vm, &rss), -EINVAL);
}

static void test_stat_faults(void)
{
	uint64_t mn = 0, mj = 0;
	/* comm with spaces and a ')' inside: the parser must use the last ')'. */
	const char *s = "1234 (we) ird (name) S 1 1234 1234 0 -1 4194560 5123 77 4 9 10 20 0 0 "
			"20 0 1 0 100 1000 200\n";

	CHECK_INT_EQ(mem_parse_stat_faults(s, &mn, &mj), 0);
	CHECK_INT_EQ(mn, 5123);
	CHECK_INT_EQ(mj, 4);
	CHECK_INT_EQ(mem_parse_stat_faults("1234 (x) S 1 2", &mn, &mj), -EINVAL); /* truncated */
	CHECK_INT_EQ(mem_parse_stat_faults("1234 x S 1 2 3 4 5 6 7 8 9", &mn, &mj), -EINVAL);
	CHECK_INT_EQ(mem_parse_stat_faults("1 (x) S a b c d e f g h i", &mn, &mj), -EINVAL);
	CHECK_INT_EQ(mem_parse_stat_faults("", &mn, &mj), -EINVAL);
}

static void test_status_hwm(void)
{
	int64_t h = 0;

	CHECK_INT_EQ(mem_parse_status_hwm("Name:\tx\nVmPeak:\t 100 kB\nVmHWM:\t    2048 kB\n", &h),
		     0);
	CHECK_INT_EQ(h, 2048 * 1024);
	CHECK_INT_EQ(mem_parse_status_hwm("Name:\tkthread\n", &h), -ENOENT);
	CHECK_INT_EQ(mem_parse_status_hwm("Name:\tx\nVmHWM:\tlots kB\n", &h), -EINVAL);
	CHECK_INT_EQ(mem_parse_status_hwm("Name:\tx\nVmHWM:\t12 MB\n", &h), -EINVAL);
	CHECK_INT_EQ(mem_parse_status_hwm("Name:\tx\nVmHWM:\t99999999999999999 kB\n", &h), -ERANGE);
}

static void test_proc_stat(void)
{
	struct cpu_times t[4];
	const char *s = "cpu  100 0 100 800 0 0 0 0 0 0\n"
			"cpu0 50 0 50 380 20 0 0 0 0 0\n"
			"cpu2 10 5 5 70 10 0 0 0 0 0\n"
			"cpu3 garbage\n"
			"cpu9 1 1 1 1 1 1 1 1 1 1\n" /* beyond max: ignored */
			"intr 12345\n";

	CHECK_INT_EQ(thermal_parse_proc_stat(s, t, 4), 2);
	CHECK(t[0].ok && t[0].total == 500 && t[0].busy == 100);
	CHECK(!t[1].ok);
	CHECK(t[2].ok && t[2].total == 100 && t[2].busy == 20);
	CHECK(!t[3].ok);
	CHECK_INT_EQ(thermal_parse_proc_stat("intr 1\n", t, 4), -EINVAL);
	CHECK_INT_EQ(thermal_parse_proc_stat("", t, 4), -EINVAL);
	CHECK_INT_EQ(thermal_parse_proc_stat("cpu0 99999999999999999999999 1 1 1 1 1 1 1\n", t, 4),
		     -EINVAL);
}

static void test_memory_book(void)
{
	struct memstate m;
	int64_t a[4] = { 1 << 20, 10 << 20, 0, 0 };
	int64_t b[4] = { 1 << 20, 2 << 20, 0, 0 };
	struct mem_proc *p;

	CHECK_INT_EQ(mem_init(&m, 8), 0);
	/* The kernel-side peak (40 MiB) lies between two coalesced events. */
	mem_on_rss(&m, 100, 7, 0x11, a, 40 << 20);
	mem_on_rss(&m, 200, 7, 0x11, b, 40 << 20);
	p = mem_proc(&m, 7, false);
	CHECK(p && p->peak_rss == 40 << 20 && p->rss == 3 << 20);
	mem_on_proc(&m, 300, 7, 100 << 20, 4 << 20, 50 << 20, true, 10, 1);
	CHECK(p->peak_rss == 50 << 20); /* VmHWM is higher still */
	CHECK(p->faults_ok && p->minflt == 10 && p->majflt == 1);
	mem_on_exec(&m, 400, 7);
	CHECK(p->pre_exec_peak_rss == 50 << 20 && p->peak_rss == -1 && p->execs == 1);
	CHECK_INT_EQ(m.ntl, 0); /* pre-exec points gone */
	mem_on_rss(&m, 500, 7, 0x22, b, 3 << 20);
	mem_on_rss(&m, 510, 7, 0x11, a, 40 << 20); /* late event of the old image */
	CHECK(p->peak_rss == 3 << 20);
	/* Bounded timeline: 100 points into 8 slots keep covering the run. */
	for (int i = 0; i < 100; i++) {
		int64_t c[4] = { 0, (int64_t)i << 20, 0, 0 };

		mem_on_rss(&m, 1000 + (uint64_t)i, 7, 0x22, c, 0);
	}
	CHECK(m.ntl <= 8 && m.ntl >= 4);
	CHECK(m.tl[m.ntl - 1].ts_ns >= 1090);
	CHECK(m.tl[0].ts_ns < 1010);
	CHECK(p->peak_rss == 99 << 20); /* the peak survives the halving */
	cJSON *j = mem_report_json(&m, 0);

	CHECK(j && cJSON_GetObjectItem(j, "peak_rss_bytes")->valuedouble == (double)(99 << 20));
	cJSON_Delete(j);
	mem_free(&m);
}

/* Attached mid-run: the first rss_stat event of an image reports one
 * member (anon 19.7 MiB), the others stay 0 until they change: no RSS of
 * 19.7 MiB between /proc readings of 83.9 MiB, only once file and anon
 * were both reported. */
static void test_memory_partial_members(void)
{
	struct memstate m;
	int64_t anon_only[4] = { 0, 20 << 20, 0, 0 }, both[4] = { 64 << 20, 20 << 20, 0, 0 };
	struct mem_proc *p;

	CHECK_INT_EQ(mem_init(&m, 16), 0);
	mem_on_proc(&m, 100, 7, 200 << 20, 84 << 20, -1, true, 1, 0);
	mem_on_rss(&m, 150, 7, 0x33, anon_only, 20 << 20);
	p = mem_proc(&m, 7, false);
	CHECK(p && p->rss == 84 << 20);
	mem_on_proc(&m, 200, 7, 200 << 20, 84 << 20, -1, true, 1, 0);
	mem_on_rss(&m, 250, 7, 0x33, both, 84 << 20);
	CHECK(p && p->rss == 84 << 20 && p->peak_rss == 84 << 20);
	for (size_t i = 0; i < m.ntl; i++)
		CHECK(m.tl[i].rss == 84 << 20);
	CHECK_INT_EQ(m.ntl, 2); /* the /proc readings; the event is no change */
	mem_free(&m);
}

/* A /proc sample is stamped when the poll began; rss_stat events stamped
 * after it can be in already: the timeline stays in time order. */
static void test_memory_timeline_order(void)
{
	struct memstate m;
	int64_t a[4] = { 4096, 1 << 20, 0, 0 }, b[4] = { 4096, 2 << 20, 0, 0 },
		c[4] = { 4096, 3 << 20, 0, 0 };

	CHECK_INT_EQ(mem_init(&m, 8), 0);
	mem_on_rss(&m, 100, 7, 0x11, a, 0);
	mem_on_rss(&m, 200, 7, 0x11, b, 0);
	mem_on_rss(&m, 300, 7, 0x11, c, 0);
	mem_on_proc(&m, 250, 7, 100 << 20, 2 << 20, -1, true, 10, 0);
	mem_on_proc(&m, 50, 7, 90 << 20, 1 << 20, -1, true, 5, 0); /* before all */
	CHECK_INT_EQ(m.ntl, 5);
	CHECK(m.tl[0].ts_ns == 50 && m.tl[3].ts_ns == 250 && m.tl[3].vm == 100 << 20);
	for (size_t i = 1; i < m.ntl; i++)
		CHECK(m.tl[i - 1].ts_ns <= m.tl[i].ts_ns);
	mem_free(&m);
}

static void test_busy_merge(void)
{
	struct thermal_tl t;
	struct cpu_times a[2] = { { true, 0, 0 }, { true, 0, 0 } }, b[2], c[2], d[2];

	CHECK_INT_EQ(thermal_tl_init(&t, 2, 900), 0);
	/* cpu0: 100 % busy twice, then 10 %: two windows, the first merged. */
	b[0] = (struct cpu_times){ true, 100, 100 };
	c[0] = (struct cpu_times){ true, 195, 200 };
	d[0] = (struct cpu_times){ true, 205, 300 };
	b[1] = c[1] = d[1] = (struct cpu_times){ false, 0, 0 };
	thermal_tl_busy(&t, a, b, 2, 0, 100);
	thermal_tl_busy(&t, b, c, 2, 100, 200);
	thermal_tl_busy(&t, c, d, 2, 200, 300);
	thermal_tl_flush(&t);
	CHECK_INT_EQ(t.n, 2);
	if (t.n == 2) {
		CHECK_INT_EQ(t.ev[0].ts_ns, 200);
		CHECK_INT_EQ(t.ev[0].dur_ns, 200);
		CHECK_INT_EQ(t.ev[0].a, 975); /* mean of 1000 and 950 */
		CHECK_INT_EQ(t.ev[1].a, 100);
		CHECK_INT_EQ(t.ev[1].dur_ns, 100);
	}
	thermal_tl_free(&t);
}

static void test_jetson_signals(void)
{
	struct thermal_tl t;
	struct jetson_throttle_signal s[2];

	memset(s, 0, sizeof(s));
	s[0].kind = JETSON_THR_GPU_BUSY_BELOW_MAX;
	strcpy(s[0].source, "gpu");
	s[1].kind = JETSON_THR_ZONE_TRIP;
	strcpy(s[1].source, "gpu-thermal");
	CHECK_INT_EQ(thermal_tl_init(&t, 0, 0), 0);
	thermal_tl_jetson(&t, 100, s, 2);    /* both on */
	thermal_tl_jetson(&t, 200, s, 1);    /* trip off */
	thermal_tl_jetson(&t, 300, s, 1);    /* no change */
	thermal_tl_jetson(&t, 400, NULL, 0); /* gpu off */
	CHECK_INT_EQ(t.n, 4);

	struct thr_opts o = { .start_ns = 0, .end_ns = 1000 };
	struct thr_result r;

	CHECK_INT_EQ(throttle_analyze(t.ev, t.n, &o, &r), 0);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, 100);
		CHECK_INT_EQ(r.episodes[0].end_ns, 400);
		CHECK_INT_EQ(r.episodes[0].causes,
			     THR_CAUSE_BUSY_BELOW_MAX | THR_CAUSE_THERMAL_TRIP);
	}
	CHECK_INT_EQ(throttle_share_between(&r, 100, 200) * 100, 100);
	throttle_result_free(&r);
	thermal_tl_free(&t);
}

int main(void)
{
	test_statm();
	test_stat_faults();
	test_status_hwm();
	test_proc_stat();
	test_memory_book();
	test_memory_timeline_order();
	test_memory_partial_members();
	test_busy_merge();
	test_jetson_signals();
	return check_report("test_sysmon_parsers");
}
