// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Scheduler accounting on synthetic switch/wakeup sequences: the same
 * functions the BPF program runs (bpf/sched_acct.h), then the report built
 * from their records. Expected totals are worked out by hand from the
 * sequence, not taken from the implementation.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sched/sched_view.h"
#include "sched_acct.h"

#define MS 1000000ull

static void fresh(struct ep_sched_thread *t, uint64_t now)
{
	memset(t, 0, sizeof(*t));
	t->pid = 100;
	t->state = EP_TS_ON;
	t->last_ts = now;
}

/* A thread followed since its creation: its run time is known (0 then). */
static void followed(struct ep_sched_thread *t, uint64_t now)
{
	fresh(t, now);
	t->rt_mark = ep_rt_mark(0);
}

/* Switch-out, optional wakeup, switch-in: what sched.bpf.c does. */
static uint64_t block(struct ep_sched_thread *t, uint64_t out, uint8_t reason, uint64_t wake,
		      uint64_t in)
{
	__u64 rq;
	uint64_t ep;

	ep_acct_switch_out(t, out, reason, 0);
	if (wake)
		ep_acct_wakeup(t, wake);
	ep = ep_acct_switch_in(t, in, &rq, 0);
	if (rq != EP_ACCT_NO_RQ)
		ep_acct_rq(t, rq);
	return ep;
}

static void test_classify(void)
{
	CHECK_INT_EQ(ep_sched_classify(0, false), EP_OFF_PREEMPTED);
	/* Preempted while setting up to sleep: still on the run queue. */
	CHECK_INT_EQ(ep_sched_classify(EP_TASK_INTERRUPTIBLE, true), EP_OFF_PREEMPTED);
	CHECK_INT_EQ(ep_sched_classify(EP_TASK_INTERRUPTIBLE, false), EP_OFF_SLEEP);
	CHECK_INT_EQ(ep_sched_classify(EP_TASK_UNINTERRUPTIBLE, false), EP_OFF_BLOCKED);
	/* TASK_KILLABLE = WAKEKILL | UNINTERRUPTIBLE; TASK_IDLE adds NOLOAD. */
	CHECK_INT_EQ(ep_sched_classify(0x100 | EP_TASK_UNINTERRUPTIBLE, false), EP_OFF_BLOCKED);
	CHECK_INT_EQ(ep_sched_classify(0x400 | EP_TASK_UNINTERRUPTIBLE, false), EP_OFF_BLOCKED);
	CHECK_INT_EQ(ep_sched_classify(EP_TASK_DEAD, false), EP_OFF_DEAD);
	CHECK_INT_EQ(ep_sched_classify(0x4 /* __TASK_STOPPED */, false), EP_OFF_OTHER);
	CHECK_INT_EQ(ep_sched_classify(0x8 /* __TASK_TRACED */, false), EP_OFF_OTHER);
	CHECK_INT_EQ(ep_sched_seed_reason('R'), EP_OFF_PREEMPTED);
	CHECK_INT_EQ(ep_sched_seed_reason('S'), EP_OFF_SLEEP);
	CHECK_INT_EQ(ep_sched_seed_reason('D'), EP_OFF_BLOCKED);
	CHECK_INT_EQ(ep_sched_seed_reason('T'), EP_OFF_OTHER);
	CHECK_INT_EQ(ep_sched_seed_reason(0), EP_OFF_OTHER);
}

static void test_sequence(void)
{
	struct ep_sched_thread t;
	uint64_t ep;

	fresh(&t, 0);
	/* on 0..10, sleep 10..30 (woken at 30), wait 30..31, on 31..40 */
	ep = block(&t, 10 * MS, EP_OFF_SLEEP, 30 * MS, 31 * MS);
	CHECK_INT_EQ(ep, 21 * MS);
	/* D 40..45, woken 45, runs at 45.5 */
	ep = block(&t, 40 * MS, EP_OFF_BLOCKED, 45 * MS, 45 * MS + MS / 2);
	CHECK_INT_EQ(ep, 5 * MS + MS / 2);
	/* preempted 50..53: no wakeup, all of it run-queue wait */
	ep = block(&t, 50 * MS, EP_OFF_PREEMPTED, 0, 53 * MS);
	CHECK_INT_EQ(ep, 3 * MS);
	/* stopped 60..70 */
	block(&t, 60 * MS, EP_OFF_OTHER, 69 * MS, 70 * MS);
	ep_acct_finish(&t, 100 * MS);

	/* on: 0-10, 31-40, 45.5-50, 53-60, 70-100 */
	CHECK_INT_EQ(t.on_ns, 10 * MS + 9 * MS + 4 * MS + MS / 2 + 7 * MS + 30 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_SLEEP], 20 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_BLOCKED], 5 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_PREEMPTED], 3 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_OTHER], 9 * MS);
	/* woken waits 1 + 0.5 + 1 ms */
	CHECK_INT_EQ(t.off_ns[EP_OFF_RUNQ], 2 * MS + MS / 2);
	uint64_t off = 0;
	for (int r = 0; r < EP_OFF__COUNT; r++)
		off += t.off_ns[r];
	CHECK_INT_EQ(t.on_ns + off, 100 * MS);
	CHECK_INT_EQ(t.nvcsw, 3);
	CHECK_INT_EQ(t.nivcsw, 1);
	/* four waits for a CPU: 1, 0.5, 3 (preempted), 1 ms */
	CHECK_INT_EQ(t.rq_count, 4);
	CHECK_INT_EQ(t.rq_max_ns, 3 * MS);
	CHECK_INT_EQ(t.rq_sum_ns, 5 * MS + MS / 2);
}

