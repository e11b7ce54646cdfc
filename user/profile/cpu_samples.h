/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The collector side of the CPU sampler (bpf/profile.bpf.c, loaded and
 * drained by sampler.c): each record of the sampler's ring goes into the
 * profile. A sample's user stack is unwound per the --unwind mode (the
 * collector's CFI unwinder, the kernel's walk, frame pointers), its frames
 * symbolized, merged with its Python frames and added to the profile; the
 * task events (fork, exec, mmap, exit) go to the owner, which keeps the
 * targets and tells the modules.
 *
 * Not a rec_module (rec_module.h) like the run's other data sources, and
 * on purpose: the sampler loads and attaches first and alone, before the
 * output directory is checked and before the modules load (each load parses
 * the kernel's BTF), so that a target is sampled ~25 ms after start instead
 * of ~110 ms; its maps (the tgid filter, the walker's, the Python walk's)
 * are what the modules' objects share through rec_ctx, so it exists before
 * their open; its ring's task events decide the targets every module
 * follows; its poll is the recording loop's wait, and its bounded drain at
 * stop comes before the modules stop. The hooks' order fits none of that.
 */
#ifndef EBPF_PROF_CPU_SAMPLES_H
#define EBPF_PROF_CPU_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "events/profile.h"
#include "events/python.h"
#include "events/unwind.h"

struct profile;
struct symbolizer;
struct unwinder;
struct ktables;
struct pyframes;
struct run_unwind;
struct tick_guard;
struct cycle_sink;
struct sampler;

/* What the owner does for the records that are not the profile's. */
struct cpu_samples_ops {
	/* Before each sample, with its time and (pid == tid) its main
	 * thread's name: the owner's figures that follow the samples (the
	 * first sample's time, --rotate intervals, which end in sample time,
	 * a target's name after an exec whose event was lost). Nonzero (a
	 * negative errno) drops the sample, counted. */
	int (*before_sample)(void *owner, uint32_t pid, uint32_t tid, uint64_t ts_ns,
			     const char *comm);
	/* A record that is not a sample nor a Python stack: the task events
	 * (EP_EV_FORK, EP_EV_EXEC, EP_EV_MMAP_EXEC, EP_EV_EXIT) and anything
	 * unknown, at least a header long. Returns 0 to go on draining. */
	int (*task_event)(void *owner, const void *data, size_t size);
};

struct cpu_samples_opts {
	/* The profile the samples go to; it may be freed and initialized
	 * again in place (--rotate): cpu_samples_profile_replaced. */
	struct profile *prof;
	struct symbolizer *sym;
	struct unwinder *uw; /* NULL: no unwinding in the collector */
	struct ktables *kt;  /* --unwind cfi-kernel; NULL otherwise */
	struct pyframes *py; /* NULL: no Python frames */
	enum cli_unwind unwind;
	/* The unwinding figures (report.json `unwind`), counted per stack. */
	struct run_unwind *st;
	/* The overload guard's tick rate: each sample stands for the ticks
	 * skipped around it (rate_limited). */
	struct tick_guard *tick;
	struct cycle_sink *cycles; /* NULL: no per-cycle table */
	const struct cpu_samples_ops *ops;
	void *owner;
};

struct cpu_samples {
	struct cpu_samples_opts o;
	/* private: one sample's frames, root first, and its user stack as
	 * addresses, leaf first */
	uint32_t frames[EP_MAX_STACK_DEPTH + EP_UW_MAX_FRAMES + 2 + EP_PY_MAX_FRAMES];
	uint64_t uaddrs[EP_UW_MAX_FRAMES];
	/* The marker frames' indices in the profile, -1 until first used. */
	int64_t unavailable_frame;
	int64_t truncated_frame;
	int64_t jit_frame;
	int64_t unknown_map_frame;
};

/* Takes what the samples go through; before the sampler's first poll (the
 * records arrive in sampler_poll and sampler_stop only). */
void cpu_samples_init(struct cpu_samples *cs, const struct cpu_samples_opts *o);
/* The sampler's record handler (sampler_event_fn); ctx is the
 * struct cpu_samples. A sample that cannot be added is counted as a
 * collector drop, not returned: one sample must not end the run. */
int cpu_samples_on_record(void *ctx, const void *data, size_t size);
/* The profile was freed and initialized again (--rotate): the marker
 * frames ([stack unavailable], [truncated], [jit], [unknown mapping]) are
 * interned anew. */
void cpu_samples_profile_replaced(struct cpu_samples *cs);
/* At stop, after sampler_stop: the BPF side's loss counters into the
 * profile's drops and the unwinding figures. */
void cpu_samples_collect_drops(struct cpu_samples *cs, struct sampler *s);
/* The sampler's losses so far, the kernel's counters and the collector's:
 * for the live view and --alert drops>0. Returns 0 or -errno of the read. */
int cpu_samples_drops_so_far(const struct cpu_samples *cs, struct sampler *s, uint64_t *sum);
/* Verbose only: how many samples of Python processes got Python frames,
 * and what the walk met. */
void cpu_samples_log_python(struct pyframes *py);

#endif
