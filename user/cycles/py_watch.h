/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * py:FUNCTION cycles by watchpoint: a hardware write watchpoint on the
 * reference count of FUNCTION's code object in every thread of a target,
 * each running bpf/cycles.bpf.c `cycle_watch`, which turns the count's
 * ups and downs into calls and returns (docs/cycles.md, "py:FUNCTION").
 * Only FUNCTION's calls trap, where CPython's USDT points trap at every
 * Python call. The code object's address comes from the Python frames of
 * the CPU samples (pyframes_on_code).
 *
 * The events are per thread and inherited: threads (and processes) that a
 * watched thread starts later are watched too.
 */
#ifndef EBPF_PROF_PY_WATCH_H
#define EBPF_PROF_PY_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_program;
struct py_watch;

struct py_watch_cfg {
	const char *proc_root;	  /* NULL = "/proc" */
	struct bpf_program *prog; /* cycle_watch */
	int rc_map_fd;		  /* cycle_watch_rc */
};

int py_watch_new(struct py_watch **out, const struct py_watch_cfg *cfg);
/* Destroys every watchpoint and frees w (NULL is fine). */
void py_watch_free(struct py_watch *w);

/* Watches the code object at addr in pid: seeds its count and arms a
 * watchpoint in each of pid's threads. Returns the number of threads
 * watched (> 0) or a negative errno: -EAGAIN (its count is below 2: the
 * function is not defined yet, call again later), -EEXIST (already
 * watched), -E2BIG
 * (EP_CYC_WATCH_PER_PID objects in pid already), -ENOSPC (the threads'
 * debug registers are taken: a debugger's watchpoints), -EOPNOTSUPP (no
 * hardware breakpoints: some virtual machines), -ESRCH (pid gone), or the
 * perf_event_open / attach error. why (may be NULL) says what failed. */
int py_watch_arm(struct py_watch *w, uint32_t pid, uint64_t addr, char *why, size_t whylen);

/* pid exited: close its events. */
void py_watch_forget_pid(struct py_watch *w, uint32_t pid);

/* Objects watched, threads watched (events opened) in all. */
void py_watch_counts(const struct py_watch *w, size_t *objects, size_t *threads);

#endif
