// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fixed work without cycles, for `ebpf-prof diff` of two builds as a
 * benchmark harness runs them: ROUNDS rounds of alpha(), beta(), gamma_(),
 * each doing its own share of work in the shared leaf spin() and then
 * calling delta(), which spins too. beta() does BETA_FACTOR times the work
 * of the others: fixed_work_v2.c is the "new build" with 2. Every sample
 * lands in spin(), so the functions differ only by their total time (the
 * callers on the stack): a regression along a call path.
 *
 * usage: fixed_work [ROUNDS [UNIT]]   (defaults 600 rounds, 300000
 * iterations per unit of work; about 1 s of CPU at 1 ns an iteration).
 * Prints "rounds: N" at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef BETA_FACTOR
#define BETA_FACTOR 1
#endif

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t spin(uint64_t iters)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	return x;
}

__attribute__((noinline)) void delta(uint64_t unit)
{
	spin(unit / 3);
}

__attribute__((noinline)) void alpha(uint64_t unit)
{
	spin(unit);
	delta(unit);
}

__attribute__((noinline)) void beta(uint64_t unit)
{
	spin(BETA_FACTOR * unit);
	delta(unit);
}

/* gamma is a libm function: gamma_ keeps the name apart. */
__attribute__((noinline)) void gamma_(uint64_t unit)
{
	spin(unit);
	delta(unit);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 600;
	long long unit = argc > 2 ? strtoll(argv[2], NULL, 10) : 300000;

	if (rounds <= 0 || unit <= 0) {
		fprintf(stderr, "usage: fixed_work [ROUNDS [UNIT]]\n");
		return 2;
	}
	for (long r = 0; r < rounds; r++) {
		/* Rounds of 0.73 to 1.27 units (1 on average), the same sequence
		 * in every run: a loop of one fixed length near the sampling
		 * period would be sampled at the same phase run after run
		 * (aliasing), spreading the functions' counts far more than
		 * Poisson between two runs of one build. */
		uint64_t u = (uint64_t)unit * (uint64_t)(8 + (r * 5) % 7) / 11;

		alpha(u);
		beta(u);
		gamma_(u);
	}
	printf("rounds: %ld\n", rounds);
	return 0;
}
