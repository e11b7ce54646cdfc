// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The end of a recording run (finish.h): its last phases, apart from
 * record.c because they are as long as the start and read on their own.
 */
#include "record/finish.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "export/bundle.h"
#include "overload/links.h"
#include "python/pyframes.h"
#include "record/recorder.h"
#include "record/targets.h"
#include "symbolize/symbolize.h"
#include "unwind/ktables.h"
#include "util/log.h"
#include "util/term_text.h"

/* The longest the final drain of the sampler's ring takes at stop; what is
 * left then is counted as unread_at_stop. Stop is bounded at any rate. */
#define STOP_DRAIN_BUDGET_NS (300 * 1000000ull)

/* The sampler's and every module's BPF links, handed over for release
 * beside the modules' stop and the outputs (overload/links.h: by a child
 * process, or a thread joined before anything is closed). */
static struct links_reaper *start_reaping(struct recorder *r)
{
	struct link_list l = { 0 };

	sampler_take_links(r->sampler, &l);
	for_each_module(r, i)
		if (rec_modules[i]->take_links)
			rec_modules[i]->take_links(r->mstate[i], &l);
	return links_reaper_start(&l);
}

/* A second Ctrl-C or SIGTERM while the outputs are written would, once the
 * mask is restored, kill the process before stdout is flushed: the files
 * are complete but the summary is lost. As perf record does, the
 * run is finished instead (stop is bounded: STOP_DRAIN_BUDGET_NS, and the
 * outputs are written in well under a second); SIGKILL still ends it. */
void run_ignore_late_signals(int sfd)
{
	struct signalfd_siginfo si;
	bool late = false;

	fflush(stdout);
	while (read(sfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			late = true;
	if (late)
		log_warn("signal received while finishing the run: ignored, the outputs and "
			 "summary are complete");
	/* From here to the exit (a sanitizer's leak check can take a while)
	 * the run is complete: a second Ctrl-C must not turn it into a death
	 * by signal. */
	{
		struct sigaction ign = { .sa_handler = SIG_IGN };

		sigemptyset(&ign.sa_mask);
		sigaction(SIGINT, &ign, NULL);
		sigaction(SIGTERM, &ign, NULL);
		sigaction(SIGHUP, &ign, NULL);
	}
}

/* Sampling stopped; everything the kernel queued before is part
 * of the run, as far as a bounded drain reads it: the rest is counted. */
void run_stop_sampler(struct recorder *r)
{
	r->ri.end_mono_ns = mono_ns();
	clock_gettime(CLOCK_REALTIME, &r->ri.end_wall);
	sampler_stop(r->sampler, STOP_DRAIN_BUDGET_NS, &r->prof.drops[PROF_DROP_UNREAD]);
	cpu_samples_collect_drops(&r->cs, r->sampler);
	if (r->kt) {
		uint64_t us[3];

		ktables_get_stats(r->kt, &r->ri.unwind.kt);
		if (!sampler_read_uw_stats(r->sampler, us)) {
			r->ri.unwind.kw_walk_ns = us[0];
			r->ri.unwind.kw_walks = us[1];
			r->ri.unwind.kw_frames = us[2];
		}
	}
	if (r->py) {
		cpu_samples_log_python(r->py);
		r->ri.python.mode = r->opts->python == CLI_PYTHON_ONLY ? "only" : "mixed";
		pyframes_get_stats(r->py, &r->ri.python.st);
	}
	if (sampler_polls_cut_short(r->sampler))
		log_warn(
			"the collector fell behind the sampler in %llu of its polls (records "
			"waited in the ring; any loss is under 'lost:'); a lower -F reduces the load",
			(unsigned long long)sampler_polls_cut_short(r->sampler));
}

/* The BPF links released in the background, the modules stopped
 * (each drains what is left), the launched command's exit status taken,
 * the sampler closed. */
void run_stop_modules(struct recorder *r)
{
	uint64_t t0;

	r->t_drained = mono_ns();
	r->reaper = start_reaping(r);
	for_each_module(r, i) {
		t0 = mono_ns();
		if (rec_modules[i]->stop)
			rec_modules[i]->stop(r->mstate[i]);
		log_debug("stop: %s took %.1f ms", rec_modules[i]->name, (mono_ns() - t0) / 1e6);
	}
	r->t_stopped = mono_ns();
	targets_reap_child(r);
	t0 = mono_ns();
	sampler_close(r->sampler);
	log_debug("stop: sampler closed in %.1f ms", (mono_ns() - t0) / 1e6);
	r->sampler = NULL;
}
/* The end-of-run summary on stdout. Assembled first: it quotes the
 * profiled program's strings (thread names, symbols, SQL text), cleaned of
 * terminal controls on the way out. */
static void print_summaries(struct recorder *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	FILE *out = m ? m : stdout;

	print_summary(&r->prof, &r->ri, out);
	for_each_module(r, i)
		if (rec_modules[i]->summary)
			rec_modules[i]->summary(r->mstate[i], out);
	if (!m)
		return;
	if (fclose(m) == 0 && buf) {
		term_clean(buf, len);
		fwrite(buf, 1, len, stdout);
	}
	free(buf);
}

/* The result bundle, then the summary on stdout. Returns the exit
 * code: 1 when a file could not be written. */
int run_write_results(struct recorder *r)
{
	struct bundle b = { .prof = &r->prof,
			    .ri = &r->ri,
			    .cycles = r->mctx.cycles,
			    .mods = rec_modules,
			    .mstate = r->mstate,
			    .nmods = rec_nmodules };
	struct symbolizer_stats st;
	int rc = bundle_write(&b, &r->od) ? 1 : 0;

	/* The summary lists what is on disk, not what report.json expected. */
	free((void *)r->ri.output_files);
	r->ri.output_files = (const char *const *)r->od.written;
	r->ri.noutput_files = r->od.nwritten;
	r->ri.failed_files = (const char *const *)r->od.failed;
	r->ri.failed_errs = r->od.failed_errs;
	r->ri.nfailed_files = r->od.nfailed;
	log_info("stop took %.0f ms: sampler drain %.0f, modules %.0f, outputs %.0f",
		 (mono_ns() - r->ri.end_mono_ns) / 1e6, (r->t_drained - r->ri.end_mono_ns) / 1e6,
		 (r->t_stopped - r->t_drained) / 1e6, (mono_ns() - r->t_stopped) / 1e6);
	if (r->opts->verbosity >= 0)
		print_summaries(r);
	symbolizer_get_stats(r->sym, &st);
	log_info("symbolizer: %llu lookups, %llu cache hits, %llu unresolved, %llu reloads",
		 (unsigned long long)st.lookups, (unsigned long long)st.cache_hits,
		 (unsigned long long)st.unresolved, (unsigned long long)st.reloads);
	if (st.perfmaps_cut)
		log_warn("%llu perf map(s) cut at their size limit: %.1f MiB not read, JIT "
			 "frames named there show as [unknown]",
			 (unsigned long long)st.perfmaps_cut,
			 (double)st.perfmap_unread_bytes / (1 << 20));
	return rc;
}
