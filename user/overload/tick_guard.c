// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overload/tick_guard.h"

void tick_guard_init(struct tick_guard *g, uint32_t requested_hz)
{
	g->requested_hz = requested_hz;
	g->tick_hz = requested_hz > TICK_GUARD_MAX_HZ ? TICK_GUARD_MAX_HZ : requested_hz;
	g->rem = 0;
}

uint64_t tick_guard_skipped(struct tick_guard *g, uint64_t n)
{
	uint64_t extra, q;

	if (!tick_guard_limited(g) || !n)
		return 0;
	extra = g->requested_hz - g->tick_hz;
	/* n * extra overflows only past ~2^47 ticks: centuries at 10 kHz. */
	q = n * extra + g->rem;
	g->rem = q % g->tick_hz;
	return q / g->tick_hz;
}
