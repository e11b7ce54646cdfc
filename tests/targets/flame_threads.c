// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Four named threads, each in its own function, for report.html's thread
 * picker and off-CPU flame graph (tests/integration/test_report_html_threads.sh):
 *   hasher  busy in hash_phase()                  -> CPU samples
 *   sorter  busy in sort_phase()                  -> CPU samples
 *   napper  nanosleep 10 ms in nap_phase()        -> off-CPU time
 *   reader  blocked in read_wait() on a pipe that -> off-CPU time
 *           main writes every 20 ms
 * usage: flame_threads [--seconds S]   (default 2)
 * Prints "tid NAME TID" per thread once all run, and at the end
 * "nap_ns N" / "read_ns N": the wall time each thread spent inside
 * nap_phase() / read_wait(), measured around the calls (the truth the
 * off-CPU flame graph is checked against).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ft {
	volatile int stop;
	int pipe_fd[2];
	pthread_barrier_t start;
	uint64_t nap_ns, read_ns;
	pid_t tids[4];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* System calls issued here, not through libc: Debian's libc has no frame
 * pointers, and a frame-pointer unwind from inside its wrapper would skip
 * the function the test looks for (as in offcpu_mix.c). */
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

static unsigned long __attribute__((noinline)) hash_phase(unsigned long x)
{
	for (int i = 0; i < 200000; i++)
		x = (x ^ (x >> 13)) * 0x9e3779b97f4a7c15ull;
	return x;
}

static unsigned long __attribute__((noinline)) sort_phase(unsigned long x)
{
	unsigned v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (unsigned)(x = x * 6364136223846793005ull + 1442695040888963407ull);
	for (int i = 1; i < 64; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			unsigned t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return x + v[0];
}

static void __attribute__((noinline)) nap_phase(void)
{
	struct timespec ts = { 0, 10 * 1000000 };

	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	__asm__ volatile("" ::: "memory");
}

static long __attribute__((noinline)) read_wait(int fd)
{
	char c;
	long n = sys3(SYS_read, fd, (long)&c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}

static void *hasher(void *arg)
{
	struct ft *f = arg;
	volatile unsigned long sink = 1;

	pthread_setname_np(pthread_self(), "hasher");
	f->tids[0] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&f->start);
	while (!f->stop)
		sink = hash_phase(sink);
	return NULL;
}

static void *sorter(void *arg)
{
	struct ft *f = arg;
	volatile unsigned long sink = 1;

	pthread_setname_np(pthread_self(), "sorter");
	f->tids[1] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&f->start);
	while (!f->stop)
		sink = sort_phase(sink);
	return NULL;
}

static void *napper(void *arg)
{
	struct ft *f = arg;

	pthread_setname_np(pthread_self(), "napper");
	f->tids[2] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&f->start);
	while (!f->stop) {
		uint64_t t = now_ns();

		nap_phase();
		f->nap_ns += now_ns() - t;
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct ft *f = arg;

	pthread_setname_np(pthread_self(), "reader");
	f->tids[3] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&f->start);
	for (;;) {
		uint64_t t = now_ns();
		long n = read_wait(f->pipe_fd[0]);

		f->read_ns += now_ns() - t;
		/* EOF: main closed the write end. */
		if (n <= 0)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "hasher", "sorter", "napper", "reader" };
	void *(*fns[4])(void *) = { hasher, sorter, napper, reader };
	struct timespec gap = { 0, 20 * 1000000 };
	double seconds = 2;
	pthread_t th[4];
	struct ft f;
	uint64_t end;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: flame_threads [--seconds S]\n");
			return 2;
		}
	}
	memset(&f, 0, sizeof(f));
	if (pipe(f.pipe_fd)) {
		perror("pipe");
		return 1;
	}
	pthread_barrier_init(&f.start, NULL, 5);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, fns[i], &f)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	pthread_barrier_wait(&f.start);
	for (int i = 0; i < 4; i++)
		printf("tid %s %d\n", names[i], (int)f.tids[i]);
	fflush(stdout);
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end) {
		nanosleep(&gap, NULL);
		if (write(f.pipe_fd[1], "x", 1) != 1)
			break;
	}
	f.stop = 1;
	close(f.pipe_fd[1]);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("nap_ns %llu\nread_ns %llu\n", (unsigned long long)f.nap_ns,
	       (unsigned long long)f.read_ns);
	return 0;
}
