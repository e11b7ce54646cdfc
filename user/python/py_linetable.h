/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Instruction offset -> source line, from the line tables CPython keeps in
 * each code object. The tables come from the profiled process's memory, so
 * every decoder stops at the end of the buffer and never loops more than
 * its length.
 */
#ifndef EBPF_PROF_PY_LINETABLE_H
#define EBPF_PROF_PY_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

#include "python/py_layout.h"

/* The line of the instruction at byte offset `off` into the bytecode
 * (f_lasti * 1 on 3.8/3.9, f_lasti * 2 on 3.10, instruction pointer minus
 * the bytecode start on 3.11+). Returns the line (>= 0), firstlineno when
 * the table ends before off, or -1 when the table says the instruction has
 * no line. */
int py_line_for_offset(enum py_lines_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		       uint32_t off);

#endif
