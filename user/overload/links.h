/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Detaching several BPF links at once. Destroying a link attached through a
 * perf event (a tracepoint, a uprobe) waits for the kernel's grace periods
 * (tracepoint_synchronize_unregister, uprobe registration's
 * synchronize_rcu): ~75 ms each on our 6.18 VM when quiet, 0.1-1.3 s each
 * under load (a fork storm beside other sessions' BPF tests);
 * raw tracepoint (tp_btf) links go at once. Several threads overlap what
 * the kernel lets overlap (much of it runs under its event_mutex, one link
 * after the other), and the release as a whole runs beside the outputs:
 * links_reaper_start.
 */
#ifndef EBPF_PROF_LINKS_H
#define EBPF_PROF_LINKS_H

#include <bpf/libbpf.h>
#include <stddef.h>

/* Destroys links[0..n) (NULL entries skipped) and sets them to NULL. */
void links_destroy_parallel(struct bpf_link **links, size_t n);

/* Links handed over at the end of a run, to be destroyed together in the
 * background while the outputs are written: on a loaded machine one
 * uprobe or perf tracepoint release waited 0.4-6 s, and the
 * outputs need no link gone, only the data drained. */
struct links_reaper;

struct link_list {
	struct bpf_link **v;
	size_t n, cap;
};

/* Adds link (NULL: nothing). Without memory it is destroyed at once, so
 * the caller holds it no longer either way. */
void link_list_push(struct link_list *l, struct bpf_link *link);

/* Starts the release of l's links; l is left empty. The links' last
 * references go to a child process, which drops them once this process
 * has dropped its own (at once: no kernel wait here) and exits, the
 * kernel's release running there: the collector exits without waiting for
 * it, and the probes stay attached (disabled: perf events are disabled by
 * the destroy) for that long after. Without a child (fork failed), a
 * thread destroys them in parallel (links_destroy_parallel). NULL when
 * there was nothing to do or neither could be had (then they are
 * destroyed before return). */
struct links_reaper *links_reaper_start(struct link_list *l);
/* Waits for the thread if there is one and frees r (NULL: nothing); the
 * milliseconds this process spent on the release in *ms and the child's
 * pid (0: none) in *pid, each when not NULL. */
void links_reaper_join(struct links_reaper *r, double *ms, int *pid);

#endif