static void test_seeded_and_missed(void)
{
	struct ep_sched_thread t;
	__u64 rq;
	uint64_t ep;

	/* Seeded "R" that never switches: a spinner, on-CPU the whole run. */
	memset(&t, 0, sizeof(t));
	t.state = EP_TS_SEEDED;
	t.reason = ep_sched_seed_reason('R');
	t.last_ts = 5 * MS;
	ep_acct_finish(&t, 105 * MS);
	CHECK_INT_EQ(t.on_ns, 100 * MS);

	/* Seeded "S", woken at 20, on CPU at 22: the block began before the
	 * attach, so no episode and no latency sample, but the time counts. */
	memset(&t, 0, sizeof(t));
	t.state = EP_TS_SEEDED;
	t.reason = ep_sched_seed_reason('S');
	t.last_ts = 0;
	ep_acct_wakeup(&t, 20 * MS);
	ep = ep_acct_switch_in(&t, 22 * MS, &rq, 0);
	CHECK_INT_EQ(ep, 0);
	CHECK_INT_EQ(t.off_ns[EP_OFF_SLEEP], 20 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_RUNQ], 2 * MS);
	CHECK(rq == 2 * MS); /* the wait after a seen wakeup is a real sample */

	/* Seeded "S" whose first event is a switch-out: it was running. */
	memset(&t, 0, sizeof(t));
	t.state = EP_TS_SEEDED;
	t.reason = EP_OFF_SLEEP;
	t.last_ts = 0;
	ep_acct_switch_out(&t, 7 * MS, EP_OFF_SLEEP, 0);
	CHECK_INT_EQ(t.on_ns, 7 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_SLEEP], 0);

	/* A switch-in of a thread believed ON (lost switch-out): nothing is
	 * charged for that interval. */
	fresh(&t, 0);
	ep = ep_acct_switch_in(&t, 10 * MS, &rq, 0);
	CHECK_INT_EQ(ep, 0);
	CHECK(rq == EP_ACCT_NO_RQ);
	CHECK_INT_EQ(t.on_ns, 0);
	ep_acct_finish(&t, 12 * MS);
	CHECK_INT_EQ(t.on_ns, 2 * MS);

	/* A wakeup while still on CPU changes nothing. */
	fresh(&t, 0);
	ep_acct_wakeup(&t, 3 * MS);
	CHECK_INT_EQ(t.state, EP_TS_ON);
	CHECK_INT_EQ(t.off_ns[EP_OFF_RUNQ], 0);

	/* A second wakeup does not restart the run-queue wait. */
	fresh(&t, 0);
	ep_acct_switch_out(&t, 1 * MS, EP_OFF_SLEEP, 0);
	ep_acct_wakeup(&t, 2 * MS);
	ep_acct_wakeup(&t, 3 * MS);
	ep_acct_switch_in(&t, 4 * MS, &rq, 0);
	CHECK(rq == 2 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_SLEEP], 1 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_RUNQ], 2 * MS);

	/* Exit: on-CPU up to the exit, nothing after, even when the final
	 * TASK_DEAD switch-out and the end of the run come later. */
	fresh(&t, 0);
	ep_acct_exit(&t, 6 * MS, 0);
	ep_acct_switch_out(&t, 7 * MS, ep_sched_classify(EP_TASK_DEAD, false), 0);
	ep_acct_finish(&t, 50 * MS);
	CHECK_INT_EQ(t.on_ns, 6 * MS);
	CHECK_INT_EQ(t.nvcsw, 0);
	CHECK_INT_EQ(t.state, EP_TS_DEAD);

	/* Time going backwards (events from two CPUs) never underflows. */
	fresh(&t, 10 * MS);
	ep_acct_switch_out(&t, 9 * MS, EP_OFF_SLEEP, 0);
	CHECK_INT_EQ(t.on_ns, 0);
}

