// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cycle facts sink (cycle_sink.h): per-thread pairing of boundaries,
 * facts held until the cycles they touch are attributed, attribution in
 * batches through the pure cycles_compute(), and pruning.
 */
#include "cycles/cycle_sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycle_facts.h"

/* Distinct names kept (functions, probe labels, SQL texts): a profile has
 * thousands; this bounds a hostile target that makes up SQL endlessly. */
#define MAX_NAMES 65536u
/* Pruning walks every held fact: at most this often while the run lasts. */
#define PRUNE_PERIOD_NS (100 * 1000000ull)

struct sopen {
	uint32_t tid;
	uint64_t start;
};

struct cycle_sink {
	struct cycle_sink_cfg cfg;
	uint32_t main_pid;
	/* Names: one that cannot be kept leaves its fact without it. */
	struct cycle_facts facts;
	EP_VEC(struct sopen) open;     /* pairs mode: one per thread with a cycle open */
	EP_VEC(struct sopen) last_end; /* chain_ends: per thread, its last end */
	bool every_open;	       /* every mode: the open cycle */
	struct sopen every;
	EP_VEC(struct cycle_closed) pend;  /* closed, not attributed */
	EP_VEC(struct cycle_closed) fresh; /* closed since the last take_closed */
	EP_VEC(struct cycle_closed) taken;
	struct cycle_table table;
	const struct cycle_table *moved; /* where cycle_sink_take_table put it */
	size_t table_cap;
	/* Every cycle goes into agg; the table keeps the first max_rows / 2
	 * rows and, past max_rows, the last ones in a ring from position
	 * head (ring_next: the oldest, the next replaced). */
	struct cycle_agg *agg;
	uint64_t seen; /* rows attributed: the next row's index */
	size_t head, ring_next;
	/* Reused batch after batch: its vectors stay allocated (no page
	 * faults for each batch) and its names interned. */
	struct cycles_input *in;
	uint64_t horizon;     /* facts ending before it are not needed */
	uint64_t first_start; /* of the first attributed cycle; UINT64_MAX: none */
	uint64_t last_prune;
	bool active;
	struct cycle_sink_stats st;
};

struct cycle_sink *cycle_sink_new(const struct cycle_sink_cfg *cfg)
{
	struct cycle_sink *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	if (!s->cfg.max_facts)
		s->cfg.max_facts = 1;
	if (!s->cfg.max_rows)
		s->cfg.max_rows = SIZE_MAX;
	s->agg = malloc(sizeof(*s->agg));
	if (!s->agg) {
		free(s);
		return NULL;
	}
	cycle_agg_init(s->agg, cfg->over_share);
	s->head = s->cfg.max_rows / 2;
	cycle_facts_init(&s->facts, MAX_NAMES, true);
	s->first_start = UINT64_MAX;
	s->table.period_ns = cfg->period_ns;
	return s;
}

void cycle_sink_free(struct cycle_sink *s)
{
	if (!s)
		return;
	cycle_facts_free(&s->facts);
	free(s->open.v);
	free(s->last_end.v);
	free(s->pend.v);
	free(s->fresh.v);
	free(s->taken.v);
	cycles_input_free(s->in);
	cycle_table_free(&s->table);
	cycle_agg_free(s->agg);
	free(s->agg);
	free(s);
}

void cycle_sink_no_chain(struct cycle_sink *s)
{
	if (s)
		s->cfg.chain_ends = false;
}

void cycle_sink_set_active(struct cycle_sink *s, bool on)
{
	if (s)
		s->active = on;
}

void cycle_sink_set_main_pid(struct cycle_sink *s, uint32_t pid)
{
	if (s)
		s->main_pid = pid;
}

/* ---- boundaries ---- */

