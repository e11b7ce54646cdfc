// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hardware watchpoints on code objects' reference counts (py_watch.h).
 */
#include "cycles/py_watch.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events/cycles.h"
#include "util/vec.h"

/* A process with more threads than this is watched in its first ones
 * (and whatever they start). Each is one perf event and one link. */
#define MAX_THREADS_PER_OBJ 4096

struct wobj {
	uint32_t pid;
	uint64_t addr;
	struct bpf_link **links;
	size_t nlinks, caplinks;
	uint32_t *tids;
	size_t ntids, captids;
};

struct py_watch {
	char proc_root[256];
	struct bpf_program *prog;
	int rc_map_fd;
	struct wobj *objs;
	size_t nobjs, capobjs;
};

int py_watch_new(struct py_watch **out, const struct py_watch_cfg *cfg)
{
	struct py_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	snprintf(w->proc_root, sizeof(w->proc_root), "%s",
		 cfg->proc_root ? cfg->proc_root : "/proc");
	w->prog = cfg->prog;
	w->rc_map_fd = cfg->rc_map_fd;
	*out = w;
	return 0;
}

static void obj_close(struct wobj *o)
{
	for (size_t i = 0; i < o->nlinks; i++)
		bpf_link__destroy(o->links[i]);
	free(o->links);
	free(o->tids);
	memset(o, 0, sizeof(*o));
}

void py_watch_free(struct py_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nobjs; i++)
		obj_close(&w->objs[i]);
	free(w->objs);
	free(w);
}

static bool has_tid(const struct wobj *o, uint32_t tid)
{
	for (size_t i = 0; i < o->ntids; i++)
		if (o->tids[i] == tid)
			return true;
	return false;
}

/* One thread: an inheritable 8-byte write watchpoint, user mode only,
 * every hit an overflow that runs the program. 0 or a negative errno. */
static int arm_thread(struct py_watch *w, struct wobj *o, uint32_t tid)
{
	struct perf_event_attr a;
	struct bpf_link *l;
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = o->addr;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.inherit = 1;
	/* After an exec the address means something else (5.13+; older
	 * kernels refuse the bit: their exec'ed children keep a stray
	 * watchpoint, whose hits the program drops for an untraced or
	 * unwatched process). */
	a.remove_on_exec = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		a.remove_on_exec = 0;
		fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	l = bpf_program__attach_perf_event(w->prog, fd);
	if (!l) {
		err = -errno;
		close(fd);
		return err;
	}
	/* The link owns fd from here. */
	if (ep_vec_push((void **)&o->links, &o->nlinks, &o->caplinks, sizeof(l), &l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	if (ep_vec_push((void **)&o->tids, &o->ntids, &o->captids, sizeof(tid), &tid))
		return -ENOMEM;
	return 0;
}

/* Arms every thread of o->pid not armed yet. Returns how many were armed
 * now, or the first error when none could be (a thread that exited in
 * between is not an error). */
static int arm_threads(struct py_watch *w, struct wobj *o)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int n = 0, first_err = 0;

	snprintf(path, sizeof(path), "%s/%u/task", w->proc_root, o->pid);
	d = opendir(path);
	if (!d) {
		int e = errno;

		return e == ENOENT ? -ESRCH : -e;
	}
	while ((de = readdir(d)) != NULL) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);
		int err;

		if (*end || !tid || tid > UINT32_MAX || has_tid(o, (uint32_t)tid))
			continue;
		if (o->ntids >= MAX_THREADS_PER_OBJ)
			break;
		err = arm_thread(w, o, (uint32_t)tid);
		if (!err)
			n++;
		else if (err != -ESRCH && !first_err)
			first_err = err;
		if (err == -ENOMEM)
			break;
	}
	closedir(d);
	return n ? n : first_err;
}

