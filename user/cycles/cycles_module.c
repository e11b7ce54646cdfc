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
 */
#include "util/clock.h"
#include "util/vec.h"
#include "overload/links.h"
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
#include "proc/target_open.h"

/* A maps re-read costs ~60 us (ms under a sanitizer); Python loads the
 * marker library with ctypes after start, and its first cycles are lost
 * until it is seen. A target whose boundaries are attached is not
 * re-read. */
#define RESCAN_PERIOD_NS (300 * 1000000ull)
/* An asked-for boundary not attached yet (its library is dlopen'ed after
 * start: libllama from Python or Node): every cycle until then is lost,
 * 6 of 31 in a 2 s launch with the 300 ms period. A maps read is ~60 us;
 * files already looked at are not read again. */
#define RESCAN_FAST_NS (20 * 1000000ull)
/* The probe ring is drained every 10 ms but the recorder stalls up to
 * ~0.3 s at start-up (docs/performance.md); spans arrive at their return. */
#define CYCLE_LAG_NS (1000 * 1000000ull)
/* Per fact kind: 1M spans (~48 MB) = 5 s at the 200k spans/s design rate,
 * the longest cycle fully attributed at that rate; longer ones count the
 * excess as dropped facts. */
#define CYCLE_MAX_FACTS (1u << 20)
/* A row is ~0.5 KB, ~1 KB of report.json, and ~7 KB of peak memory while
 * report.json is built as a cJSON tree (100k cycles peaked at 750 MB).
 * The statistics and findings come from streaming aggregates over every
 * cycle; the table keeps the first and last rows. 4096: the demo (30
 * cycles/s) fills it in ~2 minutes, after which the collector's memory is
 * flat; at 20000 it grew ~0.35 MiB/min through a 10-minute soak, and the
 * rows' JSON took most of a 2-9 s stop (issue 17). */
#define CYCLE_MAX_ROWS 4096
#define MAX_MAPS_BYTES (64u << 20)
#define MAX_EXEC_FILES 4096
#define MAX_GC_THREADS 64
/* py: cycles: the threads' frames are read for FUNCTION's code object at
 * each rescan for the first 2 s, then every second (a process of many
 * threads costs up to ~1000 small reads a scan). */
#define PY_FIND_FAST_FOR_NS (2000 * 1000000ull)
#define PY_FIND_SLOW_NS	    (1000 * 1000000ull)

struct ctarget {
	uint32_t pid;
	bool exited;
	struct uprobe_target ut;
	char *py_path;	  /* a CPython whose GC probes wait for the marker */
	bool bound;	  /* its boundaries are attached: rescans only for py_path */
	char *bound_path; /* the first file its --cycle probe attached in */
};

struct gc_open {
	uint32_t tid;
	uint64_t start;
};

struct cycles_state {
	const struct rec_ctx *ctx;
	/* report.json's tree, from report_json to write_files (the recorder
	 * keeps it until the files are written). */
	const cJSON *report_root;
	struct cycle_spec spec;
	struct modules_bpf *skel; /* owned by record.c (bpf_parts.h) */
	bool no_cookie;		  /* no attach cookies (before 5.15): the _nc programs */
	bool cookie_refused;	  /* the kernel refused the cookie programs: the same */
	/* The kernel refused the USDT program: the marker by uprobes on its
	 * functions, no GC column; or the watchpoint program: py: by the USDT
	 * points. refused_need: the program the asked-for boundaries could
	 * not do without, for the error. */
	bool usdt_refused, watch_refused;
	const char *refused_need;
	struct ring_buffer *rb;
	struct uprobe_targets tg; /* of struct ctarget */
	uint64_t next_rescan, prev_poll;
	uint64_t seen_gen, last_scan; /* rec_ctx.mmap_gen at the last rescan, and when */
	uint32_t main_pid;	      /* first target: the trace's cycle track */
	size_t nboundary_links, ngc_links;
	bool marker_found;
	bool py_warned;	      /* the line below said once, during the run */
	char py_missing[256]; /* a Python without USDT probes, for the warning */
	char problem[512];    /* why the asked-for boundaries gave no cycle */
	/* py:FUNCTION by watchpoint (py_watch.h): FUNCTION's code objects as
	 * the samples' Python frames name them, armed from poll. */
	bool py_by_watch;
	struct py_watch *pw;
	struct pw_found {
		uint32_t pid;
		bool done;    /* armed, or cannot be */
		bool waiting; /* said that it waits for its def */
		uint64_t addr;
	} * pw_found;
	size_t npw_found, cappw_found, pw_waiting; /* entries not done */
	size_t pw_armed;
	uint64_t first_find, next_find; /* pyframes_find_code's pace */
	char pw_error[256];		/* the last arming failure */
	uint64_t pw_stats[EP_CYC_W__COUNT];
	struct gc_open gc[MAX_GC_THREADS];
	size_t ngc;
	uint64_t gc_unpaired, bad_events;
	uint64_t cutoff_ns, after_end; /* the run's end; boundaries past it */
	uint64_t drops[EP_CYC_DROP__COUNT];
	bool stopped;
	/* live view */
	struct histogram walls;
	double max_ms;
	int64_t max_no;
	size_t live_rows; /* table rows already shown as breakdowns */
	/* end of run */
	struct cycle_table table;
	const struct cycle_agg *run; /* every cycle's aggregates (the sink's), or NULL */
	struct findings findings;
	bool have;
};

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
static int on_event(void *ctx, void *data, size_t size);