static void close_cycle(struct cycle_sink *s, uint64_t start, uint64_t end, uint32_t tid,
			bool truncated, bool partial)
{
	struct cycle_closed c = { s->st.closed,		start,	end < start ? start : end, tid,
				  truncated || partial, partial };

	/* Out of memory here loses a cycle: counted like a dropped fact. */
	if (EP_VEC_PUSH(s->pend, c)) {
		s->st.dropped_facts++;
		return;
	}
	s->st.closed++;
	if (EP_VEC_PUSH(s->fresh, c))
		return; /* only the live view misses it */
}

static struct sopen *find_open(struct cycle_sink *s, uint32_t tid)
{
	for (size_t i = 0; i < s->open.n; i++)
		if (s->open.v[i].tid == tid)
			return &s->open.v[i];
	return NULL;
}

void cycle_sink_begin(struct cycle_sink *s, uint64_t ts, uint32_t tid)
{
	struct sopen *o;

	if (!s)
		return;
	o = find_open(s, tid);
	if (o) {
		/* Missing return (longjmp, exception, a marker end never
		 * called): the new begin closes the open cycle there. */
		close_cycle(s, o->start, ts, tid, true, false);
		o->start = ts;
		return;
	}
	if (EP_VEC_PUSH(s->open, ((struct sopen){ tid, ts })))
		s->st.dropped_facts++;
}

void cycle_sink_end(struct cycle_sink *s, uint64_t ts, uint32_t tid)
{
	struct sopen *o;

	if (!s)
		return;
	o = find_open(s, tid);
	if (o) {
		close_cycle(s, o->start, ts, tid, false, false);
		*o = s->open.v[--s->open.n];
	} else if (!s->cfg.chain_ends) {
		s->st.unmatched_ends++;
		return;
	}
	if (!s->cfg.chain_ends)
		return;
	for (size_t i = 0; i < s->last_end.n; i++) {
		if (s->last_end.v[i].tid != tid)
			continue;
		if (!o && ts >= s->last_end.v[i].start) {
			close_cycle(s, s->last_end.v[i].start, ts, tid, false, false);
			s->st.chained++;
		}
		s->last_end.v[i].start = ts;
		return;
	}
	if (!o)
		s->st.unmatched_ends++;
	if (EP_VEC_PUSH(s->last_end, ((struct sopen){ tid, ts })))
		s->st.dropped_facts++;
}

void cycle_sink_entry(struct cycle_sink *s, uint64_t ts, uint32_t tid)
{
	if (!s)
		return;
	if (s->every_open) {
		if (ts < s->every.start) {
			s->st.reordered++;
			return;
		}
		close_cycle(s, s->every.start, ts, s->every.tid, false, false);
	}
	s->every_open = true;
	s->every = (struct sopen){ tid, ts };
}

/* ---- facts ---- */

/* Whether a fact ending at `end` can still be used; counts it when not. */
static bool admit(struct cycle_sink *s, uint64_t end, size_t n)
{
	if (end < s->horizon) {
		/* Before the horizon nothing open or pending needs it; it is
		 * late if an attributed cycle may have needed it. */
		if (end >= s->first_start)
			s->st.late_facts++;
		return false;
	}
	if (n >= s->cfg.max_facts) {
		s->st.dropped_facts++;
		return false;
	}
	return true;
}

static void note_held(struct cycle_sink *s)
{
	size_t h = cycle_facts_count(&s->facts);

	if (h > s->st.peak_held_facts)
		s->st.peak_held_facts = h;
	s->st.dropped_names = s->facts.names_dropped;
}

void cycle_sink_span(struct cycle_sink *s, const struct cyc_span *sp)
{
	struct cyc_span v;

	if (!s || !s->active || !sp || sp->kind >= CYC_SPAN__COUNT)
		return;
	v = *sp;
	if (!v.end_ns || v.end_ns < v.start_ns)
		v.end_ns = v.start_ns;
	if (!admit(s, v.end_ns, s->facts.spans.n))
		return;
	/* Part of it fell before the horizon: cycles already attributed
	 * missed that part. */
	if (v.start_ns < s->horizon && v.start_ns >= s->first_start)
		s->st.late_facts++;
	if (cycle_facts_add_span(&s->facts, &v))
		s->st.dropped_facts++;
	note_held(s);
}

