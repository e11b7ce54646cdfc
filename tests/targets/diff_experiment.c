// ep-target-libs: -lsqlite3
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An experiment loop with knobs, for the `ebpf-prof diff` tests: two runs
 * that differ in one knob must differ in exactly what that knob drives.
 * Each cycle (bracketed by the cycle marker):
 *   llama_decode()  fixed CPU work (a fake with the real name: the llama
 *                   preset probes it as inference)
 *   crunch_a()      fixed CPU work
 *   crunch_b()      the same work times B (knob: "twice the work")
 *   SQL             ROWS inserts into an in-memory SQLite table (knob)
 *   sleep           2 ms in nanosleep
 * The work is a count of iterations, not a time, so that a busy machine
 * stretches it but does not change its amount.
 *
 * usage: diff_experiment CYCLES [B [ROWS]]   (defaults 20, 1, 20)
 * Prints "cycles: N" at the end.
 *
 * diff_experiment_v2.c builds it again as a "second build": B defaults to 2
 * and extra code moves every function to another address.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../tools/cycle_marker/ebpf_prof_cycle.c"

/* About 8 ms of CPU each on a 3 GHz core. */
#define UNIT_ITERS 6000000ull

static volatile uint64_t sink;

#ifndef DIFF_B_DEFAULT
#define DIFF_B_DEFAULT 1
#endif

#ifdef DIFF_SECOND_BUILD
/* Only here to shift the code after it: the same functions at other
 * addresses, as in a rebuild after a change. */
__attribute__((noinline, used)) uint64_t second_build_padding(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		x = x * 31 + (uint64_t)i * 7 + (x >> 3) + (x << 5) + (x ^ 0x5bd1e995u);
	return x;
}
#endif

/* Inlined so that each caller is the leaf that the samples name. */
static inline __attribute__((always_inline)) uint64_t spin(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) int llama_decode(void *ctx, void *batch)
{
	sink = spin(UNIT_ITERS, (uint64_t)ctx ^ (uint64_t)batch);
	return 0;
}

__attribute__((noinline)) void crunch_a(void)
{
	sink = spin(UNIT_ITERS, sink);
}

__attribute__((noinline)) void crunch_b(int times)
{
	sink = spin(UNIT_ITERS * (uint64_t)times, sink);
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "%s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
	exit(1);
}

__attribute__((noinline)) void write_rows(sqlite3 *db, int cycle, int rows)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, ?2)", -1, &st, NULL))
		die(db, "prepare");
	for (int i = 0; i < rows; i++) {
		sqlite3_bind_int(st, 1, cycle * 100000 + i);
		sqlite3_bind_text(st, 2, "a row of results", -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			die(db, "insert");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
}

__attribute__((noinline)) void run_cycle(sqlite3 *db, int cycle, int b, int rows)
{
	struct timespec nap = { 0, 2000000L };

	llama_decode(db, &nap);
	crunch_a();
	crunch_b(b);
	write_rows(db, cycle, rows);
	nanosleep(&nap, NULL);
}

int main(int argc, char **argv)
{
	int ncycles = argc > 1 ? atoi(argv[1]) : 20, b = argc > 2 ? atoi(argv[2]) : DIFF_B_DEFAULT,
	    rows = argc > 3 ? atoi(argv[3]) : 20;
	sqlite3 *db;

	if (ncycles < 1 || ncycles > 10000 || b < 1 || b > 100 || rows < 0 || rows > 100000)
		return 2;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die(db, "open");
	if (sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b TEXT)", NULL, NULL, NULL) != SQLITE_OK)
		die(db, "create");
	for (int i = 0; i < ncycles; i++) {
		ebpf_prof_cycle_begin((uint64_t)i);
		run_cycle(db, i, b, rows);
		ebpf_prof_cycle_end((uint64_t)i);
	}
	sqlite3_close(db);
	printf("cycles: %d\n", ncycles);
	return 0;
}
