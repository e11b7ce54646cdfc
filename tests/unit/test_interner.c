// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The shared string interner (user/util/interner.c) and array growth
 * (user/util/vec.h): ids in order of first sight, one copy per distinct
 * string at an address that stays while the tables grow, the bound, a
 * zeroed interner usable as it is; growth that doubles, zeroes on demand
 * and leaves the array alone when it cannot grow. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/clock.h"
#include "util/interner.h"
#include "util/vec.h"

static void test_ids(void)
{
	enum { N = 5000 };
	struct interner t;
	const char *first[N];
	char buf[32];

	interner_init(&t, 0);
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		CHECK_INT_EQ(interner_add(&t, buf), i);
		first[i] = interner_str(&t, (size_t)i);
	}
	CHECK_INT_EQ(t.n, N);
	/* Again, in another order: the same ids, the same copies. */
	for (int i = N - 1; i >= 0; i -= 7) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		CHECK_INT_EQ(interner_add(&t, buf), i);
		CHECK(interner_str(&t, (size_t)i) == first[i]);
		CHECK_STR_EQ(first[i], buf);
		CHECK(first[i] != buf);
	}
	CHECK_INT_EQ(t.n, N);
	/* The empty string and one that only shares a prefix are strings of
	 * their own. */
	CHECK_INT_EQ(interner_add(&t, ""), N);
	CHECK_INT_EQ(interner_add(&t, "name-1x"), N + 1);
	CHECK_INT_EQ(interner_add(&t, ""), N);
	interner_free(&t);
	CHECK_INT_EQ(t.n, 0);
}

static void test_bound(void)
{
	struct interner t;

	interner_init(&t, 2);
	CHECK_INT_EQ(interner_add(&t, "a"), 0);
	CHECK_INT_EQ(interner_add(&t, "b"), 1);
	CHECK_INT_EQ(interner_add(&t, "c"), -ENOSPC);
	/* Known strings are still found when full. */
	CHECK_INT_EQ(interner_add(&t, "b"), 1);
	CHECK_INT_EQ(interner_add(&t, "a"), 0);
	CHECK_INT_EQ(t.n, 2);
	interner_free(&t);
}

static void test_zeroed(void)
{
	struct interner t;

	memset(&t, 0, sizeof(t));
	CHECK_INT_EQ(interner_add(&t, "x"), 0);
	CHECK_INT_EQ(interner_add(&t, "y"), 1);
	CHECK_INT_EQ(interner_add(&t, "x"), 0);
	CHECK_STR_EQ(interner_str(&t, 1), "y");
	interner_free(&t);
}

static void test_vec(void)
{
	uint32_t *v = NULL;
	size_t cap = 0, n = 0;
	EP_VEC(uint64_t) w = { 0 };

	CHECK_INT_EQ(ep_vec_grow((void **)&v, &cap, 0, sizeof(*v)), 0);
	CHECK(!v && cap == 0);
	CHECK_INT_EQ(ep_vec_grow((void **)&v, &cap, 1, sizeof(*v)), 0);
	CHECK_INT_EQ(cap, EP_VEC_FIRST_CAP);
	/* Room for what is asked, by doubling. */
	CHECK_INT_EQ(ep_vec_grow((void **)&v, &cap, 5 * EP_VEC_FIRST_CAP, sizeof(*v)), 0);
	CHECK_INT_EQ(cap, 8 * EP_VEC_FIRST_CAP);
	CHECK_INT_EQ(ep_vec_grow((void **)&v, &cap, 3, sizeof(*v)), 0);
	CHECK_INT_EQ(cap, 8 * EP_VEC_FIRST_CAP);
	/* Zeroed: the new room only. */
	for (size_t i = 0; i < cap; i++)
		v[i] = 7;
	n = cap;
	CHECK_INT_EQ(ep_vec_grow_zeroed((void **)&v, &cap, n + 1, sizeof(*v)), 0);
	CHECK_INT_EQ(cap, 2 * n);
	CHECK(v[n - 1] == 7 && v[n] == 0 && v[cap - 1] == 0);
	/* A size no allocation can have: refused, the array unchanged. */
	{
		uint32_t *before = v;
		size_t c = cap;

		CHECK_INT_EQ(ep_vec_grow((void **)&v, &c, SIZE_MAX / 2, sizeof(*v)), -ENOMEM);
		CHECK(v == before && c == cap);
	}
	free(v);
	for (uint64_t i = 0; i < 1000; i++)
		CHECK_INT_EQ(EP_VEC_PUSH(w, i * i), 0);
	CHECK_INT_EQ(w.n, 1000);
	CHECK(w.cap >= 1000 && w.v[999] == 999 * 999 && w.v[10] == 100);
	free(w.v);
}

static void test_clock(void)
{
	uint64_t a = mono_ns(), b = mono_ns();
	struct timespec ts;

	CHECK(b >= a);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* The same clock: the two readings are within a second. */
	CHECK((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - b < 1000000000ull);
}

int main(void)
{
	test_ids();
	test_bound();
	test_zeroed();
	test_vec();
	test_clock();
	return check_report("test_interner");
}