/* Switches the kernel does not report (6.18 in a VM leaves out most
 * switches away from the idle task): the interval is charged from the
 * task's run time. Sequences from perf traces of bpf.test_sched. */
static void test_unreported(void)
{
	struct ep_sched_thread t;
	__u64 rq;
	uint64_t ep, off;

	/* The spinner: preempted at 10 (run time 10 ms), switched back in
	 * unreported, preempted again at 200 having run 185 ms more. */
	followed(&t, 0);
	ep_acct_switch_out(&t, 10 * MS, EP_OFF_PREEMPTED, 10 * MS);
	ep_acct_switch_out(&t, 200 * MS, EP_OFF_PREEMPTED, 195 * MS);
	CHECK_INT_EQ(t.missed, 1);
	CHECK_INT_EQ(t.on_ns, 10 * MS + 185 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_PREEMPTED], 5 * MS);
	ep = ep_acct_switch_in(&t, 201 * MS, &rq, 195 * MS);
	CHECK_INT_EQ(ep, 1 * MS);
	ep_acct_finish(&t, 210 * MS);
	CHECK_INT_EQ(t.on_ns, 195 * MS + 9 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_PREEMPTED], 6 * MS);
	CHECK_INT_EQ(t.missed, 1);

	/* The disker: D at 10 (run time 4), woken at 12 onto an idle CPU, the
	 * switch-in unreported, switched out at 15 having run 2.5 ms. */
	followed(&t, 6 * MS);
	ep_acct_switch_out(&t, 10 * MS, EP_OFF_BLOCKED, 4 * MS);
	ep_acct_wakeup(&t, 12 * MS);
	ep_acct_switch_out(&t, 15 * MS, EP_OFF_BLOCKED, 4 * MS + 5 * MS / 2);
	CHECK_INT_EQ(t.on_ns, 4 * MS + 5 * MS / 2);
	CHECK_INT_EQ(t.off_ns[EP_OFF_BLOCKED], 2 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_RUNQ], MS / 2);
	CHECK_INT_EQ(t.missed, 1);
	/* The new episode starts at the second switch-out, not the first. */
	ep_acct_wakeup(&t, 16 * MS);
	ep = ep_acct_switch_in(&t, 17 * MS, &rq, 4 * MS + 5 * MS / 2);
	CHECK_INT_EQ(ep, 2 * MS);
	off = 0;
	for (int r = 0; r < EP_OFF__COUNT; r++)
		off += t.off_ns[r];
	CHECK_INT_EQ(t.on_ns + off, 11 * MS);

	/* Run time beyond the interval (clock skew) is capped at it. */
	followed(&t, 0);
	ep_acct_switch_out(&t, 1 * MS, EP_OFF_PREEMPTED, 1 * MS);
	ep_acct_switch_out(&t, 3 * MS, EP_OFF_PREEMPTED, 9 * MS);
	CHECK_INT_EQ(t.on_ns, 3 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_PREEMPTED], 0);

	/* A switch-out the kernel did not report: the run time splits the
	 * interval; why it left is unknown ("other"). */
	followed(&t, 0);
	ep_acct_switch_in(&t, 12 * MS, &rq, 4 * MS);
	CHECK_INT_EQ(t.on_ns, 4 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_OTHER], 8 * MS);
	CHECK_INT_EQ(t.missed, 1);
	CHECK(rq == EP_ACCT_NO_RQ);

	/* Exit while believed off-CPU: it runs its exit, so it was switched in. */
	followed(&t, 0);
	ep_acct_switch_out(&t, 5 * MS, EP_OFF_PREEMPTED, 5 * MS);
	ep_acct_exit(&t, 50 * MS, 45 * MS);
	CHECK_INT_EQ(t.on_ns, 45 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_PREEMPTED], 5 * MS);
	CHECK_INT_EQ(t.state, EP_TS_DEAD);
	/* Switched in again after its exit: nothing more is charged. */
	ep_acct_switch_in(&t, 60 * MS, &rq, 46 * MS);
	ep_acct_finish(&t, 70 * MS);
	CHECK_INT_EQ(t.on_ns, 45 * MS);
	CHECK_INT_EQ(t.state, EP_TS_DEAD);

	/* No history (run time unknown): the interval is left uncharged,
	 * and nothing is counted as missed. */
	fresh(&t, 0);
	ep_acct_switch_in(&t, 10 * MS, &rq, 7 * MS);
	CHECK_INT_EQ(t.on_ns, 0);
	CHECK_INT_EQ(t.missed, 0);

	/* End of the run: a runnable thread believed off whose run time grew
	 * ran unreported; a blocked one is left alone (run time it gained
	 * after the detach is not the window's). */
	followed(&t, 0);
	ep_acct_switch_out(&t, 10 * MS, EP_OFF_PREEMPTED, 10 * MS);
	ep_acct_resync(&t, 100 * MS, 95 * MS);
	ep_acct_finish(&t, 100 * MS);
	CHECK_INT_EQ(t.on_ns, 95 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_PREEMPTED], 5 * MS);
	followed(&t, 0);
	ep_acct_switch_out(&t, 10 * MS, EP_OFF_SLEEP, 10 * MS);
	ep_acct_resync(&t, 100 * MS, 11 * MS);
	ep_acct_finish(&t, 100 * MS);
	CHECK_INT_EQ(t.on_ns, 10 * MS);
	CHECK_INT_EQ(t.off_ns[EP_OFF_SLEEP], 90 * MS);
	CHECK_INT_EQ(t.missed, 0);
	/* Run time unchanged: nothing to resync. */
	followed(&t, 0);
	ep_acct_switch_out(&t, 10 * MS, EP_OFF_PREEMPTED, 10 * MS);
	ep_acct_resync(&t, 100 * MS, 10 * MS);
	CHECK_INT_EQ(t.missed, 0);
	CHECK_INT_EQ(t.on_ns, 10 * MS);
}