/* pyframes_on_code: FUNCTION's code object in pid, to arm from poll (the
 * recorder is merging a sample now). A few per run: a linear search. */
static void on_code(void *ctx, uint32_t pid, uint64_t addr)
{
	struct cycles_state *s = ctx;
	struct pw_found f = { .pid = pid, .addr = addr };

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
		pyframes_on_code(ctx->py, s->spec.py_name, on_code, s);
	}
	return 0;
fail:
	cm_close(s);
	*state = NULL;
	return rc ? rc : -EINVAL;
}

/* The cookie of a function boundary's entry (its return's is
 * EP_CYC_END | EP_CYC_COOKIE_DEPTH). */
static uint64_t entry_cookie(const struct cycles_state *s)
{
	return s->spec.every ? EP_CYC_ENTRY : (EP_CYC_BEGIN | EP_CYC_COOKIE_DEPTH);
}

/* The cycle marker by uprobes on its functions instead of its USDT points. */
static bool marker_by_uprobes(const struct cycles_state *s)
{
	return s->usdt_refused && (s->spec.src == CYC_SRC_AUTO || s->spec.src == CYC_SRC_MARKER);
}

static const char *cm_bpf_refused(void *state, const char *prog)
{
	struct cycles_state *s = state;

	if (!s->cookie_refused && (!strcmp(prog, "cycle_entry") || !strcmp(prog, "cycle_return"))) {
		s->cookie_refused = true;
		if (s->spec.src == CYC_SRC_UPROBE || marker_by_uprobes(s))
			return "its twins without attach cookies loaded instead: the same cycle "
			       "boundaries";
		/* Loaded on every run with cookies, used by function
		 * boundaries only. */
		return "not needed by this run's cycle boundaries (its twin without attach cookies "
		       "would serve them): nothing lost";
	}
	if (!s->usdt_refused && !strcmp(prog, "cycle_usdt")) {
		s->usdt_refused = true;
		switch (s->spec.src) {
		case CYC_SRC_USDT:
			s->refused_need = prog;
			return NULL;
		case CYC_SRC_PY:
			if (!s->py_by_watch) {
				s->refused_need = prog;
				return NULL;
			}
			break;
		case CYC_SRC_AUTO:
		case CYC_SRC_MARKER:
			return "the cycle marker is attached by uprobes on ebpf_prof_cycle_begin/end "
			       "instead of its USDT points (the same cycles; ebpf_prof_cycle_traced() "
			       "stays 0); no CPython GC column";
		case CYC_SRC_UPROBE:
			break;
		}
		return "no CPython GC column (its gc__start/gc__done USDT points); the cycle "
		       "boundaries are not USDT points and stay";
	}
	if (!s->watch_refused && !strcmp(prog, "cycle_watch")) {
		s->watch_refused = true;
		s->py_by_watch = false;
		pyframes_on_code(s->ctx->py, "", NULL, NULL);
		if (s->usdt_refused) {
			s->refused_need = prog;
			return NULL;
		}
		return "py: cycles from CPython's USDT points (function__entry/return), not a "
		       "watchpoint on the function's code object: every Python call traps, and a "
		       "CPython without the points gives no cycle";
	}
	return NULL;
}

static int cm_bpf_setup(void *state, struct modules_bpf *skel)
{
	struct cycles_state *s = state;

	if (!s->ctx->cycles)
		return 0; /* whole run only */
	/* Function boundaries say begin/end in their uprobe's cookie (5.15+);
	 * without cookies the run's one function boundary has its cookies
	 * in .rodata (cycle_entry_nc/cycle_return_nc). USDT ones (the
	 * marker, usdt:, py:) do not need them. */
	s->no_cookie = !s->ctx->kf->have[KFEAT_ATTACH_COOKIE] || s->cookie_refused;
	bpf_program__set_autoload(skel->progs.cycle_entry, !s->no_cookie);
	bpf_program__set_autoload(skel->progs.cycle_return, !s->no_cookie);
	bpf_program__set_autoload(skel->progs.cycle_entry_nc,
				  s->no_cookie &&
					  (s->spec.src == CYC_SRC_UPROBE || marker_by_uprobes(s)));
	bpf_program__set_autoload(skel->progs.cycle_return_nc,
				  s->no_cookie &&
					  ((s->spec.src == CYC_SRC_UPROBE && !s->spec.every) ||
					   marker_by_uprobes(s)));
	if (s->no_cookie && s->spec.src == CYC_SRC_UPROBE) {
		skel->rodata->cycle_entry_cookie = entry_cookie(s);
		skel->rodata->cycle_return_cookie = EP_CYC_END | EP_CYC_COOKIE_DEPTH;
	} else if (s->no_cookie && marker_by_uprobes(s)) {
		/* Both at function entries (attach_marker_point). */
		skel->rodata->cycle_entry_cookie = EP_CYC_BEGIN;
		skel->rodata->cycle_return_cookie = EP_CYC_END;
	}
	bpf_program__set_autoload(skel->progs.cycle_usdt, !s->usdt_refused);
	if (s->spec.src == CYC_SRC_PY) {
		memcpy((char *)skel->rodata->py_name, s->spec.py_name, sizeof(s->spec.py_name));
		skel->rodata->py_name_len = (uint32_t)strlen(s->spec.py_name) + 1;
	}
	skel->rodata->watch_kind = s->spec.every ? EP_CYC_ENTRY : EP_CYC_BEGIN;
	bpf_program__set_autoload(skel->progs.cycle_watch, s->py_by_watch);
	return 1;
}

