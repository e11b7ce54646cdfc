// ep-target-libs: -lsqlite3
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The README demo: a toy "LLM experiment" loop that exercises what ebpf-prof
 * reports without any flag. Each cycle, bracketed by the cycle marker
 * (tools/cycle_marker, compiled in as a user would):
 *   build_prompt  string work
 *   llama_decode  float matmul, the dominant cost; named after llama.cpp's
 *                 entry point so the default llama preset times it as it
 *                 would a real engine
 *   log_to_db     one INSERT into a SQLite file database with synchronous=FULL
 *                 (Debian's libsqlite3: the sqlite preset names the statement;
 *                 the commit's fsync is off-CPU I/O); every CHECKPOINT_EVERY
 *                 cycles also a summary query over the last rows: those
 *                 cycles are the slow ones, and the report should say why
 *   sleep         1 ms
 *
 * usage: demo_experiment [SECONDS] [--no-marker]   (default 10 s)
 * --no-marker leaves the cycle marker out (the whole run is one cycle).
 * Prints "ready <pid>", runs, then prints per-phase timing over all cycles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../tools/cycle_marker/ebpf_prof_cycle.c"

#define CHECKPOINT_EVERY 25
#define PROMPT_LEN	 4096
#define DIM		 200 /* matmul DIM^3 = 8 M multiply-adds per cycle: a few ms, the dominant phase */
#define NPHASES		 4

enum phase { PH_PROMPT, PH_INFER, PH_LOG, PH_SLEEP };
static const char *const phase_names[NPHASES] = { "build_prompt", "llama_decode", "log_to_db",
						  "sleep" };

struct phase_stats {
	uint64_t total_ns, min_ns, max_ns;
};

struct experiment {
	char prompt[PROMPT_LEN];
	float *a, *b, *c; /* DIM x DIM, row-major */
	sqlite3 *db;
	sqlite3_stmt *insert;
	char db_path[64];
	struct phase_stats st[NPHASES];
	uint64_t cycles;
};

static volatile sig_atomic_t stop_requested;
static volatile float sink;

/* GCC 12 gives leaf functions no frame despite -mno-omit-leaf-frame-pointer;
 * force one so frame-pointer unwinding shows main -> run_inference. */
#define FORCE_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) size_t build_prompt(struct experiment *ex, uint64_t cycle)
{
	static const char *const words[] = { "the",	 "model", "answers",   "a",
					     "question", "about", "profiling", "kernels" };
	size_t len = 0;

	ex->prompt[0] = '\0';
	for (unsigned i = 0; len + 32 < PROMPT_LEN; i++) {
		int n = snprintf(ex->prompt + len, PROMPT_LEN - len, "%s%s#%llu", i ? " " : "",
				 words[(cycle + i) % 8], (unsigned long long)i);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	/* Tokenize-like pass: count spaces, touch every byte. */
	size_t tokens = 0;
	for (size_t i = 0; i < len; i++)
		tokens += ex->prompt[i] == ' ';
	return tokens;
}

__attribute__((noinline)) float run_inference(struct experiment *ex, size_t tokens)
{
	FORCE_FRAME();
	float *a = ex->a;
	const float *b = ex->b;
	float *c = ex->c;

	/* Feed the prompt size in so the work depends on the previous phase. */
	a[0] = (float)(tokens % 7) * 0.01f;
	for (int i = 0; i < DIM; i++) {
		for (int j = 0; j < DIM; j++)
			c[i * DIM + j] = 0.0f;
		for (int k = 0; k < DIM; k++) {
			float aik = a[i * DIM + k];

			for (int j = 0; j < DIM; j++)
				c[i * DIM + j] += aik * b[k * DIM + j];
		}
	}
	float logit = 0.0f;
	for (int i = 0; i < DIM * DIM; i += DIM + 1)
		logit += c[i];
	sink = logit;
	return logit;
}

/* Stand-in for llama.cpp's llama_decode(ctx, batch): 0 on success. */
__attribute__((noinline)) int llama_decode(struct experiment *ex, size_t tokens)
{
	FORCE_FRAME();
	run_inference(ex, tokens);
	return 0;
}

static int db_fail(struct experiment *ex, const char *what)
{
	fprintf(stderr, "demo_experiment: %s %s: %s\n", what, ex->db_path, sqlite3_errmsg(ex->db));
	return -EIO;
}

__attribute__((noinline)) int log_to_db(struct experiment *ex, uint64_t cycle, float logit)
{
	sqlite3_stmt *st;
	int rc;

	sqlite3_bind_int64(ex->insert, 1, (sqlite3_int64)cycle);
	sqlite3_bind_double(ex->insert, 2, (double)logit);
	rc = sqlite3_step(ex->insert);
	sqlite3_reset(ex->insert);
	if (rc != SQLITE_DONE)
		return db_fail(ex, "insert into");
	if (cycle % CHECKPOINT_EVERY != CHECKPOINT_EVERY - 1)
		return 0;
	/* The "checkpoint": a self-join over the last 1000 rows (1M row pairs
	 * compared, bounded however long the demo runs). */
	if (sqlite3_prepare_v2(
		    ex->db,
		    "WITH recent AS (SELECT * FROM log ORDER BY cycle DESC LIMIT 1000) "
		    "SELECT count(*), avg(a.logit - b.logit) FROM recent a JOIN recent b "
		    "ON a.cycle % 50 = b.cycle % 50",
		    -1, &st, NULL) != SQLITE_OK)
		return db_fail(ex, "prepare on");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(ex, "query on");
}

static void account(struct phase_stats *s, uint64_t ns)
{
	s->total_ns += ns;
	if (!s->min_ns || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
}

static int setup(struct experiment *ex)
{
	const char *tmp = getenv("TMPDIR");

	int fd;

	memset(ex, 0, sizeof(*ex));
	ex->a = malloc(sizeof(float) * DIM * DIM);
	ex->b = malloc(sizeof(float) * DIM * DIM);
	ex->c = malloc(sizeof(float) * DIM * DIM);
	if (!ex->a || !ex->b || !ex->c)
		return -ENOMEM;
	for (int i = 0; i < DIM * DIM; i++) {
		ex->a[i] = (float)((i * 7) % 13) * 0.01f;
		ex->b[i] = (float)((i * 3) % 11) * 0.01f;
	}
	snprintf(ex->db_path, sizeof(ex->db_path), "%s/demo-db-XXXXXX",
		 tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	/* An empty file is an empty database: mkstemp gives a private name. */
	fd = mkstemp(ex->db_path);
	if (fd < 0) {
		int err = -errno;

		fprintf(stderr, "demo_experiment: cannot create %s: %s\n", ex->db_path,
			strerror(errno));
		ex->db_path[0] = '\0';
		return err;
	}
	close(fd);
	if (sqlite3_open(ex->db_path, &ex->db) != SQLITE_OK)
		return db_fail(ex, "cannot open");
	if (sqlite3_exec(ex->db,
			 "PRAGMA synchronous=FULL; CREATE TABLE log(cycle INTEGER, logit REAL)",
			 NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(ex, "cannot create the table in");
	if (sqlite3_prepare_v2(ex->db, "INSERT INTO log VALUES(?1, ?2)", -1, &ex->insert, NULL) !=
	    SQLITE_OK)
		return db_fail(ex, "prepare on");
	return 0;
}

static void teardown(struct experiment *ex)
{
	char journal[80];

	sqlite3_finalize(ex->insert);
	sqlite3_close(ex->db);
	if (ex->db_path[0]) {
		unlink(ex->db_path);
		snprintf(journal, sizeof(journal), "%s-journal", ex->db_path);
		unlink(journal);
	}
	free(ex->a);
	free(ex->b);
	free(ex->c);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10.0;
	bool marker = !(argc > 2 && !strcmp(argv[2], "--no-marker"));
	const struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000 * 1000 };
	struct experiment *ex = malloc(sizeof(*ex));
	struct sigaction sa;
	int ret = 0;

	if (!ex)
		return 1;
	if (seconds <= 0 || (argc > 2 && marker) || argc > 3) {
		fprintf(stderr, "usage: %s [SECONDS>0] [--no-marker]\n", argv[0]);
		free(ex);
		return 2;
	}
	if (setup(ex)) {
		teardown(ex);
		free(ex);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	uint64_t deadline = mono_ns() + (uint64_t)(seconds * 1e9);

	while (!stop_requested && mono_ns() < deadline) {
		if (marker)
			ebpf_prof_cycle_begin(ex->cycles);
		uint64_t t0 = mono_ns();
		size_t tokens = build_prompt(ex, ex->cycles);
		uint64_t t1 = mono_ns();

		llama_decode(ex, tokens);
		uint64_t t2 = mono_ns();

		ret = log_to_db(ex, ex->cycles, sink);
		uint64_t t3 = mono_ns();

		if (ret)
			break;
		nanosleep(&nap, NULL);
		uint64_t t4 = mono_ns();

		if (marker)
			ebpf_prof_cycle_end(ex->cycles);

		account(&ex->st[PH_PROMPT], t1 - t0);
		account(&ex->st[PH_INFER], t2 - t1);
		account(&ex->st[PH_LOG], t3 - t2);
		account(&ex->st[PH_SLEEP], t4 - t3);
		ex->cycles++;
	}

	printf("cycles: %llu\n", (unsigned long long)ex->cycles);
	printf("%-14s %10s %10s %10s\n", "phase", "mean_ms", "min_ms", "max_ms");
	for (int i = 0; i < NPHASES && ex->cycles; i++)
		printf("%-14s %10.3f %10.3f %10.3f\n", phase_names[i],
		       (double)ex->st[i].total_ns / (double)ex->cycles / 1e6,
		       (double)ex->st[i].min_ns / 1e6, (double)ex->st[i].max_ns / 1e6);
	teardown(ex);
	free(ex);
	return ret ? 1 : 0;
}
