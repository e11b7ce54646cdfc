// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Creates threads only after the profiler has attached, to test that threads
 * born later are followed.
 *
 * usage: late_threads [SECONDS]   (default 3)
 * Prints "ready <pid>", then main busy-spins in main_spin (so the profiler has
 * samples from before the threads exist) until SIGUSR1. On SIGUSR1 it prints
 * "threads <monotonic_ns_before_create> <tid1> <tid2>", runs two "spinner"
 * threads in thread_spin plus main_spin in main for SECONDS, prints
 * "thread_cpu <tid> <cpu_ns>" per thread (the CPU each really got, from which
 * tests derive expected sample counts), then exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 2

static volatile sig_atomic_t triggered;
static volatile uint64_t sink;

/*
 * GCC 12 ignores -mno-omit-leaf-frame-pointer for leaf functions that need no
 * stack: they get no frame, and a frame-pointer unwinder then skips their
 * caller. Taking the frame address forces a frame, so the call tree the
 * tests assert is exactly what a correct unwinder must report.
 */
#define FORCE_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

struct spinner {
	pthread_t th;
	_Atomic pid_t tid;
	uint64_t cpu_ns; /* thread CPU time at its end */
	const _Atomic int *stop;
};

static void on_usr1(int sig)
{
	(void)sig;
	triggered = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until *flag is set (or, with flag NULL, until deadline). */
__attribute__((noinline)) void main_spin(volatile sig_atomic_t *flag, uint64_t deadline)
{
	FORCE_FRAME();
	while (flag ? !*flag : mono_ns() < deadline)
		for (int i = 0; i < 10000; i++)
			sink = sink + (uint64_t)i;
}

__attribute__((noinline)) void thread_spin(const _Atomic int *stop)
{
	FORCE_FRAME();
	while (!atomic_load(stop))
		for (int i = 0; i < 10000; i++)
			sink = sink + (uint64_t)i;
}

static void *thread_main(void *arg)
{
	struct spinner *s = arg;

	/* Named before the tid is published, so samples after "threads" carry it. */
	pthread_setname_np(pthread_self(), "spinner");
	atomic_store(&s->tid, gettid());
	thread_spin(s->stop);
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	s->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	struct spinner sp[NTHREADS];
	_Atomic int stop = 0;
	struct sigaction sa;

	if (seconds <= 0) {
		fprintf(stderr, "usage: %s [SECONDS>0]\n", argv[0]);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	main_spin(&triggered, 0);

	uint64_t created_ns = mono_ns();

	for (int i = 0; i < NTHREADS; i++) {
		sp[i].tid = 0;
		sp[i].stop = &stop;
		if (pthread_create(&sp[i].th, NULL, thread_main, &sp[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		while (!atomic_load(&sp[i].tid))
			sched_yield();
	printf("threads %llu %d %d\n", (unsigned long long)created_ns, (int)sp[0].tid,
	       (int)sp[1].tid);
	fflush(stdout);

	main_spin(NULL, mono_ns() + (uint64_t)(seconds * 1e9));
	atomic_store(&stop, 1);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(sp[i].th, NULL);
		printf("thread_cpu %d %llu\n", (int)sp[i].tid, (unsigned long long)sp[i].cpu_ns);
	}
	return 0;
}
