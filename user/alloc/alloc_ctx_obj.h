/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EBPF_PROF_ALLOC_CTX_OBJ_H
#define EBPF_PROF_ALLOC_CTX_OBJ_H

#include <stddef.h>

/* bpf/alloc.bpf.c built with EP_SESSION_CTX (Linux 7.2's kfunc prototype):
 * the same maps, programs and variables as alloc.skel.h's object. */
const void *alloc_ctx_elf_bytes(size_t *sz);

#endif
