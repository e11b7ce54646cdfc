/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line parsing for the recording command. Pure: no I/O besides the
 * usage text, so it is unit-tested directly. */
#ifndef EBPF_PROF_CLI_H
#define EBPF_PROF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_MAX_PIDS	 64
#define CLI_DEFAULT_FREQ 99
/* kernel.perf_event_max_sample_rate defaults to 100000 at most. */
#define CLI_MAX_FREQ 100000
/* See docs/jetson.md for the measured cost behind this default. */
#define CLI_DEFAULT_GPU_INTERVAL_MS 200
/* --probe may be repeated this many times. */
#define CLI_MAX_PROBES 32
/* See docs/performance.md (sched) for the measurements behind it. */
#define CLI_DEFAULT_OFFCPU_MIN_US	1000
#define CLI_MAX_OFFCPU_MIN_US		60000000
#define CLI_DEFAULT_OFFCPU_USTACK_EVERY 0
/* User stack window copied per sample for CFI unwinding (docs/unwinding.md
 * has the measurements behind the default). A multiple of 64 bytes. */
#define CLI_DEFAULT_STACK_BYTES 8192
#define CLI_MAX_STACK_BYTES	16384 /* EP_MAX_STACK_BYTES */
/* --alloc: one sampled allocation per this many bytes on average
 * (docs/alloc.md; tcmalloc's and jemalloc's heap profilers default to
 * 512 KiB too). */
#define CLI_DEFAULT_ALLOC_RATE	   (512u << 10)
#define CLI_MAX_ALLOC_RATE	   (1u << 30)
#define CLI_DEFAULT_ALLOC_MAX_LIVE 65536 /* EP_ALLOC_MAX_LIVE */

enum cli_unwind {
	CLI_UNWIND_AUTO = 0, /* CFI where the module has it, frame pointers otherwise */
	CLI_UNWIND_DWARF,    /* CFI (libdw) only, no fallback to the kernel's walk */
	CLI_UNWIND_FP,	     /* frame pointers only (bpf_get_stack), no stack copy */
	CLI_UNWIND_KERNEL,   /* walked in the kernel from CFI tables (bpf/uwalk.h) */
};

enum cli_python {
	CLI_PYTHON_NATIVE = 0, /* the interpreter's C frames only */
	CLI_PYTHON_MIXED,      /* Python frames in place of _PyEval_EvalFrameDefault */
	CLI_PYTHON_ONLY,       /* and without the interpreter's C frames between them */
};

/* --alert may be repeated this many times (docs/top.md). */
#define CLI_MAX_ALERTS 16

/* Probe spans kept for trace.json: ~140 bytes of JSON and 48 of memory
 * each, so 27 MB of file by default, which Perfetto and chrome://tracing
 * open; a hot probe makes a million in seconds (134 MB of trace.json in 8 s). */
#define CLI_DEFAULT_TRACE_MAX_SPANS 50000
#define CLI_MAX_TRACE_MAX_SPANS	    4000000

struct check_result;

struct cli_opts {
	uint32_t pids[CLI_MAX_PIDS];
	int npids;
	char **command; /* argv after "--", NULL-terminated; points into argv */
	int ncommand;
	uint32_t freq_hz;
	double duration_s;	/* 0: until stopped */
	const char *output_dir; /* NULL: default name */
	bool force;		/* --force: -o may name a directory that is not empty */
	bool kernel_stacks;
	bool no_demangle;	/* --no-demangle: raw symbol names */
	enum cli_unwind unwind; /* --unwind */
	bool unwind_given;	/* --unwind on the command line (not the default) */
	uint32_t stack_bytes;	/* --stack-bytes */
	enum cli_python python; /* --python */
	bool python_given;	/* --python on the command line */
	int verbosity;		/* -1 quiet, 0 normal, 1+ verbose */
	bool show_help;
	bool show_version;
	const char *proc_root;	  /* hidden testing hook: --proc-root */
	const char *sysfs_root;	  /* --sysfs-root: read sysfs (Jetson) under DIR */
	uint32_t gpu_interval_ms; /* Jetson sampler period */
	bool no_gpu;
	const char *btf_path;  /* --btf: kernel BTF for kernels without /sys/kernel/btf/vmlinux */
	bool no_sched;	       /* no scheduler accounting (sched_switch) */
	bool no_offcpu_stacks; /* sched accounting without off-CPU stacks */
	uint32_t trace_max_spans;     /* --trace-max-spans */
	uint32_t offcpu_min_us;	      /* shortest off-CPU episode reported with its stack */
	uint32_t offcpu_ustack_every; /* user stack walked at 1 in N blocking switch-outs
				       * besides the predicted ones (0..255; 0: none) */
	const char *probe_presets;    /* --probes; NULL: llama,sqlite */
	const char *probe_specs[CLI_MAX_PROBES]; /* --probe, in order */
	int nprobe_specs;
	const char *probe_count_only;	    /* --probe-count-only SYM[,SYM...] */
	bool top;			    /* --top or "ebpf-prof top": live view (docs/top.md) */
	double interval_s;		    /* live view / snapshot refresh period */
	const char *alerts[CLI_MAX_ALERTS]; /* --alert EXPR, validated */
	int nalerts;
	const char *alert_exec;	  /* --alert-exec CMD */
	const char *cycle;	  /* --cycle or --cycle-every PROBE, validated; NULL: auto */
	bool cycle_every;	  /* it was --cycle-every */
	const char *metrics_addr; /* --metrics ADDR:PORT, validated; NULL: no endpoint */
	double rotate_s;	  /* --rotate: continuous mode interval; 0: off */
	int keep;		  /* --keep: rotated intervals kept (default 10) */
	bool alloc;		  /* --alloc: allocation sampling (docs/alloc.md) */
	uint32_t alloc_rate;	  /* --alloc-rate BYTES: mean bytes between samples */
	uint32_t alloc_max_live;  /* --alloc-max-live N: sampled blocks tracked at once */
	/* `ebpf-prof check` (kernel/check_cmd.h): load and attach everything a
	 * run would, record nothing, and hand the verifier's figures and the
	 * kernel's features here. NULL in a recording. */
	struct check_result *check;
};

/* Whether modules keep struct live_metrics (top_live.h) up to date: the
 * live view, the alerts and the metrics endpoint read it. */
static inline bool cli_live_wanted(const struct cli_opts *o)
{
	return o->top || o->nalerts || o->metrics_addr;
}

/* Returns 0 on success or 2 (usage error, message already printed to err). */
int cli_parse(int argc, char **argv, struct cli_opts *o, FILE *err);
void cli_usage(FILE *out);

#endif
