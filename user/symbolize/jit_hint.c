// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/jit_hint.h"

#include <stdbool.h>
#include <string.h>

/* node's own code: the executable (NodeSource, upstream builds) or the
 * shared libnode.so.N that Debian's nodejs links. */
static bool node_module(const char *m)
{
	const char *b;

	if (!m)
		return false;
	b = strrchr(m, '/');
	b = b ? b + 1 : m;
	return strcmp(b, "node") == 0 || strncmp(b, "libnode.so", 10) == 0;
}

void jit_hint_compute(const struct profile *p, struct jit_hint *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		bool node = false, anon = false, pm = false;

		for (uint32_t k = 0; k < st->depth; k++) {
			const struct prof_frame *f = &p->frames[st->frames[k]];

			if (f->kernel)
				continue;
			if (node_module(f->module))
				node = true;
			else if (f->module && strcmp(f->module, "[perf-map]") == 0)
				pm = true;
			else if (!f->module && strncmp(f->name, "[unknown] [anon]", 16) == 0)
				anon = true;
		}
		if (!node)
			continue;
		h->node_samples += st->count;
		if (anon)
			h->anon_unknown += st->count;
		if (pm)
			h->perfmap_samples += st->count;
	}
}

int jit_hint_wanted(const struct jit_hint *h)
{
	return h->node_samples && h->anon_unknown && !h->perfmap_samples;
}
