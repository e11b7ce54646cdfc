// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Process trees for launch mode's holds (test_launch_tree.sh):
 * fork_tree run PROG [ARG...]: a launcher, as npx or uv run: forks, the
 *   child execs PROG, the parent waits and exits with its status.
 * fork_tree calls LIB N: dlopen(LIB), then fork without exec: the child
 *   calls LIB's late_work N times at once, exits; the parent then calls it
 *   N times: "calls 2N" (the child inherits the mapping, not the probes).
 * fork_tree dlopen LIB N: fork without exec; the child dlopens LIB and
 *   calls late_work N times at once: "calls N".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int calls(void *h, int n)
{
	int (*fn)(int);
	long sum = 0;

	if (!h || !(*(void **)&fn = dlsym(h, "late_work"))) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < n; i++)
		sum += fn(i);
	return sum < 0;
}

static int wait_child(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	pid_t pid;
	void *h;
	int n, rc;

	if (argc >= 3 && !strcmp(argv[1], "run")) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execvp(argv[2], argv + 2);
			perror("execvp");
			_exit(127);
		}
		return wait_child(pid);
	}
	if (argc != 4 || (strcmp(argv[1], "calls") && strcmp(argv[1], "dlopen"))) {
		fprintf(stderr,
			"usage: fork_tree run PROG [ARG...] | calls LIB N | dlopen LIB N\n");
		return 2;
	}
	n = atoi(argv[3]);
	if (!strcmp(argv[1], "dlopen")) {
		pid = fork();
		if (pid == 0)
			_exit(calls(dlopen(argv[2], RTLD_NOW), n));
		rc = wait_child(pid);
		printf("calls %d\n", rc ? 0 : n);
		return rc;
	}
	h = dlopen(argv[2], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(calls(h, n));
	rc = wait_child(pid);
	if (!rc)
		rc = calls(h, n);
	printf("calls %d\n", rc ? 0 : 2 * n);
	return rc;
}
