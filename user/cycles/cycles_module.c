// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cycles recording module.
 *
 * During the run: attaches the cycle boundaries (--cycle / --cycle-every
 * probe, py:FUNCTION, the marker, found in what each target maps, re-read
 * every RESCAN_PERIOD_NS for libraries loaded later such as the Python
 * marker's), and CPython's GC probes; drains their ring into the cycle
 * facts sink (cycle_sink.h, created by record.c, fed by the other modules
 * too), attributes closed cycles a lag after their end and shows them in
 * the live view.
 *
 * At the end: report.json `cycles`, `findings`, `flame`, report.html,
 * cycles.csv and the summary. Without boundaries the run is one cycle,
 * rebuilt from the report the other modules built (it runs after them).
 *
 * This file: open/close, the ring's events, poll (live view, py: watch
 * arming, rescans) and stop; attaching is in cycles_attach.c, the outputs
 * in cycles_report.c, the shared state in cycles_internal.h.
 */
#include "util/clock.h"
#include "util/vec.h"
#include "overload/links.h"
#include "cycles/cycles_internal.h"
#include "cycles/cycles_module.h"
#include "llama/llama_findings.h"
#include "alloc/alloc_report.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cycles/cycle_sink.h"
#include "cycles/py_watch.h"
#include "cycles/cycle_spec.h"
#include "events/cycles.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "cycles/cycles_json.h"
#include "cycles/cycles_summary.h"
#include "export/csv.h"
#include "util/histogram.h"
#include "kernel/kfeat.h"
#include "util/log.h"
#include "proc/proc_maps.h"
#include "python/pyframes.h"
#include "report/report_html.h"
#include "top/top_live.h"
#include "probes/uprobe_discovery.h"
#include "probes/uprobe_target.h"

struct cycle_sink *cycles_sink_new(const struct cli_opts *o, uint64_t period_ns)
{
	struct cycle_sink_cfg cfg = {
		.mode = o->cycle_every ? CYCLE_MODE_EVERY : CYCLE_MODE_PAIRS,
		.chain_ends = o->cycle && !o->cycle_every && !strncmp(o->cycle, "py:", 3),
		.lag_ns = CYCLE_LAG_NS,
		.period_ns = period_ns,
		.max_facts = CYCLE_MAX_FACTS,
		.max_rows = CYCLE_MAX_ROWS,
	};
	struct findings_cfg fc;

	findings_default_cfg(&fc);
	findings_over_shares(&fc, cfg.over_share);
	return cycle_sink_new(&cfg);
}

static void cm_close(void *state);

/* The functions py:NAME matched, as the warning and report.json list
 * them: "DB.run (experiment.py:40)". */
int cycles_py_fns_text(const struct cycles_state *s, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->npy_fns && o < len; i++) {
		const struct py_fn_seen *f = &s->py_fns[i];
		int n = snprintf(buf + o, len - o, "%s%s (%s:%d)", i ? ", " : "", f->qual,
				 proc_maps_basename(f->file), f->line);

		if (n < 0)
			return -EINVAL;
		o += (size_t)n;
	}
	if (s->py_fns_more && o < len)
		snprintf(buf + o, len - o, ", ...");
	return 0;
}

/* One more function NAME matched: a bare name defined in two classes
 * (DB.run, StandIn.run) makes both cycles; said at once, with how to
 * name one. */
static void note_py_fn(struct cycles_state *s, const char *qual, const char *file, int line)
{
	struct py_fn_seen *f;
	char list[1024];

	for (size_t i = 0; i < s->npy_fns; i++) {
		f = &s->py_fns[i];
		if (f->line == line && !strcmp(f->file, file)) {
			/* Before 3.11, first seen alone (its name), then
			 * below its module (its qualified name). */
			if (strlen(qual) > strlen(f->qual))
				snprintf(f->qual, sizeof(f->qual), "%s", qual);
			return;
		}
	}
	if (s->npy_fns == PY_FNS_MAX) {
		s->py_fns_more = true;
		return;
	}
	f = &s->py_fns[s->npy_fns++];
	snprintf(f->qual, sizeof(f->qual), "%s", qual);
	snprintf(f->file, sizeof(f->file), "%s", file);
	f->line = line;
	if (s->npy_fns < 2)
		return;
	cycles_py_fns_text(s, list, sizeof(list));
	log_warn("cycles: %s names %zu functions: %s; the calls of each are cycles (name one: "
		 "py:Class.method, py:module.func or py:module:Class.method)",
		 s->spec.text, s->npy_fns, list);
}

