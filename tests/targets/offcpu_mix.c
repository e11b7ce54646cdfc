// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Off-CPU target with known proportions, one named thread per behaviour,
 * for tests/integration/test_sched.sh:
 *   sleeper  nanosleep 10 ms in a loop          -> off-CPU, "sleep", in sleep_phase()
 *   piper    blocked in read() on a pipe that    -> off-CPU, "sleep", in pipe_wait()
 *            the feeder thread writes every 20 ms
 *   disker   write 4 KiB + fdatasync in a loop    -> off-CPU, "uninterruptible", in disk_phase()
 *   spinner  busy loop                           -> on-CPU (or preempted), in spin_phase()
 * Usage: offcpu_mix [--seconds S] [--dir DIR]. Prints "ready <pid>" once every
 * thread runs, "done" at the end, and exits after S seconds (default 3).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct mix {
	volatile int stop;
	int pipe_fd[2];
	int disk_fd;
	pthread_barrier_t start;
};

#define NTHREADS 5

/* The thread's own CPU time, as its return value: the test compares the
 * scheduler view's on-CPU time with it (a load-independent truth). */
static void *own_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (void *)(uintptr_t)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/* The blocking system calls are issued right here, not through libc:
 * Debian's libc has no frame pointers, so a frame-pointer unwind from
 * inside a libc wrapper skips the wrapper's caller, which is the very
 * function the test looks for. */
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

static void __attribute__((noinline)) sleep_phase(void)
{
	struct timespec ts = { 0, 10 * 1000000 };

	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	__asm__ volatile("" ::: "memory");
}

static void *sleeper(void *arg)
{
	struct mix *m = arg;

	pthread_setname_np(pthread_self(), "sleeper");
	pthread_barrier_wait(&m->start);
	while (!m->stop)
		sleep_phase();
	return own_cpu();
}

static int __attribute__((noinline)) pipe_wait(int fd)
{
	char c;
	int n = (int)sys3(SYS_read, fd, (long)&c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}

static void *piper(void *arg)
{
	struct mix *m = arg;

	pthread_setname_np(pthread_self(), "piper");
	pthread_barrier_wait(&m->start);
	/* EOF (feeder closed the write end) ends the loop. */
	while (pipe_wait(m->pipe_fd[0]) > 0)
		;
	return own_cpu();
}

static void *feeder(void *arg)
{
	struct mix *m = arg;
	struct timespec ts = { 0, 20 * 1000000 };

	pthread_setname_np(pthread_self(), "feeder");
	pthread_barrier_wait(&m->start);
	while (!m->stop) {
		nanosleep(&ts, NULL);
		if (write(m->pipe_fd[1], "x", 1) != 1)
			break;
	}
	close(m->pipe_fd[1]);
	return own_cpu();
}

static void __attribute__((noinline)) disk_phase(int fd, const char *buf, size_t len)
{
	if (pwrite(fd, buf, len, 0) != (ssize_t)len)
		perror("pwrite");
	if (sys3(SYS_fdatasync, fd, 0, 0))
		fprintf(stderr, "fdatasync failed\n");
	__asm__ volatile("" ::: "memory");
}

static void *disker(void *arg)
{
	static char buf[4096]; /* small: the test needs D time, not bandwidth */
	struct mix *m = arg;
	unsigned k = 0;

	pthread_setname_np(pthread_self(), "disker");
	pthread_barrier_wait(&m->start);
	while (!m->stop) {
		/* New contents each time so every sync has data to write. */
		memset(buf, (int)(k++ & 0xff), sizeof(buf));
		disk_phase(m->disk_fd, buf, sizeof(buf));
	}
	return own_cpu();
}

static unsigned long __attribute__((noinline)) spin_phase(unsigned long x)
{
	for (int i = 0; i < 1000000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *spinner(void *arg)
{
	struct mix *m = arg;
	volatile unsigned long sink = 1;

	pthread_setname_np(pthread_self(), "spinner");
	pthread_barrier_wait(&m->start);
	while (!m->stop)
		sink = spin_phase(sink);
	return own_cpu();
}

int main(int argc, char **argv)
{
	void *(*fns[NTHREADS])(void *) = { sleeper, piper, feeder, disker, spinner };
	const char *dir = "/var/tmp";
	double seconds = 3;
	pthread_t th[NTHREADS];
	char path[4096];
	struct mix m;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: offcpu_mix [--seconds S] [--dir DIR]\n");
			return 2;
		}
	}
	memset(&m, 0, sizeof(m));
	if (pipe(m.pipe_fd)) {
		perror("pipe");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/offcpu_mix.%d.tmp", dir, (int)getpid());
	m.disk_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (m.disk_fd < 0) {
		fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
		return 1;
	}
	unlink(path);
	pthread_barrier_init(&m.start, NULL, NTHREADS + 1);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, fns[i], &m)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	pthread_barrier_wait(&m.start);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	m.stop = 1;
	static const char *const names[NTHREADS] = { "sleeper", "piper", "feeder", "disker",
						     "spinner" };
	for (int i = 0; i < NTHREADS; i++) {
		void *cpu = NULL;

		pthread_join(th[i], &cpu);
		printf("cpu %s %llu\n", names[i], (unsigned long long)(uintptr_t)cpu);
	}
	close(m.disk_fd);
	printf("done\n");
	return 0;
}
