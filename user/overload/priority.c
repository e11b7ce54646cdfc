// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overload/priority.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

void collector_priority_raise(struct collector_prio *p)
{
	struct sched_param sp = { .sched_priority = COLLECTOR_RT_PRIO };
	int cur;

	*p = (struct collector_prio){ 0 };
	errno = 0;
	cur = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (cur == -1 && errno) {
		p->nice_err = errno;
		cur = 0;
	}
	p->old_nice = cur;
	if (!p->nice_err && cur > COLLECTOR_NICE &&
	    setpriority(PRIO_PROCESS, (id_t)gettid(), COLLECTOR_NICE))
		p->nice_err = errno;
	/* Already real-time (chrt): leave it as the user set it. */
	if (sched_getscheduler(0) != SCHED_OTHER)
		return;
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		p->rt_err = errno;
	else
		p->realtime = true;
}

void collector_priority_child(int old_nice)
{
	struct sched_param sp = { .sched_priority = 0 };

	/* Both always permitted: they lower the priority. */
	sched_setscheduler(0, SCHED_OTHER, &sp);
	setpriority(PRIO_PROCESS, 0, old_nice);
}

void collector_thread_not_realtime(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (sched_getscheduler(0) == SCHED_FIFO)
		sched_setscheduler(0, SCHED_OTHER, &sp);
}