/* pyframes_on_code: a code object py:NAME matches in pid, to arm from poll
 * (the recorder is merging a sample now). A few per run: a linear search. */
static void on_code(void *ctx, uint32_t pid, uint64_t addr, const char *qual, const char *file,
		    int line)
{
	struct cycles_state *s = ctx;
	struct pw_found f = { .pid = pid, .addr = addr };

	note_py_fn(s, qual, file, line);
	for (size_t i = 0; i < s->npw_found; i++)
		if (s->pw_found[i].pid == pid && s->pw_found[i].addr == addr)
			return;
	if (ep_vec_push((void **)&s->pw_found, &s->npw_found, &s->cappw_found, sizeof(f), &f))
		log_warn("cycles: out of memory keeping a code object of %s", s->spec.text);
	else
		s->pw_waiting++;
}

static int cm_open(void **state, const struct rec_ctx *ctx)
{
	struct cycles_state *s = calloc(1, sizeof(*s));
	char err[256] = "";
	int rc;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	*state = s;
	UPROBE_TARGETS_INIT(&s->tg, struct ctarget, pid, ut);
	hist_init(&s->walls);
	s->max_no = -1;
	rc = cycle_spec_parse(ctx->opts->cycle, ctx->opts->cycle_every, &s->spec, err, sizeof(err));
	if (rc) {
		log_error("%s", err); /* cli_parse validated it */
		goto fail;
	}
	/* With Python frames in the samples, py: cycles watch FUNCTION's code
	 * object, found in them; without, the USDT points (every call traps),
	 * as where the kernel refuses the watchpoint program (cm_bpf_refused).
	 * x86_64 only: its data watchpoints trap after the write, so the
	 * program reads the new count; arm64's trap before it (and kernels
	 * before 6.10 do not step over the access for a BPF handler). */
#if defined(__x86_64__)
	const bool watch = true;
#else
	const bool watch = false;
#endif
	if (watch && ctx->cycles && s->spec.src == CYC_SRC_PY && ctx->py) {
		s->py_by_watch = true;
		pyframes_on_code(ctx->py, &s->spec.py, on_code, s);
	}
	return 0;
fail:
	cm_close(s);
	*state = NULL;
	return rc ? rc : -EINVAL;
}

static void gc_event(struct cycles_state *s, const struct ep_cycle_event *e)
{
	size_t k = 0;

	while (k < s->ngc && s->gc[k].tid != e->hdr.tid)
		k++;
	if (e->kind == EP_CYC_GC_START) {
		if (k == s->ngc) {
			if (s->ngc == MAX_GC_THREADS) {
				s->gc_unpaired++;
				return;
			}
			s->ngc++;
		}
		s->gc[k] = (struct gc_open){ e->hdr.tid, e->hdr.ts_ns };
		return;
	}
	if (k == s->ngc) {
		s->gc_unpaired++; /* collection running at attach */
		return;
	}
	struct cyc_span sp = { .start_ns = s->gc[k].start,
			       .end_ns = e->hdr.ts_ns,
			       .tid = e->hdr.tid,
			       .kind = CYC_SPAN_GC,
			       .name = "gc" };

	cycle_sink_span(s->ctx->cycles, &sp);
	s->gc[k] = s->gc[--s->ngc];
}

int cycles_on_event(void *ctx, void *data, size_t size)
{
	struct cycles_state *s = ctx;
	const struct ep_cycle_event *e = data;
	struct cycle_sink *sink = s->ctx->cycles;

	if (size < sizeof(*e) || e->hdr.type != EP_EV_CYCLE) {
		s->bad_events++;
		return 0;
	}
	/* The run has ended; the target may go on (--pid, q, -d) while the
	 * other modules stop. */
	if (s->cutoff_ns && e->hdr.ts_ns > s->cutoff_ns) {
		s->after_end++;
		return 0;
	}
	switch (e->kind) {
	case EP_CYC_BEGIN:
		cycle_sink_begin(sink, e->hdr.ts_ns, e->hdr.tid);
		break;
	case EP_CYC_END:
		cycle_sink_end(sink, e->hdr.ts_ns, e->hdr.tid);
		break;
	case EP_CYC_ENTRY:
		cycle_sink_entry(sink, e->hdr.ts_ns, e->hdr.tid);
		break;
	case EP_CYC_GC_START:
	case EP_CYC_GC_DONE:
		gc_event(s, e);
		break;
	default:
		s->bad_events++;
	}
	return 0;
}

