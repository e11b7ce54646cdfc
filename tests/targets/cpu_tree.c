// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Known call tree for the profiler's integration tests and the overhead bench:
 *   main -> work_outer -> burn_a (3 units) / burn_b (1 unit)
 * burn_a and burn_b run the same loop body, 3 units to 1, but the CPU time
 * does not split 75/25 on every host (perf record measured burn_a at 88-90%
 * here): work_outer measures it, with the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) read around each call, and the tests compare
 * the profile's split with that.
 *
 * usage: cpu_tree [SECONDS] [--cycles N] [--cpu SECONDS] [--wait]
 *   SECONDS   run this long (wall clock); 0 or absent = until SIGTERM/SIGINT
 *   --cycles  run exactly N work_outer cycles instead (fixed work, for benchmarks)
 *   --cpu     run until the process has used this much CPU time instead (a
 *             sample count that does not depend on the machine's load)
 *   --wait    after "ready", wait for a line on stdin before working
 * Prints "ready <pid>" when set up; at the end
 * "done cycles=N cpu_ns=C a_ns=A b_ns=B wall_ns=W": CPU time of the process,
 * of the burn_a and the burn_b calls. On SIGUSR1, after the cycle under way,
 * "split cycles=N cpu_ns=C a_ns=A b_ns=B" so far (a test takes two and
 * subtracts).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ~0.07 ms per unit on a 2020s x86 core: short against any sampling period
 * tested (>= 1 ms), so burn_a/burn_b interleave finely and the split holds
 * even for a 1 s capture. */
#define UNIT_ITERS 200000UL

static volatile sig_atomic_t stop_requested, split_requested;
/* Sink the compiler must assume is observed, so the loops cannot be folded. */
static volatile uint64_t sink;

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

static void on_split(int sig)
{
	(void)sig;
	split_requested = 1;
}

/* Same body in both burners on purpose: equal cost per iteration. */
#define BURN_BODY(n)                                   \
	do {                                           \
		for (uint64_t i = 0; i < (n); i++)     \
			sink = sink + i * 2654435761u; \
	} while (0)

__attribute__((noinline)) void burn_a(uint64_t units)
{
	FORCE_FRAME();
	BURN_BODY(units * UNIT_ITERS);
}

__attribute__((noinline)) void burn_b(uint64_t units)
{
	FORCE_FRAME();
	BURN_BODY(units * UNIT_ITERS);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The thread's CPU time in each burner. Each clock read is a system call
 * (~1 us, not in either burner's samples), split between the two
 * intervals it ends and starts: a bias of ~0.002 on burn_a's share. */
static uint64_t a_ns, b_ns;

__attribute__((noinline)) void work_outer(void)
{
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t1, t2;

	burn_a(3);
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	burn_b(1);
	t2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	a_ns += t1 - t0;
	b_ns += t2 - t1;
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [SECONDS] [--cycles N] [--cpu SECONDS] [--wait]\n", argv0);
	return 2;
}

int main(int argc, char **argv)
{
	double seconds = 0, cpu_seconds = 0;
	long long cycles = -1;
	int wait_stdin = 0;
	struct sigaction sa;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--wait")) {
			wait_stdin = 1;
		} else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			errno = 0;
			cpu_seconds = strtod(argv[++i], &end);
			if (errno || *end || cpu_seconds <= 0)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--cycles") && i + 1 < argc) {
			errno = 0;
			cycles = strtoll(argv[++i], &end, 10);
			if (errno || *end || cycles < 0)
				return usage(argv[0]);
		} else {
			errno = 0;
			seconds = strtod(argv[i], &end);
			if (errno || *end || seconds < 0)
				return usage(argv[0]);
		}
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_split;
	sigaction(SIGUSR1, &sa, NULL);

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (wait_stdin) {
		char line[64];

		if (!fgets(line, sizeof(line), stdin) && ferror(stdin))
			return 1;
	}

	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	uint64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t deadline = seconds > 0 ? t0 + (uint64_t)(seconds * 1e9) : UINT64_MAX;
	long long done = 0;

	while (!stop_requested) {
		if (cycles >= 0 ? done >= cycles : now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		if (cpu_seconds > 0 &&
		    now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0 >= (uint64_t)(cpu_seconds * 1e9))
			break;
		work_outer();
		done++;
		if (split_requested) {
			split_requested = 0;
			printf("split cycles=%lld cpu_ns=%llu a_ns=%llu b_ns=%llu\n", done,
			       (unsigned long long)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0),
			       (unsigned long long)a_ns, (unsigned long long)b_ns);
			fflush(stdout);
		}
	}
	/* wall_ns last: tools/bench/overhead.sh reads the line by position. */
	printf("done cycles=%lld cpu_ns=%llu a_ns=%llu b_ns=%llu wall_ns=%llu\n", done,
	       (unsigned long long)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0),
	       (unsigned long long)a_ns, (unsigned long long)b_ns,
	       (unsigned long long)(now_ns(CLOCK_MONOTONIC) - t0));
	return 0;
}
