// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A function called in a tight loop, for a probe on it: a good part of the
 * thread's time is then spent in the probe's BPF programs, so CPU samples
 * land in them and their kernel frames need naming (test_kallsyms_cache).
 *
 * usage: probe_loop [SECONDS]   (default 60)
 * Prints "ready <pid>", then calls hot_fn() until the time is up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t hot_fn(uint64_t x)
{
	sink += x;
	return x + 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60;
	struct timespec t0, t;
	uint64_t x = 0;

	printf("ready %d\n", getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 1000; i++)
			x = hot_fn(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	printf("calls %llu\n", (unsigned long long)x);
	return 0;
}