void cycle_sink_sample(struct cycle_sink *s, uint64_t ts, uint32_t tid, const char *func)
{
	if (!s || !s->active || !admit(s, ts, s->facts.samples.n))
		return;
	if (cycle_facts_add_sample(&s->facts, ts, tid, func))
		s->st.dropped_facts++;
	note_held(s);
}

void cycle_sink_offcpu(struct cycle_sink *s, uint64_t start, uint64_t end, uint32_t tid,
		       unsigned reason)
{
	if (!s || !s->active || reason >= CYC_OFF_REASONS || end < start ||
	    !admit(s, end, s->facts.offs.n))
		return;
	if (cycle_facts_add_offcpu(&s->facts, start, end, tid, reason))
		s->st.dropped_facts++;
	note_held(s);
}

/* Readings hold until the next one, so an old one is still the value at
 * the start of the next cycle: never late, only superseded (pruning). */
static bool admit_point(struct cycle_sink *s, size_t n)
{
	if (n < s->cfg.max_facts)
		return true;
	s->st.dropped_facts++;
	return false;
}

void cycle_sink_rss(struct cycle_sink *s, uint32_t pid, uint64_t ts, uint64_t rss)
{
	if (!s || !s->active || (s->main_pid && pid != s->main_pid) ||
	    !admit_point(s, s->facts.rss.n))
		return;
	if (cycle_facts_add_rss(&s->facts, ts, rss)) {
		s->st.dropped_facts++;
		return;
	}
	note_held(s);
}

void cycle_sink_freq(struct cycle_sink *s, uint64_t ts, double mhz)
{
	if (!s || !s->active || !(mhz > 0) || !admit_point(s, s->facts.freq.n))
		return;
	if (cycle_facts_add_freq(&s->facts, ts, mhz)) {
		s->st.dropped_facts++;
		return;
	}
	note_held(s);
}

void cycle_sink_throttle(struct cycle_sink *s, uint64_t start, uint64_t end)
{
	if (!s || !s->active || (end && end < start) ||
	    !admit(s, end ? end : UINT64_MAX, s->facts.thr.n))
		return;
	if (cycle_facts_add_throttle(&s->facts, start, end))
		s->st.dropped_facts++;
	note_held(s);
}

void cycle_sink_gpu(struct cycle_sink *s, const struct cyc_gpu_sample *g)
{
	if (!s || !s->active || !g || !admit_point(s, s->facts.gpu.n))
		return;
	if (cycle_facts_add_gpu(&s->facts, g))
		s->st.dropped_facts++;
	note_held(s);
}

/* ---- attribution ---- */

static bool overlaps(uint64_t s, uint64_t e, uint64_t lo, uint64_t hi)
{
	return (s < hi && e > lo) || (s >= lo && s < hi);
}

/* Index of the last reading before lo in ts-unsorted v, or n. */
static size_t last_before(const struct cf_point *v, size_t n, uint64_t lo)
{
	size_t best = n;

	for (size_t i = 0; i < n; i++)
		if (v[i].ts < lo && (best == n || v[i].ts >= v[best].ts))
			best = i;
	return best;
}

