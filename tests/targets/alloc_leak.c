// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Known allocations for the --alloc tests: usage
 *   alloc_leak CYCLES LEAK_KIB PAIRS [LIVE [MAP_KIB]]
 * prints "ready <pid>", waits for SIGUSR1, then runs CYCLES cycles (each
 * bracketed by the cycle marker) of:
 *   churn      PAIRS malloc/free pairs of 16..4096 bytes (a few calloc and
 *              realloc among them), at most 64 blocks live at once
 *   leak_some  LEAK_KIB KiB in 4 KiB blocks that are never freed
 *   cycle 1 only: transient_big, an 8 MiB block freed at once
 *   with MAP_KIB > 0, anonymous mappings made with mmap itself:
 *   map_leak     MAP_KIB KiB never unmapped, in 1 MiB mappings, every
 *                other one mapped 64 KiB larger and trimmed to a 64 KiB
 *                boundary (head and tail unmapped)
 *   map_transient  a 4 MiB mapping unmapped at once
 * With LIVE > 0 it first allocates LIVE blocks of 32 bytes and keeps them
 * (the bad-input test: more live blocks than the tracking table holds).
 * Then prints what it asked the allocator for ("asked BYTES", "leaked
 * BYTES", "big BYTES"), what it mapped ("mapped BYTES" asked of mmap,
 * "map_leaked BYTES" still mapped, "map_big BYTES") and "done", and exits
 * without freeing the leak.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../tools/cycle_marker/ebpf_prof_cycle.c"

#define BIG	(8u << 20)
#define MAP_BIG (4u << 20)
#define MAP_ONE (1u << 20)
#define MAP_AL	(64u << 10)

static uint64_t asked, leaked, mapped, map_leaked;
static void **leaks;
static size_t nleaks, capleaks;
static uint32_t seed = 12345;
/* The big block escapes through it: a compiler may drop a malloc/free pair
 * whose memory nobody can see. */
char *volatile big_seen;

static uint32_t next_rand(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

__attribute__((noinline)) static void *churn_alloc(size_t n)
{
	asked += n;
	return malloc(n);
}

__attribute__((noinline)) void churn(int pairs)
{
	void *live[64] = { 0 };

	for (int i = 0; i < pairs; i++) {
		int slot = (int)(next_rand() % 64);
		size_t n = 16 + next_rand() % 4081;

		free(live[slot]);
		if (i % 50 == 0) {
			live[slot] = calloc(1, n);
			asked += n;
		} else {
			live[slot] = churn_alloc(n);
		}
		if (!live[slot])
			abort();
		memset(live[slot], 1, 16);
	}
	for (int i = 0; i < 64; i++)
		free(live[i]);
}

__attribute__((noinline)) void leak_some(size_t kib)
{
	for (size_t i = 0; i < kib / 4; i++) {
		void *p = malloc(4096);

		if (!p)
			abort();
		memset(p, 2, 64);
		if (nleaks == capleaks) {
			capleaks = capleaks ? capleaks * 2 : 1024;
			leaks = realloc(leaks, capleaks * sizeof(*leaks));
			if (!leaks)
				abort();
		}
		leaks[nleaks++] = p;
		asked += 4096;
		leaked += 4096;
	}
}

__attribute__((noinline)) void transient_big(void)
{
	char *p = malloc(BIG);

	if (!p)
		abort();
	for (size_t i = 0; i < BIG; i += 4096)
		p[i] = 3;
	big_seen = p;
	asked += BIG;
	free(big_seen);
}

static inline __attribute__((always_inline)) char *map_anon(size_t n)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	mapped += n;
	return p;
}

__attribute__((noinline)) void map_leak(size_t kib)
{
	for (size_t i = 0; i < kib / 1024; i++) {
		char *p;

		if (i % 2) {
			/* Aligned as an arena would be: the head and tail around
			 * the 64 KiB boundary go back at once. */
			char *raw = map_anon(MAP_ONE + MAP_AL);
			size_t head = (MAP_AL - (uintptr_t)raw % MAP_AL) % MAP_AL;

			p = raw + head;
			if (head && munmap(raw, head))
				abort();
			if (MAP_AL - head && munmap(p + MAP_ONE, MAP_AL - head))
				abort();
		} else {
			p = map_anon(MAP_ONE);
		}
		for (size_t o = 0; o < MAP_ONE; o += 4096)
			p[o] = 4;
		map_leaked += MAP_ONE;
	}
}

__attribute__((noinline)) void map_transient(void)
{
	char *p = map_anon(MAP_BIG);

	for (size_t o = 0; o < MAP_BIG; o += 4096)
		p[o] = 5;
	if (munmap(p, MAP_BIG))
		abort();
}

__attribute__((noinline)) void keep_live(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(32);

		if (!p)
			abort();
		if (nleaks == capleaks) {
			capleaks = capleaks ? capleaks * 2 : 1024;
			leaks = realloc(leaks, capleaks * sizeof(*leaks));
			if (!leaks)
				abort();
		}
		leaks[nleaks++] = p;
		asked += 32;
		leaked += 32;
	}
}

__attribute__((noinline)) void run_cycle(int i, size_t leak_kib, int pairs, size_t map_kib)
{
	churn(pairs);
	leak_some(leak_kib);
	if (i == 1)
		transient_big();
	if (map_kib) {
		map_leak(map_kib);
		map_transient();
	}
}

int main(int argc, char **argv)
{
	int ncycles = argc > 1 ? atoi(argv[1]) : 10, pairs = argc > 3 ? atoi(argv[3]) : 2000, sig;
	size_t leak_kib = argc > 2 ? (size_t)atol(argv[2]) : 2048;
	long live = argc > 4 ? atol(argv[4]) : 0;
	size_t map_kib = argc > 5 ? (size_t)atol(argv[5]) : 0;
	sigset_t set;

	if (ncycles < 1 || ncycles > 100000 || pairs < 0 || live < 0)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	keep_live(live);
	for (int i = 0; i < ncycles; i++) {
		ebpf_prof_cycle_begin((uint64_t)i);
		run_cycle(i, leak_kib, pairs, map_kib);
		ebpf_prof_cycle_end((uint64_t)i);
	}
	printf("asked %llu\nleaked %llu\nbig %u\nmapped %llu\nmap_leaked %llu\nmap_big %u\ndone\n",
	       (unsigned long long)asked, (unsigned long long)leaked, BIG,
	       (unsigned long long)mapped, (unsigned long long)map_leaked, MAP_BIG);
	fflush(stdout);
	return 0;
}
