// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_layout.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/*
 * Source: offsetof() of each field, printed by gdb from the DWARF of the
 * pyenv builds 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0
 * (x86_64, release builds, e.g.
 * `gdb -batch libpython3.12.so -ex 'print (long)&((PyCodeObject*)0)->co_name'`;
 * co_consts, PyTupleObject.ob_item (24 in all) and
 * PyThreadState.datastack_chunk the same way),
 * checked against CPython's Include/cpython/{code,pystate,frameobject}.h and
 * Include/internal/pycore_{frame,runtime,interp}.h of those tags. These
 * structures do not change within a minor version (Debian's 3.11.2 matches
 * 3.11.7; py_proc.c checks the thread-state list before trusting it).
 */
static const struct py_layout layouts[] = {
	{
		.major = 3,
		.minor = 8,
		.runtime_interp_head = 32,
		.interp_tstate_head = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_chunk = EP_PY_NO_OFF,
		.tstate_frame = 24,
		.cframe_frame = EP_PY_NO_OFF,
		.frame_code = 32,
		.frame_back = 24,
		.frame_instr = 104,
		.frame_owner = EP_PY_NO_OFF,
		.frame_is_entry = EP_PY_NO_OFF,
		.every_entry = 1,
		.cstack_owner = 0xff,
		.code_csum = 16,
		.co_firstlineno = 40,
		.co_filename = 104,
		.co_consts = 56,
		.co_name = 112,
		.co_qualname = EP_PY_NO_OFF,
		.co_lines = 120,
		.co_code_adaptive = EP_PY_NO_OFF,
		.lines = PY_LINES_LNOTAB,
		.ascii_size = 48,
		.compact_size = 72,
	},
	{
		.major = 3,
		.minor = 9,
		.runtime_interp_head = 32,
		.interp_tstate_head = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_chunk = EP_PY_NO_OFF,
		.tstate_frame = 24,
		.cframe_frame = EP_PY_NO_OFF,
		.frame_code = 32,
		.frame_back = 24,
		.frame_instr = 104,
		.frame_owner = EP_PY_NO_OFF,
		.frame_is_entry = EP_PY_NO_OFF,
		.every_entry = 1,
		.cstack_owner = 0xff,
		.code_csum = 16,
		.co_firstlineno = 40,
		.co_filename = 104,
		.co_consts = 56,
		.co_name = 112,
		.co_qualname = EP_PY_NO_OFF,
		.co_lines = 120,
		.co_code_adaptive = EP_PY_NO_OFF,
		.lines = PY_LINES_LNOTAB,
		.ascii_size = 48,
		.compact_size = 72,
	},
	{
		.major = 3,
		.minor = 10,
		.runtime_interp_head = 32,
		.interp_tstate_head = 8,
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_chunk = EP_PY_NO_OFF,
		.tstate_frame = 24,
		.cframe_frame = EP_PY_NO_OFF,
		.frame_code = 32,
		.frame_back = 24,
		.frame_instr = 96,
		.frame_owner = EP_PY_NO_OFF,
		.frame_is_entry = EP_PY_NO_OFF,
		.every_entry = 1,
		.cstack_owner = 0xff,
		.code_csum = 16,
		.co_firstlineno = 40,
		.co_filename = 104,
		.co_consts = 56,
		.co_name = 112,
		.co_qualname = EP_PY_NO_OFF,
		.co_lines = 120,
		.co_code_adaptive = EP_PY_NO_OFF,
		.lines = PY_LINES_LINETABLE,
		.ascii_size = 48,
		.compact_size = 72,
	},
	{
		/* co_warmup (48) counts down while the code runs: the checksum
		 * starts after it, at co_argcount. */
		.major = 3,
		.minor = 11,
		.runtime_interp_head = 40,
		.interp_tstate_head = 16,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_chunk = 296,
		.tstate_frame = 56,
		.cframe_frame = 8,
		.frame_code = 32,
		.frame_back = 48,
		.frame_instr = 56,
		.frame_owner = 69,
		.frame_is_entry = 68,
		.every_entry = 0,
		.cstack_owner = 0xff,
		.code_csum = 56,
		.co_firstlineno = 72,
		.co_filename = 112,
		.co_consts = 24,
		.co_name = 120,
		.co_qualname = 128,
		.co_lines = 136,
		.co_code_adaptive = 184,
		.lines = PY_LINES_LOCATIONS,
		.ascii_size = 48,
		.compact_size = 72,
	},
	{
		.major = 3,
		.minor = 12,
		.runtime_interp_head = 40,
		.interp_tstate_head = 72,
		.tstate_next = 8,
		.tstate_thread_id = 136,
		.tstate_chunk = 232,
		.tstate_frame = 56,
		.cframe_frame = 0,
		.frame_code = 0,
		.frame_back = 8,
		.frame_instr = 56,
		.frame_owner = 70,
		.frame_is_entry = EP_PY_NO_OFF,
		.every_entry = 0,
		.cstack_owner = 3, /* FRAME_OWNED_BY_CSTACK */
		.code_csum = 48,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_consts = 24,
		.co_name = 120,
		.co_qualname = 128,
		.co_lines = 136,
		.co_code_adaptive = 192,
		.lines = PY_LINES_LOCATIONS,
		.ascii_size = 40,
		.compact_size = 56,
	},
	{
		.major = 3,
		.minor = 13,
		.runtime_interp_head = 632,
		.interp_tstate_head = 7344,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_chunk = 232,
		.tstate_frame = 72,
		.cframe_frame = EP_PY_NO_OFF,
		.frame_code = 0,
		.frame_back = 8,
		.frame_instr = 56,
		.frame_owner = 70,
		.frame_is_entry = EP_PY_NO_OFF,
		.every_entry = 0,
		.cstack_owner = 3, /* FRAME_OWNED_BY_CSTACK */
		.code_csum = 48,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_consts = 24,
		.co_name = 120,
		.co_qualname = 128,
		.co_lines = 136,
		.co_code_adaptive = 200,
		.lines = PY_LINES_LOCATIONS,
		.ascii_size = 40,
		.compact_size = 56,
	},
};

