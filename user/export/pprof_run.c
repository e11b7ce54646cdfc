// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pprof files of a recording's bundle (pprof.h): run facts to options. */
#include <errno.h>
#include <stdlib.h>

#include "cycles/cycles.h"
#include "export/pprof.h"
#include "report/report.h"

static int cmp_cycle(const void *a, const void *b)
{
	const struct pprof_cycle *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int export_pprof_run(const struct profile *p, enum pprof_kind kind, const struct run_info *ri,
		     const struct cycle_table *t, FILE *f)
{
	struct pprof_opts o = {
		.kind = kind,
		.time_nanos = (int64_t)ri->start_wall.tv_sec * 1000000000 + ri->start_wall.tv_nsec,
		.duration_nanos = ri->end_mono_ns > ri->start_mono_ns
					  ? (int64_t)(ri->end_mono_ns - ri->start_mono_ns)
					  : 0,
		/* Module files are read through the cache alone: it reads them
		 * as the traced process that mapped them could. */
		.read_elf = ri->elf_cache != NULL,
		.elf_cache = ri->elf_cache,
	};
	struct pprof_cycle *c = NULL;
	int err;

	/* A whole-run table has one made-up cycle: a label saying 0 on
	 * every sample would claim a loop that was never seen. */
	if (t && t->n && !t->whole_run) {
		c = malloc(t->n * sizeof(*c));
		if (!c)
			return -ENOMEM;
		for (size_t i = 0; i < t->n; i++)
			c[i] = (struct pprof_cycle){ t->rows[i].start_ns, t->rows[i].end_ns,
						     t->rows[i].index };
		qsort(c, t->n, sizeof(*c), cmp_cycle);
		o.cycles = c;
		o.ncycles = t->n;
	}
	err = export_pprof(p, &o, f);
	free(c);
	return err;
}
