// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Scheduler records -> report.json section and summary. Pure: no BPF. */
#include "sched/sched_view.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sched_acct.h"

const char *sched_reason_name(unsigned reason)
{
	switch (reason) {
	case EP_OFF_SLEEP:
		return "sleep";
	case EP_OFF_BLOCKED:
		return "uninterruptible";
	case EP_OFF_PREEMPTED:
		return "preempted";
	case EP_OFF_RUNQ:
		return "runqueue";
	case EP_OFF_OTHER:
		return "other";
	}
	return "unknown";
}

const char *sched_drop_name(unsigned drop)
{
	switch (drop) {
	case EP_SDROP_THREAD_MAP_FULL:
		return "thread_map_full";
	case EP_SDROP_RINGBUF_FULL:
		return "ringbuf_full";
	case EP_SDROP_USER_STACK:
		return "user_stack_error";
	case EP_SDROP_KERN_STACK:
		return "kernel_stack_error";
	case EP_SDROP_USTACK_SLOT:
		return "user_stack_slot_full";
	}
	return "unknown";
}

uint64_t sched_episode_weight_us(uint64_t dur_ns)
{
	uint64_t us = dur_ns / 1000 + (dur_ns % 1000 >= 500);

	return us ? us : 1;
}

bool sched_offcpu_record_ok(const struct ep_offcpu *e, size_t size)
{
	const size_t max = EP_MAX_STACK_DEPTH * sizeof(__u64),
		     umax = EP_OFFCPU_USER_FRAMES * sizeof(__u64),
		     head = offsetof(struct ep_offcpu, ips);
	size_t k, u;

	if (!e || size < head || size > sizeof(*e) || e->hdr.type != EP_EV_OFFCPU)
		return false;
	k = e->kstack_sz > 0 ? (size_t)e->kstack_sz : 0;
	u = e->ustack_sz > 0 ? (size_t)e->ustack_sz : 0;
	return k % 8 == 0 && u % 8 == 0 && k <= max && u <= umax && head + k + u <= size;
}

void sched_hist_import(struct histogram *h, const struct ep_sched_thread *t)
{
	__u64 lo, hi;
	uint64_t n = 0;

	for (uint32_t b = 0; b < EP_SCHED_HIST_BUCKETS; b++) {
		uint64_t c = t->rq_hist[b], mid;

		if (!c)
			continue;
		ep_sched_hist_range(b, &lo, &hi);
		mid = lo + (hi - lo) / 2;
		h->buckets[hist_bucket(mid)] += c;
		if (lo < h->min)
			h->min = lo;
		n += c;
	}
	if (!n)
		return;
	h->count += n;
	h->sum = h->sum + t->rq_sum_ns < h->sum ? UINT64_MAX : h->sum + t->rq_sum_ns;
	if (t->rq_max_ns > h->max)
		h->max = t->rq_max_ns;
	if (h->min > h->max)
		h->min = h->max;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void sched_rec_fold(struct ep_sched_thread *agg, const struct ep_sched_thread *t)
{
	agg->on_ns = sat_add(agg->on_ns, t->on_ns);
	for (int r = 0; r < EP_OFF__COUNT; r++)
		agg->off_ns[r] = sat_add(agg->off_ns[r], t->off_ns[r]);
	agg->nvcsw = sat_add(agg->nvcsw, t->nvcsw);
	agg->nivcsw = sat_add(agg->nivcsw, t->nivcsw);
	agg->rq_count = sat_add(agg->rq_count, t->rq_count);
	agg->rq_sum_ns = sat_add(agg->rq_sum_ns, t->rq_sum_ns);
	if (t->rq_max_ns > agg->rq_max_ns)
		agg->rq_max_ns = t->rq_max_ns;
	agg->episodes_long = sat_add(agg->episodes_long, t->episodes_long);
	agg->missed = agg->missed + t->missed < agg->missed ? UINT32_MAX : agg->missed + t->missed;
	for (uint32_t b = 0; b < EP_SCHED_HIST_BUCKETS; b++)
		agg->rq_hist[b] = agg->rq_hist[b] + t->rq_hist[b] < agg->rq_hist[b]
					  ? UINT32_MAX
					  : agg->rq_hist[b] + t->rq_hist[b];
	agg->state = EP_TS_DEAD;
}

static uint64_t off_total(const struct ep_sched_thread *t)
{
	uint64_t s = 0;

	for (int r = 0; r < EP_OFF__COUNT; r++)
		s += t->off_ns[r];
	return s;
}

static bool add_u64(cJSON *o, const char *k, uint64_t v)
{
	/* JSON numbers are doubles: exact up to 2^53 ns (104 days). */
	return cJSON_AddNumberToObject(o, k, (double)v) != NULL;
}

static cJSON *reasons_json(const __u64 *off)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	for (int r = 0; r < EP_OFF__COUNT; r++)
		if (!add_u64(o, sched_reason_name((unsigned)r), off[r])) {
			cJSON_Delete(o);
			return NULL;
		}
	return o;
}

