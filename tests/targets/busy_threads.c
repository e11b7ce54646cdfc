// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load for the overload tests: many CPU-bound threads, and
 * optionally a fork storm.
 *
 * usage: busy_threads NTHREADS SECONDS [--forks] [--wait]
 *   NTHREADS  busy threads spinning in spin_thread (main sleeps)
 *   SECONDS   run this long, then exit 0 (0: until SIGTERM/SIGINT)
 *   --forks   main forks short-lived children (each exits at once) in a loop
 *   --wait    main starts (forking, and counting SECONDS) on SIGUSR1
 * Prints "ready <pid>" once every thread exists and has been let go; at
 * the end "forks N": every fork that succeeded, all of them reaped.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int running;
static atomic_bool stop;
static volatile uint64_t sink;
/* The threads start spinning together once all exist: spinning ones would
 * take the CPU from main while it creates the rest (minutes for 256 on a
 * loaded 2-CPU machine). */
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static bool go;

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

static __attribute__((noinline)) void *spin_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&go_lock);
	atomic_fetch_add(&running, 1);
	while (!go)
		pthread_cond_wait(&go_cond, &go_lock);
	pthread_mutex_unlock(&go_lock);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i;
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	double secs = argc > 2 ? atof(argv[2]) : 0;
	bool forks = false, wait_go = false;
	sigset_t usr1;
	pthread_t *th;
	uint64_t end, nforks = 0;
	struct timespec tick = { 0, 10 * 1000000 };

	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--forks"))
			forks = true;
		else if (!strcmp(argv[i], "--wait"))
			wait_go = true;
		else
			n = -1;
	}
	if (n < 0 || n > 4096) {
		fprintf(stderr,
			"usage: busy_threads NTHREADS(0..4096) SECONDS [--forks] [--wait]\n");
		return 2;
	}
	/* Blocked before the threads start, so SIGUSR1 waits for main. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (wait_go)
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	th = calloc((size_t)n + 1, sizeof(*th));
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, spin_thread, NULL)) {
			perror("pthread_create");
			return 1;
		}
	while (atomic_load(&running) < n)
		nanosleep(&tick, NULL);
	pthread_mutex_lock(&go_lock);
	go = true;
	pthread_cond_broadcast(&go_cond);
	pthread_mutex_unlock(&go_lock);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (wait_go) {
		int sig;

		if (sigwait(&usr1, &sig))
			return 1;
	}
	end = secs > 0 ? mono_ns() + (uint64_t)(secs * 1e9) : UINT64_MAX;
	while (!atomic_load(&stop) && mono_ns() < end) {
		if (!forks) {
			nanosleep(&tick, NULL);
			continue;
		}
		/* Children are reaped in batches: a storm, not a fork-wait
		 * loop paced by the scheduler. */
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p > 0)
			nforks++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	atomic_store(&stop, true);
	while (wait(NULL) > 0)
		;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	printf("forks %llu\n", (unsigned long long)nforks);
	return 0;
}
