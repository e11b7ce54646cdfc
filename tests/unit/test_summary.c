// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The human summary: says what matters (drops only when nonzero, a hint
 * when nothing was sampled) and never passes control bytes to a terminal. */
#include <string.h>

#include "check.h"
#include "report/report.h"
#include "synth_profile.h"

static char *summary(const struct profile *p, const struct run_info *ri)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	print_summary(p, ri, m);
	fclose(m);
	return buf;
}

int main(void)
{
	struct profile p;
	struct synth_frames fr = { 0 };
	CHECK_INT_EQ(synth_build(&p, &fr), 0);
	p.drops[PROF_DROP_KERN_STACK] = 4;
	struct report_target tg = { .pid = 100, .comm = "app" };
	const char *files[] = { "profile.speedscope.json", "report.json" };
	struct run_info ri = { .targets = &tg,
			       .ntargets = 1,
			       .start_mono_ns = 1000000000,
			       .end_mono_ns = 3500000000,
			       .stop_reason = "signal",
			       .output_dir = "/home/u/prof",
			       .output_files = files,
			       .noutput_files = 2,
			       .exit_status = -1 };
	char *s = summary(&p, &ri);
	CHECK(strstr(s, "app (pid 100)") != NULL);
	CHECK(strstr(s, "2.50 s") != NULL);
	CHECK(strstr(s, "13 (user 12") != NULL);
	CHECK(strstr(s, "kernel_stack_error=4") != NULL);
	CHECK(!strstr(s, "ringbuf_full")); /* zero causes are not listed */
	CHECK(!strstr(s, "no samples lost"));
	/* work is the top leaf: 4/13 = 30.77%, module shown by basename */
	CHECK(strstr(s, "30.77%") != NULL);
	CHECK(strstr(s, "work [app]") != NULL);
	/* the newline inside a symbol must not start a new line */
	CHECK(strstr(s, "line?break") != NULL);
	CHECK(strstr(s, "/home/u/prof") != NULL && strstr(s, "report.json") != NULL);
	CHECK(!strstr(s, "unwind:")); /* no unwinding figures, no line */
	free(s);
	/* Unwinding: mode, counts, truncated share, samples without a window. */
	ri.unwind = (struct run_unwind){ .mode = "auto",
					 .cfi = 90,
					 .fp = 10,
					 .truncated = 5,
					 .errors = 1,
					 .no_window = 10,
					 .copy_errors = 10 };
	s = summary(&p, &ri);
	CHECK(strstr(s, "unwind:   auto, 90 CFI + 10 frame-pointer stacks, 5.0% truncated, 1.0% "
			"stopped early, 10 without stack copy (10 unreadable, 0 no registers)\n") !=
	      NULL);
	free(s);
	/* --rotate: the profile holds the last interval (13 samples) after two
	 * intervals of 100 written out; the run's count is said beside it. */
	ri.rotations = 2;
	ri.rotated_samples = 200;
	ri.rotated_user = 150;
	ri.rotated_kernel = 50;
	s = summary(&p, &ri);
	CHECK(strstr(s, "samples:  213 over the run (user 162 76.1%, kernel 51 23.9%); 13 in the "
			"last interval (after 2 rotation(s))") != NULL);
	free(s);
	ri.rotations = 0;
	ri.rotated_samples = ri.rotated_user = ri.rotated_kernel = 0;
	s = summary(&p, &ri);
	CHECK(!strstr(s, "over the run"));
	free(s);
	/* -d ended a launch-mode run with the command still running. */
	ri.launched = true;
	ri.command = "./server --port 80";
	ri.left_running_pid = 4242;
	s = summary(&p, &ri);
	CHECK(strstr(s, "target:   ./server --port 80\n          still running (pid 4242)") !=
	      NULL);
	CHECK(strstr(s, "kill 4242") != NULL);
	free(s);
	ri.left_running_pid = 0;
	ri.exit_status = 0;
	s = summary(&p, &ri);
	CHECK(strstr(s, "(exit status 0)\n") && !strstr(s, "still running"));
	free(s);
	ri.launched = false;
	ri.command = NULL;
	ri.exit_status = -1;
	ri.unwind = (struct run_unwind){ 0 };
	profile_free(&p);

	CHECK_INT_EQ(profile_init(&p, 100), 0);
	ri.output_dir = NULL;
	s = summary(&p, &ri);
	CHECK(strstr(s, "no CPU samples") != NULL);
	CHECK(strstr(s, "idle") != NULL);
	CHECK(strstr(s, "no samples lost") != NULL);
	CHECK(!strstr(s, "top functions"));
	free(s);
	profile_free(&p);
	return check_report("test_summary");
}