static cJSON *latency_json(const struct histogram *h)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!add_u64(o, "count", h->count) || !add_u64(o, "p50", hist_quantile(h, 0.5)) ||
	    !add_u64(o, "p90", hist_quantile(h, 0.9)) ||
	    !add_u64(o, "p99", hist_quantile(h, 0.99)) || !add_u64(o, "max", h->max) ||
	    !add_u64(o, "mean", hist_mean(h))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct sched_thread_rec *x = *(const struct sched_thread_rec *const *)a;
	const struct sched_thread_rec *y = *(const struct sched_thread_rec *const *)b;

	if (x->t.pid != y->t.pid)
		return x->t.pid < y->t.pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void comm_of(const struct ep_sched_thread *t, char *buf)
{
	size_t n = strnlen(t->comm, EP_COMM_LEN);

	memcpy(buf, t->comm, n);
	buf[n] = '\0';
}

static cJSON *thread_json(const struct sched_thread_rec *r)
{
	const struct ep_sched_thread *t = &r->t;
	struct histogram h;
	char comm[EP_COMM_LEN + 1];
	cJSON *o = cJSON_CreateObject(), *sub;

	if (!o)
		return NULL;
	comm_of(t, comm);
	hist_init(&h);
	sched_hist_import(&h, t);
	if (!add_u64(o, "pid", t->pid) || !add_u64(o, "tid", r->tid) ||
	    !cJSON_AddStringToObject(o, "comm", comm) || !add_u64(o, "on_cpu_ns", t->on_ns) ||
	    !add_u64(o, "off_cpu_ns", off_total(t)) ||
	    !add_u64(o, "voluntary_switches", t->nvcsw) ||
	    !add_u64(o, "involuntary_switches", t->nivcsw) ||
	    !add_u64(o, "context_switches", t->nvcsw + t->nivcsw) ||
	    !add_u64(o, "offcpu_episodes_long", t->episodes_long) ||
	    !add_u64(o, "unreported_switches", t->missed) ||
	    !cJSON_AddBoolToObject(o, "exited", t->state == EP_TS_DEAD))
		goto fail;
	sub = reasons_json(t->off_ns);
	if (!sub || !cJSON_AddItemToObject(o, "off_cpu_by_reason", sub)) {
		cJSON_Delete(sub);
		goto fail;
	}
	sub = latency_json(&h);
	if (!sub || !cJSON_AddItemToObject(o, "runqueue_latency_ns", sub)) {
		cJSON_Delete(sub);
		goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

cJSON *sched_report_json(const struct sched_thread_rec *recs, size_t n,
			 const struct sched_stats *st)
{
	const struct sched_thread_rec **order = NULL;
	__u64 off[EP_OFF__COUNT] = { 0 };
	uint64_t on = 0, vol = 0, invol = 0, dtotal = 0, missed = st->folded.missed;
	struct histogram *all = malloc(sizeof(*all));
	cJSON *o = cJSON_CreateObject(), *arr, *sub, *d, *by;

	if (!o || !all)
		goto fail;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		goto fail;
	hist_init(all);
	for (size_t i = 0; i < n; i++) {
		order[i] = &recs[i];
		on += recs[i].t.on_ns;
		for (int r = 0; r < EP_OFF__COUNT; r++)
			off[r] += recs[i].t.off_ns[r];
		vol += recs[i].t.nvcsw;
		invol += recs[i].t.nivcsw;
		missed += recs[i].t.missed;
		sched_hist_import(all, &recs[i].t);
	}
	if (st->nfolded) {
		on += st->folded.on_ns;
		for (int r = 0; r < EP_OFF__COUNT; r++)
			off[r] += st->folded.off_ns[r];
		vol += st->folded.nvcsw;
		invol += st->folded.nivcsw;
		sched_hist_import(all, &st->folded);
	}
	if (n)
		qsort(order, n, sizeof(*order), cmp_rec);

	if (!add_u64(o, "threads_seen", n + st->nfolded) ||
	    !add_u64(o, "threads_not_listed", st->nfolded) || !add_u64(o, "on_cpu_ns", on) ||
	    !add_u64(o, "off_cpu_ns", off[0] + off[1] + off[2] + off[3] + off[4]) ||
	    !add_u64(o, "voluntary_switches", vol) || !add_u64(o, "involuntary_switches", invol) ||
	    !add_u64(o, "context_switches", vol + invol) ||
	    !add_u64(o, "unreported_switches", missed))
		goto fail;
	sub = reasons_json(off);
	if (!sub || !cJSON_AddItemToObject(o, "off_cpu_by_reason", sub)) {
		cJSON_Delete(sub);
		goto fail;
	}
	sub = latency_json(all);
	if (!sub || !cJSON_AddItemToObject(o, "runqueue_latency_ns", sub)) {
		cJSON_Delete(sub);
		goto fail;
	}

	sub = cJSON_AddObjectToObject(o, "offcpu_stacks");
	if (!sub || !cJSON_AddBoolToObject(sub, "enabled", st->stacks) ||
	    !add_u64(sub, "min_us", st->offcpu_min_us) || !add_u64(sub, "episodes", st->episodes) ||
	    !add_u64(sub, "episodes_ns", st->episode_ns) ||
	    !add_u64(sub, "user_stack_skipped", st->ustack_skipped) ||
	    !add_u64(sub, "user_stack_walks", st->ustack_walks) ||
	    !(st->folded_file ? cJSON_AddStringToObject(sub, "file", st->folded_file)
			      : cJSON_AddNullToObject(sub, "file")))
		goto fail;

	d = cJSON_AddObjectToObject(o, "dropped");
	by = d ? cJSON_AddObjectToObject(d, "by_cause") : NULL;
	if (!by)
		goto fail;
	for (unsigned i = 0; i < EP_SDROP__COUNT; i++) {
		dtotal += st->drops[i];
		if (!add_u64(by, sched_drop_name(i), st->drops[i]))
			goto fail;
	}
	dtotal += st->collector_drops;
	if (!add_u64(by, "collector", st->collector_drops) || !add_u64(d, "total", dtotal))
		goto fail;

	arr = cJSON_AddArrayToObject(o, "threads");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		cJSON *t = thread_json(order[i]);

		if (!t)
			goto fail;
		cJSON_AddItemToArray(arr, t);
	}
	free(order);
	free(all);
	return o;
fail:
	free(order);
	free(all);
	cJSON_Delete(o);
	return NULL;
}

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
}

