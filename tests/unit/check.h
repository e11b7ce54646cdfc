/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Minimal assertion helpers for unit tests: each failed check prints where
 * and why, the test keeps going, and the exit code says whether any failed. */
#ifndef EP_CHECK_H
#define EP_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

/* The shared test data (EP_SHARED_DIR, ../shared from the source tree).
 * Missing: under CI=true a failure that says so, else a skip (exit 77)
 * that says so; never a crash on the paths built from it. */
static inline const char *ep_shared_dir(const char *test)
{
	const char *d = getenv("EP_SHARED_DIR");
	const char *ci = getenv("CI");
	struct stat st;

	if (d && stat(d, &st) == 0 && S_ISDIR(st.st_mode))
		return d;
	fprintf(stderr,
		"%s: the shared test data %s%s is missing (EP_SHARED_DIR; ../shared next to "
		"the source tree)%s\n",
		test, d ? d : "", d ? "" : "(EP_SHARED_DIR unset)",
		ci && !strcmp(ci, "true") ? "" : ": skipped");
	exit(ci && !strcmp(ci, "true") ? 1 : 77);
}

static int ep_check_failures;
static int ep_check_count;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		ep_check_count++;                                                                \
		if (!(cond)) {                                                                   \
			ep_check_failures++;                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_INT_EQ(a, b)                                                                  \
	do {                                                                                \
		long long _a = (long long)(a), _b = (long long)(b);                         \
		ep_check_count++;                                                           \
		if (_a != _b) {                                                             \
			ep_check_failures++;                                                \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, _a, _b);                                  \
		}                                                                           \
	} while (0)

#define CHECK_STR_EQ(a, b)                                                                      \
	do {                                                                                    \
		const char *_a = (a), *_b = (b);                                                \
		ep_check_count++;                                                               \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                        \
			ep_check_failures++;                                                    \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, \
				__LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");      \
		}                                                                               \
	} while (0)

#define CHECK_NEAR(a, b, eps)                                                                    \
	do {                                                                                     \
		double _a = (a), _b = (b);                                                       \
		ep_check_count++;                                                                \
		if (!(_a - _b <= (eps) && _b - _a <= (eps))) {                                   \
			ep_check_failures++;                                                     \
			fprintf(stderr, "%s:%d: %s ~= %s failed: %g vs %g (eps %g)\n", __FILE__, \
				__LINE__, #a, #b, _a, _b, (double)(eps));                        \
		}                                                                                \
	} while (0)

/* Call at the end of main: prints a tally and returns the exit code. */
static inline int check_report(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, ep_check_count, ep_check_failures);
	return ep_check_failures ? 1 : 0;
}

#endif
