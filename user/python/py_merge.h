/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Puts Python frames into a native stack: each run of Python frames that
 * one evaluator call executes replaces that call's _PyEval_EvalFrameDefault
 * frame. Pure: frame ids in, frame ids out.
 */
#ifndef EBPF_PROF_PY_MERGE_H
#define EBPF_PROF_PY_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum py_ncls {
	PY_N_OTHER = 0,	 /* not the interpreter's */
	PY_N_INTERP = 1, /* a C function of the interpreter */
	PY_N_EVAL = 2,	 /* _PyEval_EvalFrameDefault */
};

/* nat[0..nnat): native frames, root first, classified by cls[]; py[0..npy):
 * Python frames, root first, entry[i] set on the first frame of each
 * evaluator call. Writes at most nnat + npy ids to out and returns how
 * many. Evaluator frames and runs are paired from the leaf up (a native
 * stack cut at its root keeps its leaf side); Python runs left over at the
 * root go into the outermost paired evaluator frame, or before the whole
 * native stack when it has none. only: the interpreter's C frames between
 * the outermost and the innermost Python frame are left out. */
size_t py_merge(const uint32_t *nat, const uint8_t *cls, size_t nnat, const uint32_t *py,
		const bool *entry, size_t npy, bool only, uint32_t *out);

#endif
