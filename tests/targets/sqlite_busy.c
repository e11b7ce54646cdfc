// ep-target-libs: -lsqlite3
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPU-bound SQLite through Debian's libsqlite3 (built without frame pointers),
 * for the unwinding test: main -> run_query -> sqlite3_step -> (libsqlite3's
 * internals) for as long as it runs. The program's own code keeps its frame
 * pointers (the default target flags): what the unwinder must cross is the
 * library.
 *
 * usage: sqlite_busy [SECONDS]   (0 or absent: until SIGTERM)
 * Prints "ready <pid>" once the table is filled; at the end "done queries=N".
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ROWS 20000

static volatile sig_atomic_t stop_requested;
static volatile int64_t sink;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "sqlite_busy: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
	exit(1);
}

/* One aggregate over the whole table: thousands of VDBE steps per call, all
 * inside sqlite3_step. */
__attribute__((noinline)) int64_t run_query(sqlite3_stmt *st)
{
	int64_t v = 0;

	while (sqlite3_step(st) == SQLITE_ROW)
		v += sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, t0;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	uint64_t queries = 0;

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die(db, "open");
	if (sqlite3_exec(
		    db,
		    "CREATE TABLE t(a INTEGER, b TEXT);"
		    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < "
		    "20000) INSERT INTO t SELECT x, printf('row-%d', x * 7919 % 10007) FROM c;",
		    NULL, NULL, NULL) != SQLITE_OK)
		die(db, "fill");
	if (sqlite3_prepare_v2(db, "SELECT sum(length(b) * a % 97) FROM t WHERE b LIKE '%7%'", -1,
			       &st, NULL) != SQLITE_OK)
		die(db, "prepare");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	t0 = now_s();
	while (!stop_requested && (secs <= 0 || now_s() - t0 < secs)) {
		sink += run_query(st);
		queries++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	printf("done queries=%llu\n", (unsigned long long)queries);
	return 0;
}
