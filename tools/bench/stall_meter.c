// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stall meter (benchmark workload, not a test): spins on CLOCK_MONOTONIC and
 * records every gap between two consecutive reads longer than a threshold.
 *
 * Why: a profiler's per-sample cost is paid by the profiled thread as a gap in
 * its own timeline (timer interrupt, the sample handler, ring-buffer wakeups),
 * a few microseconds each. Wall-time slowdowns of 0.2-2% disappear in this
 * VM's run-to-run noise (the host's speed moves by 10-50%), but the gaps can
 * be counted and sized one by one: the extra gaps a profiler adds and their
 * size are its cost, separated from the host's own preemptions (which come as
 * rare, much longer gaps) and independent of how fast the host runs the loop.
 *
 *   stall_meter [--seconds S] [--threshold-ns N] [--stack-kib K]
 *
 * --stack-kib K spins K KiB below main's frame (default 0): with a shallow
 * stack an 8 KiB window (perf --call-graph dwarf, ebpf-prof --unwind auto)
 * crosses the end of the stack mapping on every sample and pays a fault.
 *
 * Prints one line:
 *   stall seconds=S reads=R gaps=G stolen_ns=T small_gaps=g small_ns=t
 *         small_median_ns=m large_gaps=L large_ns=U
 * where "small" is a gap below 200 us (interrupt-sized) and "large" the rest
 * (vCPU preemption by the host, the scheduler running another task here).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMALL_LIMIT_NS 200000ull
/* 100 ns buckets up to SMALL_LIMIT_NS: enough resolution for a median of
 * interrupt-sized gaps, and a fixed 8 KiB table. */
#define BUCKET_NS 100ull
#define NBUCKETS  (SMALL_LIMIT_NS / BUCKET_NS)

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_u64(const char *s, uint64_t *out, uint64_t min)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return -1;
	v = strtoull(s, &end, 10);
	if (*end || v < min)
		return -1;
	*out = v;
	return 0;
}

struct result {
	uint64_t elapsed, reads, small_n, small_ns, large_n, large_ns;
	uint32_t hist[NBUCKETS]; /* small gaps by size */
};

static void __attribute__((noinline)) spin(uint64_t seconds, uint64_t threshold, struct result *r)
{
	uint64_t start = mono_ns(), end = start + seconds * 1000000000ull;
	uint64_t prev = start;

	for (;;) {
		uint64_t now = mono_ns();
		uint64_t gap = now - prev;

		r->reads++;
		if (gap >= threshold) {
			if (gap < SMALL_LIMIT_NS) {
				r->small_n++;
				r->small_ns += gap;
				r->hist[gap / BUCKET_NS]++;
			} else {
				r->large_n++;
				r->large_ns += gap;
			}
		}
		prev = now;
		if (now >= end)
			break;
	}
	r->elapsed = prev - start;
}

/* One KiB of stack per level, touched so it is really there. */
static void __attribute__((noinline))
descend(unsigned kib, uint64_t seconds, uint64_t threshold, struct result *r)
{
	volatile char pad[1024];

	pad[0] = (char)kib;
	if (kib)
		descend(kib - 1, seconds, threshold, r);
	else
		spin(seconds, threshold, r);
	pad[1023] = pad[0];
}

int main(int argc, char **argv)
{
	uint64_t seconds = 5, threshold = 2000, stack_kib = 0;
	static struct result r; /* 8 KiB of histogram: off the spinning stack */

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			if (parse_u64(argv[++i], &seconds, 1))
				goto usage;
		} else if (!strcmp(argv[i], "--stack-kib") && i + 1 < argc) {
			if (parse_u64(argv[++i], &stack_kib, 0) || stack_kib > 4096)
				goto usage;
		} else if (!strcmp(argv[i], "--threshold-ns") && i + 1 < argc) {
			if (parse_u64(argv[++i], &threshold, 1) || threshold >= SMALL_LIMIT_NS)
				goto usage;
		} else {
			goto usage;
		}
	}

	descend((unsigned)stack_kib, seconds, threshold, &r);

	uint64_t median = 0, seen = 0;
	for (uint64_t b = 0; b < NBUCKETS && r.small_n; b++) {
		seen += r.hist[b];
		if (seen * 2 >= r.small_n) {
			median = b * BUCKET_NS + BUCKET_NS / 2;
			break;
		}
	}
	printf("stall seconds=%llu elapsed_ns=%llu reads=%llu gaps=%llu stolen_ns=%llu "
	       "small_gaps=%llu small_ns=%llu small_median_ns=%llu large_gaps=%llu "
	       "large_ns=%llu\n",
	       (unsigned long long)seconds, (unsigned long long)r.elapsed,
	       (unsigned long long)r.reads, (unsigned long long)(r.small_n + r.large_n),
	       (unsigned long long)(r.small_ns + r.large_ns), (unsigned long long)r.small_n,
	       (unsigned long long)r.small_ns, (unsigned long long)median,
	       (unsigned long long)r.large_n, (unsigned long long)r.large_ns);
	/* Histogram in 1 us steps (count per step, up to the small limit), for
	 * analyses that separate the sampling gaps from the host's. */
	printf("hist_us");
	for (uint64_t us = 0; us < SMALL_LIMIT_NS / 1000; us++) {
		uint64_t n = 0;

		for (uint64_t b = us * 1000 / BUCKET_NS; b < (us + 1) * 1000 / BUCKET_NS; b++)
			n += r.hist[b];
		printf("%c%llu", us ? ',' : ' ', (unsigned long long)n);
	}
	printf("\n");
	return 0;

usage:
	fprintf(stderr,
		"usage: stall_meter [--seconds S] [--threshold-ns N (< %llu)] [--stack-kib K]\n",
		(unsigned long long)SMALL_LIMIT_NS);
	return 2;
}
