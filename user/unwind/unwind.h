/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * User stack unwinding from a sample's registers and a copy of the top of its
 * user stack, with elfutils libdw's CFI unwinder (.eh_frame / .debug_frame;
 * libdw itself falls back to the frame-pointer chain for a frame without
 * CFI). Uses the symbolizer's per-pid Dwfl: one libdwfl session per process,
 * never one per sample. Not thread-safe, like the symbolizer. See
 * docs/unwinding.md.
 */
#ifndef EBPF_PROF_UNWIND_H
#define EBPF_PROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;
struct unwinder;

/* What the BPF side captured: registers at the sample and the stack bytes
 * [sp, sp + stack_len). Outside input: any value may be garbage. */
struct unwind_input {
	uint32_t pid;
	uint64_t ip, sp, fp;
	const void *stack;
	size_t stack_len;
};

enum unwind_status {
	UNWIND_COMPLETE = 0,  /* reached the outermost frame (_start, clone) */
	UNWIND_TRUNCATED = 1, /* needed stack beyond the copied window */
	UNWIND_DEPTH = 2,     /* more frames than the caller's buffer */
	UNWIND_ERROR = 3,     /* no CFI nor frame pointer, bad registers, garbage */
};

/* Frames of one unwound stack, leaf first. addrs[i] is ready to symbolize:
 * return addresses already have 1 subtracted (the call site), the
 * interrupted pc and the pc a signal interrupted are exact. */
struct unwind_result {
	uint32_t n;
	enum unwind_status status;
};

int unwinder_new(struct unwinder **out, struct symbolizer *sym);
void unwinder_free(struct unwinder *u);

/* Unwinds in into addrs (room for max entries, max >= 1). Returns 0 with res
 * filled (maybe 0 frames, status says why), or a negative errno for failures
 * of the unwinder itself (-ENOMEM). Never loops: at most max frames. */
int unwinder_unwind(struct unwinder *u, const struct unwind_input *in, uint64_t *addrs,
		    uint32_t max, struct unwind_result *res);

const char *unwind_status_name(enum unwind_status st);

#endif
