/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The verifier's own figures for every BPF program a run loads: how many
 * instructions it processed against its limit, each subprogram's stack
 * depth, and the combined stack of the deepest call chain against the
 * 512-byte limit, with the margins ebpf-prof keeps (docs/design.md). The
 * verifier's accounting moves between kernel releases (6.18's counts
 * bpf_loop callbacks in the combined stack, older ones did not), so a
 * program that fits with nothing to spare on one kernel is refused on the
 * next: the margins are checked on the running kernel by `ebpf-prof check`
 * and by the tests, and every run lists the figures in report.json.
 *
 * Each program is loaded with the verifier's statistics log level (a few
 * lines; no per-instruction trace), so this costs nothing a run notices.
 */
#ifndef EBPF_PROF_VSTAT_H
#define EBPF_PROF_VSTAT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct bpf_insn;

/* The verifier's limits (MAX_BPF_STACK, BPF_COMPLEXITY_LIMIT_INSNS for a
 * privileged loader) and what ebpf-prof keeps free of each. */
#define VSTAT_STACK_LIMIT  512
#define VSTAT_STACK_MARGIN 64
#define VSTAT_INSNS_LIMIT  1000000
/* At most a fifth of the limit. */
#define VSTAT_INSNS_SHARE_MAX 5

#define VSTAT_MAX_SUBPROGS 64
#define VSTAT_NAME_LEN	   64
#define VSTAT_REASON_LEN   200

struct vstat_prog {
	char name[VSTAT_NAME_LEN];
	char object[32]; /* "profile", "modules", "alloc" */
	bool loaded;
	/* Not loaded, and the verifier said why (not just refused with the
	 * rest of its object). */
	bool refused;
	/* Not loaded by design: its module found the kernel without what it
	 * needs and went another way that loses nothing (reason says which). */
	bool skipped;
	int err; /* the load's negative errno when not loaded */
	/* The verifier's last word on a refused program ("combined stack size
	 * of 5 calls is 528. Too large"); empty when loaded. */
	char reason[VSTAT_REASON_LEN];
	/* -1 where the log did not say (an old kernel, a load that failed
	 * before verification). */
	int64_t insns, insns_limit, total_states, peak_states;
	int64_t verify_us;
	uint32_t nsub;
	uint16_t depth[VSTAT_MAX_SUBPROGS];
	bool have_depth;
	/* The deepest call chain's stack (vstat_stack_chains): as a JIT'ed
	 * program on the newest kernels, and as a kernel without JIT counts
	 * it; -1 unknown. */
	int stack_jit, stack_interp;
};

/* A program the kernel refused and what its module gave up for it. */
struct vstat_degraded {
	char program[VSTAT_NAME_LEN];
	char reason[VSTAT_REASON_LEN];
	char lost[VSTAT_REASON_LEN];
};

#define VSTAT_MAX_DEGRADED 16

struct vstat {
	/* One entry per program: a program loaded again (alone, after its
	 * object failed with another one) keeps its latest figures. */
	struct vstat_prog *v;
	size_t n, cap;
	struct vstat_degraded deg[VSTAT_MAX_DEGRADED];
	size_t ndeg;
	/* Per program log buffers of the object being loaded. */
	char **bufs;
	size_t nbufs;
};

/* Sets the statistics log level and a log buffer on every program of obj
 * that will load. Call right before the object's load, then vstat_collect
 * right after it, whatever it returned. NULL vs: nothing. Out of memory,
 * the programs load as they would without it (their figures unknown): the
 * figures never cost the run. */
void vstat_prepare(struct vstat *vs, struct bpf_object *obj);
/* Records the figures of obj's programs that were to load (load_err: what
 * the load returned), and frees the buffers vstat_prepare set. */
void vstat_collect(struct vstat *vs, struct bpf_object *obj, const char *object, int load_err);
void vstat_free(struct vstat *vs);

/* The program of object the verifier refused in its latest load (the one
 * with a reason of its own), or NULL. */
const struct vstat_prog *vstat_refused(const struct vstat *vs, const char *object);
/* Marks object's program name as not needed on this kernel (why: what is
 * used instead); it no longer counts against the margins. */
void vstat_skip(struct vstat *vs, const char *object, const char *name, const char *why);
/* Notes a program given up (reason: the verifier's, lost: what the run
 * does without it). */
void vstat_add_degraded(struct vstat *vs, const char *program, const char *reason,
			const char *lost);

/* Parses a statistics log into p (insns, states, depths, verify_us, the
 * reason line). Returns 0, or -EINVAL when the log has no figure at all. */
int vstat_parse_log(const char *log, struct vstat_prog *p);

/* The deepest call chain's combined stack of a loaded program, from its
 * translated instructions (n of them), the start of each subprogram
 * (starts[0..nsub), ascending, starts[0] == 0) and each one's depth, with
 * every call and every callback counted (the newest verifiers count the
 * callbacks a helper such as bpf_loop runs; in translated instructions an
 * inlined bpf_loop's callback is a plain call anyway):
 *   *stack_jit: each frame rounded up to 16 bytes, as a kernel that JITs
 *   the program counts it (the figure the margin is kept on);
 *   *stack_interp: each frame rounded up to 32 bytes and at least 32, as
 *   a kernel without JIT counts it (must still fit).
 * Returns 0, or -EINVAL on instructions that do not fit the subprograms. */
int vstat_stack_chains(const struct bpf_insn *insns, size_t n, const uint32_t *starts,
		       const uint16_t *depth, size_t nsub, int *stack_jit, int *stack_interp);

/* The combined stack held against the limit with the margin (the JIT
 * count), -1 when unknown. */
int vstat_stack(const struct vstat_prog *p);
/* Whether p loaded (or was skipped, vstat_skip) with the margins kept: its combined stack at most
 * VSTAT_STACK_LIMIT - VSTAT_STACK_MARGIN (and within the limit without
 * JIT), its processed instructions at most a fifth of the limit. Unknown
 * figures count as kept (an old kernel's log without them). */
bool vstat_within_margins(const struct vstat_prog *p);

/* report.json's `bpf_programs`: one object per program. */
cJSON *vstat_json(const struct vstat *vs);
/* report.json's `bpf_degraded`: one object per program given up. */
cJSON *vstat_degraded_json(const struct vstat *vs);

#endif
