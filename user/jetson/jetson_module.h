/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EBPF_PROF_JETSON_MODULE_H
#define EBPF_PROF_JETSON_MODULE_H

#include "rec_module.h"

extern const struct rec_module jetson_rec_module;

#endif
