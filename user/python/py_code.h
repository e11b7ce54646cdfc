/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reads a CPython code object out of another process's memory: its names,
 * file, first line and line table. The memory belongs to the profiled
 * process, which may be hostile or mid-way through freeing the object:
 * every length is bounded, every string checked, and a failed read is an
 * error, never a crash.
 */
#ifndef EBPF_PROF_PY_CODE_H
#define EBPF_PROF_PY_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "python/py_layout.h"

/* Reads len bytes at addr of the target into buf: 0, or a negative errno
 * (short reads included). */
typedef int (*py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define PY_NAME_MAX	 256	   /* longest name or path kept (bytes of UTF-8) */
#define PY_LINETABLE_MAX (1 << 20) /* larger tables: every line is co_firstlineno */

struct py_code {
	char *name;	/* co_qualname (3.11+) or co_name */
	char *filename; /* co_filename */
	int firstlineno;
	/* co_flags before 3.11 (where co_name is not qualified: a function's
	 * CO_NEWLOCALS tells it from a class body), else -1. */
	int32_t flags;
	uint8_t *lines; /* the line table, NULL when empty or too large */
	size_t nlines;
	uint32_t csum;	   /* ep_py_csum of the same bytes the BPF walk hashes */
	uint16_t code_off; /* 3.11+: where the bytecode starts in the object */
	uint64_t type;	   /* its ob_type: the code type of this interpreter */
	uint64_t consts;   /* its co_consts tuple */
};

/* Reads the code object at addr. Returns 0 or a negative errno: -EFAULT
 * (unreadable), -EINVAL (not a code object of this layout). On success the
 * caller frees with py_code_free. */
int py_code_read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr,
		 struct py_code *out);
void py_code_free(struct py_code *c);

/* The code objects among c's constants (the functions, classes and
 * comprehensions its body defines), at most max of them, into out: their
 * number or a negative errno. Constants past PY_CONSTS_MAX are not looked
 * at. */
#define PY_CONSTS_MAX 1024
int py_code_nested(py_read_fn rd, void *ctx, const struct py_code *c, uint64_t *out, size_t max);

/* Reads a str object into a NUL-terminated UTF-8 string of at most
 * PY_NAME_MAX bytes (longer ones are cut). 0 or a negative errno. */
int py_str_read(const struct py_layout *l, py_read_fn rd, void *ctx, uint64_t addr, char **out);

/* The source line of a frame: instr is what the BPF walk sent
 * (ep_py_frame.instr). -1 when the table gives none. */
int py_code_line(const struct py_layout *l, const struct py_code *c, uint32_t instr);

#endif
