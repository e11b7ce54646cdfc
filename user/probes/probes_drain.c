// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The span ring: its callback (spans into the stats, other modules'
 * requests and cycle facts queued for the recorder thread, thread names)
 * and the drain thread that empties it every DRAIN_PERIOD_MS. Apart from
 * probes_module.c because this is the code that runs off the recorder
 * thread, under `lock`.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cycles/cycle_sink.h"
#include "llama/llama_facts.h"
#include "llama/llm_track.h"
#include "overload/priority.h"
#include "probes/probes_internal.h"
#include "proc/proc_info.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vec.h"

static void *drain_thread(void *arg);

/* Starts the drain thread with the first probe attached: until then only
 * the dynamic linker's rare events can arrive, and pm_poll drains those on
 * the recorder thread, so a process with nothing to probe costs no extra
 * wakeups (100 a second, ~4% of the collector's CPU time). Called on the
 * recorder thread, like pm_poll, so the two never drain at once. */
void probes_start_draining(struct probes_mod *m)
{
	int err;

	if (m->draining || m->drain_failed)
		return;
	atomic_store(&m->drain_stop, false);
	err = pthread_create(&m->drainer, NULL, drain_thread, m);
	if (err) {
		/* pm_poll goes on draining on the recorder thread. */
		log_warn("probes: no drain thread (%s): spans are drained between the recorder's "
			 "other work",
			 strerror(err));
		m->drain_failed = true;
		return;
	}
	m->draining = true;
}
static void thread_name(struct probes_mod *m, uint32_t pid, uint32_t tid)
{
	char path[128], name[EP_COMM_LEN + 8] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/task/%u/comm", m->ctx->opts->proc_root, pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	if (!name[0])
		snprintf(name, sizeof(name), "tid %u", tid);
	probe_stats_set_thread_name(m->st, pid, tid, name);
}

/* Spans waiting for the recorder thread: 10 ms of them at 200k/s fit in
 * 2k; more means the recorder is stalled and they are counted instead. */
#define MAX_PENDING_BUS_SPANS (1u << 16)

static void queue_bus_span(struct probes_mod *m, const struct ep_span *sp, size_t req)
{
	struct bus_span b = {
		.ev = {
			.pid = sp->hdr.pid,
			.tid = sp->hdr.tid,
			.start_ns = sp->hdr.ts_ns,
			.dur_ns = sp->dur_ns,
			.ret = sp->ret,
			.obj = sp->obj,
			.depth = sp->depth,
			.nested_same = sp->flags & EP_SPAN_F_NESTED_SAME,
		},
		.req = req,
	};

	if (m->npending >= MAX_PENDING_BUS_SPANS ||
	    ep_vec_push((void **)&m->pending, &m->npending, &m->cappending, sizeof(b), &b))
		m->bus_lost++;
}

/* Cycle facts go the same way as bus spans: the sink belongs to the
 * recorder thread. Same bound, same reason. */
static void queue_cycle_fact(struct probes_mod *m, const void *data, size_t size,
			     const struct llm_decode_out *lo)
{
	struct cyc_span c;

	if (!probes_cycle_span(m->st, data, size, &c))
		return;
	if (lo->flags) {
		c.llm_flags = lo->flags;
		c.llm_tokens = lo->n_tokens;
		c.kv_after = lo->kv_after;
		c.kv_size = lo->kv_size;
	}
	if (m->ncyc >= MAX_PENDING_BUS_SPANS ||
	    ep_vec_push((void **)&m->cyc, &m->ncyc, &m->capcyc, sizeof(c), &c))
		m->bus_lost++;
}

/* A span into the LLM tracker: a decode with its batch, or a tokenize or
 * KV-cache clear that makes the next decode a prompt's. *lo: what the
 * decode was (zero for anything else). */
static void llm_feed(struct probes_mod *m, const void *data, size_t size, struct llm_decode_out *lo)
{
	const struct ep_span *sp = data;
	const struct probe_info *pi = probe_stats_info(m->st, sp->probe_id);

	memset(lo, 0, sizeof(*lo));
	if (sp->flags & EP_SPAN_F_NESTED_SAME)
		return;
	if (sp->hdr.type == EP_EV_SPAN_LLAMA && size >= sizeof(struct ep_span_llama)) {
		const struct ep_span_llama *d = data;
		struct llm_decode_in in = {
			.pid = sp->hdr.pid,
			.ctx = sp->obj,
			.n_tokens = d->n_tokens,
			.pos_first = d->pos_first,
			.pos_last = d->pos_last,
			.start_ns = sp->hdr.ts_ns,
			.end_ns = sp->hdr.ts_ns + sp->dur_ns,
			.n_ctx = llama_facts_n_ctx(m->llama, sp->hdr.pid),
		};

		llm_tracker_decode(m->llm, &in, lo);
	} else if (pi && pi->def && (pi->def->flags & (PROBE_F_PROMPT | PROBE_F_KV_CLEAR))) {
		llm_tracker_mark(m->llm, sp->hdr.pid, sp->hdr.ts_ns,
				 pi->def->flags & PROBE_F_KV_CLEAR);
	}
}