/* Into the batch: the facts a cycle within [lo, hi] can need. */
static int feed(const struct cycle_facts *src, struct cycle_facts *dst, uint64_t lo, uint64_t hi)
{
	int err = 0;
	size_t k;

	for (size_t i = 0; i < src->spans.n && !err; i++) {
		const struct cf_span *v = &src->spans.v[i];
		struct cyc_span sp = { v->start,
				       v->end,
				       v->tid,
				       v->kind,
				       v->tokens,
				       cycle_facts_str(src, v->name),
				       cycle_facts_str(src, v->detail),
				       v->llm_flags,
				       v->llm_tokens,
				       v->kv_after,
				       v->kv_size };

		if (overlaps(v->start, v->end, lo, hi))
			err = cycle_facts_add_span(dst, &sp);
	}
	for (size_t i = 0; i < src->samples.n && !err; i++) {
		const struct cf_sample *v = &src->samples.v[i];

		if (v->ts >= lo && v->ts < hi)
			err = cycle_facts_add_sample(dst, v->ts, v->tid,
						     cycle_facts_str(src, v->func));
	}
	for (size_t i = 0; i < src->offs.n && !err; i++) {
		const struct cf_off *v = &src->offs.v[i];

		if (overlaps(v->start, v->end, lo, hi))
			err = cycle_facts_add_offcpu(dst, v->start, v->end, v->tid, v->reason);
	}
	k = last_before(src->rss.v, src->rss.n, lo);
	for (size_t i = 0; i < src->rss.n && !err; i++)
		if (i == k || (src->rss.v[i].ts >= lo && src->rss.v[i].ts <= hi))
			err = cycle_facts_add_rss(dst, src->rss.v[i].ts, (uint64_t)src->rss.v[i].v);
	k = last_before(src->freq.v, src->freq.n, lo);
	for (size_t i = 0; i < src->freq.n && !err; i++)
		if (i == k || (src->freq.v[i].ts >= lo && src->freq.v[i].ts <= hi))
			err = cycle_facts_add_freq(dst, src->freq.v[i].ts, src->freq.v[i].v);
	for (size_t i = 0; i < src->thr.n && !err; i++)
		if (!src->thr.v[i].end || overlaps(src->thr.v[i].start, src->thr.v[i].end, lo, hi))
			err = cycle_facts_add_throttle(dst, src->thr.v[i].start, src->thr.v[i].end);
	{
		size_t best = src->gpu.n;

		for (size_t i = 0; i < src->gpu.n; i++)
			if (src->gpu.v[i].ts_ns < lo &&
			    (best == src->gpu.n || src->gpu.v[i].ts_ns >= src->gpu.v[best].ts_ns))
				best = i;
		for (size_t i = 0; i < src->gpu.n && !err; i++)
			if (i == best || (src->gpu.v[i].ts_ns >= lo && src->gpu.v[i].ts_ns <= hi))
				err = cycle_facts_add_gpu(dst, &src->gpu.v[i]);
	}
	return err;
}

