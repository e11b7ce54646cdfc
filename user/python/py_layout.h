/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where each CPython version keeps the fields a frame walk and a code-object
 * reader need. One table for every supported version (3.8-3.13); the source
 * of the numbers is in py_layout.c.
 */
#ifndef EBPF_PROF_PY_LAYOUT_H
#define EBPF_PROF_PY_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "events/python.h"

enum py_lines_kind {
	PY_LINES_LNOTAB = 0,	/* 3.8, 3.9: co_lnotab, f_lasti in bytes */
	PY_LINES_LINETABLE = 1, /* 3.10: co_linetable, f_lasti in code units */
	PY_LINES_LOCATIONS = 2, /* 3.11+: location table, instruction pointers */
};

struct py_layout {
	uint8_t major, minor;
	uint16_t runtime_interp_head; /* _PyRuntimeState.interpreters.head */
	uint16_t interp_tstate_head;
	uint16_t tstate_next, tstate_thread_id, tstate_frame, cframe_frame;
	uint16_t tstate_chunk; /* 3.11+: PyThreadState.datastack_chunk */
	uint16_t frame_code, frame_back, frame_instr, frame_owner, frame_is_entry;
	uint8_t every_entry, cstack_owner;
	/* PyCodeObject */
	uint16_t code_csum; /* start of 32 bytes of immutable ints */
	uint16_t co_firstlineno, co_filename, co_name, co_qualname, co_lines;
	uint16_t co_code_adaptive; /* 3.11+: bytecode inside the object */
	uint16_t co_consts;	   /* a tuple: nested functions' code objects */
	enum py_lines_kind lines;
	/* PyASCIIObject's size: where a compact ASCII string's bytes begin */
	uint16_t ascii_size;
	/* PyCompactUnicodeObject's size: where other compact strings begin */
	uint16_t compact_size;
};

/* The layout of version major.minor, or NULL when not supported. */
const struct py_layout *py_layout_find(unsigned major, unsigned minor);

/* 3.13 publishes its offsets in _PyRuntime (_Py_DebugOffsets, at offset 0,
 * for debuggers): overrides l's fields with those of buf, the first
 * PY_DEBUG_OFFSETS_LEN bytes of _PyRuntime. 0; -EINVAL when buf is not a
 * 3.13 _Py_DebugOffsets or names an offset out of the walk's reach;
 * -ENOTSUP for a free-threaded build. l is left alone on error. */
#define PY_DEBUG_OFFSETS_LEN 352
int py_layout_apply_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *l);

/* Fills the BPF map value for a process whose _PyRuntime is at runtime. */
void py_layout_to_proc(const struct py_layout *l, uint64_t runtime, struct ep_py_proc *out);

#endif
