// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "check.h"
#include "report/report.h"
#include "synth_profile.h"

static char *folded(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err = export_folded(p, m);
	fclose(m);
	CHECK_INT_EQ(err, 0);
	return buf;
}

int main(void)
{
	struct profile p;
	struct synth_frames fr = { 0 };
	CHECK_INT_EQ(synth_build(&p, &fr), 0);
	char *out = folded(&p);
	/* Worked out from the sample list in synth_profile.h:
	 * - "a;b" is escaped to "a:b" and then sums with the real "a:b": 2 + 3
	 * - [main,work] on A (3) and B (1) share comm "app": 4
	 * - the kernel frame gets _[k]; the newline becomes a space
	 * - the comm's ';' is escaped too; the idle thread has no line */
	const char *expect = "app;main;a:b 5\n"
			     "app;main;work 4\n"
			     "app;main;work;sys_read_[k] 1\n"
			     "other;main;line break 1\n"
			     "we:ird;main 2\n";
	CHECK_STR_EQ(out, expect);
	CHECK(!strchr(out, '\r'));
	CHECK(!strstr(out, "\n\n"));
	free(out);
	profile_free(&p);

	/* No samples: empty output, not a blank line. */
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	profile_thread(&p, 1, 1, "x");
	out = folded(&p);
	CHECK_STR_EQ(out, "");
	free(out);

	/* Empty names, control bytes and invalid UTF-8 from a hostile target. */
	uint32_t f1 = (uint32_t)profile_intern_frame(&p, "", NULL, false);
	uint32_t f2 = (uint32_t)profile_intern_frame(&p, "x\r\ty\xff", NULL, false);
	uint32_t t = (uint32_t)profile_thread(&p, 2, 2, "");
	uint32_t st[] = { f1, f2 };
	CHECK_INT_EQ(profile_add_sample(&p, t, 1, st, 2, 0, false), 0);
	out = folded(&p);
	CHECK_STR_EQ(out, "[unknown];[unknown];x  y\xef\xbf\xbd 1\n");
	free(out);
	profile_free(&p);

	/* A name ending in " <digits>" must still sort as whole lines do. */
	CHECK_INT_EQ(profile_init(&p, 100), 0);
	uint32_t g1 = (uint32_t)profile_intern_frame(&p, "f", NULL, false);
	uint32_t g2 = (uint32_t)profile_intern_frame(&p, "f 1", NULL, false);
	t = (uint32_t)profile_thread(&p, 3, 3, "c");
	for (int i = 0; i < 5; i++)
		profile_add_sample(&p, t, (uint64_t)i, &g1, 1, 0, false);
	profile_add_sample(&p, t, 9, &g2, 1, 0, false);
	out = folded(&p);
	CHECK_STR_EQ(out, "c;f 1 1\nc;f 5\n");
	free(out);
	profile_free(&p);
	return check_report("test_folded");
}
