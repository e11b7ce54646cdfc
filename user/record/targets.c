// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The run's targets and their lifecycle (targets.h): which processes are
 * recorded, from the user's --pid through the forks, execs and exits the
 * CPU sampler reports, to the launched command's exit status.
 */
#include "record/targets.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events/probes.h"
#include "util/clock.h"
#include "proc/proc_info.h"
#include "python/pyframes.h"
#include "record/recorder.h"
#include "symbolize/symbolize.h"
#include "unwind/ktables.h"
#include "util/log.h"

/* How long the exited launched command stays unreaped waiting for its exit
 * event (targets_check_liveness). */
#define CHILD_REAP_GRACE_NS (200 * 1000000ull)
/* How often target liveness is re-checked in /proc, as a backstop for a lost
 * exit event and for zombies of processes that are not our children. */
#define LIVENESS_PERIOD_NS (100 * 1000000ull)

struct report_target *targets_find(struct recorder *r, uint32_t pid)
{
	int64_t i = pid_index_find(&r->tgidx, r->ri.targets, pid);

	return i >= 0 ? &r->ri.targets[i] : NULL;
}

int targets_add(struct recorder *r, uint32_t pid, uint32_t parent, const char *comm)
{
	const struct report_target *pt;
	struct report_target *t;

	if (!r->tgidx.stride)
		pid_index_init(&r->tgidx, sizeof(*t), offsetof(struct report_target, pid));
	if (targets_find(r, pid))
		return 0;
	if (r->ri.ntargets == r->cap_targets) {
		size_t cap = r->cap_targets ? r->cap_targets * 2 : 8;
		void *p = realloc(r->ri.targets, cap * sizeof(*r->ri.targets));

		if (!p)
			return -ENOMEM;
		r->ri.targets = p;
		r->cap_targets = cap;
	}
	if (pid_index_add(&r->tgidx, pid, (uint32_t)r->ri.ntargets))
		return -ENOMEM;
	t = &r->ri.targets[r->ri.ntargets++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->parent_pid = parent;
	pt = parent && comm ? targets_find(r, parent) : NULL;
	if (pt) {
		/* A fork: the parent's command line until an exec (which
		 * re-reads it), the name from the event. No /proc read: a fork
		 * storm's children must cost little each. */
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		if (pt->cmdline)
			t->cmdline = strdup(pt->cmdline);
		r->ri.forks_unread++;
	} else {
		if (proc_read_comm(r->opts->proc_root, pid, t->comm, sizeof(t->comm)) && comm)
			snprintf(t->comm, sizeof(t->comm), "%s", comm);
		proc_read_cmdline(r->opts->proc_root, pid, &t->cmdline);
	}
	r->nalive++;
	/* A child is looked at once it has lived a while: most of a fork
	 * storm's are gone by then. */
	if (r->py && pyframes_watch(r->py, pid, pt ? PY_CHILD_DELAY_NS : 0))
		log_warn("python: cannot watch pid %u for an interpreter", pid);
	return 0;
}

/* A process the user named (--pid) or launched, not one that followed. */
static bool is_root_target(struct recorder *r, uint32_t pid)
{
	const struct report_target *t = targets_find(r, pid);

	return t && !t->parent_pid;
}

static void mark_exited(struct recorder *r, struct report_target *t, uint64_t ts)
{
	if (t->exited)
		return;
	t->exited = true;
	t->exit_ns = ts;
	r->nalive--;
}

/* A launched command and forked children are registered before they exec,
 * under the parent's name. The exec event says so; a main-thread comm change
 * is the backstop should that event be lost. */
void targets_refresh_after_exec(struct recorder *r, uint32_t pid, const char *comm, bool force)
{
	struct report_target *t = targets_find(r, pid);
	char *cmdline = NULL;

	if (!t || (!force && !strncmp(t->comm, comm, sizeof(t->comm) - 1)))
		return;
	memcpy(t->comm, comm, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = '\0';
	if (proc_read_cmdline(r->opts->proc_root, pid, &cmdline) == 0) {
		free(t->cmdline);
		t->cmdline = cmdline;
	}
}

int targets_on_task_event(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct ep_event_hdr *h = data;

	switch (h->type) {
	case EP_EV_FORK: {
		const struct ep_task_event *e = data;
		char comm[EP_COMM_LEN + 1];

		if (size < sizeof(*e))
			break;
		memcpy(comm, e->comm, EP_COMM_LEN);
		comm[EP_COMM_LEN] = '\0';
		log_info("following new process %u (%s), child of %u", h->pid, comm, e->parent_pid);
		/* A pid used again: the exited process's state (kept for its
		 * late records) must not name the new one's frames. */
		symbolizer_fork_pid(r->sym, h->pid);
		if (targets_add(r, h->pid, e->parent_pid, comm))
			r->prof.drops[PROF_DROP_COLLECTOR]++;
		/* The child has its parent's mappings until it execs. */
		if (r->kt)
			ktables_fork(r->kt, e->parent_pid, h->pid, mono_ns());
		for_each_module(r, i)
			if (rec_modules[i]->add_target)
				rec_modules[i]->add_target(r->mstate[i], h->pid);
		break;
	}
	case EP_EV_EXEC: {
		const struct ep_task_event *e = data;
		char comm[EP_COMM_LEN + 1];

		if (size < sizeof(*e))
			break;
		memcpy(comm, e->comm, EP_COMM_LEN);
		comm[EP_COMM_LEN] = '\0';
		symbolizer_exec_pid(r->sym, h->pid, h->ts_ns);
		/* The launched command (or a process given with --pid) read at
		 * once, while it runs: a short command can exit before its
		 * samples are drained (a recorder stalled at start-up on a slow
		 * board), and with it its maps. Other descendants are read at
		 * their first sample: a fork storm must not cost a maps read per
		 * exec. */
		if (is_root_target(r, h->pid))
			symbolizer_prepare_pid(r->sym, h->pid);
		if (r->py)
			pyframes_forget_pid(r->py, h->pid, false, h->ts_ns);
		targets_refresh_after_exec(r, h->pid, comm, true);
		/* A new image: the executable and ld.so now, the libraries as
		 * ld.so maps them (their first samples re-scan). */
		if (r->kt) {
			ktables_forget(r->kt, h->pid);
			ktables_scan(r->kt, h->pid, mono_ns());
		}
		break;
	}
	case EP_EV_MMAP_EXEC:
		/* dlopen: the new code's tables before its samples (the walk
		 * of a pc in no known mapping ends at it). */
		if (r->kt) {
			ktables_scan(r->kt, h->pid, mono_ns());
			/* The walker now names frames in the new code: the
			 * symbolizer must know its mapping as soon (its own
			 * re-read on a miss is rate limited). */
			symbolizer_forget_pid(r->sym, h->pid);
		}
		break;
	case EP_EV_EXIT: {
		struct report_target *t = targets_find(r, h->pid);

		if (t)
			mark_exited(r, t, h->ts_ns);
		for_each_module(r, i)
			if (rec_modules[i]->on_exit)
				rec_modules[i]->on_exit(r->mstate[i], h->pid, h->ts_ns);
		/* Not forgotten: the modules' rings may still hold its records. */
		symbolizer_retire_pid(r->sym, h->pid);
		if (r->kt)
			ktables_forget(r->kt, h->pid);
		if (r->py)
			pyframes_forget_pid(r->py, h->pid, true, h->ts_ns);
		break;
	}
	case EP_EV_HOLD_WAKE:
		/* A process of the launched tree is held: only the wake-up
		 * counts (the probes module's poll, next, resumes it). */
		break;
	default:
		r->prof.drops[PROF_DROP_COLLECTOR]++;
	}
	return 0;
}

/* Backstop for lost exit events and for our own child, which stays a zombie
 * (and thus "alive" to BPF) until reaped. */
void targets_check_liveness(struct recorder *r, uint64_t now)
{
	if (r->child > 0 && !r->child_reaped) {
		struct report_target *ct = targets_find(r, (uint32_t)r->child);
		siginfo_t si = { 0 };
		int status;
		pid_t w = 0;

		/* A zombie keeps /proc/PID/stat and friends: reap it only once
		 * its exit event went through the modules (their last look at
		 * its faults and memory), or after a grace period should that
		 * event be lost. */
		if (!waitid(P_PID, (id_t)r->child, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid == r->child) {
			if (!r->child_zombie_ns)
				r->child_zombie_ns = now;
			if ((ct && ct->exited) || now - r->child_zombie_ns > CHILD_REAP_GRACE_NS)
				w = waitpid(r->child, &status, WNOHANG);
		}
		if (w == r->child) {
			r->child_reaped = true;
			if (WIFEXITED(status))
				r->ri.exit_status = WEXITSTATUS(status);
			else if (WIFSIGNALED(status))
				r->ri.exit_status = 128 + WTERMSIG(status);
		}
	}
	if (now < r->next_liveness_ns)
		return;
	r->next_liveness_ns = now + LIVENESS_PERIOD_NS;
	for (size_t i = 0; i < r->ri.ntargets; i++) {
		struct report_target *t = &r->ri.targets[i];

		if (t->exited)
			continue;
		if ((pid_t)t->pid == r->child) {
			if (r->child_reaped)
				mark_exited(r, t, now);
			continue;
		}
		if (proc_get_state(r->opts->proc_root, t->pid) != PROC_ALIVE)
			mark_exited(r, t, now);
	}
}

void targets_reap_child(struct recorder *r)
{
	if (r->child > 0 && !r->child_reaped && !strcmp(r->ri.stop_reason, "targets-exited")) {
		/* The kernel reported the child's last thread gone; it becomes a
		 * zombie right after, so this wait is short and gives the report
		 * its exit status. */
		int status;

		if (waitpid(r->child, &status, 0) == r->child) {
			r->child_reaped = true;
			r->ri.exit_status = WIFEXITED(status) ? WEXITSTATUS(status)
							      : 128 + WTERMSIG(status);
		}
	}
	if (r->child > 0 && !r->child_reaped && !strcmp(r->ri.stop_reason, "signal")) {
		/* A terminal Ctrl-C reaches the command too: give it a moment to
		 * exit so its status makes the report. If it keeps running (we alone
		 * got SIGTERM) it is left alone, as perf leaves a -p target. */
		uint64_t until = mono_ns() + 250 * 1000000ull;
		struct timespec tick = { 0, 5 * 1000000 };

		while (!r->child_reaped && mono_ns() < until) {
			targets_check_liveness(r, 0);
			if (!r->child_reaped)
				nanosleep(&tick, NULL);
		}
	}
	if (r->child > 0 && !r->child_reaped) {
		/* Stopped by -d (or a signal the command did not get): it keeps
		 * running, which the summary says with its pid. One that has
		 * just exited gives its status instead. */
		int status;

		if (waitpid(r->child, &status, WNOHANG) == r->child) {
			r->child_reaped = true;
			r->ri.exit_status = WIFEXITED(status) ? WEXITSTATUS(status)
							      : 128 + WTERMSIG(status);
		} else {
			r->ri.left_running_pid = (uint32_t)r->child;
		}
	}
}

/* --pid values, checked, as processes. A thread id is accepted by the
 * kernel's calls (kill, /proc/TID) but the BPF filter is by process:
 * given as is, it recorded nothing. Like perf -p with a thread
 * id... which perf takes as the thread alone; here a thread is profiled
 * with its whole process, and said so. */
int targets_resolve_pids(const struct cli_opts *o, uint32_t *pids, int *npids)
{
	*npids = 0;
	for (int i = 0; i < o->npids; i++) {
		uint32_t pid = o->pids[i], tgid;
		bool dup = false;

		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			log_error("no such process: %u", pid);
			return -ESRCH;
		}
		if (proc_read_tgid(o->proc_root, pid, &tgid) == 0 && tgid != pid) {
			char comm[32] = "?";

			proc_read_comm(o->proc_root, tgid, comm, sizeof(comm));
			log_warn("%u is a thread of process %u (%s), not a process: profiling the "
				 "whole process %u",
				 pid, tgid, comm, tgid);
			pid = tgid;
		}
		if (proc_get_state(o->proc_root, pid) != PROC_ALIVE) {
			log_error("process %u has exited (zombie): nothing to profile", pid);
			return -ESRCH;
		}
		/* It has no user space: no user stacks, maps, probes or memory,
		 * and the run ended with "0 samples" and no word why. */
		if (proc_is_kernel_thread(o->proc_root, pid) == 1) {
			char comm[32] = "?";

			proc_read_comm(o->proc_root, pid, comm, sizeof(comm));
			log_error("%u (%s) is a kernel thread: ebpf-prof profiles user-space "
				  "processes (for kernel threads: perf record -g -p %u)",
				  pid, comm, pid);
			return -EINVAL;
		}
		for (int j = 0; j < *npids; j++)
			dup |= pids[j] == pid;
		if (!dup)
			pids[(*npids)++] = pid;
	}
	return 0;
}

void targets_free(struct recorder *r)
{
	for (size_t i = 0; i < r->ri.ntargets; i++)
		free(r->ri.targets[i].cmdline);
	free(r->ri.targets);
	pid_index_free(&r->tgidx);
}
