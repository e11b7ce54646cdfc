/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A data source that runs beside the CPU sampler during a recording run
 * (scheduler, memory, thermal, probes, Jetson, ...). record.c drives every
 * module through these hooks (record/modules.c), in this order:
 *
 *   open -> [bpf_setup -> bpf_loaded] -> add_target* -> attach -> poll* (every ~10 ms, and on_fork/on_exit
 *   as targets come and go) -> take_links -> stop -> report_json / trace_events /
 *   write_files / summary -> close
 *
 * A module that does not apply here (not a Jetson, tracepoint missing, not
 * asked for) returns -ENODEV from open after logging one line at info level;
 * the run goes on without it. Any other error from open or attach is fatal
 * and must have been logged with context. Every hook but open and close is
 * optional (NULL).
 */
#ifndef EBPF_PROF_REC_MODULE_H
#define EBPF_PROF_REC_MODULE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "report/output.h"
#include "report/report.h"

struct symbolizer;
struct throttle_feed;
struct profile;
struct live_metrics;
struct probe_bus;
struct cycle_sink;
struct modules_bpf;
struct pyframes;
struct link_list;
struct kfeat;
struct vstat;

struct rec_ctx {
	const struct cli_opts *opts;
	/* What the running kernel's BPF has (kernel/kfeat.h): a module whose
	 * programs need a missing helper removes the calls or does not load. */
	const struct kfeat *kf;
	/* The verifier's figures of every program loaded (kernel/vstat.h):
	 * a module that loads its own object records them here. */
	struct vstat *vs;
	/* The in-kernel tgid filter of the CPU sampler (bpf/profile.bpf.c
	 * `targets`): reuse it in a module's BPF object with
	 * bpf_map__reuse_fd() before load, so every module follows the same
	 * processes, including children forked later. */
	int targets_map_fd;
	/* The CPU sampler's ring (bpf/profile.bpf.c `events`), which the
	 * recorder thread waits on between its polls: a module's program
	 * that needs the recorder at once writes a record of its own type
	 * there (reused with bpf_map__reuse_fd; record/targets.c ignores it). */
	int events_fd;
	/* The in-kernel walker's maps (bpf/uwalk.h) of the CPU sampler, for
	 * modules that walk user stacks; -1 without --unwind cfi-kernel. */
	int uw_objs_fd, uw_blk_pc_fd, uw_procs_fd;
	/* The Python walk's maps (bpf/pyframes.bpf.h) of the CPU sampler, and
	 * the collector side that names its frames: -1 and NULL without
	 * Python frames (--python native, no bpf_loop). */
	int py_procs_fd, py_tstates_fd;
	struct pyframes *py;
	struct symbolizer *sym;	   /* shared symbolizer (user + kernel frames) */
	const struct run_info *ri; /* targets, times; complete by report time */
	/* Throttling evidence from sampler threads (Jetson) to the detector
	 * (sysmon); thread-safe, see throttle_feed.h. */
	struct throttle_feed *throttle;
	/* The live CPU profile; read it only from hooks (recorder thread). */
	const struct profile *prof;
	/* Latest figures for the live view and alerts (top_live.h): modules
	 * write their fields from poll; unknown ones stay unknown. */
	struct live_metrics *live;
	/* Per-cycle facts (cycle_sink.h): modules hand over timestamped facts
	 * (spans, off-CPU intervals, RSS, ...) from poll/stop with the
	 * cycle_sink_* functions, which accept NULL (cycles off). */
	struct cycle_sink *cycles;
	/* Set by a module (the live view's q) to end the run through the
	 * normal stop path, as a signal would. */
	bool *stop_requested;
	/* Probes other modules ask for, with a callback for their spans
	 * (probes.h, probe_bus_request): request from open. */
	struct probe_bus *probe_bus;
	/* The nice value children go back to (overload/priority.h). */
	int child_nice;
	/* Launch mode: the probes module stops the launched command at its
	 * start-up (its start-up libraries mapped) and calls this before it
	 * resumes it, so every module's on_held hook attaches what it finds
	 * there before the command's first instruction of main. */
	void (*notify_held)(void *rec, uint32_t pid);
	void *rec;
	/* Executable file mappings made by the targets so far (the sampler's
	 * count, moved by mmap): a module that scans the targets' maps for
	 * what a library brings can look again as soon as one is mapped. */
	const volatile uint64_t *mmap_gen;
};

/* The most modules a run drives (the table in record/modules.c). */
#define REC_MAX_MODULES 8

struct rec_module {
	const char *name;
	int (*open)(void **state, const struct rec_ctx *ctx);
	/* The module's part of the modules' linked BPF object: the prefix of
	 * its programs' and maps' names, NULL for none. After every open,
	 * bpf_setup configures the part and says whether it takes part;
	 * bpf_loaded hands over the loaded object, or (skel NULL) the error
	 * that kept the part from loading: return -ENODEV there to turn the
	 * module off, another negative errno to end the run. See bpf_parts.h
	 * for the contract. */
	const char *bpf_part;
	int (*bpf_setup)(void *state, struct modules_bpf *skel);
	int (*bpf_loaded)(void *state, struct modules_bpf *skel, int err);
	/* Optional: the kernel refused one of the part's programs (bpf_parts.h
	 * `refused`): turn it off for the next bpf_setup and say what is
	 * lost, or NULL to give the part up. */
	const char *(*bpf_refused)(void *state, const char *prog);
	int (*add_target)(void *state, uint32_t pid);
	int (*attach)(void *state);
	/* Non-blocking: drain ring buffers, sample files. */
	int (*poll)(void *state, uint64_t now_ns);
	void (*on_exit)(void *state, uint32_t pid, uint64_t ts_ns);
	/* The launched command pid is stopped at its start-up and resumes
	 * when this returns (rec_ctx.notify_held): attach to what it maps. */
	void (*on_held)(void *state, uint32_t pid);
	/* Hands the module's BPF links over (link_list_push) and keeps none:
	 * the recorder (record/finish.c) destroys them all on a thread of its own, in parallel,
	 * while the modules stop and the outputs are written, since each
	 * release waits for kernel grace periods (0.4-6 s for a uprobe or
	 * perf tracepoint on a loaded machine). Called on the
	 * recorder thread before stop; events may still arrive during stop
	 * (cut at the run's end where it matters). Optional: stop detaches
	 * what it holds. */
	void (*take_links)(void *state, struct link_list *out);
	/* Detach and drain what is left; called once, before any output. */
	void (*stop)(void *state);
	/* Adds the module's sections to report.json. The tree stays alive
	 * (and is written as report.json) until after write_files. */
	int (*report_json)(void *state, cJSON *root);
	/* Appends Chrome Trace events (comma-separated JSON objects; *first
	 * says whether a comma is needed) to trace.json. */
	int (*trace_events)(void *state, FILE *out, bool *first);
	/* Whether trace_events has anything to say: trace.json is written
	 * only when some module does. */
	bool (*has_trace)(void *state);
	/* Extra files in the bundle, each through output_write(); called
	 * after report_json and after report.json was written (so that a
	 * filling disk keeps report.json). */
	int (*write_files)(void *state, struct output_dir *od);
	/* A second profile for profile.speedscope.json (e.g. off-CPU time),
	 * sharing its frame table; *label prefixes its thread names. NULL when
	 * the module has none this run. */
	const struct profile *(*speedscope_profile)(void *state, const char **label);
	void (*summary)(void *state, FILE *out);
	void (*close)(void *state);
};

#endif
