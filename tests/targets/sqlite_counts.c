// ep-target-libs: -lsqlite3
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A known SQLite workload through Debian's libsqlite3, for the probes test.
 * Prints "ready <pid>", waits for SIGUSR1 (sent once the probes are
 * attached), runs the workload, prints its own call counts and its own
 * measurement of time spent in sqlite3_step, and exits.
 *
 * sqlite_counts --now: no wait (launch mode through a wrapper); the
 * CREATE TABLE's sqlite3_exec is then one exec more.
 *
 * Own calls after SIGUSR1:
 *   prepare_v2 2, prepare_v3 1, step N_INS + (N_INS/2 + 1) + 2,
 *   reset N_INS, finalize 3, exec N_EXEC
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_INS  500
#define N_EXEC 7

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t step_ns, nstep;
/* Each step's own time, in call order, for a per-call comparison. */
#define MAX_STEPS 1024
static uint64_t step_each[MAX_STEPS];

/* Times one sqlite3_step from outside: the probe's interval lies inside. */
static int timed_step(sqlite3_stmt *st)
{
	uint64_t t0 = now_ns();
	int rc = sqlite3_step(st);

	t0 = now_ns() - t0;
	step_ns += t0;
	if (nstep < MAX_STEPS)
		step_each[nstep] = t0;
	nstep++;
	return rc;
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "%s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
	exit(1);
}

int main(int argc, char **argv)
{
	int now = argc > 1 && !strcmp(argv[1], "--now");
	sqlite3 *db;
	sqlite3_stmt *st;
	sigset_t set;
	int sig, rows = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die(db, "open");
	if (sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b TEXT)", NULL, NULL, NULL) != SQLITE_OK)
		die(db, "create");
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!now && sigwait(&set, &sig))
		return 1;

	if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
		die(db, "prepare insert");
	for (int i = 0; i < N_INS; i++) {
		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_text(st, 2, "row", -1, SQLITE_STATIC);
		if (timed_step(st) != SQLITE_DONE)
			die(db, "insert");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);

	/* nByte bounds the text: the probe must not report the tail. */
	if (sqlite3_prepare_v2(db, "SELECT a, b FROM t WHERE a % 2 = 0; trailing junk", 34, &st,
			       NULL) != SQLITE_OK)
		die(db, "prepare select");
	while (timed_step(st) == SQLITE_ROW)
		rows++;
	sqlite3_finalize(st);

	for (int i = 0; i < N_EXEC; i++)
		if (sqlite3_exec(db, "UPDATE t SET b = 'x' WHERE a < 10", NULL, NULL, NULL) !=
		    SQLITE_OK)
			die(db, "update");

	if (sqlite3_prepare_v3(db, "SELECT count(*) FROM t", -1, 0, &st, NULL) != SQLITE_OK)
		die(db, "prepare count");
	while (timed_step(st) == SQLITE_ROW)
		;
	sqlite3_finalize(st);

	printf("select_rows %d\n", rows);
	printf("own_steps %llu\n", (unsigned long long)nstep);
	printf("own_step_ns %llu\n", (unsigned long long)step_ns);
	printf("own_step_each");
	for (uint64_t i = 0; i < nstep && i < MAX_STEPS; i++)
		printf(" %llu", (unsigned long long)step_each[i]);
	printf("\n");
	printf("done\n");
	fflush(stdout);
	sqlite3_close(db);
	return 0;
}
