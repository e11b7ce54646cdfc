/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What --cycle / --cycle-every name (docs/cycles.md). Pure parsing. */
#ifndef EP_CYCLE_SPEC_H
#define EP_CYCLE_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "events/cycles.h"
#include "probes/probes.h"
#include "python/py_fnspec.h"

enum cycle_src {
	CYC_SRC_AUTO = 0, /* no option: the marker if the target has it, else the whole run */
	CYC_SRC_MARKER,	  /* marker: ebpf_prof_cycle_begin()/end() */
	CYC_SRC_UPROBE,	  /* LIB:SYMBOL, or SYMBOL in any mapped file (def.lib NULL) */
	CYC_SRC_USDT,	  /* usdt:PATH:PROVIDER:NAME (--cycle-every only: no return) */
	CYC_SRC_PY,	  /* py:NAME: a watchpoint, or CPython function__entry/return */
};

struct cycle_spec {
	enum cycle_src src;
	bool every;	      /* --cycle-every */
	struct probe_def def; /* UPROBE, USDT */
	struct py_fnspec py;  /* PY: the function as given */
	/* PY: the function's own name (py.last), what CPython's USDT points
	 * pass and the kernel compares. */
	char py_name[EP_CYC_PY_NAME_LEN];
	const char *text; /* as given */
};

/* Parses the value of --cycle (every = false) or --cycle-every. NULL s:
 * CYC_SRC_AUTO. On error writes a reason to err and returns -EINVAL. */
int cycle_spec_parse(const char *s, bool every, struct cycle_spec *out, char *err, size_t errlen);
void cycle_spec_free(struct cycle_spec *c);

#endif
