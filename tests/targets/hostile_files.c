// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A profiled program that names files the root profiler should not read
 * or wait on (docs/security.md), run as an unprivileged user by
 * test_hostile_files.sh:
 *   hostile_files [--now] LIB MODEL...
 * prints "ready <pid>"; SIGUSR1 -> dlopen(LIB), "loaded"; SIGUSR1 -> runs
 * in LIB's hostile_spin, calls LIB's llama_model_load_from_file on each
 * MODEL (a "fifo:" prefix: the path is then replaced by a FIFO), replaces
 * LIB's path by a FIFO (the library stays mapped), prints "swapped", and
 * spins in LIB until killed. --now: no pauses, and it exits 0.3 s after
 * "swapped" (a program gone before the profiler writes its outputs).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct hostile_params {
	unsigned char b[1024];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void to_fifo(const char *path)
{
	if (unlink(path) || mkfifo(path, 0666)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	bool now = argc > 1 && !strcmp(argv[1], "--now");
	int first = now ? 2 : 1, sig;
	struct hostile_params params = { { 0 } };
	void *(*load)(const char *, struct hostile_params);
	uint64_t (*spin)(uint64_t), t0;
	sigset_t set;
	void *h;

	if (argc < first + 2) {
		fprintf(stderr, "usage: hostile_files [--now] LIB MODEL...\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!now && sigwait(&set, &sig))
		return 1;
	h = dlopen(argv[first], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", argv[first], dlerror());
		return 1;
	}
	*(void **)&load = dlsym(h, "llama_model_load_from_file");
	*(void **)&spin = dlsym(h, "hostile_spin");
	if (!load || !spin)
		return 1;
	printf("loaded\n");
	fflush(stdout);
	if (!now && sigwait(&set, &sig))
		return 1;
	for (t0 = now_ms(); now_ms() - t0 < 300;)
		spin(100000);
	for (int i = first + 1; i < argc; i++) {
		bool fifo = !strncmp(argv[i], "fifo:", 5);
		const char *path = fifo ? argv[i] + 5 : argv[i];

		load(path, params);
		if (fifo)
			to_fifo(path);
	}
	to_fifo(argv[first]);
	printf("swapped\n");
	fflush(stdout);
	for (t0 = now_ms(); !now || now_ms() - t0 < 300;)
		spin(100000);
	return 0;
}
