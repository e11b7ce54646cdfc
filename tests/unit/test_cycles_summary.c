// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The end-of-run cycle summary: the headline line and the per-part table
 * (median, p95, slowest; parts that are zero in every cycle left out), on
 * a hand-made table whose figures are worked out below. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cycles/cycles_summary.h"

#define MS 1000000ull

int main(void)
{
	struct cycle_row rows[3] = { 0 };
	struct cycle_table t = { .rows = rows, .n = 3 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	/* walls 100, 300, 120 ms; SQL 10, 200, 12; sleep 50, 50, 50; the rest
	 * unattributed: 40, 50, 58. Median (rank 2 of 3) and p95 (rank 3). */
	const uint64_t wall[3] = { 100, 300, 120 }, sql[3] = { 10, 200, 12 };
	for (int i = 0; i < 3; i++) {
		rows[i].index = (uint32_t)i;
		rows[i].wall_ns = wall[i] * MS;
		rows[i].part_sql_ns = sql[i] * MS;
		rows[i].part_off_cpu_ns[CYC_OFF_SLEEP] = 50 * MS;
		rows[i].other_ns = (wall[i] - sql[i] - 50) * MS;
	}
	f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	if (!f)
		return 1;
	cycles_print_summary(f, &t, NULL, NULL, 3);
	fclose(f);
	CHECK_STR_EQ(
		buf,
		"Cycles: 3  median 120.0 ms  p95 300.0 ms  mean 173.3 ms  slowest #1 300.0 ms\n"
		"                     median        p95    slowest\n"
		"  wall             120.0 ms   300.0 ms   300.0 ms\n"
		"  SQL               12.0 ms   200.0 ms   200.0 ms\n"
		"  off-CPU           50.0 ms    50.0 ms    50.0 ms\n"
		"  unattributed      50.0 ms    58.0 ms    50.0 ms\n");
	free(buf);

	/* A fourth cycle open at the end of the run: not in the figures,
	 * said on its own line. */
	{
		struct cycle_row r4[4];
		struct cycle_table t4 = { .rows = r4, .n = 4 };

		for (int i = 0; i < 3; i++)
			r4[i] = rows[i];
		r4[3] = (struct cycle_row){ .index = 3,
					    .wall_ns = 2900 * MS,
					    .other_ns = 2900 * MS,
					    .truncated = true,
					    .partial = true };
		buf = NULL;
		f = open_memstream(&buf, &len);
		cycles_print_summary(f, &t4, NULL, NULL, 3);
		fclose(f);
		CHECK(strncmp(buf,
			      "Cycles: 3  median 120.0 ms  p95 300.0 ms  mean 173.3 ms  slowest #1 "
			      "300.0 ms\n",
			      75) == 0);
		CHECK(strstr(buf, "  unattributed      50.0 ms    58.0 ms    50.0 ms\n") != NULL);
		CHECK(strstr(buf, "partial cycle #3: 2900.0 ms until the end of the run") != NULL);
		free(buf);
	}

	/* The whole run (one cycle): the line only. */
	t.n = 1;
	t.whole_run = true;
	buf = NULL;
	f = open_memstream(&buf, &len);
	cycles_print_summary(f, &t, NULL, NULL, 3);
	fclose(f);
	CHECK_STR_EQ(buf,
		     "Cycles: 1 (whole run, no cycles defined)  median 100.0 ms  p95 100.0 ms  "
		     "mean 100.0 ms  slowest #0 100.0 ms\n");
	free(buf);
	return check_report("test_cycles_summary");
}
