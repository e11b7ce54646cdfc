// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT begin/end pairs for the probes test (sys/sdt.h, no semaphores).
 * Prints "ready <pid>"; on SIGUSR1 fires one ep_pair:work__done with no
 * work__start before it (an end the tracer cannot pair), then NTHREADS
 * threads each run, interleaved with each other:
 *   ep_pair:work__start(i) .. ep_pair:work__done(i)        N_WORK times,
 *       around ~WORK_NS of busy work the thread times itself;
 *   ep_pair:outer_begin .. { inner_go .. inner_stop } x3 .. outer_end
 *                                                          N_OUTER times;
 *   rec(REC_DEPTH): ep_pair:rec__entry(n) .. rec__return(n) around each
 *       level, so the same pair nests in itself             N_REC times;
 * then prints the threads' own time inside work and inside the top-level
 * rec() calls, and "done".
 */
#include <sys/sdt.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS  2
#define N_WORK	  100
#define WORK_NS	  200000
#define N_OUTER	  50
#define N_INNER	  3
#define N_REC	  20
#define REC_DEPTH 3

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void busy(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		sink++;
}

__attribute__((noinline)) static long rec(long n)
{
	long r;

	DTRACE_PROBE1(ep_pair, rec__entry, n);
	busy(20000);
	r = n ? rec(n - 1) + 1 : 0;
	DTRACE_PROBE1(ep_pair, rec__return, n);
	return r;
}

struct result {
	uint64_t work_ns, rec_ns;
};

static void *worker(void *arg)
{
	struct result *res = arg;
	uint64_t t0;

	for (long i = 0; i < N_WORK; i++) {
		DTRACE_PROBE1(ep_pair, work__start, i);
		t0 = now_ns();
		busy(WORK_NS);
		res->work_ns += now_ns() - t0;
		DTRACE_PROBE1(ep_pair, work__done, -i);
	}
	for (long i = 0; i < N_OUTER; i++) {
		DTRACE_PROBE(ep_pair, outer_begin);
		for (int k = 0; k < N_INNER; k++) {
			DTRACE_PROBE(ep_pair, inner_go);
			busy(10000);
			DTRACE_PROBE(ep_pair, inner_stop);
		}
		DTRACE_PROBE(ep_pair, outer_end);
	}
	for (long i = 0; i < N_REC; i++) {
		t0 = now_ns();
		rec(REC_DEPTH);
		res->rec_ns += now_ns() - t0;
	}
	return NULL;
}

int main(void)
{
	struct result res[NTHREADS] = { 0 };
	pthread_t th[NTHREADS];
	uint64_t work = 0, recs = 0;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	DTRACE_PROBE1(ep_pair, work__done, -1);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, &res[i]);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		work += res[i].work_ns;
		recs += res[i].rec_ns;
	}
	printf("own_work_ns %llu\nown_rec_ns %llu\ndone\n", (unsigned long long)work,
	       (unsigned long long)recs);
	fflush(stdout);
	return 0;
}
