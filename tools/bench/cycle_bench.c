// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cycle-attribution cost benchmark target (tools/bench/cycles_overhead.sh):
 * "ready <pid>", waits for SIGUSR1, then for SECONDS runs cycles of
 * CYCLE_MS each: run_cycle() calls span_fn() as fast as it can until the
 * cycle's time is up, so a latency probe on span_fn streams spans at the
 * highest rate the machine sustains, all inside cycles. Prints the calls
 * made and the cycles run.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t span_fn(uint64_t x)
{
	sink += x;
	return x + 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t run_cycle(uint64_t until)
{
	uint64_t n = 0;

	while (now_ns() < until)
		for (int i = 0; i < 64; i++, n++)
			span_fn(n);
	return n;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	uint64_t cycle_ns = (uint64_t)((argc > 2 ? atof(argv[2]) : 100) * 1e6), calls = 0, end;
	unsigned long cycles = 0;
	sigset_t set;
	int sig;

	if (seconds <= 0 || cycle_ns == 0)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	end = now_ns() + (uint64_t)(seconds * 1e9);
	for (uint64_t t = now_ns(); t < end; t = now_ns(), cycles++)
		calls += run_cycle(t + cycle_ns < end ? t + cycle_ns : end);
	printf("calls %llu\ncycles %lu\n", (unsigned long long)calls, cycles);
	return 0;
}
