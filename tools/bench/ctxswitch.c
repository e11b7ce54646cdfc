// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Context-switch-heavy workload for tools/bench/sched_overhead.sh: PAIRS
 * pairs of threads bounce a byte over two pipes, each hop a blocking read,
 * i.e. one switch out and one switch in per hop. With --rate R (switches
 * per second, all pairs together) each pair pauses between bursts to hold
 * that rate; 0 means as fast as possible. Prints the switches done and the
 * wall and CPU time they took.
 *   ctxswitch [--pairs N] [--hops N] [--rate R]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct pair {
	int ab[2], ba[2];
	long hops;
	double hop_ns; /* pacing: target time per hop, 0 = none */
};

static double now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *pong(void *arg)
{
	struct pair *p = arg;
	char c;

	while (read(p->ab[0], &c, 1) == 1)
		if (write(p->ba[1], &c, 1) != 1)
			break;
	return NULL;
}

static void *ping(void *arg)
{
	struct pair *p = arg;
	double t0 = now_ns(CLOCK_MONOTONIC);
	char c = 'x';

	for (long i = 0; i < p->hops; i += 2) {
		if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
			break;
		if (p->hop_ns > 0 && (i & 63) == 0) {
			double due = t0 + i * p->hop_ns, t = now_ns(CLOCK_MONOTONIC);

			if (due > t) {
				struct timespec ts = { 0, (long)(due - t) };

				nanosleep(&ts, NULL);
			}
		}
	}
	close(p->ab[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	long pairs = 1, hops = 1000000;
	double rate = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--pairs"))
			pairs = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--hops"))
			hops = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate"))
			rate = atof(argv[i + 1]);
	}
	if (pairs < 1 || pairs > 64 || hops < 2)
		return 2;
	struct pair *p = calloc((size_t)pairs, sizeof(*p));
	pthread_t *t = calloc((size_t)pairs * 2, sizeof(*t));
	double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);

	for (long i = 0; i < pairs; i++) {
		if (pipe(p[i].ab) || pipe(p[i].ba))
			return 1;
		p[i].hops = hops / pairs;
		p[i].hop_ns = rate > 0 ? 1e9 * pairs / rate : 0;
		pthread_create(&t[2 * i], NULL, pong, &p[i]);
		pthread_create(&t[2 * i + 1], NULL, ping, &p[i]);
	}
	for (long i = 0; i < 2 * pairs; i++)
		pthread_join(t[i], NULL);
	double wall = now_ns(CLOCK_MONOTONIC) - w0, cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;

	printf("done hops=%ld wall_ns=%.0f cpu_ns=%.0f rate=%.0f/s\n", hops, wall, cpu,
	       hops / (wall / 1e9));
	free(p);
	free(t);
	return 0;
}
