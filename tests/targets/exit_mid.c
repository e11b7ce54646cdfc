// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exits on its own, with a distinctive status, while being profiled.
 * usage: exit_mid [MS]   (default 500)
 * Prints "ready <pid>", spins in spin_until_exit for MS milliseconds of wall
 * time, prints "done cpu_ns=<process CPU time>", then exits with status 3
 * (3 so a profiler that reports 0 or 1 for "exited" is caught).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define EXIT_MID_STATUS 3

static volatile uint64_t sink;

/*
 * GCC 12 ignores -mno-omit-leaf-frame-pointer for leaf functions that need no
 * stack: they get no frame, and a frame-pointer unwinder then skips their
 * caller. Taking the frame address forces a frame, so the call tree the
 * tests assert is exactly what a correct unwinder must report.
 */
#define FORCE_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void spin_until_exit(uint64_t deadline)
{
	FORCE_FRAME();
	while (mono_ns() < deadline)
		for (int i = 0; i < 10000; i++)
			sink = sink + (uint64_t)i;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 500;

	if (ms < 0) {
		fprintf(stderr, "usage: %s [MS>=0]\n", argv[0]);
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	spin_until_exit(mono_ns() + (uint64_t)ms * 1000000ull);
	/* CPU actually received: tests derive expected sample counts from it,
	 * so a loaded machine does not fail them. */
	struct timespec cpu;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("done cpu_ns=%llu\n",
	       (unsigned long long)cpu.tv_sec * 1000000000ull + (unsigned long long)cpu.tv_nsec);
	return EXIT_MID_STATUS;
}
