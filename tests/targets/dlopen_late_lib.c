// ep-target-libs: -shared -fPIC
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The library dlopen_late loads after attach (built as a shared object). */
int late_work(int x);

__attribute__((noinline)) int late_work(int x)
{
	volatile int s = 0;

	for (int i = 0; i < 100; i++)
		s += x ^ i;
	return s;
}
