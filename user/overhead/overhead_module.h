/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The recording module that measures our own cost (overhead.h). */
#ifndef EP_OVERHEAD_MODULE_H
#define EP_OVERHEAD_MODULE_H

#include "rec_module.h"

extern const struct rec_module overhead_rec_module;

#endif
