/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames in CPU samples, collector side: finds the interpreters of
 * traced processes and registers their layouts with the BPF walk
 * (bpf/pyframes.bpf.h), names the (code object, instruction) pairs it
 * sends, and merges them into each sample's native stack (py_merge.h).
 * docs/python.md.
 */
#ifndef EBPF_PROF_PYFRAMES_H
#define EBPF_PROF_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events/python.h"
#include "profile/profile.h"
#include "python/py_fnspec.h"

enum py_mode {
	PY_MODE_NATIVE = 0, /* no Python frames: the interpreter's C frames only */
	PY_MODE_MIXED = 1,  /* Python frames in place of _PyEval_EvalFrameDefault */
	PY_MODE_ONLY = 2,   /* and without the interpreter's C frames between them */
};

struct pyframes;

struct pyframes_opts {
	enum py_mode mode;
	const char *proc_root; /* NULL = "/proc" */
	int procs_fd;	       /* the BPF py_procs map */
	int stats_fd;	       /* the BPF py_stats map, or -1 */
	struct profile *prof;  /* frames are interned here */
};

struct pyframes_stats {
	uint64_t samples;	     /* samples of processes with a known interpreter */
	uint64_t with_python;	     /* ... that got Python frames */
	uint64_t frames;	     /* Python frames named */
	uint64_t frames_skipped;     /* left out: their code object could not be read */
	uint64_t code_reads;	     /* code objects read from the process */
	uint64_t code_errors;	     /* ... that could not be read or were not code */
	uint64_t unpaired;	     /* Python stacks whose sample never came */
	uint64_t offcpu_with_python; /* off-CPU episodes that got Python frames */
	uint64_t offcpu_frames;	     /* ... and their Python frames */
	uint64_t bpf[EP_PY_ST__COUNT];
};

int pyframes_new(struct pyframes **out, const struct pyframes_opts *o);
void pyframes_free(struct pyframes *pf);

/* Starts looking for an interpreter in pid (a new target), on a thread of
 * its own, so it is registered before its samples are processed. Merging
 * a sample of an unknown pid does the same. The first look comes after
 * delay_ns (a forked child: most of a fork storm's children are gone by
 * then), or as soon as one of its samples is merged. 0 or a
 * negative errno. */
#define PY_CHILD_DELAY_NS (20ull * 1000 * 1000)
int pyframes_watch(struct pyframes *pf, uint32_t pid, uint64_t delay_ns);

/* An EP_EV_PYSTACK record: kept until its sample arrives. */
void pyframes_on_event(struct pyframes *pf, const void *data, size_t size);

/* The sample hdr has user frames frames[0..*n) (root first, ids in
 * opts.prof); merges its Python frames in, within cap entries. Watches a
 * process it has not seen (pyframes_watch). leaf (may be NULL), set only
 * when Python frames went in: the index of the innermost frame that is
 * not the interpreter's own C code (a Python function, or the native
 * library it called): the user's code, for per-cycle top functions. 0 or
 * a negative errno (*n unchanged). */
int pyframes_merge(struct pyframes *pf, const struct ep_event_hdr *hdr, uint32_t *frames, size_t *n,
		   size_t cap, size_t *leaf);

/* The same for a walk that came with its stack (an off-CPU episode: ps of
 * size bytes, from another ring) into frames of prof, which is opts.prof
 * or another profile (two others keep their own frame-class caches). -EINVAL for a malformed record. */
int pyframes_merge_stack(struct pyframes *pf, struct profile *prof, const struct ep_pystack *ps,
			 size_t size, uint32_t *frames, size_t *n, size_t cap);

/* As pyframes_merge_stack, for a sample of another kind (an allocation),
 * counted by the caller: the number of Python frames merged in (0: none,
 * frames unchanged), or a negative errno. */
int pyframes_merge_walk(struct pyframes *pf, struct profile *prof, const struct ep_pystack *ps,
			size_t size, uint32_t *frames, size_t *n, size_t cap);

/* The process exited or exec'ed at ts_ns (CLOCK_MONOTONIC): forget it
 * (exec: look again, unless it was registered after the exec). */
/* prof was freed and set up again (at the same address): what was cached
 * by its frame indices is forgotten. */
void pyframes_profile_replaced(struct pyframes *pf, const struct profile *prof);
void pyframes_forget_pid(struct pyframes *pf, uint32_t pid, bool exited, uint64_t ts_ns);

void pyframes_get_stats(struct pyframes *pf, struct pyframes_stats *st);

/* Calls fn for each code object first read from a process (to name a
 * frame of a CPU or off-CPU sample), or defined in one, that spec matches
 * (python/py_fnspec.h), with the process, the object's address, and its
 * qualified name (or name, before 3.11 when unknown), file and first
 * line: how py:NAME cycles find the function's code object
 * (user/cycles/py_watch.h). From the recorder's thread; one hook. NULL
 * spec: none. */
typedef void (*pyframes_code_fn)(void *ctx, uint32_t pid, uint64_t code_addr, const char *qual,
				 const char *filename, int firstlineno);
void pyframes_on_code(struct pyframes *pf, const struct py_fnspec *spec, pyframes_code_fn fn,
		      void *ctx);

/* The same from the frames pid's threads are in now, read from its memory
 * (a loop waiting before its first call shows no sample). 0, -EAGAIN
 * while pid's interpreter is not known yet, or another negative errno. */
int pyframes_find_code(struct pyframes *pf, uint32_t pid);

#endif