int probes_on_event(void *ctx, void *data, size_t size)
{
	struct probes_mod *m = ctx;
	const struct ep_event_hdr *h = data;

	if (size < sizeof(*h))
		return 0;
	pthread_mutex_lock(&m->lock);
	if (h->type == EP_EV_LIBLOAD) {
		struct ptarget *t = uprobe_targets_find(&m->tg, h->pid);

		if (t)
			t->rescan = true;
	} else if (h->type == EP_EV_LLAMA_ARGS) {
		if (llama_facts_add(m->llama, data, size) == -ENOMEM)
			log_warn("probes: llama parameters: out of memory");
	} else if (!probe_stats_add_event(m->st, data, size)) {
		/* add_event accepted it: a whole ep_span at least */
		const struct ep_span *sp = data;
		struct llm_decode_out lo;

		llm_feed(m, data, size, &lo);
		if (sp->probe_id < EP_PROBE_MAX && m->id_req[sp->probe_id] >= 0)
			queue_bus_span(m, sp, (size_t)m->id_req[sp->probe_id]);
		if (m->ctx->cycles)
			queue_cycle_fact(m, data, size, &lo);
		if (!probe_stats_knows_thread(m->st, h->tid))
			thread_name(m, h->pid, h->tid);
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Hands the queued spans of other modules' requests to their callbacks, on
 * the calling (recorder) thread and outside the lock. */
void probes_deliver_bus_spans(struct probes_mod *m)
{
	struct bus_span *b;
	struct cyc_span *c;
	size_t n, cap, nc, capc;

	pthread_mutex_lock(&m->lock);
	b = m->pending;
	n = m->npending;
	cap = m->cappending;
	m->pending = m->spare;
	m->cappending = m->capspare;
	m->npending = 0;
	m->spare = NULL;
	m->capspare = 0;
	c = m->cyc;
	nc = m->ncyc;
	capc = m->capcyc;
	m->cyc = m->cycspare;
	m->capcyc = m->capcycspare;
	m->ncyc = 0;
	m->cycspare = NULL;
	m->capcycspare = 0;
	pthread_mutex_unlock(&m->lock);
	for (size_t i = 0; i < n; i++)
		probe_bus_deliver(m->ctx->probe_bus, b[i].req, &b[i].ev);
	for (size_t i = 0; i < nc; i++)
		cycle_sink_span(m->ctx->cycles, &c[i]);
	pthread_mutex_lock(&m->lock);
	m->spare = b;
	m->capspare = cap;
	m->cycspare = c;
	m->capcycspare = capc;
	pthread_mutex_unlock(&m->lock);
}

/* Drains the ring until told to stop. Spans are submitted without a
 * wakeup, so the poll mostly times out and the consume does the work. */
static void *drain_thread(void *arg)
{
	struct probes_mod *m = arg;

	/* It drains flat out under overload: not at the recorder's
	 * real-time priority (overload/priority.h). */
	collector_thread_not_realtime();
	/* Per thread on Linux. Failure (no CAP_SYS_NICE) leaves nice 0. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), DRAIN_NICE))
		m->nice_err = errno;
	while (!atomic_load(&m->drain_stop)) {
		uint64_t now;
		int n;

		ring_buffer__poll(m->rb, DRAIN_PERIOD_MS);
		n = ring_buffer__consume(m->rb);
		now = mono_ns();
		if (m->last_poll_ns && now - m->last_poll_ns > m->max_poll_gap_ns)
			m->max_poll_gap_ns = now - m->last_poll_ns;
		/* 50 ms: 5 drain periods, 10k spans at the 200k/s design rate */
		if (m->last_poll_ns && now - m->last_poll_ns > 50000000ull)
			m->long_poll_gaps++;
		m->last_poll_ns = now;
		m->ndrains++;
		if (n > m->max_drained)
			m->max_drained = n;
	}
	return NULL;
}

/* Joins the drain thread; the caller then owns the ring alone. */
void probes_stop_draining(struct probes_mod *m)
{
	if (!m->draining)
		return;
	atomic_store(&m->drain_stop, true);
	pthread_join(m->drainer, NULL);
	m->draining = false;
}
