// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Nesting and recursion for the probes test. After "ready <pid>" and
 * SIGUSR1: N_OUTER calls of outer(), each calling inner() 3 times, and
 * N_REC calls of rec(REC_DEPTH) (REC_DEPTH + 1 calls each), then one
 * rec(DEEP) deeper than the per-thread stack, then rec() again to show the
 * pairing recovered. Prints its own time for the top-level rec() calls.
 * With the argument "linger" it then waits for a second SIGUSR1 before
 * exiting, so a tracer keeps running after the work is done.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_OUTER	  200
#define N_REC	  100
#define REC_DEPTH 5
#define DEEP	  40

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void inner(void)
{
	for (int i = 0; i < 2000; i++)
		sink += (uint64_t)i;
}

__attribute__((noinline)) void outer(void)
{
	for (int i = 0; i < 3; i++)
		inner();
}

__attribute__((noinline)) uint64_t rec(int n)
{
	for (int i = 0; i < 1000; i++)
		sink += (uint64_t)i;
	return n ? rec(n - 1) + 1 : 0;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;
	uint64_t own = 0, t0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	for (int i = 0; i < N_OUTER; i++)
		outer();
	for (int i = 0; i < N_REC; i++) {
		t0 = now_ns();
		rec(REC_DEPTH);
		own += now_ns() - t0;
	}
	rec(DEEP);
	rec(REC_DEPTH);
	printf("own_rec_ns %llu\n", (unsigned long long)own);
	printf("done\n");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "linger") && sigwait(&set, &sig))
		return 1;
	return 0;
}
