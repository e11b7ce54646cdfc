// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/sigbus_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at;

	(void)uc;
	if (si->si_code != BUS_ADRERR || page <= 0)
		goto fatal;
	at = (uintptr_t)si->si_addr & ~((uintptr_t)page - 1);
	/* The page that has no file behind it any more becomes zeros in
	 * place; the faulting load runs again and reads them. */
	if (mmap((void *)at, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		 0) == MAP_FAILED)
		goto fatal;
	errno = saved;
	return;
fatal:
	/* Not ours to repair: the default action (a core dump) as if no
	 * handler had been installed. */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

int sigbus_guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}
