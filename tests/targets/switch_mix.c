// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Switch-heavy target with a few long waits, for the cost rule of off-CPU
 * user stacks (tests/integration/test_sched_stacks.sh): "pinger" and "ponger"
 * bounce a byte over two pipes (short blocking reads, far under the 1 ms
 * stack threshold), and every --hops/--naps round trips the pinger naps
 * 20 ms in long_nap(), so the ponger's read, at the same call as all its
 * short ones, waits that long too.
 *   switch_mix [--hops N] [--naps N]   (round trips, default 50000; naps, 20)
 * Prints "done" at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Direct system calls, as in offcpu_mix.c: Debian's libc has no frame
 * pointers, so an unwind from inside a libc wrapper would skip the caller
 * the test looks for. */
static inline __attribute__((always_inline)) long sys3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	return syscall(nr, a, b, c);
#endif
}

struct mix {
	int ab[2], ba[2];
	long hops, naps;
};

static long __attribute__((noinline)) ping_read(int fd)
{
	char c;
	long n = sys3(SYS_read, fd, (long)&c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}

static long __attribute__((noinline)) pong_read(int fd)
{
	char c;
	long n = sys3(SYS_read, fd, (long)&c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}

static void __attribute__((noinline)) long_nap(void)
{
	struct timespec ts = { 0, 20 * 1000000 };

	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	__asm__ volatile("" ::: "memory");
}

static void *ponger(void *arg)
{
	struct mix *m = arg;

	pthread_setname_np(pthread_self(), "ponger");
	while (pong_read(m->ab[0]) == 1)
		if (sys3(SYS_write, m->ba[1], (long)"y", 1) != 1)
			break;
	return NULL;
}

static void *pinger(void *arg)
{
	struct mix *m = arg;
	long per = m->hops / m->naps;

	pthread_setname_np(pthread_self(), "pinger");
	for (long n = 0; n < m->naps; n++) {
		for (long i = 0; i < per; i++)
			if (sys3(SYS_write, m->ab[1], (long)"x", 1) != 1 ||
			    ping_read(m->ba[0]) != 1)
				return NULL;
		long_nap();
	}
	close(m->ab[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	struct mix m = { .hops = 50000, .naps = 20 };
	pthread_t a, b;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--hops"))
			m.hops = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--naps"))
			m.naps = atol(argv[i + 1]);
	}
	if (m.hops < 1 || m.naps < 1 || m.naps > m.hops) {
		fprintf(stderr, "usage: switch_mix [--hops N] [--naps N]\n");
		return 2;
	}
	if (pipe(m.ab) || pipe(m.ba)) {
		perror("pipe");
		return 1;
	}
	if (pthread_create(&b, NULL, ponger, &m) || pthread_create(&a, NULL, pinger, &m)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done\n");
	return 0;
}
