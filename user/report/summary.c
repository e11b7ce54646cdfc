// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The few lines a user reads after a run: what was profiled, how much was
 * seen and lost, where the time went, where the files are. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "symbolize/demangle.h"
#include "symbolize/jit_hint.h"

#define SUMMARY_TOP 10
/* Longest function name printed; long C++ template names are collapsed
 * ("<...>") to fit, the files keep them whole. */
#define SUMMARY_NAME_MAX 100

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* Names come from the target; a planted escape sequence must not drive the
 * user's terminal. */
static void put_safe(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
	}
}

static double pct(uint64_t n, uint64_t d)
{
	return d ? 100.0 * (double)n / (double)d : 0.0;
}

static void print_target(const struct run_info *ri, FILE *out)
{
	if (ri->launched && ri->command) {
		fputs("target:   ", out);
		put_safe(out, ri->command, SIZE_MAX);
		if (ri->exit_status >= 0)
			fprintf(out, " (exit status %d)", ri->exit_status);
		fputc('\n', out);
		if (ri->left_running_pid)
			fprintf(out,
				"          still running (pid %" PRIu32 "): the recording ended, "
				"the command was left running; stop it with kill %" PRIu32 "\n",
				ri->left_running_pid, ri->left_running_pid);
	}
	if (!ri->ntargets) {
		if (!ri->launched)
			fputs("target:   (none)\n", out);
		return;
	}
	fputs(ri->launched ? "processes:" : "target:  ", out);
	for (size_t i = 0; i < ri->ntargets; i++) {
		const struct report_target *t = &ri->targets[i];
		fputs(i ? ", " : " ", out);
		put_safe(out, t->comm, PROF_COMM_LEN);
		fprintf(out, " (pid %" PRIu32 "%s)", t->pid, t->exited ? ", exited" : "");
		if (i >= 7 && ri->ntargets > 9) {
			fprintf(out, ", ... %zu more", ri->ntargets - i - 1);
			break;
		}
	}
	fputc('\n', out);
}

