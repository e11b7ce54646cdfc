// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pid -> record index (user/proc/pid_index.c): found after the array moved,
 * absent pids not found, over as many records as a fork storm leaves (the
 * linear scans it replaced made such a storm quadratic). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "proc/pid_index.h"

struct rec {
	uint64_t pad;
	uint32_t pid;
	uint32_t seq;
};

int main(void)
{
	enum { N = 200000 };
	struct pid_index x;
	struct rec *v = NULL;
	size_t n = 0, cap = 0;

	pid_index_init(&x, sizeof(struct rec), offsetof(struct rec, pid));
	CHECK_INT_EQ(pid_index_find(&x, v, 1), -1);
	for (uint32_t i = 0; i < N; i++) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4; /* moves the array many times */
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 2;
		}
		/* Pids as a fork storm hands them out: increasing, with gaps. */
		v[n] = (struct rec){ 0, 1000 + 3 * i, i };
		CHECK_INT_EQ(pid_index_add(&x, v[n].pid, (uint32_t)n), 0);
		n++;
	}
	for (uint32_t i = 0; i < N; i += 997) {
		int64_t k = pid_index_find(&x, v, 1000 + 3 * i);

		CHECK(k >= 0 && v[k].seq == i);
		CHECK_INT_EQ(pid_index_find(&x, v, 1001 + 3 * i), -1);
	}
	CHECK_INT_EQ(pid_index_find(&x, v, 0), -1);
	CHECK_INT_EQ(pid_index_find(&x, NULL, 1000), -1);
	/* Absent pids between the present ones: none found. */
	for (uint32_t i = 0; i < N; i++)
		if (pid_index_find(&x, v, 2 + 3 * i) >= 0)
			CHECK(!"found an absent pid");
	pid_index_free(&x);
	free(v);
	return check_report("test_pid_index");
}