static int cm_bpf_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct cycles_state *s = state;

	if (!skel) {
		/* Asked-for boundaries that cannot be attached are an error;
		 * without them the run is one cycle as before. */
		if (s->spec.src != CYC_SRC_AUTO && s->refused_need) {
			log_error("cycles: cannot load the BPF programs for --cycle%s %s: this "
				  "kernel refuses %s (the line above says why), without which it "
				  "cannot be served%s",
				  s->spec.every ? "-every" : "", s->spec.text, s->refused_need,
				  s->spec.src == CYC_SRC_MARKER || s->spec.src == CYC_SRC_UPROBE
					  ? ""
					  : "; a function boundary (--cycle LIB:SYMBOL) or the "
					    "cycle marker needs no USDT program");
			return err;
		}
		if (s->spec.src != CYC_SRC_AUTO) {
			log_error("cycles: cannot load the BPF programs for --cycle%s %s: %s (run "
				  "with -vv for the verifier log)",
				  s->spec.every ? "-every" : "", s->spec.text, strerror(-err));
			return err;
		}
		log_info("cycles: no cycle boundaries: cannot load the BPF programs: %s",
			 strerror(-err));
		return 0;
	}
	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.cycle_events), on_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		log_error("cycles: cannot set up the ring buffer: %s", strerror(-err));
		return err;
	}
	s->skel = skel;
	if (s->py_by_watch) {
		struct py_watch_cfg wc = {
			.proc_root = s->ctx->opts->proc_root,
			.prog = skel->progs.cycle_watch,
			.rc_map_fd = bpf_map__fd(skel->maps.cycle_watch_rc),
		};

		/* Its boundaries come with their calls: no chained ends (those
		 * are for CPython 3.11's USDT points, the fallback when the
		 * kernel refuses cycle_watch). */
		cycle_sink_no_chain(s->ctx->cycles);

		err = py_watch_new(&s->pw, &wc);
		if (err) {
			log_error("cycles: cannot set up --cycle %s: %s", s->spec.text,
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_usdt(struct cycles_state *s, struct ctarget *t, const char *path,
		       const char *prov, const char *name, uint64_t cookie, bool quiet)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);
	struct bpf_link *l = bpf_program__attach_usdt(s->skel->progs.cycle_usdt, (pid_t)t->pid,
						      path, prov, name, &uo);
	int err = l ? uprobe_target_keep(&t->ut, l) : -errno;

	if (err && !quiet)
		log_warn("cycles: cannot attach usdt %s:%s in %s (pid %u): %s", prov, name, path,
			 t->pid, strerror(-err));
	return err;
}

static int attach_uprobe(struct cycles_state *s, struct ctarget *t, const char *path, uint64_t off,
			 uint64_t cookie, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = s->no_cookie ? 0 : cookie, .retprobe = ret);
	const struct bpf_program *p =
		s->no_cookie
			? (ret ? s->skel->progs.cycle_return_nc : s->skel->progs.cycle_entry_nc)
			: (ret ? s->skel->progs.cycle_return : s->skel->progs.cycle_entry);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, (pid_t)t->pid, path, off, &o);

	return l ? uprobe_target_keep(&t->ut, l) : -errno;
}

/* A function of the cycle marker at its entry: with cookies cycle_entry
 * says begin or end in its cookie; without, the begin is cycle_entry_nc's
 * and the end cycle_return_nc's (set in .rodata, attached at the entry
 * too). */
static int attach_marker_point(struct cycles_state *s, struct ctarget *t, const char *path,
			       uint64_t off, bool end)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o,
		    .bpf_cookie = s->no_cookie ? 0
				  : end	       ? EP_CYC_END
					       : EP_CYC_BEGIN);
	const struct bpf_program *p = !s->no_cookie ? s->skel->progs.cycle_entry
				      : end	    ? s->skel->progs.cycle_return_nc
						    : s->skel->progs.cycle_entry_nc;
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, (pid_t)t->pid, path, off, &o);

	return l ? uprobe_target_keep(&t->ut, l) : -errno;
}