/* The cycle strip and running figures of the live view. */
static void update_live(struct cycles_state *s)
{
	struct live_metrics *l = s->ctx->live;
	const struct cycle_table *t = cycle_sink_table(s->ctx->cycles);
	const struct cycle_closed *c;
	size_t n;

	c = cycle_sink_take_closed(s->ctx->cycles, &n);
	if (!l)
		return;
	for (size_t i = 0; i < n; i++) {
		double ms = (double)(c[i].end_ns - c[i].start_ns) / 1e6;
		size_t k;

		/* Cut by the end of the run: no cycle length, no alert. */
		if (c[i].partial)
			continue;
		k = l->ncycles < LIVE_MAX_CYCLES ? l->ncycles++ : LIVE_MAX_CYCLES - 1;

		if (k == LIVE_MAX_CYCLES - 1 && l->ncycles == LIVE_MAX_CYCLES) {
			memmove(l->cycle_ms, l->cycle_ms + 1, k * sizeof(*l->cycle_ms));
			memmove(l->cycle_start_ns, l->cycle_start_ns + 1,
				k * sizeof(*l->cycle_start_ns));
			memmove(l->cycle_part, l->cycle_part + 1, k * sizeof(*l->cycle_part));
		}
		l->cycle_ms[k] = ms;
		l->cycle_start_ns[k] = c[i].start_ns;
		for (int p = 0; p < LIVE_CYC_PARTS; p++)
			l->cycle_part[k][p] = NAN;
		l->cycle_no = (int64_t)c[i].no;
		l->cycles_closed++;
		hist_add(&s->walls, c[i].end_ns - c[i].start_ns);
		if (s->max_no < 0 || ms > s->max_ms) {
			s->max_ms = ms;
			s->max_no = (int64_t)c[i].no;
		}
	}
	if (n) {
		live_hist_from(&l->cycle_wall, &s->walls);
		l->cycle_p50_ms = (double)hist_quantile(&s->walls, 0.5) / 1e6;
		l->cycle_p95_ms = (double)hist_quantile(&s->walls, 0.95) / 1e6;
		l->cycle_max_ms = s->max_ms;
		l->cycle_max_no = s->max_no;
	}
	for (; t && s->live_rows < t->n; s->live_rows++) {
		const struct cycle_row *r = &t->rows[s->live_rows];
		double w = r->wall_ns ? (double)r->wall_ns : 1, off = 0;

		for (int k = 0; k < CYC_OFF_REASONS; k++)
			off += (double)r->part_off_cpu_ns[k];
		l->cycle_part_s[LIVE_CYC_INFER] += (double)r->part_inference_ns / 1e9;
		l->cycle_part_s[LIVE_CYC_SQL] += (double)r->part_sql_ns / 1e9;
		l->cycle_part_s[LIVE_CYC_OFFCPU] += off / 1e9;
		l->cycle_part_s[LIVE_CYC_PROBE] += (double)(r->part_probe_ns + r->part_gc_ns) / 1e9;
		l->cycle_part_s[LIVE_CYC_OTHER] += (double)r->other_ns / 1e9;
		for (size_t k = 0; k < l->ncycles && k < LIVE_MAX_CYCLES; k++) {
			if (l->cycle_start_ns[k] != r->start_ns)
				continue;
			l->cycle_part[k][LIVE_CYC_INFER] = (double)r->part_inference_ns / w;
			l->cycle_part[k][LIVE_CYC_SQL] = (double)r->part_sql_ns / w;
			l->cycle_part[k][LIVE_CYC_OFFCPU] = off / w;
			l->cycle_part[k][LIVE_CYC_PROBE] =
				(double)(r->part_probe_ns + r->part_gc_ns) / w;
			l->cycle_part[k][LIVE_CYC_OTHER] = (double)r->other_ns / w;
			break;
		}
	}
}

