/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The cycles recording module (cycles_module.c). Must come after the
 * modules whose report.json sections it reads (sysmon, sched, probes) and
 * whose facts it attributes at stop. */
#ifndef EP_CYCLES_MODULE_H
#define EP_CYCLES_MODULE_H

#include "rec_module.h"

struct cycle_sink;

extern const struct rec_module cycles_rec_module;

/* The facts sink for struct rec_ctx.cycles, configured from the options
 * (lag, caps, --cycle-every); the recorder owns it (record/modules.c).
 * NULL: out of memory. */
struct cycle_sink *cycles_sink_new(const struct cli_opts *o, uint64_t period_ns);

#endif