/* The cycle marker by uprobes on ebpf_prof_cycle_begin/end (the kernel
 * refused the USDT program): the functions run whether or not a tracer
 * raised their USDT points' semaphores. quiet: a file that may not have
 * them (the executable). */
static int attach_marker_uprobes(struct cycles_state *s, struct ctarget *t, const struct ud_file *f,
				 bool quiet)
{
	static const char *const names[2] = { "ebpf_prof_cycle_begin", "ebpf_prof_cycle_end" };
	uint64_t off[2] = { 0, 0 };
	size_t before = t->ut.nlinks;
	char path[512];
	int fd, n, err;

	fd = ud_open_mapped(s->ctx->opts->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0)
		return fd;
	n = ud_find_functions(fd, names, 2, off);
	close(fd);
	if (n < 0 || !off[0] || !off[1]) {
		if (!quiet)
			log_warn("cycles: pid %u: %s: no ebpf_prof_cycle_begin/end to attach the "
				 "cycle marker to",
				 t->pid, f->path);
		return n < 0 ? n : -ENOENT;
	}
	/* End first, as a function boundary's return: a cycle in progress
	 * now ends unmatched (counted) instead of never. */
	err = attach_marker_point(s, t, path, off[1], true);
	if (!err)
		err = attach_marker_point(s, t, path, off[0], false);
	if (err) {
		uprobe_target_unwind(&t->ut, before);
		log_warn("cycles: cannot attach the cycle marker in %s (pid %u): %s", f->path,
			 t->pid, strerror(-err));
	}
	return err;
}

static bool is_python(const char *path)
{
	const char *b = proc_maps_basename(path);

	return !strncmp(b, "python3", 7) || !strncmp(b, "libpython3", 10);
}

static void scan_uprobe(struct cycles_state *s, struct ctarget *t, const struct ud_file *f)
{
	const struct probe_def *d = &s->spec.def;
	const char *names[1] = { d->symbol };
	const char *opt = s->spec.every ? "-every" : "";
	uint64_t off = 0, begin;
	char path[512];
	size_t before = t->ut.nlinks;
	/* A bare SYMBOL: wherever it is defined (quietly where it is not). */
	bool anywhere = !d->lib;
	int fd, n, err;

	if (!anywhere && !ud_lib_matches(d->lib, f->path))
		return;
	fd = ud_open_mapped(s->ctx->opts->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0) {
		if (!anywhere)
			log_warn("cycles: --cycle%s %s: cannot open %s: %s", opt, s->spec.text,
				 f->path, target_open_strerror(fd));
		return;
	}
	n = ud_find_functions(fd, names, 1, &off);
	close(fd);
	if (n <= 0 || !off) {
		if (!anywhere)
			log_warn("cycles: --cycle%s %s: symbol %s not found in %s", opt,
				 s->spec.text, d->symbol, f->path);
		return;
	}
	/* Return first: a call entered between the two attaches would
	 * otherwise raise the thread's depth for good (its return unseen),
	 * and no later call would be outermost: one cycle for the whole run
	 * (seen on a running target under emulation). A call in progress
	 * now ends unmatched instead (counted). */
	begin = entry_cookie(s);
	err = s->spec.every
		      ? 0
		      : attach_uprobe(s, t, path, off, EP_CYC_END | EP_CYC_COOKIE_DEPTH, true);
	if (!err)
		err = attach_uprobe(s, t, path, off, begin, false);
	if (err) {
		uprobe_target_unwind(&t->ut, before);
		log_warn("cycles: cannot attach %s in %s (pid %u): %s", s->spec.text, path, t->pid,
			 strerror(-err));
		return;
	}
	s->nboundary_links++;
	log_info("cycles: pid %u: cycle boundary %s in %s", t->pid, s->spec.text, f->path);
	/* Two files of one process define it (a static copy, two versions
	 * of a library): a call through one into the other would begin two
	 * cycles. Said, not guessed. */
	if (t->bound_path)
		log_warn("cycles: --cycle%s %s: pid %u: %s is in %s and in %s, attached in both; "
			 "name the file (LIB:%s) if only one runs the loop",
			 opt, s->spec.text, t->pid, d->symbol, t->bound_path, f->path, d->symbol);
	else
		t->bound_path = strdup(f->path);
}

static void attach_gc(struct cycles_state *s, struct ctarget *t, const char *path);