/* Watches the code objects named FUNCTION found and not armed yet.
 * Arming takes a perf event per thread: ~10 us each; one not defined yet
 * (-EAGAIN, py_watch_arm) costs a read of its count per poll until it is. */
static void arm_found(struct cycles_state *s)
{
	for (size_t i = 0; s->pw_waiting && i < s->npw_found; i++) {
		struct pw_found *f = &s->pw_found[i];
		struct ctarget *t = uprobe_targets_find(&s->tg, f->pid);
		char why[256] = "";
		int n;

		if (f->done)
			continue;
		if (!t || t->exited) {
			f->done = true;
			s->pw_waiting--;
			continue;
		}
		n = py_watch_arm(s->pw, f->pid, f->addr, why, sizeof(why));
		if (n == -EAGAIN) {
			if (!f->waiting)
				log_info("cycles: pid %u: %s: its code object at 0x%llx is not a "
					 "function yet (its def has not run): watched once it is",
					 f->pid, s->spec.text, (unsigned long long)f->addr);
			f->waiting = true;
			continue;
		}
		f->done = true;
		s->pw_waiting--;
		if (n == -EEXIST)
			continue;
		if (n < 0) {
			/* Said at each new reason: the same one for the next
			 * object would only repeat it. */
			if (strcmp(why, s->pw_error))
				log_warn(
					"cycles: --cycle%s %s: pid %u: cannot watch the code object at "
					"0x%llx: %s",
					s->spec.every ? "-every" : "", s->spec.text, f->pid,
					(unsigned long long)f->addr, why);
			snprintf(s->pw_error, sizeof(s->pw_error), "%s", why);
			continue;
		}
		s->pw_armed++;
		s->nboundary_links++;
		t->bound = true;
		log_info(
			"cycles: pid %u: cycle boundary %s: watchpoint on its code object at 0x%llx "
			"in %d thread(s)",
			f->pid, s->spec.text, (unsigned long long)f->addr, n);
		cycle_sink_set_active(s->ctx->cycles, true);
	}
}

static int cm_poll(void *state, uint64_t now)
{
	struct cycles_state *s = state;
	int err = 0;

	if (s->stopped || !s->ctx->cycles)
		return 0;
	if (s->rb)
		err = ring_buffer__consume(s->rb);
	if (s->pw)
		arm_found(s);
	/* A library mapped since the last rescan (a launched command's
	 * start-up libraries after its exec, a marker library dlopen'ed):
	 * look now, not up to RESCAN_PERIOD_NS later; the demo loses ~40
	 * cycles in 300 ms. At most every RESCAN_FAST_NS. */
	uint64_t gen = s->ctx->mmap_gen ? *s->ctx->mmap_gen : 0;
	bool mapped = gen != s->seen_gen && now >= s->last_scan + RESCAN_FAST_NS;

	if (s->skel && (now >= s->next_rescan || mapped)) {
		s->seen_gen = gen;
		s->last_scan = now;
		for (size_t i = 0; i < s->tg.n; i++) {
			struct ctarget *t = uprobe_targets_at(&s->tg, i);

			if (!t->exited && !(t->bound && !t->py_path))
				cycles_scan_target(s, t);
		}
		/* FUNCTION not seen in a sample yet: look in the frames the
		 * threads are in (a loop waiting before its first call); every
		 * rescan (20 ms) for 2 s, then every PY_FIND_SLOW_NS. */
		if (s->pw && now >= s->next_find) {
			for (size_t i = 0; i < s->tg.n; i++) {
				const struct ctarget *t = uprobe_targets_at(&s->tg, i);

				if (!t->exited && !t->bound)
					pyframes_find_code(s->ctx->py, t->pid);
			}
			if (!s->first_find)
				s->first_find = now;
			s->next_find = now - s->first_find < PY_FIND_FAST_FOR_NS
					       ? 0
					       : now + PY_FIND_SLOW_NS;
		}
		if (s->pw)
			arm_found(s);
		s->next_rescan = now + (s->spec.src != CYC_SRC_AUTO && !s->nboundary_links
						? RESCAN_FAST_NS
						: RESCAN_PERIOD_NS);
	}
	/* Every ring (the sampler's included) was drained completely at least
	 * once after the previous poll: events stamped before it are all in.
	 * `now` is not such a mark: the recorder may have stalled (symbol
	 * loading) with events still queued. */
	if (s->prev_poll && cycle_sink_flush(s->ctx->cycles, s->prev_poll, false) < 0)
		err = -ENOMEM;
	s->prev_poll = now;
	update_live(s);
	return err < 0 ? err : 0;
}