static void test_hist(void)
{
	__u64 lo, hi;
	uint32_t prev = 0;

	/* Buckets are monotonic and each value lies in its bucket's range. */
	for (uint64_t v = 0; v < (1ull << 40); v = v * 5 / 4 + 1) {
		uint32_t b = ep_sched_hist_bucket(v);

		CHECK(b < EP_SCHED_HIST_BUCKETS);
		CHECK(b >= prev);
		prev = b;
		ep_sched_hist_range(b, &lo, &hi);
		if (v < (1ull << (EP_SCHED_HIST_MAX_EXP + 1)))
			CHECK(lo <= v && v <= hi);
	}
	CHECK_INT_EQ(ep_sched_hist_bucket(7), 7);
	CHECK_INT_EQ(ep_sched_hist_bucket(8), 8);
	CHECK_INT_EQ(ep_sched_hist_bucket(UINT64_MAX), EP_SCHED_HIST_BUCKETS - 1);
	CHECK_INT_EQ(ep_sched_log2(1), 0);
	CHECK_INT_EQ(ep_sched_log2(1ull << 63), 63);
	CHECK_INT_EQ(ep_sched_log2((1ull << 20) + 1), 20);

	/* 90 waits of 10 us and 10 of 2 ms: p50 ~10 us, p99 ~2 ms, within the
	 * kernel's half bucket (6.25%) plus the user histogram's (3.2%). */
	struct ep_sched_thread t;
	struct histogram h;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < 90; i++)
		ep_acct_rq(&t, 10000);
	for (int i = 0; i < 10; i++)
		ep_acct_rq(&t, 2 * MS);
	hist_init(&h);
	sched_hist_import(&h, &t);
	CHECK_INT_EQ(h.count, 100);
	CHECK_INT_EQ(h.max, 2 * MS);
	CHECK_NEAR((double)hist_quantile(&h, 0.5), 10000.0, 10000.0 * 0.1);
	CHECK_NEAR((double)hist_quantile(&h, 0.99), 2.0 * MS, 2.0 * MS * 0.1);
	CHECK_INT_EQ(hist_mean(&h), (90 * 10000 + 10 * 2 * MS) / 100);
}

static double num(const cJSON *o, const char *path)
{
	char buf[128], *save = NULL, *k;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, k);
	return o && cJSON_IsNumber(o) ? o->valuedouble : -1;
}

