// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The SIGBUS guard against a mapped file truncated under the reader: a
 * child reads past the new end of a mapping, once without the guard (it
 * must die of SIGBUS, or this test proves nothing) and once with it (it
 * must read zeros and carry on). */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util/sigbus_guard.h"

/* In a child: maps two pages of a file, truncates it to one, reads a
 * byte of the second page and exits with it (0..255), or dies. */
static int read_past_end(bool guard)
{
	char path[] = "/tmp/ep-sigbus-XXXXXX";
	long page = sysconf(_SC_PAGESIZE);
	int fd = mkstemp(path), status;
	pid_t pid;

	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, 2 * page)) {
		close(fd);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		volatile const unsigned char *m;
		unsigned char first;

		/* Unguarded means the default action: a sanitizer's own handler
		 * would report and exit instead. */
		if (guard ? sigbus_guard_install() != 0 : signal(SIGBUS, SIG_DFL) == SIG_ERR)
			_exit(201);
		m = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(202);
		first = m[0];
		if (ftruncate(fd, page))
			_exit(203);
		_exit(m[page + 17] + first);
	}
	close(fd);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void)
{
	/* Without the guard the read is fatal: SIGBUS. */
	CHECK_INT_EQ(read_past_end(false), 1000 + SIGBUS);
	/* With it, the page past the end reads as zeros. */
	CHECK_INT_EQ(read_past_end(true), 0);
	return check_report("test_sigbus_guard");
}