static void cm_on_exit(void *state, uint32_t pid, uint64_t ts)
{
	struct cycles_state *s = state;
	struct ctarget *t = uprobe_targets_find(&s->tg, pid);

	(void)ts;
	if (!t)
		return;
	if (s->rb)
		ring_buffer__consume(s->rb);
	t->exited = true;
	uprobe_target_unwind(&t->ut, 0);
	if (s->pw)
		py_watch_forget_pid(s->pw, pid);
}

/* The launched command is stopped at its start-up: attach the marker in
 * what it maps now, before its first cycle can begin. */
static void cm_on_held(void *state, uint32_t pid)
{
	struct cycles_state *s = state;
	struct ctarget *t = uprobe_targets_find(&s->tg, pid);

	if (s->skel && t && !t->exited)
		cycles_scan_target(s, t);
}

/* out[k] = the sum over CPUs of per-CPU array fd's entry k, k < n (an entry
 * that cannot be read keeps its value). */
static void sum_percpu(int fd, uint32_t n, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return;
	for (uint32_t r = 0; r < n; r++) {
		if (bpf_map_lookup_elem(fd, &r, v))
			continue;
		out[r] = 0;
		for (int c = 0; c < ncpu; c++)
			out[r] += v[c];
	}
	free(v);
}

static void read_watch_stats(struct cycles_state *s)
{
	sum_percpu(bpf_map__fd(s->skel->maps.cycle_watch_stats), EP_CYC_W__COUNT, s->pw_stats);
}

static void read_drops(struct cycles_state *s)
{
	sum_percpu(bpf_map__fd(s->skel->maps.cycle_drops), EP_CYC_DROP__COUNT, s->drops);
}

/* Released beside the outputs: each uprobe link's release waits for a
 * grace period (rec_module.h, take_links). */
static void cm_take_links(void *state, struct link_list *out)
{
	struct cycles_state *s = state;

	uprobe_targets_take_links(&s->tg, out);
}