static int cmp_closed(const void *a, const void *b)
{
	const struct cycle_closed *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

/* Attributes pend[0..n) (sorted by start) in one cycles_compute call. */
static int attribute(struct cycle_sink *s, struct cycle_closed *c, size_t n)
{
	struct cycles_input *in;
	struct cycle_table t;
	uint64_t lo = UINT64_MAX, hi = 0;
	int err = 0;

	if (!s->in && !(s->in = cycles_input_new()))
		return -ENOMEM;
	in = s->in;
	cycles_input_clear(in);
	for (size_t i = 0; i < n && !err; i++) {
		lo = c[i].start_ns < lo ? c[i].start_ns : lo;
		hi = c[i].end_ns > hi ? c[i].end_ns : hi;
		err = cycles_add_begin(in, c[i].start_ns, c[i].tid);
		if (!err)
			err = cycles_add_end(in, c[i].end_ns, c[i].tid);
	}
	if (!err)
		err = feed(&s->facts, cycles_input_facts(in), lo, hi);
	if (err)
		return err;
	struct cycles_cfg cfg = { .run_start_ns = lo,
				  .run_end_ns = hi,
				  .period_ns = s->cfg.period_ns };

	err = cycles_compute(in, &cfg, &t);
	cycles_input_clear(in);
	if (err)
		return err;
	while (s->table_cap < s->table.n + t.n && s->table_cap < s->cfg.max_rows) {
		size_t c = s->table_cap ? s->table_cap * 2 : 64;
		void *p = realloc(s->table.rows, c * sizeof(*t.rows));

		if (!p) {
			cycle_table_free(&t);
			return -ENOMEM;
		}
		s->table.rows = p;
		s->table_cap = c;
	}
	for (size_t i = 0, cur = 0; i < t.n; i++) {
		struct cycle_row *r = &s->table.rows[s->table.n], one;

		/* A full table: the row replaces the oldest of the ring. */
		if (s->table.n >= s->cfg.max_rows) {
			struct cycle_table old = { .rows = &one, .n = 1 };

			r = &s->table.rows[s->head + s->ring_next];
			one = *r;
			cycle_table_free_rows(&old);
			s->ring_next = (s->ring_next + 1) % (s->cfg.max_rows - s->head);
			s->st.rows_not_kept++;
		}
		*r = t.rows[i];
		/* The rows own their strings now. */
		t.rows[i].sql_slowest = NULL;
		for (uint32_t k = 0; k < t.rows[i].n_top; k++)
			t.rows[i].top[k].name = NULL;
		t.rows[i].n_top = 0;
		r->index = (uint32_t)s->seen++;
		/* Pairs were closed here; the truncation is known only here.
		 * Both lists are in (start, thread) order: a forward cursor. */
		for (size_t k = cur; k < n; k++)
			if (c[k].start_ns == r->start_ns && c[k].end_ns == r->end_ns &&
			    c[k].tid == r->tid) {
				r->truncated = c[k].truncated;
				r->partial = c[k].partial;
				cur = k + 1;
				break;
			}
		if (r->start_ns < s->first_start)
			s->first_start = r->start_ns;
		if (cycle_agg_add(s->agg, r))
			s->st.agg_errors++;
		if (s->table.n < s->cfg.max_rows)
			s->table.n++;
	}
	s->st.attributed = s->seen;
	cycle_table_free(&t);
	return (int)n;
}

#define PRUNE(vec, keep)                                     \
	do {                                                 \
		size_t j_ = 0;                               \
		for (size_t i_ = 0; i_ < (vec).n; i_++)      \
			if (keep(&(vec).v[i_]))              \
				(vec).v[j_++] = (vec).v[i_]; \
		(vec).n = j_;                                \
	} while (0)

static void prune_points(struct cf_point *v, size_t *n, uint64_t h)
{
	size_t k = last_before(v, *n, h), j = 0;

	for (size_t i = 0; i < *n; i++)
		if (i == k || v[i].ts >= h)
			v[j++] = v[i];
	*n = j;
}

static void prune(struct cycle_sink *s)
{
	uint64_t h = s->horizon;
	size_t j = 0, best = s->facts.gpu.n;

#define KEEP_SPAN(p)   ((p)->end >= h)
#define KEEP_SAMPLE(p) ((p)->ts >= h)
#define KEEP_OFF(p)    ((p)->end >= h)
#define KEEP_THR(p)    (!(p)->end || (p)->end >= h)
	PRUNE(s->facts.spans, KEEP_SPAN);
	PRUNE(s->facts.samples, KEEP_SAMPLE);
	PRUNE(s->facts.offs, KEEP_OFF);
	PRUNE(s->facts.thr, KEEP_THR);
	prune_points(s->facts.rss.v, &s->facts.rss.n, h);
	prune_points(s->facts.freq.v, &s->facts.freq.n, h);
	for (size_t i = 0; i < s->facts.gpu.n; i++)
		if (s->facts.gpu.v[i].ts_ns < h &&
		    (best == s->facts.gpu.n ||
		     s->facts.gpu.v[i].ts_ns >= s->facts.gpu.v[best].ts_ns))
			best = i;
	for (size_t i = 0; i < s->facts.gpu.n; i++)
		if (i == best || s->facts.gpu.v[i].ts_ns >= h)
			s->facts.gpu.v[j++] = s->facts.gpu.v[i];
	s->facts.gpu.n = j;
}

static void reverse_rows(struct cycle_row *v, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct cycle_row t = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = t;
	}
}

