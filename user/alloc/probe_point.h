/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where to put an allocator's uprobe (pure). The kernel emulates a probed
 * instruction it knows (push, jmp/jcc/call, nop) and single-steps any
 * other out of line, which costs a debug trap more: on this VM 10 us per
 * call of glibc's free, whose first instruction is `test %rdi,%rdi`,
 * against ~0.5 us emulated (docs/performance.md). An instruction that only
 * sets flags (test/cmp of registers, cmp of a RIP-relative byte or word
 * with an immediate) changes neither the arguments nor the stack, so the
 * probe can go on the next instruction when that one is emulated (a jcc
 * consuming those flags, or a push): the entry sees the same registers and
 * the return probe the same return address.
 */
#ifndef EP_ALLOC_PROBE_POINT_H
#define EP_ALLOC_PROBE_POINT_H

#include <stddef.h>
#include <stdint.h>

/* code: the function's first n bytes (x86_64). Returns how many bytes to
 * move the probe forward: 0 to keep it on the first instruction. */
size_t alloc_probe_skip_x86(const uint8_t *code, size_t n);

#endif