static void scan_file(struct cycles_state *s, struct ctarget *t, const struct ud_file *f,
		      const char *exe)
{
	const char *base = proc_maps_basename(f->path);

	/* CPython's GC, whatever defines the cycles: its time is a column.
	 * Not before there can be cycles: enabling the probes makes every
	 * collection trap (a marker found later attaches them then). Before
	 * this file's boundary: the line that says the boundary is in comes
	 * with the GC column complete from the first cycle. */
	if (is_python(f->path)) {
		if (s->spec.src == CYC_SRC_AUTO && !s->marker_found) {
			if (!t->py_path)
				t->py_path = strdup(f->path);
		} else {
			attach_gc(s, t, f->path);
		}
	}
	switch (s->spec.src) {
	case CYC_SRC_UPROBE:
		scan_uprobe(s, t, f);
		break;
	case CYC_SRC_USDT:
		if (ud_lib_matches(s->spec.def.lib, f->path) &&
		    !attach_usdt(s, t, f->path, s->spec.def.usdt_provider, s->spec.def.symbol,
				 EP_CYC_ENTRY, false)) {
			s->nboundary_links++;
			log_info("cycles: pid %u: cycle boundary %s in %s", t->pid, s->spec.text,
				 f->path);
		}
		break;
	case CYC_SRC_PY: {
		size_t before = t->ut.nlinks;
		uint64_t entry = s->spec.every ? EP_CYC_ENTRY : EP_CYC_BEGIN | EP_CYC_COOKIE_DEPTH;
		int err;

		if (!is_python(f->path) || s->py_by_watch)
			break;
		/* Quiet: an interpreter built without --with-dtrace (pyenv,
		 * most self-built ones) has no probes; said once at the end. */
		err = attach_usdt(s, t, f->path, "python", "function__entry",
				  entry | EP_CYC_COOKIE_PY, true);
		if (!err && !s->spec.every)
			err = attach_usdt(s, t, f->path, "python", "function__return",
					  EP_CYC_END | EP_CYC_COOKIE_PY | EP_CYC_COOKIE_DEPTH,
					  true);
		if (err) {
			uprobe_target_unwind(&t->ut, before);
			log_info("cycles: pid %u: no CPython USDT probes in %s: %s", t->pid,
				 f->path, strerror(-err));
			snprintf(s->py_missing, sizeof(s->py_missing), "%s", f->path);
			break;
		}
		s->nboundary_links++;
		log_info("cycles: pid %u: cycle boundary %s in %s", t->pid, s->spec.text, f->path);
		break;
	}
	case CYC_SRC_AUTO:
	case CYC_SRC_MARKER:
		/* The marker lives in its library or is linked into the
		 * program: look only there, not in every mapped file. */
		if (!strncmp(base, "libebpf_prof_cycle", 18) || (exe && !strcmp(exe, f->path))) {
			bool quiet = strncmp(base, "libebpf_prof_cycle", 18) != 0;

			if (s->usdt_refused
				    ? !attach_marker_uprobes(s, t, f, quiet)
				    : !attach_usdt(s, t, f->path, "ebpf_prof", "cycle_begin",
						   EP_CYC_BEGIN, quiet) &&
					      !attach_usdt(s, t, f->path, "ebpf_prof", "cycle_end",
							   EP_CYC_END, quiet)) {
				s->nboundary_links++;
				s->marker_found = true;
				/* The GC column from the first cycle on: its probes
				 * before the line that says the marker is in. */
				if (t->py_path) {
					attach_gc(s, t, t->py_path);
					free(t->py_path);
					t->py_path = NULL;
				}
				log_info("cycles: pid %u: cycle marker in %s", t->pid, f->path);
			}
		}
		break;
	}
}

static void attach_gc(struct cycles_state *s, struct ctarget *t, const char *path)
{
	size_t before = t->ut.nlinks;

	if (s->usdt_refused)
		return; /* no USDT program: no GC column (said at load) */
	if (!attach_usdt(s, t, path, "python", "gc__start", EP_CYC_GC_START, true) &&
	    !attach_usdt(s, t, path, "python", "gc__done", EP_CYC_GC_DONE, true)) {
		s->ngc_links++;
		return;
	}
	uprobe_target_unwind(&t->ut, before);
}

/* --cycle py: on an interpreter without the USDT probes (pyenv's and most
 * self-built ones: no --with-dtrace) can give no cycle: said as soon as it
 * is known, naming the interpreter and the marker, so the user does not
 * find out at the end of a long run. Known: the process's libpython has
 * none, or its python executable has none and the start-up libraries are
 * mapped (libc) without a libpython (a static interpreter). */
static void warn_py_missing(struct cycles_state *s, const struct ctarget *t,
			    const struct ud_file *files, size_t n)
{
	const char *lib = NULL;
	bool libc = false;

	for (size_t i = 0; i < n; i++) {
		const char *b = proc_maps_basename(files[i].path);

		if (!strncmp(b, "libpython3", 10))
			lib = files[i].path;
		else if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5))
			libc = true;
	}
	if (lib ? strcmp(lib, s->py_missing) != 0 : !libc)
		return;
	s->py_warned = true;
	if (s->watch_refused)
		log_warn("cycles: --cycle%s %s: pid %u runs %s, a CPython without the USDT probes "
			 "(built without --with-dtrace) that py:FUNCTION needs when the kernel "
			 "refuses the watchpoint program (cycle_watch): no cycles from it; bracket "
			 "the loop with the cycle marker instead "
			 "(tools/cycle_marker/ebpf_prof_cycle.py: `with cycle(i): ...`, "
			 "docs/cycles.md)",
			 s->spec.every ? "-every" : "", s->spec.text, t->pid, s->py_missing);
	else
		log_warn("cycles: --cycle%s %s: pid %u runs %s, a CPython without the USDT probes "
			 "(built without --with-dtrace) that py:FUNCTION needs with --python "
			 "native: no cycles from it; without --python native py: cycles watch the "
			 "function's code object instead, or bracket the loop with the cycle "
			 "marker (tools/cycle_marker/ebpf_prof_cycle.py: `with cycle(i): ...`, "
			 "docs/cycles.md)",
			 s->spec.every ? "-every" : "", s->spec.text, t->pid, s->py_missing);
}

