/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording modules' BPF programs (bpf/sched, sysmon, probes, cycles)
 * are linked into one object, modules.skel.h: libbpf reads and parses the
 * kernel's BTF (~5 MB) once per object it loads, and four objects paying
 * it was a quarter of the collector's CPU time (docs/performance.md).
 *
 * A module's part of that object is the programs and maps whose names
 * start with its prefix ("sched_", "sm_", "probe_", "cycle_"); the rest
 * (`targets`, libbpf's USDT maps, .rodata/.bss) is shared. Parts are
 * loaded together; when that fails (a kernel without something one part
 * needs), each part is loaded alone in its own copy of the object, so one
 * part's failure costs that part only, as with separate objects.
 */
#ifndef EBPF_PROF_BPF_PARTS_H
#define EBPF_PROF_BPF_PARTS_H

#include <stdbool.h>
#include <stddef.h>

struct modules_bpf;
struct vstat;

struct bpf_part {
	const char *prefix;
	/* Before load, with the part's programs and maps on: configure them
	 * in skel (rodata, map sizes, autoload of single programs). Return 1
	 * to take part, 0 not to (the part is turned off again). Called once
	 * per object the part goes into: twice when the shared load failed. */
	int (*setup)(void *state, struct modules_bpf *skel);
	/* After load: skel holds the part, loaded; or skel is NULL and err
	 * says why the part could not be loaded alone. Return 0 to go on, a
	 * negative errno (logged) to end the run. */
	int (*loaded)(void *state, struct modules_bpf *skel, int err);
	/* Optional. The kernel refused prog, a program of the part loaded
	 * alone: remember to leave it out at the next setup (taking a twin
	 * that needs less of the kernel), and return what the run loses
	 * ("off-CPU user stacks by frame pointers, no Python frames"); NULL
	 * when the part cannot go on without it. The text is copied at once
	 * (it may live in state, rewritten at the next call). */
	const char *(*refused)(void *state, const char *prog);
	/* What the part is, for messages ("scheduler view"). */
	const char *what;
	void *state;
};

/* The objects bpf_parts_load made, closed after the modules are. */
struct bpf_parts_objs {
	struct modules_bpf *obj[8];
	size_t n;
};

/* Loads parts[0..n) (n <= 8: one object per part at most) and calls each
 * part's loaded hook. A part that fails alone is loaded again without the
 * program the kernel refused, as long as its refused hook can do without
 * it (degradation by program, not by module; each one noted in vs and
 * said in one line once the part is in; a part lost in the end gets one
 * line for the program it could not do without). A part whose prefix is
 * fault_prefix is made to fail to load (tests exercise the fallback with
 * it; "PREFIX:PROGRAM[,PROGRAM...]" refuses those programs alone, one
 * more at each load); NULL in normal runs. The verifier's figures of
 * every program go to vs. Returns 0 or the first negative errno a loaded
 * hook returned. */
int bpf_parts_load(const struct bpf_part *parts, size_t n, int targets_fd, const char *btf_path,
		   const char *fault_prefix, struct bpf_parts_objs *objs, struct vstat *vs);
void bpf_parts_close(struct bpf_parts_objs *objs);

#endif
