/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The end of a recording run, in this order after the recording loop:
 * run_stop_sampler, run_stop_modules, run_write_results; and, in the
 * cleanup, run_ignore_late_signals.
 */
#ifndef EBPF_PROF_RECORD_FINISH_H
#define EBPF_PROF_RECORD_FINISH_H

struct recorder;

/* Stops sampling and drains what the kernel queued, within a bounded time;
 * sums the sampler's losses and the unwinding and Python figures. */
void run_stop_sampler(struct recorder *r);
/* Hands the BPF links over for release in the background, stops every
 * module, takes the launched command's exit status, closes the sampler. */
void run_stop_modules(struct recorder *r);
/* Writes the result bundle (export/bundle.h), then the summary on stdout.
 * Returns the exit code: 1 when a file could not be written, else 0. */
int run_write_results(struct recorder *r);
/* Reads what came on the signal descriptor while the run finished (said
 * in one line) and ignores the stop signals from here to the exit. */
void run_ignore_late_signals(int sfd);

#endif
