// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spends most of its CPU time in the kernel: large reads from /dev/zero
 * (the kernel clears 1 MiB of user memory per call).
 * usage: kernel_heavy [SECONDS]   (default 0 = until SIGTERM/SIGINT)
 * Prints "ready <pid>"; main -> kernel_loop -> raw_read -> read(2).
 *
 * raw_read issues the syscall itself on x86_64/arm64 so the user-space leaf at
 * syscall time is a function with a frame pointer: a frame-pointer unwinder
 * then sees main;kernel_loop;raw_read exactly, which the tests check.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (1u << 20)

static volatile sig_atomic_t stop_requested;

/*
 * GCC 12 ignores -mno-omit-leaf-frame-pointer for leaf functions that need no
 * stack: they get no frame, and a frame-pointer unwinder then skips their
 * caller. Taking the frame address forces a frame, so the call tree the
 * tests assert is exactly what a correct unwinder must report.
 */
#define FORCE_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

__attribute__((noinline)) long raw_read(int fd, void *buf, size_t len)
{
	FORCE_FRAME();
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_read;
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = (long)len;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	return syscall(SYS_read, fd, buf, len);
#endif
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) int kernel_loop(int fd, char *buf, uint64_t deadline)
{
	while (!stop_requested && mono_ns() < deadline) {
		if (raw_read(fd, buf, BUF_SIZE) < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	struct sigaction sa;
	char *buf;
	int fd, ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	buf = malloc(BUF_SIZE);
	if (fd < 0 || !buf) {
		perror("kernel_heavy: /dev/zero");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	ret = kernel_loop(fd, buf,
			  seconds > 0 ? mono_ns() + (uint64_t)(seconds * 1e9) : UINT64_MAX);
	free(buf);
	close(fd);
	return ret ? 1 : 0;
}