static void test_report(void)
{
	struct sched_thread_rec r[2];
	struct sched_stats st = { .offcpu_min_us = 1000,
				  .stacks = true,
				  .folded_file = "offcpu.folded" };
	cJSON *o, *th;

	fresh(&r[0].t, 0);
	r[0].tid = 102;
	strcpy(r[0].t.comm, "worker");
	block(&r[0].t, 10 * MS, EP_OFF_SLEEP, 30 * MS, 31 * MS);
	ep_acct_finish(&r[0].t, 40 * MS);
	fresh(&r[1].t, 0);
	r[1].tid = 100;
	/* a full 16-byte comm: no NUL in the kernel copy */
	memcpy(r[1].t.comm, "0123456789abcdef", EP_COMM_LEN);
	block(&r[1].t, 5 * MS, EP_OFF_BLOCKED, 6 * MS, 8 * MS);
	ep_acct_finish(&r[1].t, 40 * MS);
	st.drops[EP_SDROP_RINGBUF_FULL] = 3;
	st.collector_drops = 1;
	/* By design, not a failure: reported apart, outside dropped.total. */
	st.ustack_skipped = 7;
	r[0].t.missed = 2;
	r[1].t.missed = 1;
	st.folded.missed = 4; /* exited threads past the listed ones */

	o = sched_report_json(r, 2, &st);
	CHECK(o != NULL);
	if (!o)
		return;
	CHECK_INT_EQ(num(o, "threads_seen"), 2);
	CHECK_INT_EQ(num(o, "on_cpu_ns"), (10 + 9) * MS + (5 + 32) * MS);
	CHECK_INT_EQ(num(o, "off_cpu_ns"), 21 * MS + 3 * MS);
	CHECK_INT_EQ(num(o, "off_cpu_by_reason.sleep"), 20 * MS);
	CHECK_INT_EQ(num(o, "off_cpu_by_reason.uninterruptible"), 1 * MS);
	CHECK_INT_EQ(num(o, "off_cpu_by_reason.runqueue"), 3 * MS);
	CHECK_INT_EQ(num(o, "context_switches"), 2);
	CHECK_INT_EQ(num(o, "runqueue_latency_ns.count"), 2);
	CHECK_INT_EQ(num(o, "runqueue_latency_ns.max"), 2 * MS);
	CHECK_INT_EQ(num(o, "dropped.total"), 4);
	CHECK_INT_EQ(num(o, "dropped.by_cause.ringbuf_full"), 3);
	CHECK_INT_EQ(num(o, "offcpu_stacks.min_us"), 1000);
	CHECK_INT_EQ(num(o, "offcpu_stacks.user_stack_skipped"), 7);
	CHECK_INT_EQ(num(o, "unreported_switches"), 7);
	th = cJSON_GetObjectItemCaseSensitive(o, "threads");
	CHECK_INT_EQ(cJSON_GetArraySize(th), 2);
	/* sorted by tid within the pid */
	CHECK_INT_EQ(num(cJSON_GetArrayItem(th, 0), "tid"), 100);
	CHECK_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(th, 0), "comm")),
		     "0123456789abcdef");
	CHECK_INT_EQ(num(cJSON_GetArrayItem(th, 1), "off_cpu_by_reason.sleep"), 20 * MS);
	CHECK_INT_EQ(num(cJSON_GetArrayItem(th, 1), "runqueue_latency_ns.count"), 1);
	CHECK_INT_EQ(num(cJSON_GetArrayItem(th, 1), "unreported_switches"), 2);
	cJSON_Delete(o);

	/* Folding exited threads adds their times and counts, saturating. */
	struct ep_sched_thread agg;

	memset(&agg, 0, sizeof(agg));
	sched_rec_fold(&agg, &r[0].t);
	sched_rec_fold(&agg, &r[1].t);
	CHECK_INT_EQ(agg.on_ns, (10 + 9) * MS + (5 + 32) * MS);
	CHECK_INT_EQ(agg.off_ns[EP_OFF_SLEEP], 20 * MS);
	CHECK_INT_EQ(agg.nvcsw, 2);
	CHECK_INT_EQ(agg.rq_count, 2);
	CHECK_INT_EQ(agg.missed, 3);
	CHECK_INT_EQ(agg.state, EP_TS_DEAD);
	agg.missed = UINT32_MAX - 1;
	sched_rec_fold(&agg, &r[0].t);
	CHECK(agg.missed == UINT32_MAX);

	/* An empty run still yields a well-formed section. */
	o = sched_report_json(NULL, 0, &st);
	CHECK(o != NULL);
	CHECK_INT_EQ(num(o, "runqueue_latency_ns.p99"), 0);
	cJSON_Delete(o);

	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	sched_print_summary(r, 2, &st, m);
	fclose(m);
	CHECK(strstr(buf, "2 thread(s)") != NULL);
	CHECK(strstr(buf, "ringbuf_full 3") != NULL);
	CHECK(strstr(buf, "7 switch(es) reached no tracepoint program") != NULL);
	free(buf);

	CHECK_INT_EQ(sched_episode_weight_us(1499), 1);
	CHECK_INT_EQ(sched_episode_weight_us(1500), 2);
	CHECK_INT_EQ(sched_episode_weight_us(10), 1);
	CHECK_INT_EQ(sched_episode_weight_us(2500000), 2500);
}

