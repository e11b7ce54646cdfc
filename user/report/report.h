/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Facts about a run that are not samples: target, timing, settings, outcome.
 * Filled by the recorder, read by the exporters.
 */
#ifndef EBPF_PROF_REPORT_H
#define EBPF_PROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "profile/profile.h"
#include "python/pyframes.h"
#include "unwind/ktables.h"

#include <cjson/cJSON.h>

#define EBPF_PROF_VERSION "0.1.0"
#define REPORT_SCHEMA	  "ebpf-prof/1"

/* Followed processes that exited during the run are listed in report.json
 * up to this many (the first ones); the rest are counted
 * (target.processes_not_listed). Named, launched and live ones always are. */
#define REPORT_MAX_EXITED_LISTED 1000

struct report_target {
	uint32_t pid;
	char comm[PROF_COMM_LEN];
	char *cmdline;	     /* NUL separators replaced by spaces; may be NULL */
	bool exited;	     /* exited before the end of the run */
	uint64_t exit_ns;    /* CLOCK_MONOTONIC when seen exiting, 0 if not */
	uint32_t parent_pid; /* 0 for a target named by the user */
};

/* Whether report.json and trace.json list t, the targets walked in order
 * with *nexited starting at 0 (REPORT_MAX_EXITED_LISTED). */
static inline bool report_target_listed(const struct report_target *t, size_t *nexited)
{
	return !(t->parent_pid && t->exited && (*nexited)++ >= REPORT_MAX_EXITED_LISTED);
}

/* How user stacks were unwound (docs/unwinding.md). Counts are samples. */
struct run_unwind {
	const char *mode;     /* "auto", "dwarf", "fp"; NULL: section omitted */
	uint32_t stack_bytes; /* window requested per sample; 0 in fp mode */
	uint64_t cfi;	      /* user stack from the CFI unwinder */
	uint64_t fp;	      /* user stack from the kernel's frame-pointer walk */
	uint64_t fp_fallback; /* of fp: auto mode, because CFI gave nothing */
	uint64_t truncated;   /* of cfi: left the window or hit the depth limit */
	uint64_t errors;      /* of cfi: stopped early (no CFI, garbage) */
	uint64_t no_window;   /* no registers or window captured */
	uint64_t copy_errors; /* BPF: window unreadable (e.g. sampled during exec) */
	uint64_t regs_errors; /* BPF: no user registers */
	uint64_t unwind_ns;   /* collector thread CPU time in the timed unwinder calls */
	uint64_t calls;	      /* unwinder calls */
	uint64_t timed;	      /* of calls: timed (one in UNWIND_TIME_EVERY) */
	/* --unwind cfi-kernel: why each walk ended (enum ep_uw_end, bpf/events/unwind.h),
	 * samples whose uretprobe return addresses were put back, and the
	 * tables the collector loaded. */
	bool kernel_walk;
	uint64_t kw_end[16];
	uint64_t kw_uretprobe_fixed;
	uint64_t kw_walk_ns, kw_walks, kw_frames; /* the walker's own time in BPF */
	struct ktables_stats kt;
};

/* Python frames (--python mixed|only): report.json "python", the summary. */
struct run_python {
	const char *mode; /* "mixed", "only"; NULL: section omitted */
	struct pyframes_stats st;
};

struct pprof_elf_cache;

struct vstat;

