// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocates and touches memory in 4 MiB steps until the kernel kills it, for
 * tests/integration/test_oom.sh (run inside a memory-limited cgroup).
 *   oom_hog [CAP_MIB]
 * Prints "ready <pid>", then "touched_mib N" after each step. Stops at
 * CAP_MIB (default 1024) and exits 3 so that, without a working limit, it
 * neither eats the machine nor passes for an OOM kill.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STEP_MIB 4

static int __attribute__((noinline)) touch_step(void)
{
	size_t len = (size_t)STEP_MIB << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	/* Every page dirtied: anonymous RSS, charged to the cgroup. Kept
	 * mapped on purpose. */
	memset(p, 0xa5, len);
	return 0;
}

int main(int argc, char **argv)
{
	long cap = argc > 1 ? strtol(argv[1], NULL, 10) : 1024;

	if (cap <= 0)
		cap = 1024;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long mib = STEP_MIB; mib <= cap; mib += STEP_MIB) {
		if (touch_step()) {
			printf("mmap failed at %ld MiB\n", mib);
			return 2;
		}
		printf("touched_mib %ld\n", mib);
		fflush(stdout);
	}
	printf("not killed at %ld MiB\n", cap);
	return 3;
}
