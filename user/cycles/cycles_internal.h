/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cycles module's state (struct cycles_state), shared by the files
 * that implement it: cycles_module.c (lifecycle, ring events, poll, stop),
 * cycles_attach.c (the boundaries' programs and probes per target) and
 * cycles_report.c (the end-of-run outputs). Not part of the interface:
 * see cycles_module.h.
 */
#ifndef EP_CYCLES_INTERNAL_H
#define EP_CYCLES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cycles/cycle_sink.h"
#include "cycles/cycle_spec.h"
#include "cycles/cycles_module.h"
#include "cycles/py_watch.h"
#include "events/cycles.h"
#include "probes/uprobe_target.h"
#include "report/findings.h"
#include "util/histogram.h"

#include <cjson/cJSON.h>

struct modules_bpf;
struct output_dir;

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
 * rows' JSON took most of a 2-9 s stop when every row was kept. */
#define CYCLE_MAX_ROWS 4096
#define MAX_MAPS_BYTES (64u << 20)
#define MAX_EXEC_FILES 4096
#define MAX_GC_THREADS 64
/* py: cycles: the threads' frames are read for FUNCTION's code object at
 * each rescan for the first 2 s, then every second (a process of many
 * threads costs up to ~1000 small reads a scan). */
#define PY_FIND_FAST_FOR_NS (2000 * 1000000ull)
#define PY_FIND_SLOW_NS	    (1000 * 1000000ull)
/* Functions of the same name listed in the warning and report.json. */
#define PY_FNS_MAX 8

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
	/* The distinct functions NAME matched (file and first line tell
	 * them apart): more than one is said (a bare name in two classes). */
	struct py_fn_seen {
		char qual[256], file[256];
		int line;
	} py_fns[PY_FNS_MAX];
	size_t npy_fns;
	bool py_fns_more;		/* more than PY_FNS_MAX */
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

/* cycles_attach.c: the rec_module hooks that attach, and the per-target
 * scan poll repeats. */
const char *cm_bpf_refused(void *state, const char *prog);
int cm_bpf_setup(void *state, struct modules_bpf *skel);
int cm_bpf_loaded(void *state, struct modules_bpf *skel, int err);
void cycles_scan_target(struct cycles_state *s, struct ctarget *t);
int cm_add_target(void *state, uint32_t pid);
int cm_attach(void *state);

/* cycles_module.c: the ring buffer callback. */
int cycles_on_event(void *ctx, void *data, size_t size);
/* The functions py:NAME matched, "DB.run (experiment.py:40), ...". */
int cycles_py_fns_text(const struct cycles_state *s, char *buf, size_t len);

/* cycles_report.c: the rec_module output hooks. */
int cm_trace(void *state, FILE *out, bool *first);
bool cm_has_trace(void *state);
int cm_write_files(void *state, struct output_dir *od);
int cm_report(void *state, cJSON *root);
void cm_summary(void *state, FILE *out);

#endif
