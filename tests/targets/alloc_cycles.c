// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An allocation-heavy loop for --alloc in launch mode and its cost
 * (bpf.test_alloc_preload, tools/bench/alloc_cost.sh): usage
 *   alloc_cycles CYCLES SLEEP_MS
 * runs CYCLES calls of cycle_step, each:
 *   leaky_put   256 KiB in 16 KiB blocks that are never freed
 *   churn       4,000 malloc/free pairs of 16..1024 bytes (a few calloc
 *               and realloc among them), at most 32 blocks live at once
 *   transient   an 8 MiB block, its ends written, freed
 * sleeping SLEEP_MS between cycles. Times its own loop (CLOCK_MONOTONIC,
 * sleeps left out) and prints "loop_ns N", the thread's CPU time in it
 * "loop_cpu_ns N" (what waiting for a CPU does not inflate), then what it
 * asked the
 * allocator for: "calls N" (allocation calls), "frees N", "asked BYTES",
 * "leaked BYTES", and "done".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LEAK_BLOCK (16u << 10)
#define LEAK_CYCLE (256u << 10)
#define CHURN	   4000
#define BIG	   (8u << 20)

static uint64_t calls, frees, asked, leaked;
static void *sink;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void leaky_put(void)
{
	for (unsigned i = 0; i < LEAK_CYCLE / LEAK_BLOCK; i++) {
		char *p = malloc(LEAK_BLOCK);

		if (!p)
			abort();
		p[0] = (char)i;
		/* Kept reachable from a chain, as a cache that never evicts. */
		*(void **)p = sink;
		sink = p;
		calls++;
		asked += LEAK_BLOCK;
		leaked += LEAK_BLOCK;
	}
}

__attribute__((noinline)) void *churn_alloc(unsigned i, uint32_t *rng)
{
	size_t n;

	*rng = *rng * 1103515245u + 12345u;
	n = 16 + (*rng >> 16) % 1009;
	calls++;
	asked += n;
	if (i % 97 == 0)
		return calloc(1, n);
	return malloc(n);
}

__attribute__((noinline)) void churn(uint32_t *rng)
{
	void *live[32] = { 0 };

	for (unsigned i = 0; i < CHURN; i++) {
		unsigned k = i % 32;

		if (live[k]) {
			free(live[k]);
			frees++;
		}
		live[k] = churn_alloc(i, rng);
		if (!live[k])
			abort();
		if (i % 101 == 0) {
			void *q = realloc(live[k], 2048);

			if (!q)
				abort();
			live[k] = q;
			calls++;
			asked += 2048;
		}
		((char *)live[k])[0] = 1;
	}
	for (unsigned k = 0; k < 32; k++) {
		free(live[k]);
		frees++;
	}
}

__attribute__((noinline)) void transient(void)
{
	char *p = malloc(BIG);

	if (!p)
		abort();
	/* Its ends written, not every page: the loop measures the allocator,
	 * not the page faults of a fresh 8 MiB each cycle. */
	p[0] = 1;
	p[BIG - 1] = 1;
	/* Seen used: a compiler may drop a malloc/free pair otherwise. */
	__asm__ volatile("" : : "r"(p) : "memory");
	calls++;
	asked += BIG;
	free(p);
	frees++;
}

__attribute__((noinline)) void cycle_step(uint32_t *rng)
{
	leaky_put();
	churn(rng);
	transient();
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 10, sleep_ms = argc > 2 ? atoi(argv[2]) : 0;
	const struct timespec pause = { sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000l };
	uint64_t loop = 0, cpu = 0;
	uint32_t rng = 1;

	for (int c = 0; c < cycles; c++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		cycle_step(&rng);
		loop += clock_ns(CLOCK_MONOTONIC) - t0;
		cpu += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (sleep_ms > 0)
			nanosleep(&pause, NULL);
	}
	printf("loop_ns %llu\nloop_cpu_ns %llu\ncalls %llu\nfrees %llu\nasked %llu\nleaked "
	       "%llu\ndone\n",
	       (unsigned long long)loop, (unsigned long long)cpu, (unsigned long long)calls,
	       (unsigned long long)frees, (unsigned long long)asked, (unsigned long long)leaked);
	return 0;
}
