// ep-target-cc: gcc
// ep-target-cflags: -O2 -fomit-frame-pointer
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stacks an unwinder gets wrong, for the in-kernel walker's test
 * (test_unwind_kwalk.sh), built by gcc without frame pointers. Each round
 * runs every case for about the same time under main -> run_round:
 *
 *   case_big16   a 20 KiB frame  -> leaf_burn
 *   case_big64   a 72 KiB frame  -> leaf_burn
 *   case_deep    deep_rec x 300  -> leaf_burn
 *   case_plt     plt_loop        -> strlen through the PLT, many short calls
 *   case_sig     raise(SIGUSR1)  -> on_usr1 (signal frame) -> leaf_burn
 *   case_probed  rec_a x 100 -> mid_probed -> rec_b x 50 -> leaf_burn
 *                (the test puts a uretprobe on mid_probed)
 *
 * kwalk_cases deep N: only main -> run_deep -> deep_rec x N -> leaf_burn
 * (stacks of N + 4 frames with libc's, for tools/bench/unwind_bpf_cost.sh).
 * kwalk_cases sleepdeep N: main -> run_sleep_deep -> sleep_rec x N ->
 * sleep_leaf, which naps 5 ms at a time (deep off-CPU stacks,
 * test_offcpu_deep.sh).
 *
 * Runs until SIGTERM/SIGINT. Prints "ready <pid>".
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOIPA __attribute__((noinline, noipa))

static volatile sig_atomic_t stop_requested;
static volatile uint64_t sink;
static const char *volatile plt_str = "short string";

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

NOIPA uint64_t leaf_burn(uint64_t iters)
{
	uint64_t x = iters;

	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOIPA uint64_t case_big16(uint64_t iters)
{
	volatile char buf[20 * 1024];

	buf[0] = (char)iters;
	buf[sizeof(buf) - 1] = 1;
	return leaf_burn(iters) + buf[0] + buf[sizeof(buf) - 1];
}

NOIPA uint64_t case_big64(uint64_t iters)
{
	volatile char buf[72 * 1024];

	buf[0] = (char)iters;
	buf[sizeof(buf) - 1] = 1;
	return leaf_burn(iters) + buf[0] + buf[sizeof(buf) - 1];
}

NOIPA uint64_t deep_rec(int n, uint64_t iters)
{
	if (n <= 1)
		return leaf_burn(iters);
	return deep_rec(n - 1, iters) + 1;
}

NOIPA uint64_t case_deep(uint64_t iters)
{
	return deep_rec(300, iters);
}

NOIPA uint64_t plt_loop(uint64_t iters)
{
	uint64_t n = 0;

	/* Twice the others' iterations: a strlen call is a few ns, and at
	 * iters / 8 the case got 7-9 samples of 4000, under the test's 15. */
	for (uint64_t i = 0; i < iters * 2; i++)
		n += strlen(plt_str);
	return n;
}

NOIPA uint64_t case_plt(uint64_t iters)
{
	return plt_loop(iters) + 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	sink += leaf_burn(sink & 1 ? 400000 : 400001);
}

NOIPA uint64_t case_sig(uint64_t iters)
{
	(void)iters;
	raise(SIGUSR1);
	return 1;
}

NOIPA uint64_t rec_b(int n, uint64_t iters)
{
	if (n <= 1)
		return leaf_burn(iters);
	return rec_b(n - 1, iters) + 1;
}

NOIPA uint64_t mid_probed(uint64_t iters)
{
	return rec_b(50, iters) + 1;
}

NOIPA uint64_t rec_a(int n, uint64_t iters)
{
	if (n <= 1)
		return mid_probed(iters);
	return rec_a(n - 1, iters) + 1;
}

NOIPA uint64_t case_probed(uint64_t iters)
{
	return rec_a(100, iters) + 1;
}

NOIPA void run_round(void)
{
	const uint64_t iters = 400000;

	sink += case_big16(iters);
	sink += case_big64(iters);
	sink += case_deep(iters);
	sink += case_plt(iters);
	sink += case_sig(iters);
	sink += case_probed(iters);
}

NOIPA void run_deep(int n)
{
	sink += deep_rec(n, 400000);
}

NOIPA uint64_t sleep_leaf(void)
{
	while (!stop_requested)
		usleep(5000);
	return 1;
}

NOIPA uint64_t sleep_rec(int n)
{
	if (n <= 1)
		return sleep_leaf();
	return sleep_rec(n - 1) + 1;
}

NOIPA void run_sleep_deep(int n)
{
	sink += sleep_rec(n);
}

int main(int argc, char **argv)
{
	int deep = argc > 2 && !strcmp(argv[1], "deep") ? atoi(argv[2]) : 0;
	int sleepdeep = argc > 2 && !strcmp(argv[1], "sleepdeep") ? atoi(argv[2]) : 0;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (sleepdeep > 0)
		run_sleep_deep(sleepdeep);
	while (!stop_requested) {
		if (deep > 0)
			run_deep(deep);
		else
			run_round();
	}
	return 0;
}