static void scan_target(struct cycles_state *s, struct ctarget *t)
{
	struct proc_maps pm;
	struct ud_file *files;
	char path[128], exe[512];
	size_t n, before = s->nboundary_links;
	ssize_t el;

	snprintf(path, sizeof(path), "%s/%u/exe", s->ctx->opts->proc_root, t->pid);
	el = readlink(path, exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	if (uprobe_target_files(s->ctx->opts->proc_root, t->pid, MAX_MAPS_BYTES, MAX_EXEC_FILES,
				&pm, &files, &n))
		return; /* gone: on_exit follows */
	for (size_t i = 0; i < n; i++)
		if (!uprobe_target_seen(&t->ut, &files[i]))
			scan_file(s, t, &files[i], exe[0] ? exe : NULL);
	t->bound = t->bound || s->nboundary_links > before;
	if (s->spec.src == CYC_SRC_PY && !t->bound && s->py_missing[0] && !s->py_warned)
		warn_py_missing(s, t, files, n);
	free(files);
	proc_maps_free(&pm);
	for (size_t i = 0; s->marker_found && i < s->tg.n; i++) {
		struct ctarget *g = uprobe_targets_at(&s->tg, i);

		if (g->py_path && !g->exited) {
			attach_gc(s, g, g->py_path);
			free(g->py_path);
			free(g->bound_path);
			g->py_path = NULL;
			g->bound_path = NULL;
		}
	}
	/* Facts are kept from the first boundary attached: none can come
	 * before it. */
	if (s->nboundary_links)
		cycle_sink_set_active(s->ctx->cycles, true);
}

static int cm_add_target(void *state, uint32_t pid)
{
	struct cycles_state *s = state;
	struct ctarget t = { .pid = pid };

	if (!s->tg.n && !s->main_pid) {
		cycle_sink_set_main_pid(s->ctx->cycles, pid);
		s->main_pid = pid;
	}
	if (!s->skel)
		return 0;
	return uprobe_targets_add(&s->tg, &t);
}

static int cm_attach(void *state)
{
	struct cycles_state *s = state;

	if (!s->skel)
		return 0;
	for (size_t i = 0; i < s->tg.n; i++)
		scan_target(s, uprobe_targets_at(&s->tg, i));
	s->next_rescan = 0;
	return 0;
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

static int on_event(void *ctx, void *data, size_t size)
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
				scan_target(s, t);
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
		scan_target(s, t);
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
		pyframes_on_code(s->ctx->py, "", NULL, NULL);
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
	/* Bounded by aggregation (issue 17): the statistics and findings
	 * cover every cycle, the table the first and last ones. */
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

/* Throttled share per cycle from the episodes the sysmon module found at
 * the end of the run (the detector needs the whole timeline). */
static void fill_throttling(struct cycle_table *t, const cJSON *root)
{
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(root, "time"), *p;
	const cJSON *eps = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "throttling"), "episodes");
	double t0, a, b;

	if (!cycles_json_number(cJSON_GetObjectItemCaseSensitive(tm, "start_monotonic_ns"), &t0) ||
	    !cJSON_IsArray(eps))
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct cycle_row *r = &t->rows[i];
		uint64_t thr = 0, last = r->start_ns;

		/* Episodes are sorted and disjoint in the report. */
		cJSON_ArrayForEach(p, eps)
		{
			uint64_t s0, s1;

			if (!cycles_json_number(cJSON_GetObjectItemCaseSensitive(p, "start_s"),
						&a) ||
			    !cycles_json_number(cJSON_GetObjectItemCaseSensitive(p, "end_s"), &b) ||
			    b < a || b > 1e9)
				continue;
			s0 = (uint64_t)t0 + (uint64_t)(a * 1e9);
			s1 = (uint64_t)t0 + (uint64_t)(b * 1e9);
			if (s0 < last)
				s0 = last;
			if (s1 > r->end_ns)
				s1 = r->end_ns;
			if (s1 > s0) {
				thr += s1 - s0;
				last = s1;
			}
		}
		if (r->wall_ns && (thr || r->has_freq))
			r->throttled_share = (double)thr / (double)r->wall_ns;
	}
}

/* Each cycle as an async slice (b/e with the cycle index as id): a
 * --cycle-every cycle does not nest with the spans on its thread, and
 * cycles of different threads overlap, so they get their own track. */
