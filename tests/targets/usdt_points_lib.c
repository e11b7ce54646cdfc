// ep-target-libs: -shared -fPIC
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT points without semaphores, in a shared library usdt_points loads
 * before it says "ready" (a library so that attaching by the mapped path
 * is covered too): ep_lib:tick N times with argument i, ep_lib:pair N times
 * with (i, -i).
 */
#include <sys/sdt.h>

void usdt_lib_fire(long n);

__attribute__((noinline)) void usdt_lib_fire(long n)
{
	for (long i = 0; i < n; i++)
		DTRACE_PROBE1(ep_lib, tick, i);
	for (long i = 0; i < n / 4; i++)
		STAP_PROBE2(ep_lib, pair, i, -i);
}