/* The ring in index order again (rotated left by ring_next). */
static void order_rows(struct cycle_sink *s)
{
	struct cycle_row *ring = s->table.rows + s->head;
	size_t n = s->table.n - s->head, k = s->ring_next;

	if (!s->st.rows_not_kept || !k)
		return;
	reverse_rows(ring, k);
	reverse_rows(ring + k, n - k);
	reverse_rows(ring, n);
	s->ring_next = 0;
}

int cycle_sink_flush(struct cycle_sink *s, uint64_t now, bool final)
{
	size_t nready = 0;
	uint64_t h;
	int ret = 0;

	if (!s)
		return 0;
	if (final) {
		for (size_t i = 0; i < s->open.n; i++)
			close_cycle(s, s->open.v[i].start, now, s->open.v[i].tid, true, true);
		s->open.n = 0;
		/* Not ended by a next entry: cut by the end of the run. */
		if (s->every_open)
			close_cycle(s, s->every.start, now, s->every.tid, true, true);
		s->every_open = false;
	}
	/* Ready ones first, in start order. */
	for (size_t i = 0; i < s->pend.n; i++)
		if (final || s->pend.v[i].end_ns + s->cfg.lag_ns <= now) {
			struct cycle_closed t = s->pend.v[nready];

			s->pend.v[nready++] = s->pend.v[i];
			s->pend.v[i] = t;
		}
	if (nready) {
		qsort(s->pend.v, nready, sizeof(*s->pend.v), cmp_closed);
		ret = attribute(s, s->pend.v, nready);
		if (ret < 0)
			return ret;
		memmove(s->pend.v, s->pend.v + nready, (s->pend.n - nready) * sizeof(*s->pend.v));
		s->pend.n -= nready;
	}
	/* Facts ending before every open or pending cycle and older than the
	 * lag are not needed by any cycle to come. */
	h = final ? now : (now > s->cfg.lag_ns ? now - s->cfg.lag_ns : 0);
	for (size_t i = 0; i < s->open.n; i++)
		h = s->open.v[i].start < h ? s->open.v[i].start : h;
	if (s->every_open && s->every.start < h)
		h = s->every.start;
	for (size_t i = 0; i < s->pend.n; i++)
		h = s->pend.v[i].start_ns < h ? s->pend.v[i].start_ns : h;
	if (h > s->horizon)
		s->horizon = h;
	if (final || nready || now >= s->last_prune + PRUNE_PERIOD_NS) {
		prune(s);
		s->last_prune = now;
	}
	s->st.held_facts = cycle_facts_count(&s->facts);
	if (final)
		order_rows(s);
	return ret;
}

const struct cycle_closed *cycle_sink_take_closed(struct cycle_sink *s, size_t *n)
{
	EP_VEC(struct cycle_closed) t;

	*n = 0;
	if (!s)
		return NULL;
	/* Swap: the caller reads the old fresh list while new ones go to the
	 * other buffer. */
	memcpy(&t, &s->taken, sizeof(t));
	memcpy(&s->taken, &s->fresh, sizeof(t));
	memcpy(&s->fresh, &t, sizeof(t));
	s->fresh.n = 0;
	*n = s->taken.n;
	return s->taken.v;
}

const struct cycle_table *cycle_sink_table(const struct cycle_sink *s)
{
	return s ? (s->moved ? s->moved : &s->table) : NULL;
}

const struct cycle_agg *cycle_sink_agg(const struct cycle_sink *s)
{
	return s ? s->agg : NULL;
}

void cycle_sink_take_table(struct cycle_sink *s, struct cycle_table *out)
{
	order_rows(s);
	s->table.unmatched_ends = s->st.unmatched_ends;
	*out = s->table;
	memset(&s->table, 0, sizeof(s->table));
	s->table.period_ns = out->period_ns;
	s->table_cap = 0;
	s->head = 0;
	s->cfg.max_rows = SIZE_MAX; /* the ring went with the table */
	s->moved = out;
}

const struct cycle_sink_stats *cycle_sink_stats(const struct cycle_sink *s)
{
	return &s->st;
}