static int cm_trace(void *state, FILE *out, bool *first)
{
	struct cycles_state *s = state;
	const struct cycle_table *t = cycle_sink_table(s->ctx->cycles);

	for (size_t i = 0; t && i < t->n; i++) {
		const struct cycle_row *r = &t->rows[i];
		uint64_t off = 0;

		for (int k = 0; k < CYC_OFF_REASONS; k++)
			off += r->part_off_cpu_ns[k];
		fprintf(out,
			"%s{\"name\":\"cycle %u\",\"cat\":\"cycle\",\"ph\":\"b\",\"id\":%u,"
			"\"ts\":%" PRIu64 ".%03u,\"pid\":%u,\"tid\":%u,\"args\":{\"wall_ms\":%.3f,"
			"\"inference_ms\":%.3f,\"sql_ms\":%.3f,\"off_cpu_ms\":%.3f,\"gc_ms\":%.3f,"
			"\"other_ms\":%.3f,\"truncated\":%s,\"partial\":%s}}\n",
			*first ? "" : ",", r->index, r->index, r->start_ns / 1000,
			(unsigned)(r->start_ns % 1000), s->main_pid, r->tid, r->wall_ns / 1e6,
			r->part_inference_ns / 1e6, r->part_sql_ns / 1e6, off / 1e6,
			r->part_gc_ns / 1e6, r->other_ns / 1e6, r->truncated ? "true" : "false",
			r->partial ? "true" : "false");
		*first = false;
		fprintf(out,
			",{\"name\":\"cycle %u\",\"cat\":\"cycle\",\"ph\":\"e\",\"id\":%u,"
			"\"ts\":%" PRIu64 ".%03u,\"pid\":%u,\"tid\":%u}\n",
			r->index, r->index, r->end_ns / 1000, (unsigned)(r->end_ns % 1000),
			s->main_pid, r->tid);
	}
	return ferror(out) ? -EIO : 0;
}

static bool cm_has_trace(void *state)
{
	struct cycles_state *s = state;
	const struct cycle_table *t = cycle_sink_table(s->ctx->cycles);

	return t && t->n;
}

static int write_html(FILE *f, void *root)
{
	return report_html_write(f, root);
}

static int write_csv(FILE *f, void *t)
{
	return export_cycles_csv(f, t);
}

/* report.html and cycles.csv, after report.json. A failure is logged by
 * output_write (and listed as not written); it costs no other file. */
static int cm_write_files(void *state, struct output_dir *od)
{
	struct cycles_state *s = state;

	if (s->have && s->report_root) {
		output_write(od, "report.html", write_html, (void *)s->report_root);
		output_write(od, "cycles.csv", write_csv, &s->table);
	}
	s->report_root = NULL;
	return 0;
}

static int add_meta(struct cycles_state *s, cJSON *root)
{
	const struct cycle_sink_stats *st = s->ctx->cycles ? cycle_sink_stats(s->ctx->cycles)
							   : NULL;
	cJSON *m = cJSON_AddObjectToObject(root, "cycles_meta"), *d;
	const char *src = "none";

	if (!m)
		return -ENOMEM;
	if (s->table.n && !s->table.whole_run)
		src = s->spec.src == CYC_SRC_AUTO || s->spec.src == CYC_SRC_MARKER ? "marker"
		      : s->spec.every						   ? "cycle-every"
										   : "cycle";
	if (!cJSON_AddStringToObject(m, "boundaries", src) ||
	    (s->spec.text && !cJSON_AddStringToObject(m, "spec", s->spec.text)) ||
	    (s->problem[0] && !cJSON_AddStringToObject(m, "problem", s->problem)) ||
	    !cJSON_AddNumberToObject(m, "lag_ms", CYCLE_LAG_NS / 1e6) ||
	    !cJSON_AddNumberToObject(m, "unmatched_ends", st ? (double)st->unmatched_ends : 0) ||
	    !cJSON_AddNumberToObject(m, "return_to_return", st ? (double)st->chained : 0) ||
	    !cJSON_AddNumberToObject(m, "gc_unpaired", (double)s->gc_unpaired) ||
	    !cJSON_AddNumberToObject(m, "peak_held_facts", st ? (double)st->peak_held_facts : 0) ||
	    !cJSON_AddNumberToObject(m, "rows_kept", (double)s->table.n) ||
	    !cJSON_AddNumberToObject(m, "rows_not_kept", st ? (double)st->rows_not_kept : 0) ||
	    !cJSON_AddNumberToObject(m, "rows_max", CYCLE_MAX_ROWS))
		return -ENOMEM;
	if (s->run && s->run->n && cycles_agg_to_json(s->run, m))
		return -ENOMEM;
	if (s->spec.src == CYC_SRC_PY) {
		cJSON *w = cJSON_AddObjectToObject(m, "py_watch");

		if (!cJSON_AddStringToObject(m, "py_mechanism",
					     s->py_by_watch ? "watchpoint" : "usdt") ||
		    !w || !cJSON_AddNumberToObject(w, "objects", (double)s->pw_armed) ||
		    !cJSON_AddNumberToObject(w, "hits", (double)s->pw_stats[EP_CYC_W_HITS]) ||
		    !cJSON_AddNumberToObject(w, "first", (double)s->pw_stats[EP_CYC_W_FIRST]) ||
		    !cJSON_AddNumberToObject(w, "unchanged",
					     (double)s->pw_stats[EP_CYC_W_UNCHANGED]) ||
		    !cJSON_AddNumberToObject(w, "unreadable",
					     (double)s->pw_stats[EP_CYC_W_UNREADABLE]) ||
		    !cJSON_AddNumberToObject(w, "freed", (double)s->pw_stats[EP_CYC_W_DEAD]))
			return -ENOMEM;
	}
	d = cJSON_AddObjectToObject(m, "dropped");
	if (!d ||
	    !cJSON_AddNumberToObject(d, "ringbuf_full",
				     (double)s->drops[EP_CYC_DROP_RINGBUF_FULL]) ||
	    !cJSON_AddNumberToObject(d, "depth_map_full",
				     (double)s->drops[EP_CYC_DROP_DEPTH_MAP_FULL]) ||
	    !cJSON_AddNumberToObject(d, "late_facts", st ? (double)st->late_facts : 0) ||
	    !cJSON_AddNumberToObject(d, "over_cap_facts", st ? (double)st->dropped_facts : 0) ||
	    !cJSON_AddNumberToObject(d, "names", st ? (double)st->dropped_names : 0) ||

	    !cJSON_AddNumberToObject(d, "reordered_entries", st ? (double)st->reordered : 0) ||
	    !cJSON_AddNumberToObject(d, "bad_events", (double)s->bad_events) ||
	    !cJSON_AddNumberToObject(m, "boundaries_after_end", (double)s->after_end))
		return -ENOMEM;
	return 0;
}

