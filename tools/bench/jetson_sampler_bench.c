// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of one Jetson sample (jetson_reader_sample) on the fixture trees:
 * wall and thread-CPU time per sample, and the CPU share that implies at a
 * given interval. Not a test: numbers go to docs/jetson.md.
 *
 * usage: jetson_sampler_bench FIXTURES_DIR [ITERATIONS]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jetson/jetson.h"

static double ts_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	static const char *const trees[] = { "jp4-nano", "jp5-xavier-nx", "jp5-orin-nano",
					     "jp6-agx-orin", "jp6-agx-orin-throttled" };
	int iters = argc > 2 ? atoi(argv[2]) : 2000;
	struct jetson_snapshot *s = malloc(sizeof(*s));

	if (argc < 2 || iters <= 0 || !s) {
		fprintf(stderr, "usage: %s FIXTURES_DIR [ITERATIONS]\n", argv[0]);
		free(s);
		return 2;
	}
	printf("%-24s %12s %12s %10s %10s\n", "tree", "wall us/smp", "cpu us/smp", "@200ms %",
	       "@50ms %");
	/* last row: this host's real /sys (fast path, no link stubs; zones only off-Jetson) */
	for (size_t i = 0; i <= sizeof(trees) / sizeof(trees[0]); i++) {
		bool host = i == sizeof(trees) / sizeof(trees[0]);
		char root[1024];
		struct jetson_reader_opts o = { .sysfs_root = root };
		struct jetson_reader *r;
		double w0, c0, w, c;

		if (host)
			snprintf(root, sizeof(root), "/");
		else
			snprintf(root, sizeof(root), "%s/%s", argv[1], trees[i]);
		if (jetson_reader_open(&r, &o)) {
			fprintf(stderr, "cannot open %s\n", root);
			continue;
		}
		jetson_reader_sample(r, s); /* warm the dentry cache like a long run does */
		w0 = ts_ns(CLOCK_MONOTONIC);
		c0 = ts_ns(CLOCK_THREAD_CPUTIME_ID);
		for (int k = 0; k < iters; k++)
			jetson_reader_sample(r, s);
		w = (ts_ns(CLOCK_MONOTONIC) - w0) / iters / 1e3;
		c = (ts_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / iters / 1e3;
		printf("%-24s %12.1f %12.1f %10.3f %10.3f\n", host ? "host /" : trees[i], w, c,
		       c / 2000.0, c / 500.0);
		jetson_reader_close(r);
	}
	free(s);
	return 0;
}
