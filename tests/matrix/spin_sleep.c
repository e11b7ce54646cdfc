/* The kernel matrix's target (tests/matrix/run.sh): rounds of ~4 ms on CPU
 * in spin_work and ~4 ms asleep in sleep_work, both called from main, for
 * the whole seconds given (default 2). Built static with frame pointers, leaf
 * functions included, so the VM needs no libraries and every kernel's
 * frame-pointer walk reaches main. The spin is bounded by the clock, not
 * by a loop count: under emulation a count would take 10-100x longer than
 * on the host. main itself does next to nothing on CPU (one clock read,
 * no libc formatting, one write at the end), so that its CPU samples are
 * spin_work's but for the sleeps' system calls. A second argument "alloc"
 * adds one malloc of ALLOC_BYTES per round, from alloc_work (the --alloc
 * run: each block is far above its sampling rate, so nearly every one is
 * sampled). */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

volatile unsigned long sink;

/* Returns the time it stopped at. */
__attribute__((noinline)) double spin_work(double secs)
{
	double t = now(), end = t + secs;
	unsigned long x = 1;

	while (t < end) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
		t = now();
	}
	return t;
}

/* The system call made here, not in libc's nanosleep: libc is built
 * without frame pointers, and a frame-pointer walk from inside its
 * wrapper (5.10's off-CPU stacks) skips the wrapper's caller, this
 * function, going from the wrapper straight to main. */
__attribute__((noinline)) void sleep_work(double secs)
{
	struct timespec ts = { 0, (long)(secs * 1e9) };
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
	(void)ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_nanosleep;
	register long x0 __asm__("x0") = (long)&ts;
	register long x1 __asm__("x1") = 0;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
#else
	nanosleep(&ts, NULL);
#endif
}

#define ALLOC_BYTES (64 * 1024)

void *volatile held;

/* One block, written so that it is not elided, freed at once. */
__attribute__((noinline)) void alloc_work(void)
{
	held = malloc(ALLOC_BYTES);
	if (held)
		memset(held, 1, 64);
	free(held);
	held = NULL;
}

/* Digits by hand, not atof or printf: their first call (locale set-up,
 * page faults) took tens of ms under a loaded emulator, all of it in main
 * and none in spin_work. */
int main(int argc, char **argv)
{
	double secs = 0, start = now(), t = start;
	unsigned rounds = 0;
	char msg[32] = "spin_sleep: rounds=", *p = msg + 19, digits[12];
	int n = 0, alloc = argc > 2 && !strcmp(argv[2], "alloc");

	for (const char *a = argc > 1 ? argv[1] : "2"; *a >= '0' && *a <= '9'; a++)
		secs = secs * 10 + (*a - '0');
	while (t - start < secs) {
		t = spin_work(0.004);
		sleep_work(0.004);
		if (alloc)
			alloc_work();
		rounds++;
	}
	do
		digits[n++] = (char)('0' + rounds % 10);
	while ((rounds /= 10) && n < 11);
	while (n)
		*p++ = digits[--n];
	*p++ = '\n';
	return write(1, msg, (size_t)(p - msg)) == p - msg ? 0 : 1;
}
