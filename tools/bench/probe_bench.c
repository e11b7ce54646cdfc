// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe cost benchmark target: "ready <pid>", waits for SIGUSR1, then each
 * of NTHREADS threads calls bench_fn() NCALLS times and reports the mean
 * wall time per call. Run bare, then under a counting probe, then under a
 * latency probe (tools/bench/probe_overhead.sh): the differences are the
 * per-call costs.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static long ncalls;

__attribute__((noinline)) uint64_t bench_fn(uint64_t x)
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

static void *worker(void *arg)
{
	uint64_t t0 = now_ns();

	for (long i = 0; i < ncalls; i++)
		bench_fn((uint64_t)i);
	*(double *)arg = (double)(now_ns() - t0) / (double)ncalls;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t th[16];
	double per[16];
	sigset_t set;
	int sig;
	uint64_t t0;

	ncalls = argc > 1 ? atol(argv[1]) : 1000000;
	if (nthreads < 1 || nthreads > 16 || ncalls < 1)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	t0 = now_ns();
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, &per[i]);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (int i = 1; i < nthreads; i++)
		per[0] += per[i];
	printf("ns_per_call %.1f\n", per[0] / nthreads);
	printf("calls_per_s %.0f\n", (double)ncalls * nthreads * 1e9 / (double)(now_ns() - t0));
	return 0;
}
