/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Is this process running CPython, which version, and where is its
 * _PyRuntime: from /proc/PID/maps (libpython3.N.so, or an executable with
 * the interpreter linked in, like Debian's /usr/bin/python3.11) and the
 * symbols of that file.
 */
#ifndef EBPF_PROF_PY_PROC_H
#define EBPF_PROF_PY_PROC_H

#include <stdint.h>

#include "python/py_code.h"
#include "python/py_layout.h"

struct py_proc_info {
	char *module; /* path of the file holding the interpreter, as in maps */
	unsigned major, minor;
	uint64_t runtime; /* address of _PyRuntime in the process */
};

/* Looks for an interpreter in pid. Returns 0 with *info filled, -ENOENT
 * when the process has none (yet), or another negative errno. */
int py_proc_detect(const char *proc_root, uint32_t pid, struct py_proc_info *info);
void py_proc_info_free(struct py_proc_info *info);

/* "python3.12" / "libpython3.12.so.1.0" -> 3, 12; -EINVAL otherwise. */
int py_version_from_name(const char *basename, unsigned *major, unsigned *minor);

/* Checks the layout against the live process: the first thread state of
 * the main interpreter points back at it. 0: consistent; -EAGAIN: not
 * initialized yet (no interpreter or no thread); -EPROTO: inconsistent
 * (wrong layout); another negative errno for unreadable memory. */
int py_proc_check(const struct py_layout *l, uint64_t runtime, py_read_fn rd, void *ctx);

#endif
