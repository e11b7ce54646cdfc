// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Launch mode's command (launch.h): the fork, the hold and the release, apart
 * from the run's phases since none of it depends on what is recorded.
 */
#include "record/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "overload/priority.h"
#include "proc/proc_info.h"

pid_t launch_child(char **argv, const sigset_t *orig_mask, int nice_val, struct launch *l)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		collector_priority_child(nice_val);
		/* Wait until the profiler is attached so the first instruction of
		 * the command is already sampled; EOF means the profiler gave up. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	l->go_fd = go[1];
	l->exec_fd = ex[0];
	return pid;
}

/* The exec's ELF load is done once the child's memory has a code segment
 * of its own: startcode (stat field 26, set at the end of the load) is
 * neither ours (the forked copy) nor 0 (the new, still empty mm). The
 * exec fd closes earlier, when the old image is dropped. Bounded: 1 s. */
void launch_wait_exec_loaded(const char *proc_root, pid_t child)
{
	const struct timespec ms = { 0, 1000000 };
	uint64_t self, v;

	if (proc_read_stat_field(proc_root, (uint32_t)getpid(), 26, &self))
		return;
	for (int i = 0; i < 1000; i++) {
		if (proc_read_stat_field(proc_root, (uint32_t)child, 26, &v) < 0)
			return;
		if (v && v != self)
			return;
		nanosleep(&ms, NULL);
	}
}

int launch_release(struct launch *l)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->exec_fd);
	l->exec_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

void launch_close(struct launch *l, pid_t child, bool reaped)
{
	if (l->go_fd >= 0) {
		/* Never released: the child sees EOF and exits without running. */
		close(l->go_fd);
		if (child > 0 && !reaped)
			waitpid(child, NULL, 0);
	}
	if (l->exec_fd >= 0)
		close(l->exec_fd);
}

char *launch_join_argv(char **argv, int n)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < n; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}