/* The off-CPU profile: weighted adds, with weights beyond a run's u32. */
static void test_weighted_profile(void)
{
	struct profile p;
	uint32_t f[2];
	int64_t th;

	CHECK_INT_EQ(profile_init(&p, 1000000), 0);
	f[0] = (uint32_t)profile_intern_frame(&p, "main", "/bin/x", false);
	f[1] = (uint32_t)profile_intern_frame(&p, "schedule", NULL, true);
	th = profile_thread(&p, 1, 1, "x");
	CHECK(th >= 0);
	CHECK_INT_EQ(profile_add_weighted(&p, (uint32_t)th, 10, f, 2, 1, 1500), 0);
	CHECK_INT_EQ(profile_add_weighted(&p, (uint32_t)th, 20, f, 2, 1, 5000000000ull), 0);
	CHECK_INT_EQ(profile_add_weighted(&p, (uint32_t)th, 30, f, 2, 1, 0), -EINVAL);
	CHECK_INT_EQ(profile_add_weighted(&p, (uint32_t)th, 30, f, 2, 3, 1), -EINVAL);
	CHECK_INT_EQ(p.stacks[0].count, 5000001500ull);
	CHECK_INT_EQ(p.threads[th].samples, 5000001500ull);
	uint64_t sum = 0;
	for (size_t i = 0; i < p.threads[th].nruns; i++)
		sum += p.threads[th].runs[i].count;
	CHECK_INT_EQ(sum, 5000001500ull);
	CHECK_INT_EQ(p.threads[th].nruns, 2);

	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	CHECK_INT_EQ(export_folded(&p, m), 0);
	fclose(m);
	CHECK_STR_EQ(buf, "x;main;schedule_[k] 5000001500\n");
	free(buf);

	/* CPU + off-CPU in one speedscope file: the shared frame "main"
	 * appears once, off-CPU weights are in ns. */
	struct profile cpu;
	CHECK_INT_EQ(profile_init(&cpu, 100), 0);
	uint32_t g = (uint32_t)profile_intern_frame(&cpu, "main", "/bin/x", false);
	int64_t ct = profile_thread(&cpu, 1, 1, "x");
	CHECK_INT_EQ(profile_add_sample(&cpu, (uint32_t)ct, 5, &g, 1, 0, false), 0);
	struct speedscope_part parts[2] = { { &cpu, NULL }, { &p, "off-CPU" } };
	buf = NULL;
	m = open_memstream(&buf, &len);
	CHECK_INT_EQ(export_speedscope_multi(parts, 2, NULL, m), 0);
	fclose(m);
	cJSON *j = cJSON_Parse(buf);
	CHECK(j != NULL);
	if (j) {
		cJSON *frames = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "shared"), "frames");
		cJSON *profs = cJSON_GetObjectItem(j, "profiles");

		CHECK_INT_EQ(cJSON_GetArraySize(frames), 2);
		CHECK_INT_EQ(cJSON_GetArraySize(profs), 2);
		cJSON *off = cJSON_GetArrayItem(profs, 1);
		CHECK_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(off, "name")),
			     "off-CPU: x (tid 1)");
		cJSON *w = cJSON_GetObjectItem(off, "weights");
		double ws = 0;
		for (int i = 0; i < cJSON_GetArraySize(w); i++)
			ws += cJSON_GetArrayItem(w, i)->valuedouble;
		CHECK_NEAR(ws, 5000001500.0 * 1000, 1);
		cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(off, "samples"), 0);
		/* "main" of the off-CPU profile maps to the CPU profile's index */
		CHECK_INT_EQ(cJSON_GetArrayItem(s0, 0)->valueint, 0);
		CHECK_INT_EQ(cJSON_GetArrayItem(s0, 1)->valueint, 1);
		cJSON_Delete(j);
	}
	free(buf);
	CHECK_INT_EQ(export_speedscope_multi(parts, 0, NULL, stdout), -EINVAL);
	profile_free(&cpu);
	profile_free(&p);
}

/* The off-CPU user-stack plan (ep_ustack_plan / ep_ustack_learn), driven as
 * sched.bpf.c drives it: plan at each blocking switch-out, learn at the
 * switch-in from the episode's length against the threshold. */
