// ep-target-libs: -lsqlite3
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An experiment loop with a known cycle structure, for the cycles tests.
 * Each cycle (run_cycle, bracketed by the cycle marker):
 *   inference  llama_decode(): a busy loop of INFER_MS (a fake with the real
 *              name, so the llama preset probes it as inference)
 *   SQL        N_INS inserts (prepare/step/reset/finalize) into an in-memory
 *              SQLite database; cycle SLOW also runs a recursive query for
 *              SLOW_SQL_MS: the slow cycle's extra time is SQL
 *   sleep      SLEEP_MS in nanosleep (off-CPU, sleep)
 *
 * usage: cycle_experiment [CYCLES [SLOW [--stay]]]   (default 8 cycles, slow = 5)
 * Prints "ready <pid>", waits for SIGUSR1 (sent once ebpf-prof is
 * attached), runs, and prints one line per cycle with its own measurements
 * (CLOCK_MONOTONIC, the profiler's clock):
 *   cycle I start_ns end_ns infer_ns sql_ns sql_calls sleep_ns sql_cpu_ns sql_off3_ns
 * (sql_cpu_ns: the thread's CPU time across the SQLite calls,
 * CLOCK_THREAD_CPUTIME_ID, read just outside each call's wall-clock reads;
 * sql_off3_ns: the three largest of the calls' wall time the thread did
 * not run, wall minus CPU time, summed), then "done". With --stay it then waits for SIGUSR1 before it exits, so a
 * profiler can name its last samples' frames from its maps.
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The marker, compiled in as a user would (tools/cycle_marker). */
#include "../../tools/cycle_marker/ebpf_prof_cycle.c"

#define INFER_MS 30
#define SLEEP_MS 20
#define N_INS	 20
/* Long enough that the slow cycle stays slow when a busy host stretches
 * the others 2-3x. */
#define SLOW_SQL_MS 300

struct own {
	uint64_t infer_ns, sql_ns, sql_calls, sleep_ns, sql_cpu_ns;
	uint64_t off[3]; /* the largest wall - CPU of a call, descending */
};

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "%s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
	exit(1);
}

/* Inference stand-in: spins until INFER_MS have passed. */
__attribute__((noinline)) int llama_decode(void *ctx, void *batch)
{
	uint64_t end = now_ns() + INFER_MS * 1000000ull, x = (uint64_t)ctx ^ (uint64_t)batch;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	return 0;
}

static void add_call(struct own *o, uint64_t wall, uint64_t cpu)
{
	uint64_t off = wall > cpu ? wall - cpu : 0;

	o->sql_ns += wall;
	o->sql_cpu_ns += cpu;
	o->sql_calls++;
	for (int k = 0; k < 3; k++) {
		if (off > o->off[k]) {
			uint64_t t = o->off[k];

			o->off[k] = off;
			off = t;
		}
	}
}

/* Each SQLite call timed from outside: the probe's interval lies inside
 * the wall-clock reads, which lie inside the CPU-clock reads. */
#define TIMED(own, call)                                           \
	({                                                         \
		uint64_t c0_ = thread_cpu_ns();                    \
		uint64_t t0_ = now_ns();                           \
		int rc_ = (call);                                  \
		uint64_t t1_ = now_ns();                           \
		add_call((own), t1_ - t0_, thread_cpu_ns() - c0_); \
		rc_;                                               \
	})

static void do_sql(sqlite3 *db, int cycle, int slow, struct own *o)
{
	sqlite3_stmt *st;

	if (TIMED(o, sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, ?2)", -1, &st, NULL)))
		die(db, "prepare");
	for (int i = 0; i < N_INS; i++) {
		sqlite3_bind_int(st, 1, cycle * 1000 + i);
		sqlite3_bind_text(st, 2, "row", -1, SQLITE_STATIC);
		if (TIMED(o, sqlite3_step(st)) != SQLITE_DONE)
			die(db, "insert");
		TIMED(o, sqlite3_reset(st));
	}
	TIMED(o, sqlite3_finalize(st));
	if (!slow)
		return;
	/* The slow cycle: one heavy statement, repeated until SLOW_SQL_MS of
	 * SQL time, so its size does not depend on the machine's speed. */
	if (TIMED(o, sqlite3_prepare_v2(db,
					"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
					"FROM c LIMIT 20000) SELECT sum(x) FROM c",
					-1, &st, NULL)))
		die(db, "prepare slow");
	for (uint64_t until = now_ns() + SLOW_SQL_MS * 1000000ull; now_ns() < until;) {
		if (TIMED(o, sqlite3_step(st)) != SQLITE_ROW)
			die(db, "slow query");
		TIMED(o, sqlite3_reset(st));
	}
	TIMED(o, sqlite3_finalize(st));
}

__attribute__((noinline)) void run_cycle(sqlite3 *db, int cycle, int slow, struct own *o)
{
	struct timespec nap = { 0, SLEEP_MS * 1000000L };
	uint64_t t0 = now_ns();

	llama_decode(db, o);
	o->infer_ns = now_ns() - t0;
	do_sql(db, cycle, slow, o);
	t0 = now_ns();
	nanosleep(&nap, NULL);
	o->sleep_ns = now_ns() - t0;
}

int main(int argc, char **argv)
{
	int ncycles = argc > 1 ? atoi(argv[1]) : 8, slow = argc > 2 ? atoi(argv[2]) : 5, sig;
	bool stay = argc > 3 && !strcmp(argv[3], "--stay");
	struct own *own;
	uint64_t *start, *end;
	sigset_t set;
	sqlite3 *db;

	if (ncycles < 1 || ncycles > 10000)
		return 2;
	own = calloc((size_t)ncycles, sizeof(*own));
	start = calloc((size_t)ncycles, sizeof(*start));
	end = calloc((size_t)ncycles, sizeof(*end));
	if (!own || !start || !end)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die(db, "open");
	if (sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b TEXT)", NULL, NULL, NULL) != SQLITE_OK)
		die(db, "create");
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	for (int i = 0; i < ncycles; i++) {
		ebpf_prof_cycle_begin((uint64_t)i);
		start[i] = now_ns();
		run_cycle(db, i, i == slow, &own[i]);
		end[i] = now_ns();
		ebpf_prof_cycle_end((uint64_t)i);
	}
	for (int i = 0; i < ncycles; i++)
		printf("cycle %d %llu %llu %llu %llu %llu %llu %llu %llu\n", i,
		       (unsigned long long)start[i], (unsigned long long)end[i],
		       (unsigned long long)own[i].infer_ns, (unsigned long long)own[i].sql_ns,
		       (unsigned long long)own[i].sql_calls, (unsigned long long)own[i].sleep_ns,
		       (unsigned long long)own[i].sql_cpu_ns,
		       (unsigned long long)(own[i].off[0] + own[i].off[1] + own[i].off[2]));
	printf("done\n");
	fflush(stdout);
	if (stay && sigwait(&set, &sig))
		return 1;
	sqlite3_close(db);
	free(own);
	free(start);
	free(end);
	return 0;
}
