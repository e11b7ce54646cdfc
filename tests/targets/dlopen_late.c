// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loads a library after the profiler attached: "ready <pid>", SIGUSR1 ->
 * dlopen(argv[1]) and "loaded", SIGUSR1 -> N_CALLS calls of late_work()
 * from it, "done". The pause between loading and calling lets the test
 * wait for the probe to be attached instead of racing it.
 * dlopen_late LIBRARY --now N: no pauses: dlopen, then N calls at once
 * ("calls N"), as a program that loads a library with dlopen and uses it
 * right away (ctypes, a Node addon); launch mode must not miss any.
 * dlopen_late LIBRARY --now N FIRST: before that, a dlopen of FIRST that
 * must fail after ld.so mapped it (dlopen_missing_dep_lib: a missing
 * DT_NEEDED), as a program trying an optional native module; LIBRARY may
 * bring late_work as its own DT_NEEDED (dlopen_wrap_lib).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_CALLS 123

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;
	void *h;
	int (*fn)(int);
	long sum = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: dlopen_late LIBRARY\n");
		return 2;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[2], "--now")) {
		int n = atoi(argv[3]);

		if (argc == 5) {
			h = dlopen(argv[4], RTLD_NOW);
			if (h) {
				fprintf(stderr, "%s loaded: it was to fail\n", argv[4]);
				return 1;
			}
			printf("first failed: %s\n", dlerror());
		}

		h = dlopen(argv[1], RTLD_NOW);
		if (!h || !(*(void **)&fn = dlsym(h, "late_work"))) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		for (int i = 0; i < n; i++)
			sum += fn(i);
		printf("calls %d\nsum %ld\n", n, sum);
		return 0;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(h, "late_work");
	if (!fn)
		return 1;
	printf("loaded\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	for (int i = 0; i < N_CALLS; i++)
		sum += fn(i);
	printf("sum %ld\ndone\n", sum);
	fflush(stdout);
	return 0;
}
