// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The ELF bytes of the alloc object built for kernels whose
 * bpf_session_is_return takes the program's context (alloc_ctx.skel.h),
 * in a file of its own: both generated skeletons define the same static
 * helpers. */
#include <stddef.h>

#include "alloc/alloc_ctx_obj.h"
#include "kernel/skel_types.h"
#include "alloc_ctx.skel.h"

const void *alloc_ctx_elf_bytes(size_t *sz)
{
	return alloc_ctx_bpf__elf_bytes(sz);
}
