// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Launch mode's holds: the command stopped at start-up, and at each
 * dlopen/dlclose after it, is resumed once its libraries are probed and
 * the other modules attached. Apart from probes_module.c because it is
 * the one place that signals the traced command.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "probes/probes_internal.h"
#include "util/clock.h"
#include "util/log.h"

/* Resumes the held command once the BPF side has stopped it (hold_pid
 * cleared there) and, with `scanned`, its libraries have been scanned
 * since; read before the scan, so a stop seen means the scan saw every
 * startup library. force: resume whatever the state (end of the run). */
void probes_release_hold(struct probes_mod *m, bool stopped_before_scan, bool force)
{
	if (!m->hold_pid || (!stopped_before_scan && !force))
		return;
	if (force && m->skel->bss->hold_pid) {
		m->skel->bss->hold_pid = 0; /* not stopped yet: never will be */
		m->hold_pid = 0;
		return;
	}
	/* The other modules' boundaries (the cycle marker) must be in place
	 * before main runs too, or the first cycles are lost. */
	if (m->ctx->notify_held && !force)
		m->ctx->notify_held(m->ctx->rec, m->hold_pid);
	if (kill((pid_t)m->hold_pid, SIGCONT) && errno != ESRCH)
		log_warn("probes: cannot resume pid %u after attaching at its start-up: %s",
			 m->hold_pid, strerror(errno));
	else
		log_info("probes: pid %u held at start-up until its libraries were probed",
			 m->hold_pid);
	m->hold_pid = 0;
}

/* The command stopped itself at a dlopen/dlclose (after start-up): its
 * maps are scanned (under m->lock) and the other modules attach to what it
 * mapped before it resumes. dl_held is cleared before SIGCONT: the stopped
 * command cannot set it again in between. force: resume and stop holding
 * (end of the run). */
void probes_release_dl_hold(struct probes_mod *m, bool force)
{
	uint64_t t0;
	struct ptarget *t;

	if (!m->dl_hold_pid)
		return;
	if (force)
		m->skel->bss->dl_hold_pid = 0;
	if (!__atomic_load_n(&m->skel->bss->dl_held, __ATOMIC_ACQUIRE)) {
		if (force)
			m->dl_hold_pid = 0;
		return;
	}
	t0 = mono_ns();
	t = uprobe_targets_find(&m->tg, m->dl_hold_pid);
	if (!force && t && !t->exited) {
		probes_scan_target(m, t);
		if (m->ctx->notify_held)
			m->ctx->notify_held(m->ctx->rec, m->dl_hold_pid);
	}
	__atomic_store_n(&m->skel->bss->dl_held, 0, __ATOMIC_RELEASE);
	if (kill((pid_t)m->dl_hold_pid, SIGCONT) && errno != ESRCH)
		log_warn("probes: cannot resume pid %u after its dlopen: %s", m->dl_hold_pid,
			 strerror(errno));
	m->dl_holds++;
	t0 = mono_ns() - t0;
	m->dl_hold_ns += t0;
	if (t0 > m->dl_hold_max_ns)
		m->dl_hold_max_ns = t0;
	if (force)
		m->dl_hold_pid = 0;
}