static int read_count(struct py_watch *w, uint32_t pid, uint64_t addr, int64_t *out)
{
	char path[512];
	ssize_t r;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%u/mem", w->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = pread(fd, out, sizeof(*out), (off_t)addr);
	if (r != (ssize_t)sizeof(*out))
		err = r < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

static const char *arm_error(int err)
{
	switch (err) {
	case -ENOSPC:
		return "the thread's debug registers are all taken (a debugger's watchpoints?)";
	case -ENOENT:
	case -EOPNOTSUPP:
	case -EINVAL:
		return "this machine gives no hardware breakpoints (perf_event_open "
		       "PERF_TYPE_BREAKPOINT)";
	case -EACCES:
	case -EPERM:
		return "not permitted (root or CAP_PERFMON and ptrace access to the process)";
	default:
		return NULL;
	}
}

int py_watch_arm(struct py_watch *w, uint32_t pid, uint64_t addr, char *why, size_t whylen)
{
	struct ep_cyc_watch_key k = { .tgid = pid, .addr = addr };
	struct wobj *o, nw = { .pid = pid, .addr = addr };
	size_t in_pid = 0;
	int64_t rc;
	int n, n2, err;

	for (size_t i = 0; i < w->nobjs;) {
		struct ep_cyc_watch_key ok = { .tgid = pid, .addr = w->objs[i].addr };
		int64_t v;

		if (w->objs[i].pid != pid) {
			i++;
			continue;
		}
		/* Freed (the program marked it): a function defined again
		 * has a new code object at another address, maybe this. */
		if (!bpf_map_lookup_elem(w->rc_map_fd, &ok, &v) && v == EP_CYC_WATCH_DEAD) {
			bpf_map_delete_elem(w->rc_map_fd, &ok);
			obj_close(&w->objs[i]);
			w->objs[i] = w->objs[--w->nobjs];
			continue;
		}
		if (w->objs[i].addr == addr)
			return -EEXIST;
		in_pid++;
		i++;
	}
	if (in_pid >= EP_CYC_WATCH_PER_PID) {
		if (why)
			snprintf(why, whylen, "%d code objects are watched in this process already",
				 EP_CYC_WATCH_PER_PID);
		return -E2BIG;
	}
	/* A function's code object found among its module's constants
	 * before the def statement ran has only the constants' reference:
	 * the function object's, taken when the def runs, would look like a
	 * call that never returns. Armed once it exists (a call needs it). */
	err = read_count(w, pid, addr, &rc);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (rc < 2)
		return -EAGAIN;
	if (ep_vec_push((void **)&w->objs, &w->nobjs, &w->capobjs, sizeof(nw), &nw))
		return -ENOMEM;
	o = &w->objs[w->nobjs - 1];
	n = arm_threads(w, o);
	if (n > 0) {
		/* A thread started between the listing and its starter's
		 * arming has no inherited event: list again. One started after
		 * may now have two (inherited and ours); the program ignores
		 * the second event of a write (the count is as last seen). */
		n2 = arm_threads(w, o);
		n += n2 > 0 ? n2 : 0;
		/* Seeded after arming: a change in between is either seen by
		 * the program (which then keeps its own value: NOEXIST) or is
		 * in this read. */
		err = read_count(w, pid, addr, &rc);
		if (!err && bpf_map_update_elem(w->rc_map_fd, &k, &rc, BPF_NOEXIST) &&
		    errno != EEXIST)
			err = -errno;
		if (!err)
			return n;
		n = err;
	}
	err = n ? n : -ESRCH;
	if (why) {
		const char *m = arm_error(err);

		snprintf(why, whylen, "%s", m ? m : strerror(-err));
	}
	obj_close(o);
	w->nobjs--;
	bpf_map_delete_elem(w->rc_map_fd, &k);
	return err;
}

void py_watch_forget_pid(struct py_watch *w, uint32_t pid)
{
	for (size_t i = 0; i < w->nobjs;) {
		if (w->objs[i].pid != pid) {
			i++;
			continue;
		}
		struct ep_cyc_watch_key k = { .tgid = pid, .addr = w->objs[i].addr };

		bpf_map_delete_elem(w->rc_map_fd, &k);
		obj_close(&w->objs[i]);
		w->objs[i] = w->objs[--w->nobjs];
	}
}

void py_watch_counts(const struct py_watch *w, size_t *objects, size_t *threads)
{
	size_t t = 0;

	for (size_t i = 0; w && i < w->nobjs; i++)
		t += w->objs[i].ntids;
	*objects = w ? w->nobjs : 0;
	*threads = t;
}
