/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The allocator's names (pure, no I/O): which functions of a file are
 * probed, and the syscall wrappers a mapping's stack starts in.
 */
#ifndef EP_ALLOC_SYMS_H
#define EP_ALLOC_SYMS_H

#include <stdbool.h>

/* Whether name is a libc wrapper of the mmap syscall (mmap, mmap64,
 * __mmap64, syscall...), the leaf of an anonymous mapping's stack. */
bool alloc_is_mmap_wrapper(const char *name);

#endif
