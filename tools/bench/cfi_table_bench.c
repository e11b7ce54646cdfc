// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Time to compile unwind tables (uw_table_build) and to get them back from
 * the disk cache (uw_cache_get), per object: built by
 * tools/bench/cfi_table_bench.sh against a build's core library.
 *   cfi_table_bench CACHE_DIR ROUNDS FILE...
 * Wall-clock CLOCK_MONOTONIC, including open/elf_begin (and the build-id
 * read and file load for the cache); the files are in the page cache after
 * the first round, as a library a running target maps is.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi_table.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s CACHE_DIR ROUNDS FILE...\n", argv[0]);
		return 2;
	}
	int rounds = atoi(argv[2]);
	if (rounds < 1 || rounds > 1000)
		rounds = 5;
	double *build = calloc((size_t)rounds, sizeof(double));
	double *hit = calloc((size_t)rounds, sizeof(double));
	struct uw_cache *c;

	elf_version(EV_CURRENT);
	if (!build || !hit || uw_cache_open(&c, argv[1]))
		return 1;
	printf("%-28s %8s %9s %8s %10s %10s %10s %10s\n", "object", "MB", "rows", "unsup",
	       "build1_ms", "build_ms", "store_ms", "cache_ms");
	for (int f = 3; f < argc; f++) {
		struct uw_table t;
		struct stat st;
		bool from;
		double miss = 0;
		int fd = open(argv[f], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			perror(argv[f]);
			continue;
		}
		for (int r = 0; r < rounds; r++) {
			double t0 = now_ms();
			Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			int rc = uw_table_build(e, &t);
			elf_end(e);
			build[r] = now_ms() - t0;
			if (rc) {
				fprintf(stderr, "%s: %s\n", argv[f], strerror(-rc));
				break;
			}
			if (r + 1 < rounds)
				uw_table_free(&t);
		}
		double first = build[0];
		double t0 = now_ms();
		struct uw_table t2;
		if (!uw_cache_get(c, fd, &t2, &from) && !from)
			miss = now_ms() - t0;
		uw_table_free(&t2);
		for (int r = 0; r < rounds; r++) {
			t0 = now_ms();
			uw_cache_get(c, fd, &t2, &from);
			hit[r] = from ? now_ms() - t0 : -1;
			uw_table_free(&t2);
		}
		const char *name = strrchr(argv[f], '/');
		printf("%-28.28s %8.1f %9u %8u %10.1f %10.1f %10.1f %10.2f\n",
		       name ? name + 1 : argv[f], (double)st.st_size / 1e6, t.n,
		       t.stats.rows_unsupported, first, median(build, rounds), miss,
		       median(hit, rounds));
		uw_table_free(&t);
		close(fd);
	}
	uw_cache_free(c);
	free(build);
	free(hit);
	return 0;
}
