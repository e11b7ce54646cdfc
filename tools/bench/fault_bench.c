// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Page-fault cost (tools/bench/rss_cost.sh): maps MIB MiB of anonymous
 * memory, touches it page by page (one minor fault each, huge pages off),
 * unmaps it, ROUNDS times; prints the median of the rounds' ns per fault.
 *   fault_bench [MIB] [ROUNDS]    (default 64 MiB, 15 rounds)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = mib << 20;
	double *ns;

	if (rounds < 1 || !mib || !(ns = calloc((size_t)rounds, sizeof(*ns))))
		return 2;
	for (int r = 0; r < rounds; r++) {
		volatile char *p =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t;

		if (p == MAP_FAILED)
			return 1;
		madvise((void *)p, len, MADV_NOHUGEPAGE);
		t = now_ns();
		for (size_t i = 0; i < len; i += page)
			p[i] = 1;
		ns[r] = (now_ns() - t) / (double)(len / page);
		munmap((void *)p, len);
	}
	qsort(ns, (size_t)rounds, sizeof(*ns), cmp);
	printf("ns_per_fault %.1f\n", ns[rounds / 2]);
	free(ns);
	return 0;
}
