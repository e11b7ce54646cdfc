// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The README demo: a toy "LLM experiment" loop whose profile is easy to read.
 * Each cycle: build_prompt (string work) -> run_inference (float matmul, the
 * dominant cost) -> log_to_db (write + fsync to a temp file) -> short sleep.
 *
 * usage: demo_experiment [SECONDS]   (default 10)
 * Prints "ready <pid>", runs, then prints per-phase timing over all cycles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROMPT_LEN 4096
#define DIM	   200 /* matmul DIM^3 = 8 M multiply-adds per cycle: a few ms, the dominant phase */
#define NPHASES	   4

enum phase { PH_PROMPT, PH_INFER, PH_LOG, PH_SLEEP };
static const char *const phase_names[NPHASES] = { "build_prompt", "run_inference", "log_to_db",
						  "sleep" };

struct phase_stats {
	uint64_t total_ns, min_ns, max_ns;
};

struct experiment {
	char prompt[PROMPT_LEN];
	float *a, *b, *c; /* DIM x DIM, row-major */
	int log_fd;
	char log_path[64];
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

__attribute__((noinline)) int log_to_db(struct experiment *ex, uint64_t cycle, float logit)
{
	char row[128];
	int n = snprintf(row, sizeof(row), "{\"cycle\":%llu,\"logit\":%.6f}\n",
			 (unsigned long long)cycle, (double)logit);

	if (n < 0 || write(ex->log_fd, row, (size_t)n) != n)
		return -errno;
	if (fsync(ex->log_fd))
		return -errno;
	return 0;
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

	memset(ex, 0, sizeof(*ex));
	ex->log_fd = -1;
	ex->a = malloc(sizeof(float) * DIM * DIM);
	ex->b = malloc(sizeof(float) * DIM * DIM);
	ex->c = malloc(sizeof(float) * DIM * DIM);
	if (!ex->a || !ex->b || !ex->c)
		return -ENOMEM;
	for (int i = 0; i < DIM * DIM; i++) {
		ex->a[i] = (float)((i * 7) % 13) * 0.01f;
		ex->b[i] = (float)((i * 3) % 11) * 0.01f;
	}
	snprintf(ex->log_path, sizeof(ex->log_path), "%s/demo-db-XXXXXX",
		 tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	ex->log_fd = mkstemp(ex->log_path);
	if (ex->log_fd < 0) {
		int err = -errno;

		fprintf(stderr, "demo_experiment: cannot create %s: %s\n", ex->log_path,
			strerror(errno));
		return err;
	}
	return 0;
}

static void teardown(struct experiment *ex)
{
	if (ex->log_fd >= 0) {
		close(ex->log_fd);
		unlink(ex->log_path);
	}
	free(ex->a);
	free(ex->b);
	free(ex->c);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10.0;
	const struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000 * 1000 };
	struct experiment *ex = malloc(sizeof(*ex));
	struct sigaction sa;
	int ret = 0;

	if (!ex)
		return 1;
	if (seconds <= 0) {
		fprintf(stderr, "usage: %s [SECONDS>0]\n", argv[0]);
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
		uint64_t t0 = mono_ns();
		size_t tokens = build_prompt(ex, ex->cycles);
		uint64_t t1 = mono_ns();
		float logit = run_inference(ex, tokens);
		uint64_t t2 = mono_ns();

		ret = log_to_db(ex, ex->cycles, logit);
		uint64_t t3 = mono_ns();

		if (ret) {
			fprintf(stderr, "demo_experiment: log_to_db %s: %s\n", ex->log_path,
				strerror(-ret));
			break;
		}
		nanosleep(&nap, NULL);
		uint64_t t4 = mono_ns();

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
