// ep-target-cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frameless code in the two places stacks are hardest to walk, for the
 * unwinding test:
 *
 * unwind_misc signal: a 1 ms interval timer (SIGALRM) whose handler burns
 *   ~0.5 ms in handler_work, interrupting spin_outer -> spin_leaf. Stacks in
 *   the handler must go handler_work <- on_alarm <- the signal trampoline
 *   (__restore_rt) <- the interrupted spin_leaf/spin_outer <- main.
 *
 * unwind_misc late LIB: "ready <pid>", waits for SIGUSR1, then dlopen(LIB)
 *   (unwind_late_lib), prints "loaded" and loops main -> late_loop ->
 *   late_relay (in LIB) -> late_cb -> late_leaf: the library arrived after
 *   the profiler attached.
 *
 * Both run until SIGTERM/SIGINT. Prints "ready <pid>".
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;
static volatile uint64_t sink;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

__attribute__((noinline)) uint64_t burn(uint64_t iters)
{
	uint64_t x = iters;

	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t handler_work(uint64_t iters)
{
	return burn(iters) + 1;
}

static void on_alarm(int sig)
{
	(void)sig;
	sink += handler_work(150000);
}

__attribute__((noinline)) uint64_t spin_leaf(uint64_t iters)
{
	uint64_t x = iters;

	for (uint64_t i = 0; i < iters; i++) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) void spin_outer(void)
{
	while (!stop_requested)
		sink += spin_leaf(100000);
}

static int run_signal(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	setitimer(ITIMER_REAL, &it, NULL);
	spin_outer();
	return 0;
}

__attribute__((noinline)) uint64_t late_leaf(uint64_t n)
{
	return burn(n);
}

__attribute__((noinline)) uint64_t late_cb(uint64_t n)
{
	return late_leaf(n) + 3;
}

typedef uint64_t (*late_relay_fn)(uint64_t (*)(uint64_t), uint64_t);

__attribute__((noinline)) void late_loop(late_relay_fn relay)
{
	while (!stop_requested)
		sink += relay(late_cb, 100000);
}

static int run_late(const char *lib)
{
	sigset_t set;
	late_relay_fn relay;
	void *h;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&relay = dlsym(h, "late_relay");
	if (!relay)
		return 1;
	printf("loaded\n");
	fflush(stdout);
	late_loop(relay);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	if (argc > 1 && !strcmp(argv[1], "signal"))
		return run_signal();
	if (argc > 2 && !strcmp(argv[1], "late"))
		return run_late(argv[2]);
	fprintf(stderr, "usage: unwind_misc signal | late LIBRARY\n");
	return 2;
}
