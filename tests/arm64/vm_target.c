// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The arm64 VM tests' target (tests/arm64/test_vm.sh, test_vm_510.sh),
 * built with the cross compiler (with frame pointers; for the unwinding test
 * also without them, and without CFI), launched by ebpf-prof in the
 * emulated machine. Everything it does is counted, so the test knows the answers:
 *   CPU      work_outer -> burn_a (3 units) / burn_b (1 unit), same loop
 *            body: CPU time splits 75/25 by construction, for SECONDS of
 *            its own CPU time (so the samples a test can expect do not
 *            depend on what else the emulated machine runs meanwhile: a
 *            collector busy at its start, a loaded host), at most 4 x
 *            SECONDS + 10 of wall time;
 *   probes   outer() N_OUTER times, each calling inner() 3 times;
 *   USDT     ep_vm:tick N_TICK times with argument i (arm64 argument specs);
 *   sleep    N_SLEEP nanosleeps of 2 ms (off-CPU, scheduler module).
 * usage: vm_target [SECONDS]   (default 3). Prints "done rounds=R".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

#define N_OUTER	   200
#define N_TICK	   1000
#define N_SLEEP	   50
#define UNIT_ITERS 200000ull

static volatile uint64_t sink;

/* A frame even for leaves: a frame-pointer walk then shows every caller.
 * Built with EP_VM_NO_FP (and -fomit-frame-pointer) the leaves keep no
 * frame at all: their return address stays in x30 throughout. */
#ifdef EP_VM_NO_FP
#define FORCE_FRAME() ((void)0)
#else
#define FORCE_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))
#endif

__attribute__((noinline)) void burn_a(uint64_t units)
{
	FORCE_FRAME();
	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		sink = sink + i * 2654435761u;
}

__attribute__((noinline)) void burn_b(uint64_t units)
{
	FORCE_FRAME();
	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		sink = sink + i * 2654435761u;
}

__attribute__((noinline)) void work_outer(void)
{
	burn_a(3);
	burn_b(1);
}

__attribute__((noinline)) int inner(int x)
{
	FORCE_FRAME();
	return x * 3 + (int)(sink & 1);
}

__attribute__((noinline)) int outer(int x)
{
	int s = 0;

	for (int k = 0; k < 3; k++)
		s += inner(x + k);
	return s;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	const struct timespec nap = { 0, 2000000 };
	uint64_t cpu_end, wall_end, rounds = 0;
	int acc = 0;
	/* A frame over 1 KiB: gcc saves x30 (and x29) near sp, too far from
	 * the CFA for the unwind table's 8-bit CFA offsets (EP_UW_REG_AT_SP). */
	volatile char big[1536];

	big[argc & 1023] = 1;
	acc = big[0];

	for (int i = 0; i < N_OUTER; i++)
		acc += outer(i);
	for (long i = 0; i < N_TICK; i++)
		STAP_PROBE1(ep_vm, tick, i);
	for (int i = 0; i < N_SLEEP; i++)
		nanosleep(&nap, NULL);
	cpu_end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)(seconds * 1e9);
	wall_end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)((4 * seconds + 10) * 1e9);
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < cpu_end &&
	       clock_ns(CLOCK_MONOTONIC) < wall_end) {
		work_outer();
		rounds++;
	}
	printf("done rounds=%llu acc=%d\n", (unsigned long long)rounds, acc);
	return 0;
}
