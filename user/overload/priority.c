// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overload/priority.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

int collector_priority_raise(int *old)
{
	int cur;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (cur == -1 && errno)
		return -errno;
	*old = cur;
	if (cur <= COLLECTOR_NICE)
		return 0;
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), COLLECTOR_NICE))
		return -errno;
	return 0;
}

void collector_priority_child(int old)
{
	/* Raising the value (lowering the priority) is always permitted. */
	setpriority(PRIO_PROCESS, 0, old);
}
