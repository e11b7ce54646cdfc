// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probes that other recording modules ask for (probes.h, "probe bus"): the
 * cycles module's --cycle usdt:... boundaries, say. A request is a --probe
 * spec plus a callback; the probes module attaches it with the user's
 * probes and hands each of its spans to the callback on the recorder
 * thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/probes.h"

/* Requests are few (one per cycle definition); a bound keeps a buggy
 * caller from growing the probe id space. */
#define PROBE_BUS_MAX 64

struct probe_req {
	struct probe_def def;
	probe_span_fn fn;
	void *arg;
};

struct probe_bus {
	struct probe_req *req;
	size_t n;
};

int probe_bus_new(struct probe_bus **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void probe_bus_free(struct probe_bus *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->req[i].def.owned);
	free(b->req);
	free(b);
}

int probe_bus_request(struct probe_bus *b, const char *spec, probe_span_fn fn, void *arg, char *err,
		      size_t errlen)
{
	struct probe_req r = { .fn = fn, .arg = arg };
	void *p;
	int rc;

	if (!b || !fn) {
		if (err && errlen)
			snprintf(err, errlen, "no probe bus or no callback");
		return -EINVAL;
	}
	if (b->n >= PROBE_BUS_MAX) {
		if (err && errlen)
			snprintf(err, errlen, "more than %d module probe requests", PROBE_BUS_MAX);
		return -E2BIG;
	}
	rc = probe_parse_spec(spec, &r.def, err, errlen);
	if (rc)
		return rc;
	p = realloc(b->req, (b->n + 1) * sizeof(*b->req));
	if (!p) {
		free(r.def.owned);
		return -ENOMEM;
	}
	b->req = p;
	b->req[b->n] = r;
	return (int)b->n++;
}

size_t probe_bus_count(const struct probe_bus *b)
{
	return b ? b->n : 0;
}

const struct probe_def *probe_bus_def(const struct probe_bus *b, size_t i)
{
	return b && i < b->n ? &b->req[i].def : NULL;
}

void probe_bus_deliver(const struct probe_bus *b, size_t i, const struct probe_span_ev *ev)
{
	if (b && i < b->n)
		b->req[i].fn(b->req[i].arg, ev);
}
