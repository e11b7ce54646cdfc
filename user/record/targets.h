/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run's targets (run_info.targets): the processes named with --pid or
 * launched, and every process they fork while recorded. They come and go
 * with the CPU sampler's task events; /proc is the backstop for a lost exit
 * event and for the launched command's zombie.
 */
#ifndef EBPF_PROF_TARGETS_H
#define EBPF_PROF_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

struct recorder;
struct report_target;

/* --pid values, checked, as processes, into pids (deduplicated, at most
 * CLI_MAX_PIDS). Returns 0, -ESRCH (no such process, or a zombie) or
 * -EINVAL (a kernel thread), logged. */
int targets_resolve_pids(const struct cli_opts *o, uint32_t *pids, int *npids);
struct report_target *targets_find(struct recorder *r, uint32_t pid);
/* Adds a target (parent 0: a root target, named from /proc; else a fork,
 * named comm). Returns 0 (also when known already) or -ENOMEM. */
int targets_add(struct recorder *r, uint32_t pid, uint32_t parent, const char *comm);
/* A main thread's name in a sample: the backstop should the exec event be
 * lost (force: the exec event itself, which re-reads the command line). */
void targets_refresh_after_exec(struct recorder *r, uint32_t pid, const char *comm, bool force);
/* The CPU sampler's task events (cpu_samples_ops.task_event): the targets,
 * the modules, the symbolizer and the unwinding tables follow the
 * processes. Always returns 0. */
int targets_on_task_event(void *ctx, const void *data, size_t size);
/* Every poll: reaps the launched command once its exit went through the
 * modules, and (every LIVENESS_PERIOD_NS) marks the targets found gone in
 * /proc as exited. */
void targets_check_liveness(struct recorder *r, uint64_t now);
/* At stop: the launched command's exit status for the report, when it has
 * exited or (after a signal) exits within a moment. */
void targets_reap_child(struct recorder *r);
void targets_free(struct recorder *r);

#endif
