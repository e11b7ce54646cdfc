// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocation-heavy cycles for tools/bench/alloc_overhead.sh:
 *   alloc_bench CYCLES PAIRS WORK_US SPLIT
 * prints "ready <pid>", waits for SIGUSR1 (the profiler attaches first),
 * then runs CYCLES cycles of PAIRS malloc/free pairs (16..4096 bytes, at
 * most 64 live, a fixed seed) followed by WORK_US of busy arithmetic, and
 * times each cycle. Then SPLIT mallocs of 64 bytes in a row and SPLIT frees,
 * timed apart: the per-call cost of each entry point. Prints
 *   cycle_ns MEDIAN
 *   malloc_ns PER_CALL
 *   free_ns PER_CALL
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t seed = 1;
static uint32_t next_rand(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

volatile uint64_t sink;

static void work(uint64_t us)
{
	uint64_t end = now_ns() + us * 1000, x = 1;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define MAP_PAIRS 2000

int main(int argc, char **argv)
{
	int ncycles = argc > 1 ? atoi(argv[1]) : 50, pairs = argc > 2 ? atoi(argv[2]) : 2000;
	uint64_t work_us = argc > 3 ? strtoull(argv[3], NULL, 10) : 0, *t, t0;
	long split = argc > 4 ? atol(argv[4]) : 20000;
	void *live[64] = { 0 }, **blocks;
	sigset_t set;
	int sig;

	if (ncycles < 1 || pairs < 0 || split < 1)
		return 2;
	t = calloc((size_t)ncycles, sizeof(*t));
	blocks = calloc((size_t)split, sizeof(*blocks));
	if (!t || !blocks)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	for (int c = 0; c < ncycles; c++) {
		t0 = now_ns();
		for (int i = 0; i < pairs; i++) {
			int slot = (int)(next_rand() % 64);

			free(live[slot]);
			live[slot] = malloc(16 + next_rand() % 4081);
			if (!live[slot])
				return 1;
			memset(live[slot], 1, 16);
		}
		work(work_us);
		t[c] = now_ns() - t0;
	}
	for (int i = 0; i < 64; i++)
		free(live[i]);
	t0 = now_ns();
	for (long i = 0; i < split; i++)
		blocks[i] = malloc(64);
	uint64_t tm = now_ns() - t0;
	t0 = now_ns();
	for (long i = 0; i < split; i++)
		free(blocks[i]);
	uint64_t tf = now_ns() - t0;
	/* The program's own mappings (--alloc follows mmap/munmap at their
	 * syscall tracepoints): one 64 KiB anonymous mapping made, touched
	 * and unmapped, 2,000 times. */
	t0 = now_ns();
	for (int i = 0; i < MAP_PAIRS; i++) {
		char *p = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED)
			return 1;
		p[0] = 1;
		munmap(p, 64 << 10);
	}
	uint64_t tp = now_ns() - t0;
	qsort(t, (size_t)ncycles, sizeof(*t), cmp_u64);
	printf("cycle_ns %llu\nmalloc_ns %.1f\nfree_ns %.1f\nmmap_pair_ns %.1f\n",
	       (unsigned long long)t[ncycles / 2], (double)tm / (double)split,
	       (double)tf / (double)split, (double)tp / MAP_PAIRS);
	free(t);
	free(blocks);
	return 0;
}
