/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Launch mode's command: forked at once, held on a pipe until the profiler
 * is attached, then released to exec, so that its first instruction is
 * sampled. Process handling only; the recorder makes it a target.
 */
#ifndef EBPF_PROF_LAUNCH_H
#define EBPF_PROF_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct launch {
	int go_fd;   /* write end: release the child */
	int exec_fd; /* read end: child's errno if exec failed (CLOEXEC) */
};

#define LAUNCH_INIT    \
	{              \
		-1, -1 \
	}

/* Forks the child that will exec argv once released, with orig_mask as its
 * signal mask and nice_val as its nice value. Returns its pid or -errno. */
pid_t launch_child(char **argv, const sigset_t *orig_mask, int nice_val, struct launch *l);
/* Releases the child; returns 0 once it has exec'ed, or -errno of the exec. */
int launch_release(struct launch *l);
/* Waits (at most 1 s) until the exec'ed child's image is loaded. */
void launch_wait_exec_loaded(const char *proc_root, pid_t child);
/* Closes what is left of the pipes. A child never released sees EOF and
 * exits without running: it is waited for unless already reaped. */
void launch_close(struct launch *l, pid_t child, bool reaped);
/* The command line as one string (report.json); NULL: out of memory. */
char *launch_join_argv(char **argv, int n);

#endif
