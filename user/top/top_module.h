/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The live view (--top, "ebpf-prof top") and --alert, as a recorder module;
 * docs/top.md. */
#ifndef EBPF_PROF_TOP_MODULE_H
#define EBPF_PROF_TOP_MODULE_H

#include "rec_module.h"

extern const struct rec_module top_rec_module;

#endif
