// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The overload guard's tick rate and its count of skipped ticks. */
#include <stdint.h>

#include "check.h"
#include "overload/tick_guard.h"

int main(void)
{
	struct tick_guard g;
	uint64_t sum = 0;

	/* Normal rates pass untouched and lose nothing. */
	tick_guard_init(&g, 99);
	CHECK_INT_EQ(g.tick_hz, 99);
	CHECK(!tick_guard_limited(&g));
	CHECK_INT_EQ(tick_guard_skipped(&g, 1000000), 0);
	tick_guard_init(&g, TICK_GUARD_MAX_HZ);
	CHECK_INT_EQ(g.tick_hz, TICK_GUARD_MAX_HZ);
	CHECK(!tick_guard_limited(&g));
	CHECK_INT_EQ(tick_guard_skipped(&g, 12345), 0);

	/* 100 kHz: a tick at the limit stands for ten asked for. */
	tick_guard_init(&g, 100000);
	CHECK_INT_EQ(g.tick_hz, TICK_GUARD_MAX_HZ);
	CHECK(tick_guard_limited(&g));
	CHECK_INT_EQ(tick_guard_skipped(&g, 1), (100000 - TICK_GUARD_MAX_HZ) / TICK_GUARD_MAX_HZ);
	CHECK_INT_EQ(tick_guard_skipped(&g, 0), 0);

	/* A ratio that is not whole: one at a time or all at once, the same
	 * total, the fraction carried. */
	tick_guard_init(&g, TICK_GUARD_MAX_HZ + TICK_GUARD_MAX_HZ / 3);
	for (int i = 0; i < 3000; i++)
		sum += tick_guard_skipped(&g, 1);
	CHECK_INT_EQ(sum, 3000ull * (TICK_GUARD_MAX_HZ / 3) / TICK_GUARD_MAX_HZ);
	tick_guard_init(&g, TICK_GUARD_MAX_HZ + TICK_GUARD_MAX_HZ / 3);
	CHECK_INT_EQ(tick_guard_skipped(&g, 3000), sum);
	/* One tick alone skips less than one: nothing yet, then it adds up. */
	tick_guard_init(&g, TICK_GUARD_MAX_HZ + TICK_GUARD_MAX_HZ / 3);
	CHECK_INT_EQ(tick_guard_skipped(&g, 1), 0);
	CHECK_INT_EQ(tick_guard_skipped(&g, 1), 0);
	CHECK_INT_EQ(tick_guard_skipped(&g, 1), 0);
	CHECK_INT_EQ(tick_guard_skipped(&g, 1), 1);

	return check_report("tick_guard");
}
