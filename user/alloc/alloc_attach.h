/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding the allocator in a traced process and putting the probes of
 * bpf/alloc.bpf.c on it (docs/alloc.md, "What is probed").
 */
#ifndef EP_ALLOC_ATTACH_H
#define EP_ALLOC_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/uprobe_target.h"

struct bpf_program;

/* enum bpf_attach_type's BPF_TRACE_UPROBE_SESSION (kernel 6.13), which
 * Debian 12's headers and libbpf 1.1 predate. */
#define EP_BPF_TRACE_UPROBE_SESSION 57

struct alloc_target {
	uint32_t pid;
	bool exited;
	char comm[17];
	struct uprobe_target ut;
	int *sess_fds; /* uprobe session links (raw fds: libbpf 1.1 has no API) */
	size_t nsess, capsess;
};

/* The programs and what the attaches found. */
struct alloc_probes {
	const struct bpf_program *entry, *ret, *free_prog;
	int session_fd; /* the session program's fd; -1: entry + ret instead */
	const char *proc_root;
	uint64_t nlinks;
	char probed[8][128]; /* files probed (the first few), for the report */
	size_t nprobed;
};

/* Reads t's maps and comm and probes the allocator in every executable
 * file not seen before in t. Failures are logged, not returned: a process
 * that went away is seen exiting, an attach that fails costs that probe. */
void alloc_scan_target(struct alloc_probes *m, struct alloc_target *t);
/* Detaches every probe of t. */
void alloc_target_detach(struct alloc_target *t);
/* Detaches every probe of t and frees what it holds (for
 * uprobe_targets_free). */
void alloc_target_free(void *t);

#endif