static void cm_stop(void *state)
{
	struct cycles_state *s = state;
	const struct cycle_sink_stats *st;
	uint64_t end = s->ctx->ri && s->ctx->ri->end_mono_ns ? s->ctx->ri->end_mono_ns : 0;

	if (s->stopped || !s->ctx->cycles)
		return;
	s->stopped = true;
	if (!end)
		end = mono_ns();
	/* The modules before this one took their time to stop while the
	 * target ran on: what it did after the end is not in the run. */
	s->cutoff_ns = end;
	uprobe_targets_destroy_links(&s->tg);
	if (s->pw) {
		read_watch_stats(s);
		py_watch_free(s->pw);
		s->pw = NULL;
	}
	/* Here, not in close: the recorder frees the Python frames first. */
	if (s->py_by_watch)
		pyframes_on_code(s->ctx->py, NULL, NULL, NULL);
	if (s->rb)
		ring_buffer__consume(s->rb);
	if (s->skel)
		read_drops(s);
	/* The other modules stopped before this one (modules[] order) and
	 * have handed over everything they drained. */
	if (cycle_sink_flush(s->ctx->cycles, end, true) < 0)
		log_warn("cycles: out of memory while attributing the last cycles");
	update_live(s);
	st = cycle_sink_stats(s->ctx->cycles);
	if (s->py_by_watch && !s->pw_armed && s->pw_error[0])
		snprintf(s->problem, sizeof(s->problem),
			 "cannot watch the code object of %s: %s (the cycle marker needs no "
			 "watchpoint: tools/cycle_marker)",
			 s->spec.py_name, s->pw_error);
	else if (s->py_by_watch && !s->pw_armed)
		snprintf(s->problem, sizeof(s->problem),
			 "no Python function named %s was seen running: py: cycles find its "
			 "code object in the Python frames of the CPU samples, so it must run "
			 "while sampled (a function that runs briefly between long waits is found "
			 "late or never: raise -F, or use the cycle marker, tools/cycle_marker)",
			 s->spec.py_name);
	else if (s->spec.src == CYC_SRC_PY && !s->nboundary_links && s->py_missing[0])
		snprintf(s->problem, sizeof(s->problem),
			 "%s has no CPython USDT probes (built without --with-dtrace), which "
			 "py: cycles need %s; or use the cycle marker, tools/cycle_marker)",
			 s->py_missing,
			 s->watch_refused ? "without the watchpoint (this kernel refuses "
					    "cycle_watch"
					  : "with --python native (without it they watch the "
					    "function's code object");
	else if (s->spec.src != CYC_SRC_AUTO && !s->nboundary_links)
		snprintf(s->problem, sizeof(s->problem),
			 "never attached: no traced process maps a file that %s",
			 s->spec.def.lib ? "matches the LIB part" : "defines the symbol");
	else if (s->spec.src == CYC_SRC_PY && s->spec.every && !st->attributed)
		snprintf(
			s->problem, sizeof(s->problem),
			"no call seen; CPython 3.11 fires no function__entry for calls from Python "
			"code (CPython gh-98894): use --cycle %s (cycles between returns) or the "
			"cycle marker",
			s->spec.text);
	else if (s->nboundary_links && !st->attributed)
		snprintf(s->problem, sizeof(s->problem), "attached, but no call was seen");
	/* An interpreter without probes was said during the run already. */
	if (s->problem[0] && !(s->py_warned && !s->nboundary_links))
		log_warn("cycles: %s%s%s: %s; the whole run is one cycle",
			 s->spec.src == CYC_SRC_AUTO ? "the cycle marker"
			 : s->spec.every	     ? "--cycle-every "
						     : "--cycle ",
			 s->spec.src == CYC_SRC_AUTO ? "" : s->spec.text, "", s->problem);
	/* Bounded by aggregation (memory stays flat however long the run):
	 * the statistics and findings cover every cycle, the table the first
	 * and last ones. */
	if (st->rows_not_kept)
		log_info("cycles: %" PRIu64 " cycles: statistics and findings cover all of them; "
			 "the per-cycle table keeps the first %d and the last %d rows (%" PRIu64
			 " not kept)",
			 st->attributed, CYCLE_MAX_ROWS / 2, CYCLE_MAX_ROWS - CYCLE_MAX_ROWS / 2,
			 st->rows_not_kept);
	if (st->chained)
		log_warn("cycles: %s: this CPython fired function__return but not function__entry "
			 "(3.11, CPython gh-98894): %" PRIu64
			 " cycle(s) run from one return to the "
			 "next, the first call is not a cycle",
			 s->spec.text, st->chained);
	log_info("cycles: %" PRIu64 " closed, %" PRIu64 " unmatched ends, facts: peak %zu held, "
		 "%" PRIu64 " late, %" PRIu64 " dropped",
		 st->closed, st->unmatched_ends, st->peak_held_facts, st->late_facts,
		 st->dropped_facts);
}

static void free_ctarget(void *rec)
{
	struct ctarget *t = rec;

	free(t->py_path);
	free(t->bound_path);
}

static void cm_close(void *state)
{
	struct cycles_state *s = state;

	if (!s)
		return;
	uprobe_targets_free(&s->tg, free_ctarget);
	py_watch_free(s->pw);
	free(s->pw_found);
	ring_buffer__free(s->rb);
	cycle_spec_free(&s->spec);
	cycle_table_free(&s->table);
	findings_free(&s->findings);
	free(s);
}

const struct rec_module cycles_rec_module = {
	.name = "cycles",
	.open = cm_open,
	.bpf_part = "cycle_",
	.bpf_setup = cm_bpf_setup,
	.bpf_loaded = cm_bpf_loaded,
	.bpf_refused = cm_bpf_refused,
	.add_target = cm_add_target,
	.attach = cm_attach,
	.poll = cm_poll,
	.on_exit = cm_on_exit,
	.on_held = cm_on_held,
	.take_links = cm_take_links,
	.stop = cm_stop,
	.write_files = cm_write_files,
	.trace_events = cm_trace,
	.has_trace = cm_has_trace,
	.report_json = cm_report,
	.summary = cm_summary,
	.close = cm_close,
};
