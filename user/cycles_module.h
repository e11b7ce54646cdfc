/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The cycles recording module (cycles_module.c). Must come after the
 * modules whose report.json sections it reads (sysmon, sched, probes). */
#ifndef EP_CYCLES_MODULE_H
#define EP_CYCLES_MODULE_H

#include "rec_module.h"

extern const struct rec_module cycles_rec_module;

#endif