static int cm_report(void *state, cJSON *root)
{
	struct cycles_state *s = state;
	char err[128];
	int e;

	if (s->ctx->prof) {
		cJSON *fl = flame_to_json(s->ctx->prof, "samples", FLAME_MAX_STACKS,
					  FLAME_MAX_THREADS, FLAME_THREAD_STACKS);
		if (!fl || !cJSON_AddItemToObject(root, "flame", fl)) {
			cJSON_Delete(fl);
			return -ENOMEM;
		}
	}
	if (s->ctx->cycles && cycle_sink_table(s->ctx->cycles)->n) {
		cycle_sink_take_table(s->ctx->cycles, &s->table);
		fill_throttling(&s->table, root);
	} else {
		e = cycles_whole_run_from_report(root, &s->table, err, sizeof(err));
		if (e) {
			/* Not fatal: report.json is written without cycles. */
			log_warn("cycles: no per-cycle table: %s", err);
			return e == -ENOMEM ? e : 0;
		}
	}
	struct findings_cfg cfg;
	struct findings_ctx fctx;
	findings_default_cfg(&cfg);
	cycles_findings_ctx(root, &fctx);
	fctx.cycle_spec = s->spec.text;
	fctx.cycle_problem = s->problem[0] ? s->problem : NULL;
	fctx.py_watch = s->py_by_watch;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	fctx.ncpus = ncpu > 0 ? (uint32_t)ncpu : 0;
	/* Past the table's cap, the findings read the aggregates of every
	 * cycle; the rows kept supply per-cycle throttling. */
	s->run = s->ctx->cycles && s->table.n && !s->table.whole_run
			 ? cycle_sink_agg(s->ctx->cycles)
			 : NULL;
	e = findings_evaluate_agg(&s->table, s->run, &cfg, &fctx, &s->findings);
	if (!e)
		e = alloc_findings_from_report(root, &s->findings);
	if (!e)
		e = llama_findings_from_report(root, &s->table, fctx.ncpus, &s->findings);
	if (e)
		return e;
	cJSON *cj = cycles_to_json(&s->table), *fj = findings_to_json(&s->findings);
	if (!cj || !fj || !cJSON_AddItemToObject(root, "cycles", cj)) {
		cJSON_Delete(cj);
		cJSON_Delete(fj);
		return -ENOMEM;
	}
	if (!cJSON_AddItemToObject(root, "findings", fj) ||
	    !cJSON_AddBoolToObject(root, "cycles_whole_run", s->table.whole_run)) {
		cJSON_Delete(fj);
		return -ENOMEM;
	}
	e = add_meta(s, root);
	if (e)
		return e;
	s->have = true;
	/* The HTML embeds the whole report: written by write_files, which
	 * the recorder calls after report.json, while it still holds this
	 * tree. */
	s->report_root = root;
	return 0;
}

static void cm_summary(void *state, FILE *out)
{
	struct cycles_state *s = state;

	if (s->have)
		cycles_print_summary(out, &s->table, s->run, &s->findings, 3);
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