struct run_info {
	struct report_target *targets;
	size_t ntargets;
	/* Followed children named from their fork event and their parent,
	 * without reading /proc (target.forks_not_read). */
	uint64_t forks_unread;
	bool launched;	 /* -- CMD mode */
	char *command;	 /* launch mode: the command line; else NULL */
	int exit_status; /* launch mode: child's exit code, 128+sig if killed, -1 if unknown */
	/* Launch mode: the command's pid when the recording ended (-d) with it
	 * still running, left so; 0 otherwise. */
	uint32_t left_running_pid;
	/* --rotate: the samples of the intervals already written out (the
	 * profile holds the current one only), and how many were. */
	uint64_t rotated_samples, rotated_user, rotated_kernel;
	uint32_t rotations;
	uint64_t start_mono_ns, end_mono_ns;
	struct timespec start_wall, end_wall; /* CLOCK_REALTIME */
	/* The perf events' rate, and -F: above it when the overload guard
	 * limited the tick (overload/tick_guard.h); 0: the same. */
	uint32_t freq_hz;
	uint32_t requested_hz;
	bool kernel_frames;
	const char *stop_reason; /* "duration", "signal", "targets-exited" */
	const char *output_dir;
	const char *const *output_files; /* names inside output_dir, for report/summary */
	size_t noutput_files;
	/* report.json's output.complete: false in the version written before
	 * the other files, true in the final one (docs/report-schema.md). */
	bool output_complete;
	/* Files that could not be written, with their -errno (summary). */
	const char *const *failed_files;
	const int *failed_errs;
	size_t nfailed_files;
	uint64_t first_sample_ns; /* CLOCK_MONOTONIC of the first sample, 0 if none */
	struct run_unwind unwind;
	struct run_python python;
	/* The kernel's BTF (report.json `kernel`): its own, or none and the
	 * types from btf_file (--btf; NULL: libbpf's vmlinux file); the kind
	 * of tracepoint programs loaded ("tp_btf", "raw_tp"). */
	bool kernel_btf;
	const char *btf_file;
	const char *tracepoint_programs;
	/* The verifier's figures of the programs loaded and the ones given up
	 * (kernel/vstat.h); NULL: none recorded. */
	const struct vstat *vstat;
	/* Lets the recorder's modules add their sections to report.json. */
	int (*extend_report)(void *ctx, cJSON *root);
	void *extend_ctx;
	/* Shared by the run's pprof files (CPU, off-CPU, allocations) so that
	 * each module's DWARF is read once; NULL: each reads afresh. */
	struct pprof_elf_cache *elf_cache;
};

int export_speedscope(const struct profile *p, const struct run_info *ri, FILE *out);
int export_folded(const struct profile *p, FILE *out);
/* One profile of a speedscope file that holds several (e.g. CPU and
 * off-CPU): label, when not NULL, prefixes its thread names ("off-CPU: ..."). */
struct speedscope_part {
	const struct profile *p;
	const char *label;
};
/* Like export_speedscope, with the threads of every part in one file and
 * one frame table shared by all; the first part's busiest thread is shown
 * first. n >= 1. */
int export_speedscope_multi(const struct speedscope_part *parts, size_t n,
			    const struct run_info *ri, FILE *out);
int export_report_json(const struct profile *p, const struct run_info *ri, FILE *out);
/* The same in steps, for the recorder, which writes report.json first and
 * again at the end: the tree (module sections included, through
 * ri->extend_report); its text; output.files and output.complete set again
 * from ri; and the tree without its large sections (the flame graphs, the
 * RSS timeline, the per-thread lists, the BPF program details), for a disk
 * too full for the whole: output.compact true, output.left_out names them.
 * Return 0 or -errno. report_json_build hands the tree over even when a
 * module's section failed (modules may point into it until their files
 * are written): the caller deletes *out in any case. */
int report_json_build(const struct profile *p, const struct run_info *ri, cJSON **out);
int report_json_print(const cJSON *root, FILE *out);
int report_json_set_output(cJSON *root, const struct run_info *ri);
int report_json_compact(cJSON *root);
bool report_json_is_compact(const cJSON *root);
/* Chrome Trace Event JSON: process names, then whatever events_fn appends
 * (comma-separated objects; *first says whether a comma is needed). */
typedef int (*trace_events_fn)(void *ctx, FILE *out, bool *first);
int export_trace_json(const struct run_info *ri, trace_events_fn events_fn, void *ctx, FILE *out);
/* Human summary: top 10 functions, samples, drops, where files went. */
void print_summary(const struct profile *p, const struct run_info *ri, FILE *out);

#endif
