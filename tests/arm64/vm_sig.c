// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The arm64 VM test's signal-frame target (tests/arm64/test_vm.sh), static,
 * built without frame pointers: main -> spin, a leaf (its return address
 * stays in x30) interrupted N_SIGNALS times by SIGALRM, whose handler
 * on_alarm -> in_handler burns CPU for half of each timer period. A walk from in_handler must cross the
 * vdso's signal frame and take spin's return address from the saved x30 in
 * the sigcontext to reach main. Prints "done signals=N".
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#define N_SIGNALS  150
#define HANDLER_NS 5000000ull /* of each 10 ms period: half the CPU, at any speed */
#define UNIT_ITERS 1000ull

static volatile uint64_t sink;
static volatile sig_atomic_t count, stop;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burns for a time, not a count: the emulated CPU's speed varies with the
 * host's load, and a fixed count gave the handler 25 samples on a quiet
 * host. */
__attribute__((noinline)) void in_handler(void)
{
	uint64_t end = mono_ns() + HANDLER_NS;

	while (mono_ns() < end)
		for (uint64_t i = 0; i < UNIT_ITERS; i++)
			sink = sink + i * 2654435761u;
}

__attribute__((noinline)) static void on_alarm(int sig)
{
	static const struct itimerval off;

	(void)sig;
	in_handler();
	/* Disarmed here, not after spin returns: every handler run then
	 * interrupts spin. */
	if (++count >= N_SIGNALS) {
		setitimer(ITIMER_REAL, &off, NULL);
		stop = 1;
	}
}

__attribute__((noinline)) void spin(void)
{
	while (!stop)
		sink = sink + 1;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		perror("vm_sig");
		return 1;
	}
	spin();
	printf("done signals=%d\n", (int)count);
	return 0;
}
