// ep-target-libs: -Wl,-rpath,$ORIGIN @EP_TARGETS_DIR@/unwind_lib
// ep-target-cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Code built the way distribution libraries are (-O2 -fomit-frame-pointer),
 * for the unwinding tests. One frameless leaf, leaf_work, does all the work,
 * called from distinct parents with known amounts of work per round:
 *   main -> round -> parent_a -> leaf_work                     3 units
 *   main -> round -> parent_b -> leaf_work                     2 units
 *   main -> round -> via_lib -> lib_relay (unwind_lib) -> lib_cb -> leaf_work
 *                                                              1 unit
 *   main -> round -> recurse x RECURSE_DEPTH -> leaf_work      2 units
 * so leaf time splits 3:2:1:2 between the parents by construction. A
 * frame-pointer unwinder sees leaf_work and little else; a correct unwinder
 * attributes each share to its parent and reaches main.
 * With --deep, also: main -> round -> deep_frames x DEEP_DEPTH (1 KiB of
 * locals each) -> leaf_work, 2 units: deeper than an 8 KiB window, so those
 * stacks must come out marked truncated.
 *
 * usage: unwind_frameless [SECONDS] [--deep]   (0 or absent: until SIGTERM)
 * Prints "ready <pid>"; at the end "done rounds=N".
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERS    100000UL
#define RECURSE_DEPTH 40
#define DEEP_DEPTH    24

typedef uint64_t (*unwind_cb)(uint64_t n);
uint64_t lib_relay(unwind_cb cb, uint64_t n);

static volatile sig_atomic_t stop_requested;
static volatile uint64_t sink;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* No calls, no stack: a leaf the compiler gives no frame at all. */
__attribute__((noinline)) uint64_t leaf_work(uint64_t units)
{
	uint64_t x = units;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t parent_a(uint64_t units)
{
	return leaf_work(units) + 1;
}

__attribute__((noinline)) uint64_t parent_b(uint64_t units)
{
	/* Locals on the stack: a CFA offset unlike parent_a's. */
	volatile uint64_t pad[4] = { units, 1, 2, 3 };

	return leaf_work(pad[0]) + pad[3];
}

__attribute__((noinline)) uint64_t lib_cb(uint64_t units)
{
	return leaf_work(units) + 2;
}

__attribute__((noinline)) uint64_t via_lib(uint64_t units)
{
	return lib_relay(lib_cb, units) + 3;
}

__attribute__((noinline)) uint64_t recurse(int depth, uint64_t units)
{
	if (depth <= 1)
		return leaf_work(units);
	return recurse(depth - 1, units) + (uint64_t)depth;
}

__attribute__((noinline)) uint64_t deep_frames(int depth, uint64_t units)
{
	char buf[1024];

	buf[0] = (char)depth;
	buf[sizeof(buf) - 1] = (char)units;
	/* The buffer escapes: the compiler must give every frame its 1 KiB. */
	__asm__ volatile("" : : "r"(buf) : "memory");
	if (depth <= 1)
		return leaf_work(units) + (uint64_t)buf[0];
	return deep_frames(depth - 1, units) + (uint64_t)buf[sizeof(buf) - 1];
}

/* The parents run in a random order each round: a round lasts about as
 * long as a sampling period, and in a fixed order the timer can lock onto
 * the same phase for seconds and oversample one parent (seen once: 0.30
 * and 0.17 for shares built as 0.25 and 0.25). */
__attribute__((noinline)) void round_once(int deep, uint64_t *rng)
{
	int order[5] = { 0, 1, 2, 3, 4 }, n = deep ? 5 : 4;

	for (int i = n - 1; i > 0; i--) {
		int j, t;

		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		j = (int)(*rng % (uint64_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < n; i++)
		switch (order[i]) {
		case 0:
			sink += parent_a(3);
			break;
		case 1:
			sink += parent_b(2);
			break;
		case 2:
			sink += via_lib(1);
			break;
		case 3:
			sink += recurse(RECURSE_DEPTH, 2);
			break;
		default:
			sink += deep_frames(DEEP_DEPTH, 2);
			break;
		}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = 0, t0;
	uint64_t rounds = 0, rng = 0x9e3779b97f4a7c15ull;
	int deep = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--deep"))
			deep = 1;
		else
			secs = atof(argv[i]);
	}
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	t0 = now_s();
	while (!stop_requested && (secs <= 0 || now_s() - t0 < secs)) {
		round_once(deep, &rng);
		rounds++;
	}
	printf("done rounds=%llu\n", (unsigned long long)rounds);
	return 0;
}