static enum ep_ustack_plan out_at(struct ep_sched_thread *t, uint64_t ip, uint64_t sp,
				  uint8_t every)
{
	t->ustack_ok = 0; /* ep_acct_switch_out */
	return ep_ustack_plan(t, ep_ustack_key(ip, sp), every);
}

static void test_ustack_plan(void)
{
	const uint64_t rd = 0x401000, wr = 0x401800, fsync = 0x402000, sp = 0x7ffd0000;
	struct ep_sched_thread t;
	int walks = 0;

	fresh(&t, 0);
	CHECK_INT_EQ(ep_ustack_key(0, 0) != 0, 1);
	CHECK_INT_EQ(ep_ustack_key(rd, sp) != ep_ustack_key(rd, sp + 16), 1);
	/* A new site is walked once; blocking again at the same place (same IP
	 * and SP) takes the slot's stack again, short waits or long. */
	CHECK_INT_EQ(out_at(&t, rd, sp, 0), EP_USTACK_WALK);
	CHECK_INT_EQ(t.ustack_ok, 0); /* set by the walk itself, in BPF */
	ep_ustack_learn(&t, false);
	for (int i = 0; i < 1000; i++) {
		CHECK_INT_EQ(out_at(&t, rd, sp, 0), EP_USTACK_REUSE);
		CHECK_INT_EQ(t.ustack_ok, 1);
		ep_ustack_learn(&t, i % 100 == 99);
	}
	ep_ustack_learn(&t, false);
	/* A second site: first visit walked (the slot is now wr's). */
	CHECK_INT_EQ(out_at(&t, wr, sp, 0), EP_USTACK_WALK);
	ep_ustack_learn(&t, false);
	/* Back at rd: not the slot's site; rd was seen and its last wait was
	 * short, the thread's last wait too: no walk. */
	CHECK_INT_EQ(out_at(&t, rd, sp, 0), EP_USTACK_SKIP);
	CHECK_INT_EQ(t.ustack_ok, 0);
	/* That episode was long: the next one at rd is walked (and would be
	 * anyway: the thread's previous wait was long). */
	ep_ustack_learn(&t, true);
	CHECK_INT_EQ(out_at(&t, rd, sp, 0), EP_USTACK_WALK);
	ep_ustack_learn(&t, false);
	/* wr after a short rd: skipped; rd again is the slot's: reused. */
	CHECK_INT_EQ(out_at(&t, wr, sp, 0), EP_USTACK_SKIP);
	ep_ustack_learn(&t, false);
	CHECK_INT_EQ(out_at(&t, rd, sp, 0), EP_USTACK_REUSE);
	ep_ustack_learn(&t, false);

	/* Long waits at one call (fsync), short at three others, interleaved
	 * (the slot always holds another site's stack when fsync comes): every
	 * fsync is walked, the short ones only right after a long fsync. */
	fresh(&t, 0);
	for (int i = 0; i < 100; i++) {
		walks += out_at(&t, rd, sp, 0) == EP_USTACK_WALK;
		ep_ustack_learn(&t, false);
		walks += out_at(&t, wr, sp, 0) == EP_USTACK_WALK;
		ep_ustack_learn(&t, false);
		walks += out_at(&t, wr + 64, sp, 0) == EP_USTACK_WALK;
		ep_ustack_learn(&t, false);
		CHECK_INT_EQ(out_at(&t, fsync, sp, 0), EP_USTACK_WALK);
		ep_ustack_learn(&t, true);
	}
	/* rd: first visit + 99 times after a long fsync; wr, wr + 64: first
	 * visit only. */
	CHECK_INT_EQ(walks, 102);

	/* Two sites sharing their first bit (1 in 64 for a pair: the stack
	 * pointer moves with ASLR), short waits at one and long naps at the
	 * other, alternating: the short wait clears the shared long bit, the
	 * nap's second bit still predicts it. Every nap keeps a user stack. */
	{
		uint64_t nap = 0x403000, k0 = ep_ustack_key(rd, sp), nsp = sp, k1 = 0;
		int stackless = 0;

		for (uint64_t d = 16; d < (1u << 24); d += 16) {
			k1 = ep_ustack_key(nap, sp + d);
			if (k1 >> 58 == k0 >> 58 && ((k1 >> 52) & 63) != ((k0 >> 52) & 63)) {
				nsp = sp + d;
				break;
			}
		}
		CHECK_INT_EQ((int)(ep_ustack_key(nap, nsp) >> 58), (int)(k0 >> 58));
		fresh(&t, 0);
		for (int i = 0; i < 50; i++) {
			out_at(&t, rd, sp, 0);
			ep_ustack_learn(&t, false);
			stackless += out_at(&t, nap, nsp, 0) == EP_USTACK_SKIP;
			ep_ustack_learn(&t, true);
		}
		CHECK_INT_EQ(stackless, 0);
	}

	/* --offcpu-ustack-every N: 1 in N of the blocking switch-outs that
	 * would be skipped; 1: every one, no reuse. */
	fresh(&t, 0);
	out_at(&t, rd, sp, 4);
	ep_ustack_learn(&t, false);
	out_at(&t, wr, sp, 4);
	ep_ustack_learn(&t, false);
	/* Alternating wr, rd with the slot holding wr: the switch-outs at the
	 * slot's site are reused and not counted; every 4th of the others walks
	 * and moves the slot to the other site. Walks at i = 7, 14, ..., 399. */
	walks = 0;
	for (int i = 0; i < 400; i++) {
		enum ep_ustack_plan p = out_at(&t, i % 2 ? rd : wr, sp, 4);

		walks += p == EP_USTACK_WALK;
		CHECK_INT_EQ(p == EP_USTACK_WALK, i % 7 == 0 && i > 0);
		ep_ustack_learn(&t, false);
	}
	CHECK_INT_EQ(walks, 57);
	walks = 0;
	for (int i = 0; i < 50; i++) {
		walks += out_at(&t, rd, sp, 1) == EP_USTACK_WALK;
		ep_ustack_learn(&t, false);
	}
	CHECK_INT_EQ(walks, 50);

	/* First visits are bounded by the site bits per thread: each one sets
	 * at least one of 2 x 64. */
	fresh(&t, 0);
	walks = 0;
	for (uint64_t i = 0; i < 1000; i++) {
		walks += out_at(&t, 0x400000 + 16 * i, sp, 0) == EP_USTACK_WALK;
		ep_ustack_learn(&t, false);
	}
	CHECK_INT_EQ(walks <= 128, 1);
	CHECK_INT_EQ(walks >= 32, 1);
}