void print_summary(const struct profile *p, const struct run_info *ri, FILE *out)
{
	static const struct run_info none = { .exit_status = -1 };
	if (!ri)
		ri = &none;
	print_target(ri, out);
	uint64_t dur = ri->end_mono_ns > ri->start_mono_ns ? ri->end_mono_ns - ri->start_mono_ns
							   : 0;
	fprintf(out, "duration: %.2f s at %" PRIu32 " Hz", (double)dur / 1e9, p->freq_hz);
	if (ri->requested_hz > p->freq_hz)
		fprintf(out, " (-F %" PRIu32 " limited by the overload guard)", ri->requested_hz);
	fprintf(out, "%s%s\n", ri->stop_reason ? ", stopped by " : "",
		ri->stop_reason ? ri->stop_reason : "");

	uint64_t all = p->total_samples + ri->rotated_samples;

	if (ri->rotations && all) {
		/* --rotate: the profile holds the current interval only; the
		 * run's count is the one beside the run's unwind and loss
		 * figures. */
		uint64_t user = p->user_samples + ri->rotated_user,
			 kern = p->kernel_samples + ri->rotated_kernel;

		fprintf(out,
			"samples:  %" PRIu64 " over the run (user %" PRIu64
			" %.1f%%, kernel %" PRIu64 " %.1f%%); %" PRIu64
			" in the last interval (after %" PRIu32
			" rotation(s)), which the functions below are from\n",
			all, user, pct(user, all), kern, pct(kern, all), p->total_samples,
			ri->rotations);
	} else if (!p->total_samples) {
		fputs("samples:  0 - no CPU samples were collected.\n"
		      "          Likely causes: the target was idle or blocked (waiting on I/O, a\n"
		      "          lock or the GPU), it exited at once, or the pid is not the\n"
		      "          process doing the work (check with `top -H -p PID`).\n",
		      out);
	} else {
		fprintf(out,
			"samples:  %" PRIu64 " (user %" PRIu64 " %.1f%%, kernel %" PRIu64
			" %.1f%%)\n",
			p->total_samples, p->user_samples, pct(p->user_samples, p->total_samples),
			p->kernel_samples, pct(p->kernel_samples, p->total_samples));
	}

	if (p->bucket_ns) {
		uint64_t upto = p->merged_until_ns > ri->start_mono_ns
					? p->merged_until_ns - ri->start_mono_ns
					: 0;

		if (ri->start_mono_ns && upto < dur)
			fprintf(out,
				"timeline: samples of the first %.0f s merged per %.0f ms to keep "
				"memory bounded (counts exact, time order within a bucket lost)\n",
				(double)upto / 1e9, (double)p->bucket_ns / 1e6);
		else
			fprintf(out,
				"timeline: samples merged per %.0f ms to keep memory bounded (counts "
				"exact, time order within a bucket lost)\n",
				(double)p->bucket_ns / 1e6);
	}

	uint64_t dropped = 0;
	for (int i = 0; i < PROF_DROP__COUNT; i++)
		dropped += p->drops[i];
	if (!dropped) {
		fputs("lost:     no samples lost\n", out);
	} else {
		fputs("lost:    ", out);
		bool first = true;
		for (int i = 0; i < PROF_DROP__COUNT; i++) {
			if (!p->drops[i])
				continue;
			fprintf(out, "%s %s=%" PRIu64, first ? "" : ",",
				profile_drop_name((enum prof_drop)i), p->drops[i]);
			first = false;
		}
		fputc('\n', out);
	}

	if (ri->unwind.mode && ri->unwind.cfi + ri->unwind.fp) {
		const struct run_unwind *u = &ri->unwind;
		uint64_t stacks = u->cfi + u->fp;

		fprintf(out,
			"unwind:   %s, %" PRIu64 " CFI + %" PRIu64 " frame-pointer stacks, %.1f%% "
			"truncated, %.1f%% stopped early",
			u->mode, u->cfi, u->fp, pct(u->truncated, stacks), pct(u->errors, stacks));
		if (u->no_window)
			fprintf(out,
				", %" PRIu64 " without stack copy (%" PRIu64 " unreadable, %" PRIu64
				" no registers)",
				u->no_window, u->copy_errors, u->regs_errors);
		fputc('\n', out);
	}

	if (ri->python.mode && ri->python.st.samples) {
		const struct pyframes_stats *s = &ri->python.st;
		uint64_t walks = s->bpf[EP_PY_ST_WALKS];

		fprintf(out,
			"python:   %.1f%% of %" PRIu64
			" samples of Python processes with Python frames",
			pct(s->with_python, s->samples), s->samples);
		if (walks)
			fprintf(out, ", walk %.1f us and %.1f frames per sample",
				(double)s->bpf[EP_PY_ST_WALK_NS] / (double)walks / 1e3,
				(double)s->bpf[EP_PY_ST_FRAMES] / (double)walks);
		if (s->offcpu_with_python)
			fprintf(out, ", %" PRIu64 " off-CPU episodes", s->offcpu_with_python);
		fputc('\n', out);
	}

	struct prof_func_stat *st = NULL;
	size_t n = 0;
	if (p->total_samples && profile_func_stats(p, &st, &n) == 0 && n) {
		/* Both columns named: "78.67%  78.91% total" read as two totals. */
		fputs("top functions by self time:\n     self   +callees  function [file]\n", out);
		for (size_t i = 0; i < n && i < SUMMARY_TOP; i++) {
			const struct prof_frame *f = &p->frames[st[i].frame];
			if (!st[i].self)
				break;
			const char *mod = f->module ? base_name(f->module)
						    : (f->kernel ? "kernel" : "?");
			fprintf(out, "  %6.2f%%  %7.2f%%  ", pct(st[i].self, p->total_samples),
				pct(st[i].total, p->total_samples));
			char nb[1024]; /* room to collapse before the cut */
			put_safe(out, demangle_shorten(f->name, SUMMARY_NAME_MAX, nb, sizeof(nb)),
				 SIZE_MAX);
			fputs(" [", out);
			put_safe(out, mod, SIZE_MAX);
			fputs("]\n", out);
		}
	}
	free(st);

	struct jit_hint jh;
	jit_hint_compute(p, &jh);
	if (jit_hint_wanted(&jh))
		fprintf(out, "hint:     %.0f%% of node's samples " JIT_HINT_TEXT "\n",
			pct(jh.anon_unknown, jh.node_samples));

	if (ri->output_dir) {
		fprintf(out, "output:   %s/\n", ri->output_dir);
		for (size_t i = 0; i < ri->noutput_files; i++)
			fprintf(out, "          %s\n", ri->output_files[i]);
		for (size_t i = 0; i < ri->nfailed_files; i++)
			fprintf(out, "          NOT WRITTEN: %s (%s)\n", ri->failed_files[i],
				strerror(-ri->failed_errs[i]));
	}
}
