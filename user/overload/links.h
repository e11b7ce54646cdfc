/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Detaching several BPF links at once. Destroying a link attached through a
 * perf tracepoint waits for the kernel's tracepoint grace periods
 * (tracepoint_synchronize_unregister): ~75 ms each on our 6.18 VM, so the
 * system monitor's eight tracepoints took 600 ms of every stop, more than
 * anything else in it (issue 17: stop < 1 s). Waits from several threads
 * overlap, so the links are destroyed in parallel.
 */
#ifndef EBPF_PROF_LINKS_H
#define EBPF_PROF_LINKS_H

#include <bpf/libbpf.h>
#include <stddef.h>

/* Destroys links[0..n) (NULL entries skipped) and sets them to NULL. */
void links_destroy_parallel(struct bpf_link **links, size_t n);

#endif