/* Ring records carry only the frames they use: what the collector accepts. */
static void test_offcpu_record(void)
{
	static struct ep_offcpu e;
	const size_t head = offsetof(struct ep_offcpu, ips);

	memset(&e, 0, sizeof(e));
	e.hdr.type = EP_EV_OFFCPU;
	e.kstack_sz = 3 * 8;
	e.ustack_sz = 5 * 8;
	CHECK(sched_offcpu_record_ok(&e, head + 8 * 8));
	CHECK(sched_offcpu_record_ok(&e, sizeof(e)));	  /* slack after the frames */
	CHECK(!sched_offcpu_record_ok(&e, head + 7 * 8)); /* frames past the record */
	CHECK(!sched_offcpu_record_ok(&e, head - 1));
	CHECK(!sched_offcpu_record_ok(&e, sizeof(e) + 8));
	CHECK(!sched_offcpu_record_ok(NULL, sizeof(e)));
	e.ustack_sz = -14; /* -EFAULT: no user frames */
	CHECK(sched_offcpu_record_ok(&e, head + 3 * 8));
	e.kstack_sz = -2;
	CHECK(sched_offcpu_record_ok(&e, head));
	e.kstack_sz = 12; /* not whole frames */
	CHECK(!sched_offcpu_record_ok(&e, sizeof(e)));
	e.kstack_sz = (EP_MAX_STACK_DEPTH + 1) * 8; /* more than a stack holds */
	CHECK(!sched_offcpu_record_ok(&e, sizeof(e)));
	e.kstack_sz = EP_MAX_STACK_DEPTH * 8;
	e.ustack_sz = EP_OFFCPU_USER_FRAMES * 8; /* user stacks go deeper */
	CHECK(sched_offcpu_record_ok(&e, sizeof(e)));
	e.ustack_sz = (EP_OFFCPU_USER_FRAMES + 1) * 8;
	CHECK(!sched_offcpu_record_ok(&e, sizeof(e)));
	e.ustack_sz = 0x7ffffff8; /* would wrap a 32-bit sum */
	CHECK(!sched_offcpu_record_ok(&e, sizeof(e)));
	e.ustack_sz = 0;
	e.hdr.type = EP_EV_OFFCPU + 1;
	CHECK(!sched_offcpu_record_ok(&e, sizeof(e)));
}

int main(void)
{
	test_classify();
	test_sequence();
	test_seeded_and_missed();
	test_unreported();
	test_hist();
	test_report();
	test_weighted_profile();
	test_ustack_plan();
	test_offcpu_record();
	return check_report("test_sched");
}
