/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Memory of traced processes over a run: RSS from kmem/rss_stat (through
 * bpf/sysmon.bpf.c), VM size and page faults sampled from /proc, peak RSS,
 * OOM kills. This part is pure bookkeeping plus the /proc text parsers; the
 * recording glue lives in sysmon_module.c. Schema: docs/report-schema.md.
 */
#ifndef EBPF_PROF_MEMORY_H
#define EBPF_PROF_MEMORY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proc/pid_index.h"

/* Timeline points kept; when full, every second point is dropped (the peak
 * is tracked apart, so it survives). */
#define MEM_TIMELINE_CAP 4096
#define MEM_MAX_OOM	 64
/* report.json lists every live process and this many exited ones (the
 * largest peaks); the others are counted: a fork storm's children would be
 * tens of MB of JSON. */
#define MEM_MAX_EXITED_LISTED 1000

struct mem_sample {
	uint64_t ts_ns;
	uint32_t pid;
	int64_t rss; /* bytes, -1 unknown */
	int64_t vm;  /* bytes, -1 unknown */
};

struct mem_proc {
	uint32_t pid;
	int64_t rss, vm;  /* latest, -1 unknown */
	int64_t peak_rss; /* max over the kernel's peak and /proc readings */
	uint64_t peak_ts_ns;
	int64_t peak_vm;
	int64_t hwm;			 /* /proc VmHWM, -1 unknown */
	int64_t anon, file, shmem, swap; /* latest rss_stat members, -1 unknown */
	uint64_t minflt, majflt;	 /* /proc/PID/stat, latest reading */
	bool faults_ok;
	bool exited;
	uint64_t rss_events;	   /* rss_stat events received */
	uint32_t mm_id;		   /* rss_stat mm_id of the current image, 0 unknown */
	unsigned execs;		   /* images replaced during the run */
	int64_t pre_exec_peak_rss; /* highest RSS of earlier images, -1 none */
	/* rss_stat members reported non-zero for this image (1 file, 2 anon):
	 * tracking that starts mid-run (--pid) has the other members at 0
	 * until they change, and their sum is no RSS yet. */
	unsigned seen;
	/* CLOCK_MONOTONIC when a child was followed during the run; 0 for a
	 * process named or launched (sysmon_module.c). */
	uint64_t added_ns;
};

struct mem_oom {
	uint64_t ts_ns;
	uint32_t pid;
	char comm[32];
	int64_t total_vm_kb, anon_rss_kb, file_rss_kb, shmem_rss_kb;
};

struct memstate {
	struct mem_proc *procs;
	size_t nprocs, cap_procs;
	struct pid_index pidx; /* pid -> procs[] */
	struct mem_sample *tl;
	size_t ntl, tl_cap;
	unsigned stride, skip; /* keep every stride-th point after halving */
	struct mem_oom ooms[MEM_MAX_OOM];
	size_t nooms, ooms_dropped;
	int64_t total_ram;   /* bytes, -1 unknown */
	bool rss_tracepoint; /* rss_stat attached */
	bool rss_raw;	     /* ... as a raw (tp_btf) tracepoint, not the classic one */
	bool oom_tracepoint; /* mark_victim attached */
	uint64_t rss_step;   /* coalescing step of the BPF side (bytes) */
	unsigned sample_period_ms;
};

int mem_init(struct memstate *m, size_t tl_cap);
void mem_free(struct memstate *m);
struct mem_proc *mem_proc(struct memstate *m, uint32_t pid, bool create);
/* sizes: rss_stat members in bytes (file, anon, swap, shmem); peak: kernel-side peak. */
void mem_on_rss(struct memstate *m, uint64_t ts, uint32_t pid, uint32_t mm_id,
		const int64_t sizes[4], int64_t peak);
/* The process exec'd: figures restart for the new image; earlier timeline
 * points of pid are dropped (in launch mode they are the profiler's own
 * pre-exec fork). The old peak is kept as pre_exec_peak_rss. */
void mem_on_exec(struct memstate *m, uint64_t ts, uint32_t pid);
/* A /proc reading; any of vm/rss/hwm may be -1 (unknown). */
void mem_on_proc(struct memstate *m, uint64_t ts, uint32_t pid, int64_t vm, int64_t rss,
		 int64_t hwm, bool faults_ok, uint64_t minflt, uint64_t majflt);
void mem_on_oom(struct memstate *m, const struct mem_oom *o);

/* /proc/PID/statm: size and resident in pages -> bytes. -EINVAL on garbage. */
int mem_parse_statm(const char *text, long page_size, int64_t *vm, int64_t *rss);
/* /proc/PID/stat: minflt (field 10) and majflt (field 12), comm may hold
 * spaces and parentheses. -EINVAL on garbage. */
int mem_parse_stat_faults(const char *text, uint64_t *minflt, uint64_t *majflt);
/* /proc/PID/status VmHWM in bytes; -ENOENT if absent, -EINVAL on garbage. */
int mem_parse_status_hwm(const char *text, int64_t *hwm);

/* The "memory" section; t0 = run start (timeline times are relative). */
cJSON *mem_report_json(const struct memstate *m, uint64_t t0);
/* RSS/VM counter tracks (MiB) under each process. */
int mem_trace_events(const struct memstate *m, FILE *out, bool *first);

#endif
