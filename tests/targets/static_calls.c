// ep-target-libs: -static
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A statically linked program (no ld.so, so no link-map hold) that calls
 * static_work() N times from its first lines and prints "calls N": in
 * launch mode, exec'd by a wrapper, it is held at its exec until probed.
 */
#include <stdio.h>
#include <stdlib.h>

int static_work(int i);

int static_work(int i)
{
	return i * 3 + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += static_work(i);
	printf("calls %d\nsum %ld\n", n, sum);
	return 0;
}