const struct py_layout *py_layout_find(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* Offsets of the fields used, in 3.13's _Py_DebugOffsets
 * (Include/internal/pycore_runtime.h of v3.13.0). */
enum {
	DO_VERSION = 8,
	DO_FREE_THREADED = 16,
	DO_RUNTIME_INTERP_HEAD = 40,
	DO_INTERP_THREADS_HEAD = 72,
	DO_TSTATE_NEXT = 168,
	DO_TSTATE_INTERP = 176,
	DO_TSTATE_CURRENT_FRAME = 184,
	DO_TSTATE_THREAD_ID = 192,
	DO_FRAME_PREVIOUS = 232,
	DO_FRAME_EXECUTABLE = 240,
	DO_FRAME_INSTR_PTR = 248,
	DO_FRAME_OWNER = 264,
	DO_CODE_FILENAME = 280,
	DO_CODE_NAME = 288,
	DO_CODE_QUALNAME = 296,
	DO_CODE_LINETABLE = 304,
	DO_CODE_FIRSTLINENO = 312,
	DO_CODE_ADAPTIVE = 344,
};

static uint64_t do64(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

int py_layout_apply_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *l)
{
	static const struct {
		size_t at;
		uint64_t max; /* what the walk and the code reader can reach */
	} fields[] = {
		{ DO_RUNTIME_INTERP_HEAD, 0xfff0 },
		{ DO_INTERP_THREADS_HEAD, 0xfff0 },
		{ DO_TSTATE_NEXT, 0xfff0 },
		{ DO_TSTATE_CURRENT_FRAME, 0xfff0 },
		{ DO_TSTATE_THREAD_ID, 0xfff0 },
		{ DO_FRAME_PREVIOUS, EP_PY_FRAME_READ - 8 },
		{ DO_FRAME_EXECUTABLE, EP_PY_FRAME_READ - 8 },
		{ DO_FRAME_INSTR_PTR, EP_PY_FRAME_READ - 8 },
		{ DO_FRAME_OWNER, EP_PY_FRAME_READ - 1 },
		{ DO_CODE_FILENAME, 248 },
		{ DO_CODE_NAME, 248 },
		{ DO_CODE_QUALNAME, 248 },
		{ DO_CODE_LINETABLE, 248 },
		{ DO_CODE_FIRSTLINENO, 252 },
		{ DO_CODE_ADAPTIVE, 0xfff0 },
	};
	uint64_t version;

	if (!buf || len < PY_DEBUG_OFFSETS_LEN || memcmp(buf, "xdebugpy", 8))
		return -EINVAL;
	version = do64(buf, DO_VERSION);
	if ((version >> 24) != 3 || ((version >> 16) & 0xff) != 13)
		return -EINVAL;
	if (do64(buf, DO_FREE_THREADED))
		return -ENOTSUP;
	/* The thread state's interp field is where py_proc_check looks. */
	if (do64(buf, DO_TSTATE_INTERP) != 16)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (do64(buf, fields[i].at) > fields[i].max)
			return -EINVAL;
	l->runtime_interp_head = (uint16_t)do64(buf, DO_RUNTIME_INTERP_HEAD);
	l->interp_tstate_head = (uint16_t)do64(buf, DO_INTERP_THREADS_HEAD);
	l->tstate_next = (uint16_t)do64(buf, DO_TSTATE_NEXT);
	l->tstate_frame = (uint16_t)do64(buf, DO_TSTATE_CURRENT_FRAME);
	l->tstate_thread_id = (uint16_t)do64(buf, DO_TSTATE_THREAD_ID);
	l->cframe_frame = EP_PY_NO_OFF;
	l->frame_back = (uint16_t)do64(buf, DO_FRAME_PREVIOUS);
	l->frame_code = (uint16_t)do64(buf, DO_FRAME_EXECUTABLE);
	l->frame_instr = (uint16_t)do64(buf, DO_FRAME_INSTR_PTR);
	l->frame_owner = (uint16_t)do64(buf, DO_FRAME_OWNER);
	l->co_filename = (uint16_t)do64(buf, DO_CODE_FILENAME);
	l->co_name = (uint16_t)do64(buf, DO_CODE_NAME);
	l->co_qualname = (uint16_t)do64(buf, DO_CODE_QUALNAME);
	l->co_lines = (uint16_t)do64(buf, DO_CODE_LINETABLE);
	l->co_firstlineno = (uint16_t)do64(buf, DO_CODE_FIRSTLINENO);
	l->co_code_adaptive = (uint16_t)do64(buf, DO_CODE_ADAPTIVE);
	return 0;
}

void py_layout_to_proc(const struct py_layout *l, uint64_t runtime, struct ep_py_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->interp_head = runtime + l->runtime_interp_head;
	out->interp_tstate_head = l->interp_tstate_head;
	out->tstate_next = l->tstate_next;
	out->tstate_thread_id = l->tstate_thread_id;
	out->tstate_frame = l->tstate_frame;
	out->cframe_frame = l->cframe_frame;
	out->frame_code = l->frame_code;
	out->frame_back = l->frame_back;
	out->frame_instr = l->frame_instr;
	out->frame_owner = l->frame_owner;
	out->frame_is_entry = l->frame_is_entry;
	out->code_csum = l->code_csum;
	out->instr_is_ptr = l->lines == PY_LINES_LOCATIONS;
	out->every_entry = l->every_entry;
	out->cstack_owner = l->cstack_owner;
	out->tstate_chunk = l->tstate_chunk;
}
