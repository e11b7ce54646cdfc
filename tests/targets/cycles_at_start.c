// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cycles from the first instruction of main: no set-up before the loop, so
 * a profiler that launches this program and attaches the cycle marker only
 * after the program runs loses the first cycles (its launch-mode hold must
 * cover the marker, not only the probes).
 *
 * usage: cycles_at_start [CYCLES]   (default 20)
 * Each cycle: the marker around llama_decode(), a ~2 ms busy loop (named
 * like llama.cpp's entry point so the default llama preset times it).
 * Prints "cycles: N" at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../tools/cycle_marker/ebpf_prof_cycle.c"

static volatile uint64_t sink;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) int llama_decode(void *ctx, int tokens)
{
	uint64_t end = mono_ns() + 2000000ull;

	(void)ctx;
	while (mono_ns() < end)
		sink += (uint64_t)tokens;
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20;
	long i;

	for (i = 0; i < n; i++) {
		ebpf_prof_cycle_begin((uint64_t)i);
		llama_decode(NULL, (int)i);
		ebpf_prof_cycle_end((uint64_t)i);
	}
	printf("cycles: %ld\n", i);
	return 0;
}
