/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The allocator's names (pure, no I/O): which functions of a file are
 * probed, and the syscall wrappers a mapping's stack starts in.
 */
#ifndef EP_ALLOC_SYMS_H
#define EP_ALLOC_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events/alloc.h"

struct alloc_sym {
	const char *name;
	enum ep_alloc_kind kind; /* EP_AK_NONE: a free (pointer first) */
	bool prefixed;		 /* probed only in a file without malloc */
};

/* Every name looked for; alloc_syms[0] is malloc. */
extern const struct alloc_sym alloc_syms[];
extern const size_t alloc_nsyms;

/* From the offsets found in one file for alloc_syms (0: absent), which to
 * probe: the standard names when the file defines malloc (its prefixed
 * ones are the same functions or called by them: probing both would count
 * a call twice), the prefixed ones otherwise; one probe per offset
 * (aliases). Sets probe[0..alloc_nsyms) and returns how many. */
size_t alloc_pick_syms(const uint64_t *off, bool *probe);

/* The file offset a function at file offset off jumps to first, when its
 * first instruction (code[0..n)) is a jmp (x86_64 rel8/rel32: a tail call,
 * as jemalloc's operator new[] to operator new); 0 otherwise. */
uint64_t alloc_tail_jump_x86(const uint8_t *code, size_t n, uint64_t off);

/* Drops from probe[] the functions that only jump to another function
 * probed in the same file (jump[i]: alloc_tail_jump_x86 of alloc_syms[i],
 * 0: none): the call would be counted twice. Returns how many are left. */
size_t alloc_drop_tail_wrappers(const uint64_t *off, const uint64_t *jump, bool *probe);

/* Whether name is a libc wrapper of the mmap syscall (mmap, mmap64,
 * __mmap64, syscall...), the leaf of an anonymous mapping's stack. */
bool alloc_is_mmap_wrapper(const char *name);

#endif
