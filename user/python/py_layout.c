// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_layout.h"

#include <stddef.h>
#include <string.h>

/*
 * Source: offsetof() of each field, printed by gdb from the DWARF of the
 * pyenv builds 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0
 * (x86_64, release builds, e.g.
 * `gdb -batch libpython3.12.so -ex 'print (long)&((PyCodeObject*)0)->co_name'`),
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
}
