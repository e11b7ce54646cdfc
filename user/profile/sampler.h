/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loads and attaches the CPU-sampling BPF programs (bpf/profile.bpf.c) and
 * drains their ring buffer. Knows nothing about symbols or outputs.
 */
#ifndef EBPF_PROF_SAMPLER_H
#define EBPF_PROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events/profile.h"

struct sampler;

struct vstat;

struct sampler_opts {
	uint32_t freq_hz;
	bool kernel_stacks;
	/* User stack bytes copied per sample with the user registers, for
	 * CFI unwinding in the collector; 0: frame pointers only. */
	uint32_t stack_bytes;
	/* User stacks walked in the kernel from CFI tables (bpf/uwalk.h);
	 * stack_bytes is then 0. */
	bool kwalk;
	/* Walk CPython frames of the processes registered in the py_procs map
	 * (bpf/pyframes.bpf.h); needs bpf_loop, else off with a warning. */
	bool python;
	/* Kernel BTF for CO-RE when the kernel has none (--btf); NULL: the
	 * kernel's own. */
	const char *btf_path;
	/* The kernel's BPF features (kernel/kfeat.h). */
	const struct kfeat *kf;
	/* Where the verifier's figures of the programs go (kernel/vstat.h);
	 * NULL: not kept. */
	struct vstat *vs;
	/* Tests: the program the kernel is made to refuse; NULL in runs. */
	const char *fault_prog;
};

/* The in-kernel walker's maps, for user/unwind/ktables.c and for the other
 * BPF objects that walk user stacks (bpf_map__reuse_fd). */
struct sampler_uw_fds {
	int objs, blk_pc, procs;
};

/* Receives each record from the ring buffer (struct ep_sample or
 * struct ep_task_event, by hdr.type). Return 0 to continue. */
typedef int (*sampler_event_fn)(void *ctx, const void *data, size_t size);

/* Opens and loads the programs. On failure logs why (with a hint) and
 * returns -errno. */
int sampler_open(struct sampler **out, const struct sampler_opts *opts, sampler_event_fn fn,
		 void *ctx);
/* Whether user stacks are walked in the kernel (opts.kwalk, unless the
 * kernel refused the walking program and its twin took over). */
bool sampler_kwalk(const struct sampler *s);
/* Adds a process (tgid) to the in-kernel filter. */
int sampler_add_target(struct sampler *s, uint32_t pid);
/* The tgid filter map, for other BPF objects to share (bpf_map__reuse_fd). */
int sampler_targets_fd(const struct sampler *s);
/* The ring the recorder thread waits on (sampler_poll), for other BPF
 * objects to wake it (bpf_map__reuse_fd). */
int sampler_events_fd(const struct sampler *s);
/* Opens a cpu-clock perf event per online CPU and attaches everything. */
int sampler_attach(struct sampler *s);
/* Waits up to timeout_ms for a wakeup, then drains what is queued, for at
 * most a few tens of milliseconds (overload/rb_budget.h): under overload
 * the rest stays in the ring, and what does not fit there is dropped and
 * counted by the BPF side. Returns the number of records handled or -errno. */
int sampler_poll(struct sampler *s, int timeout_ms);
/* Stops sampling (the perf events), then drains what is queued for at most
 * budget_ns; records still queued after that are thrown away and counted in
 * *unread. Returns the records handled or -errno. */
int sampler_stop(struct sampler *s, uint64_t budget_ns, uint64_t *unread);
/* The last poll stopped on its time budget: records are waiting. */
bool sampler_behind(const struct sampler *s);
/* Polls that stopped on their time budget: the collector fell behind. */
uint64_t sampler_polls_cut_short(const struct sampler *s);
/* Sums the per-CPU drop counters kept by the BPF side. */
int sampler_read_drops(struct sampler *s, uint64_t out[EP_DROP__COUNT]);
/* The Python walk's maps (bpf/pyframes.bpf.h): per-process layouts,
 * per-CPU counters (EP_PY_ST__COUNT). -1 when the walk is off. */
int sampler_py_procs_fd(const struct sampler *s);

/* The count of executable mappings traced processes made (bpf/profile.bpf.c
 * mmap_exec_gen, raised before each EP_EV_MMAP_EXEC), in the program's
 * memory-mapped data: NULL without --unwind cfi-kernel. */
const volatile uint64_t *sampler_mmap_gen(const struct sampler *s);
int sampler_py_tstates_fd(const struct sampler *s);
int sampler_py_stats_fd(const struct sampler *s);
/* Hands the sampler's BPF links over (overload/links.h) for release in
 * the background; after sampler_stop. sampler_close then closes the rest
 * (the perf events themselves: no samples after the links are gone). */
struct link_list;
void sampler_take_links(struct sampler *s, struct link_list *out);
void sampler_close(struct sampler *s);
/* The in-kernel walker's time (ns), walks and frames, summed over CPUs. */
int sampler_read_uw_stats(struct sampler *s, uint64_t out[3]);
/* The walker's map fds (valid until sampler_close). */
void sampler_get_uw_fds(const struct sampler *s, struct sampler_uw_fds *out);

#endif