void sched_print_summary(const struct sched_thread_rec *recs, size_t n,
			 const struct sched_stats *st, FILE *out)
{
	uint64_t off[EP_OFF__COUNT] = { 0 }, on = 0, sw = 0, drops = st->collector_drops,
		 missed = st->folded.missed;
	struct histogram *all = malloc(sizeof(*all));
	char a[32], b[32], c[32];

	if (!all)
		return;
	hist_init(all);
	for (size_t i = 0; i < n; i++) {
		on += recs[i].t.on_ns;
		for (int r = 0; r < EP_OFF__COUNT; r++)
			off[r] += recs[i].t.off_ns[r];
		sw += recs[i].t.nvcsw + recs[i].t.nivcsw;
		missed += recs[i].t.missed;
		sched_hist_import(all, &recs[i].t);
	}
	if (st->nfolded) {
		on += st->folded.on_ns;
		for (int r = 0; r < EP_OFF__COUNT; r++)
			off[r] += st->folded.off_ns[r];
		sw += st->folded.nvcsw + st->folded.nivcsw;
		sched_hist_import(all, &st->folded);
	}
	for (unsigned i = 0; i < EP_SDROP__COUNT; i++)
		drops += st->drops[i];
	fmt_ns(a, sizeof(a), on);
	fmt_ns(b, sizeof(b), off[0] + off[1] + off[2] + off[3] + off[4]);
	fprintf(out,
		"\nScheduler: %" PRIu64 " thread(s), on-CPU %s, off-CPU %s, %" PRIu64
		" context switches\n",
		(uint64_t)n + st->nfolded, a, b, sw);
	fputs("  off-CPU by reason:", out);
	for (int r = 0; r < EP_OFF__COUNT; r++) {
		fmt_ns(a, sizeof(a), off[r]);
		fprintf(out, " %s %s%s", sched_reason_name((unsigned)r), a,
			r + 1 < EP_OFF__COUNT ? "," : "\n");
	}
	fmt_ns(a, sizeof(a), hist_quantile(all, 0.5));
	fmt_ns(b, sizeof(b), hist_quantile(all, 0.99));
	fmt_ns(c, sizeof(c), all->max);
	fprintf(out, "  run-queue latency: p50 %s, p99 %s, max %s (%" PRIu64 " waits)\n", a, b, c,
		all->count);
	if (st->stacks) {
		fmt_ns(a, sizeof(a), st->episode_ns);
		fprintf(out, "  off-CPU episodes >= %" PRIu32 " us: %" PRIu64 " (%s)%s%s\n",
			st->offcpu_min_us, st->episodes, a, st->folded_file ? " -> " : "",
			st->folded_file ? st->folded_file : "");
		if (st->ustack_skipped)
			fprintf(out,
				"  of which %" PRIu64
				" without user frames (user stack walked only "
				"where a long wait was predicted: --offcpu-ustack-every)\n",
				st->ustack_skipped);
	}
	if (missed)
		fprintf(out,
			"  %" PRIu64 " switch(es) reached no tracepoint program: their time is "
			"split by the threads' own run time (docs/report-schema.md, "
			"sched.unreported_switches)\n",
			missed);
	if (drops) {
		fprintf(out, "  dropped: %" PRIu64 " (", drops);
		bool first = true;
		for (unsigned i = 0; i < EP_SDROP__COUNT; i++)
			if (st->drops[i]) {
				fprintf(out, "%s%s %" PRIu64, first ? "" : ", ", sched_drop_name(i),
					st->drops[i]);
				first = false;
			}
		if (st->collector_drops)
			fprintf(out, "%scollector %" PRIu64, first ? "" : ", ",
				st->collector_drops);
		fputs(")\n", out);
	}
	free(all);
}
