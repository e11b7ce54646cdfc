/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The aggregated CPU profile: interned frames, deduplicated stacks and, per
 * thread, the chronological sequence of samples. Pure data: no BPF, no I/O.
 * Every exporter reads only this model.
 */
#ifndef EBPF_PROF_PROFILE_H
#define EBPF_PROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_COMM_LEN 16
/* 65536 runs of 16 bytes: 1 MiB per profile, the most a long run's
 * timeline adds to the collector's memory. A run starts at most every
 * sample: at 199 Hz a busy thread reaches it after 5.5 minutes (a Python +
 * llama.cpp experiment at a third of a CPU after 15); 8 busy threads at
 * 999 Hz after 8 s. */
#define PROF_MAX_RUNS_DEFAULT (1u << 16)

/* A symbolized frame, interned: identical (name, module, kernel) share one
 * index. */
struct prof_frame {
	char *name;   /* "func", or "[unknown] libfoo.so+0x1a2b" */
	char *module; /* path of the ELF file, "[kernel.kallsyms]", or NULL */
	bool kernel;
};

/* A deduplicated stack of frame indices, root (outermost) first. */
struct prof_stack {
	uint32_t *frames;
	uint32_t depth;
	uint32_t nkernel; /* how many of the leaf-most frames are kernel frames */
	uint64_t count;	  /* samples with this stack, all threads */
};

/* Consecutive samples of one thread with the same stack are merged. */
struct prof_run {
	uint64_t first_ts_ns;
	uint32_t stack;
	uint32_t count;
};

struct prof_thread {
	uint32_t pid;
	uint32_t tid;
	char comm[PROF_COMM_LEN];
	uint64_t samples;
	uint64_t first_ts_ns, last_ts_ns;
	struct prof_run *runs;
	size_t nruns, cap_runs;
};

enum prof_drop {
	PROF_DROP_RINGBUF_FULL,	   /* kernel could not queue the sample */
	PROF_DROP_USER_STACK,	   /* user stack could not be read */
	PROF_DROP_KERN_STACK,	   /* kernel stack could not be read */
	PROF_DROP_TARGET_MAP_FULL, /* child process not followed */
	PROF_DROP_EVENT_LOST,	   /* fork/exit notice lost */
	PROF_DROP_COLLECTOR,	   /* collector could not process (e.g. ENOMEM) */
	PROF_DROP_UNREAD,	   /* queued, not read in the bounded drain at stop */
	PROF_DROP_RATE_LIMITED,	   /* -F above the tick limit (overload/tick_guard.h) */
	PROF_DROP__COUNT
};

struct prof_func_stat {
	uint32_t frame; /* index into frames */
	uint64_t self;	/* samples where it is the leaf */
	uint64_t total; /* samples where it appears anywhere (once per sample) */
};

struct profile {
	uint64_t period_ns; /* 1e9 / freq: weight of one sample */
	uint32_t freq_hz;
	/* 0: a thread's consecutive samples with one stack always form one
	 * run. Else only while less than this apart, so that a run does not
	 * span a pause (a cycle boundary after a sleep: the pprof export
	 * places a run in the cycle of its first sample). */
	uint64_t run_gap_ns;
	/* What a count times period_ns measures in the speedscope export:
	 * NULL for time ("nanoseconds"), "bytes" for allocation profiles
	 * (period_ns 1). */
	const char *unit;
	/* The timeline's bound: when the runs of all threads reach this many
	 * (0: PROF_MAX_RUNS_DEFAULT), the older ones are merged per thread into
	 * time buckets (one run per stack per bucket), the newer half kept
	 * exact where that is enough (profile.c, compact_runs). Per-thread and per-stack counts stay
	 * exact; what coarsens is the order of samples in time (speedscope's
	 * time order, the cycle a pprof sample is labelled with). Without it a
	 * long attach grows by 16 bytes per sample: ~190 KB a minute at 199 Hz. */
	size_t max_runs;

	struct prof_frame *frames;
	size_t nframes, cap_frames;
	struct prof_stack *stacks;
	size_t nstacks, cap_stacks;
	struct prof_thread *threads;
	size_t nthreads, cap_threads;

	uint64_t total_samples;
	uint64_t kernel_samples; /* samples taken while in the kernel */
	uint64_t user_samples;	 /* samples taken in user mode */
	uint64_t drops[PROF_DROP__COUNT];

	/* The timeline (see max_runs): runs held now, and once merged, the
	 * bucket width (0: every run as recorded) and how many merges ran. */
	size_t total_runs;
	uint64_t bucket_ns;
	uint64_t merged_until_ns; /* runs starting before it may be merged */
	uint32_t compactions;

	/* private: hash indexes, managed by profile.c */
	void *frame_index;
	void *stack_index;
	void *thread_index;
	void *frame_memo; /* profile_intern_frame_stable's, allocated on first use */
};

int profile_init(struct profile *p, uint32_t freq_hz);
void profile_free(struct profile *p);

/* Returns the frame index (>= 0) or -ENOMEM. Strings are copied. */
int64_t profile_intern_frame(struct profile *p, const char *name, const char *module, bool kernel);
/* profile_intern_frame for strings that stay valid and unchanged for the
 * profile's lifetime (the symbolizer's interned names): remembered by
 * address, so a frame seen again costs no hashing of its text. */
int64_t profile_intern_frame_stable(struct profile *p, const char *name, const char *module,
				    bool kernel);

/* Finds or creates the thread (pid, tid); updates comm when non-NULL.
 * Returns the thread index or -ENOMEM. */
int64_t profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *comm);

/* Adds one sample. frames: root first; the last nkernel are kernel frames.
 * in_kernel: the sample interrupted kernel mode. Returns 0 or -errno. */
int profile_add_sample(struct profile *p, uint32_t thread, uint64_t ts_ns, const uint32_t *frames,
		       uint32_t depth, uint32_t nkernel, bool in_kernel);

/* Adds weight units of time for one stack (e.g. an off-CPU episode in a
 * profile whose period_ns is the unit): like profile_add_sample with a
 * count of weight, in_kernel not counted. Returns 0 or -errno. */
int profile_add_weighted(struct profile *p, uint32_t thread, uint64_t ts_ns, const uint32_t *frames,
			 uint32_t depth, uint32_t nkernel, uint64_t weight);

/* Per-function self/total counts, sorted by self desc, then total desc,
 * then name. *out is malloc'ed (caller frees). Returns 0 or -ENOMEM. */
int profile_func_stats(const struct profile *p, struct prof_func_stat **out, size_t *n);

const char *profile_drop_name(enum prof_drop d);

#endif
