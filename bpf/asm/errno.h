/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* <bpf/usdt.bpf.h> includes <linux/errno.h>, which wants <asm/errno.h>
 * from the multiarch include directory that the BPF compile does not
 * search; every architecture's version is the generic one. */
#include <asm-generic/errno.h>
