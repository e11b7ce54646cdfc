// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runs bpf/sched.bpf.c as a recording module (see sched_view.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "kernel/bpf_parts.h"
#include "cycles/cycle_sink.h"
#include "cycles/cycles_json.h"
#include "kernel/kfeat.h"
#include "util/log.h"
#include "proc/proc_info.h"
#include "python/pyframes.h"
#include "report/report.h"
#include "sched/sched_view.h"
#include "sched_acct.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "overload/rb_budget.h"
#include "symbolize/symbolize.h"
#include "top/top_live.h"

/* Exited threads are moved out of the kernel map this often, so a job that
 * keeps creating short-lived threads does not fill it. */
#define HARVEST_PERIOD_NS (1000 * 1000000ull)
/* ... and this often while threads die faster than that: a fork storm
 * (7000 exits/s) fills the 8192 entries within a second of harvests. */
#define HARVEST_FAST_NS (100 * 1000000ull)
/* The off-CPU ring is drained for at most this long per poll, so the
 * recorder loop stays responsive (overload/rb_budget.h). */
#define POLL_BUDGET_NS (10 * 1000000ull)
#define OFFCPU_FOLDED  "offcpu.folded"

struct sched_mod {
	const struct rec_ctx *ctx;
	struct modules_bpf *skel; /* owned by the recorder (record/modules.c, bpf_parts.h) */
	struct ring_buffer *rb;
	struct rb_budget budget;
	struct profile off; /* weights in microseconds (period_ns = 1000) */
	bool stacks;
	/* The kernel refused the switch program that walks user stacks with
	 * bpf_loop (CFI tables, Python frames): its twin without them. */
	bool no_walk;
	bool attached;
	uint32_t *pids; /* targets to seed from /proc at attach */
	size_t npids, cap_pids;
	struct sched_thread_rec *recs; /* harvested (exited), then all at stop */
	size_t nrecs, cap_recs;
	size_t nexited_listed; /* exited threads in recs (SCHED_MAX_EXITED_LISTED) */
	uint32_t *dead;	       /* keys to delete after a harvest's walk */
	size_t cap_dead;
	struct sched_stats st;
	uint64_t next_harvest_ns;
	int64_t unavailable_frame;
	/* Python frames (EP_EV_PYSTACK) waiting for their episode, per CPU:
	 * both come from one program run on that CPU, the record first. */
	struct py_stash *py_stash;
	size_t npy_stash;
	/* kernel, [truncated], user, Python */
	uint32_t frames[EP_MAX_STACK_DEPTH + 1 + EP_OFFCPU_USER_FRAMES + EP_PY_MAX_FRAMES];
};

struct py_stash {
	size_t size; /* 0: empty */
	struct ep_pystack ps;
};

/* Records keep their CPU's slot; a CPU number past this is not believed. */
#define MAX_CPUS 4096

static int push_rec(struct sched_mod *m, uint32_t tid, const struct ep_sched_thread *t)
{
	if (m->nrecs == m->cap_recs) {
		size_t cap = m->cap_recs ? m->cap_recs * 2 : 64;
		void *p = realloc(m->recs, cap * sizeof(*m->recs));

		if (!p)
			return -ENOMEM;
		m->recs = p;
		m->cap_recs = cap;
	}
	m->recs[m->nrecs].tid = tid;
	m->recs[m->nrecs].t = *t;
	m->nrecs++;
	return 0;
}

/* e is size bytes long: its frames were checked to be inside. */
static int handle_episode(struct sched_mod *m, const struct ep_offcpu *e)
{
	int nuser = e->ustack_sz > 0 ? e->ustack_sz / 8 : 0;
	int nkern = e->kstack_sz > 0 ? e->kstack_sz / 8 : 0;
	const __u64 *kstack = e->ips, *ustack = e->ips + nkern;
	uint32_t depth = 0, nkernel = 0;
	char comm[EP_COMM_LEN + 1];
	struct sym_result res;
	int64_t thread, fi;

	memcpy(comm, e->comm, EP_COMM_LEN);
	comm[EP_COMM_LEN] = '\0';
	thread = profile_thread(&m->off, e->hdr.pid, e->hdr.tid, comm);
	if (thread < 0)
		return (int)thread;
	/* A cut stack says so at its root, as CPU samples do. */
	if (nuser && e->utrunc) {
		fi = profile_intern_frame(&m->off, "[truncated]", NULL, false);
		if (fi < 0)
			return (int)fi;
		m->frames[depth++] = (uint32_t)fi;
	}
	/* Leaf first from the kernel; root first in the profile. Return
	 * addresses are looked up at address - 1 (see profile/cpu_samples.c). */
	for (int i = nuser - 1; i >= 0; i--) {
		uint64_t addr = ustack[i];

		if (!addr || symbolizer_user(m->ctx->sym, e->hdr.pid,
					     i && !e->ukwalk ? addr - 1 : addr, &res))
			continue;
		fi = profile_intern_frame(&m->off, res.name, res.module, false);
		if (fi < 0)
			return (int)fi;
		m->frames[depth++] = (uint32_t)fi;
	}
	if (m->ctx->py && e->hdr.cpu < m->npy_stash && m->py_stash[e->hdr.cpu].size) {
		struct py_stash *ps = &m->py_stash[e->hdr.cpu];
		size_t n = depth;

		/* Only the record right before the episode is its own. */
		if (ps->ps.hdr.tid == e->hdr.tid && ps->ps.hdr.ts_ns == e->hdr.ts_ns &&
		    ps->ps.hdr.pid == e->hdr.pid &&
		    !pyframes_merge_stack(m->ctx->py, &m->off, &ps->ps, ps->size, m->frames, &n,
					  sizeof(m->frames) / sizeof(m->frames[0]) - (size_t)nkern))
			depth = (uint32_t)n;
		ps->size = 0;
	}
	for (int i = nkern - 1; i >= 0; i--) {
		uint64_t addr = kstack[i];

		/* A sleeping task's saved stack: every entry is a return
		 * address, the leaf included. */
		if (!addr || symbolizer_kernel(m->ctx->sym, addr - 1, &res))
			continue;
		fi = profile_intern_frame(&m->off, res.name, res.module, true);
		if (fi < 0)
			return (int)fi;
		m->frames[depth++] = (uint32_t)fi;
		nkernel++;
	}
	if (!depth) {
		if (m->unavailable_frame < 0) {
			m->unavailable_frame =
				profile_intern_frame(&m->off, "[stack unavailable]", NULL, false);
			if (m->unavailable_frame < 0)
				return (int)m->unavailable_frame;
		}
		m->frames[depth++] = (uint32_t)m->unavailable_frame;
	}
	return profile_add_weighted(&m->off, (uint32_t)thread, e->hdr.ts_ns, m->frames, depth,
				    nkernel, sched_episode_weight_us(e->dur_ns));
}

/* An EP_EV_PYSTACK record: kept until its episode, the next record of its
 * CPU. */
static void stash_py(struct sched_mod *m, const struct ep_pystack *ps, size_t size)
{
	if (!m->ctx->py || size < EP_PYSTACK_HDR_SIZE || size > sizeof(*ps) ||
	    ps->hdr.cpu >= MAX_CPUS) {
		m->st.collector_drops++;
		return;
	}
	if (ps->hdr.cpu >= m->npy_stash) {
		size_t want = ps->hdr.cpu + 1;
		void *p = realloc(m->py_stash, want * sizeof(*m->py_stash));

		if (!p)
			return;
		m->py_stash = p;
		memset(m->py_stash + m->npy_stash, 0, (want - m->npy_stash) * sizeof(*m->py_stash));
		m->npy_stash = want;
	}
	memcpy(&m->py_stash[ps->hdr.cpu].ps, ps, size);
	m->py_stash[ps->hdr.cpu].size = size;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct sched_mod *m = ctx;
	const struct ep_offcpu *e = data;

	if (size >= sizeof(e->hdr) && e->hdr.type == EP_EV_PYSTACK) {
		stash_py(m, data, size);
		return 0;
	}
	if (!sched_offcpu_record_ok(e, size)) {
		m->st.collector_drops++;
		return 0;
	}
	if (handle_episode(m, e)) {
		m->st.collector_drops++; /* counted, not fatal */
		return 0;
	}
	m->st.episodes++;
	m->st.episode_ns += e->dur_ns;
	/* hdr.ts_ns is the switch-in. */
	cycle_sink_offcpu(m->ctx->cycles, e->hdr.ts_ns - e->dur_ns, e->hdr.ts_ns, e->hdr.tid,
			  e->reason);
	return 0;
}

static int sm_open(void **state, const struct rec_ctx *ctx)
{
	const struct cli_opts *o = ctx->opts;
	struct sched_mod *m;
	int err;

	if (o->no_sched)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	m->unavailable_frame = -1;
	m->stacks = !o->no_offcpu_stacks;
	m->st.stacks = m->stacks;
	m->st.offcpu_min_us = o->offcpu_min_us;
	/* 1e6 "Hz": one count of the off-CPU profile is one microsecond. */
	err = profile_init(&m->off, 1000000);
	if (err) {
		free(m);
		return err;
	}
	*state = m;
	return 0;
}

static int sm_bpf_setup(void *state, struct modules_bpf *skel)
{
	struct sched_mod *m = state;
	const struct cli_opts *o = m->ctx->opts;
	const struct kfeat *kf = m->ctx->kf;

	skel->rodata->offcpu_min_ns = (uint64_t)o->offcpu_min_us * 1000;
	skel->rodata->capture_stacks = m->stacks;
	skel->rodata->sched_capture_kernel = o->kernel_stacks;
	skel->rodata->ustack_sample_every = (uint8_t)o->offcpu_ustack_every;
	/* Older kernels (JetPack 5's 5.10): per-thread state by tid instead of
	 * task storage (5.13+), user registers from the kernel stack instead
	 * of bpf_task_pt_regs (5.15+), sched_switch without bpf_loop (5.17+)
	 * callbacks. No task storage: the iterator that copies it out at the
	 * end has nothing to copy. */
	skel->rodata->sched_task_storage = kf->have[KFEAT_TASK_STORAGE];
	skel->rodata->sched_task_pt_regs = kf->have[KFEAT_TASK_PT_REGS];
	/* A kernel without BTF takes the raw_tp twins of the programs (its
	 * task storage is off with the rest, kfeat.h), without the sleeping
	 * task's kernel stack: bpf_get_task_stack takes a BTF-typed task. */
	bool loops = kf->have[KFEAT_BPF_LOOP] && !m->no_walk;

	bpf_program__set_autoload(skel->progs.sched_switch, kf->btf && loops);
	bpf_program__set_autoload(skel->progs.sched_switch_noloop, kf->btf && !loops);
	bpf_program__set_autoload(skel->progs.sched_switch_raw, !kf->btf && loops);
	bpf_program__set_autoload(skel->progs.sched_switch_noloop_raw, !kf->btf && !loops);
	bpf_program__set_autoload(skel->progs.sched_wake, kf->btf);
	bpf_program__set_autoload(skel->progs.sched_wake_new, kf->btf);
	bpf_program__set_autoload(skel->progs.sched_exit, kf->btf);
	bpf_program__set_autoload(skel->progs.sched_wake_raw, !kf->btf);
	bpf_program__set_autoload(skel->progs.sched_wake_new_raw, !kf->btf);
	bpf_program__set_autoload(skel->progs.sched_exit_raw, !kf->btf);
	if (!kf->btf)
		skel->rodata->sched_capture_kernel = false;
	if (!kf->have[KFEAT_TASK_STORAGE]) {
		bpf_map__set_autocreate(skel->maps.sched_tls, false);
		bpf_program__set_autoload(skel->progs.sched_flush, false);
	}
	if (!m->stacks)
		bpf_map__set_max_entries(skel->maps.sched_ustacks, 1);
	/* Python frames beside the user stacks, with the CPU sampler's
	 * process and thread-state maps (bpf/pyframes.bpf.h). */
	if (m->stacks && m->ctx->py_procs_fd >= 0 && m->ctx->py_tstates_fd >= 0) {
		int err = bpf_map__reuse_fd(skel->maps.py_procs, m->ctx->py_procs_fd);

		if (!err)
			err = bpf_map__reuse_fd(skel->maps.py_tstates, m->ctx->py_tstates_fd);
		if (err)
			return err;
		skel->rodata->py_enabled = true;
	} else {
		bpf_map__set_max_entries(skel->maps.sched_pystacks, 1);
	}
	/* The in-kernel walker reads the sampler's tables (bpf/uwalk.h). */
	if (m->stacks && m->ctx->uw_procs_fd >= 0) {
		int nc = libbpf_num_possible_cpus(), err;

		skel->rodata->sched_kwalk = true;
		err = bpf_map__reuse_fd(skel->maps.uw_objs, m->ctx->uw_objs_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.uw_blk_pc, m->ctx->uw_blk_pc_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.uw_procs, m->ctx->uw_procs_fd);
		if (!err)
			err = bpf_map__set_max_entries(skel->maps.uw_rcache,
						       (nc > 0 ? nc : 1) * (1u << 12));
		if (err)
			return err;
	}
	return 1;
}

static int sm_bpf_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct sched_mod *m = state;

	if (!skel) {
		/* The CPU profile does not need this: go on without it. */
		log_warn("scheduler view off: cannot load its BPF programs: %s (-v for the "
			 "verifier log)",
			 strerror(-err));
		return -ENODEV;
	}
	m->skel = skel;
	return 0;
}

static const char *sm_bpf_refused(void *state, const char *prog)
{
	struct sched_mod *m = state;

	/* The walking program's twin keeps all the accounting: only how the
	 * off-CPU user stacks are taken changes. */
	if (!m->no_walk && (!strcmp(prog, "sched_switch") || !strcmp(prog, "sched_switch_raw"))) {
		m->no_walk = true;
		return "its twin without bpf_loop loaded instead: on/off-CPU time, waits and "
		       "run-queue latency kept; off-CPU user stacks by frame pointers (no CFI "
		       "walk, no Python frames)";
	}
	return NULL;
}

static int sm_add_target(void *state, uint32_t pid)
{
	struct sched_mod *m = state;

	/* Processes followed later were born after the attach: their threads
	 * enter the map through sched_wakeup_new. */
	if (m->attached)
		return 0;
	if (m->npids == m->cap_pids) {
		size_t cap = m->cap_pids ? m->cap_pids * 2 : 8;
		void *p = realloc(m->pids, cap * sizeof(*m->pids));

		if (!p)
			return -ENOMEM;
		m->pids = p;
		m->cap_pids = cap;
	}
	m->pids[m->npids++] = pid;
	return 0;
}

/* Reads a small /proc file (the traced process may have exited: ENOENT). */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* Enters every thread of pid as SEEDED with the state /proc shows, so a
 * thread that never switches during the run (a spinner alone on its CPU)
 * is still accounted, and so is one that blocks the whole run. */
static void seed_pid(struct sched_mod *m, uint32_t pid, uint64_t now)
{
	const char *root = m->ctx->opts->proc_root;
	int fd = bpf_map__fd(m->skel->maps.sched_threads);
	char path[512], buf[1024];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%u/task", root, pid);
	d = opendir(path);
	if (!d) {
		log_debug("sched: cannot list %s: %s", path, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		struct ep_sched_thread t;
		char *end, state, *lp, *rp;
		unsigned long tid;
		uint64_t rt;
		int n;

		errno = 0;
		tid = strtoul(de->d_name, &end, 10);
		if (errno || *end || !tid || tid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%u/task/%lu/stat", root, pid, tid);
		n = read_small(path, buf, sizeof(buf));
		if (n <= 0)
			continue;
		state = proc_parse_stat_state(buf, (size_t)n);
		if (!state)
			continue;
		memset(&t, 0, sizeof(t));
		t.pid = pid;
		t.state = EP_TS_SEEDED;
		t.reason = ep_sched_seed_reason(state);
		t.out_reason = t.reason;
		t.last_ts = now;
		if (!proc_read_thread_runtime(root, pid, (uint32_t)tid, &rt) && rt)
			t.rt_mark = ep_rt_mark(rt);
		/* comm is between the first '(' and the last ')'. */
		lp = strchr(buf, '(');
		rp = strrchr(buf, ')');
		if (lp && rp && rp > lp) {
			size_t len = (size_t)(rp - lp - 1);

			memcpy(t.comm, lp + 1, len < EP_COMM_LEN - 1 ? len : EP_COMM_LEN - 1);
		}
		uint32_t key = (uint32_t)tid;

		if (bpf_map_update_elem(fd, &key, &t, BPF_NOEXIST) && errno != EEXIST)
			m->st.drops[EP_SDROP_THREAD_MAP_FULL]++;
	}
	closedir(d);
}

/* The tracepoint programs and their links in the skeleton. The iterator
 * sched_flush is not among them: it runs once, at the end (flush_tls). */
struct tp_prog {
	struct bpf_program *prog;
	struct bpf_link **link;
};
#define NTP_PROGS 4

static void tracepoint_progs(struct modules_bpf *skel, struct tp_prog tp[NTP_PROGS])
{
	/* The ones loaded (sm_bpf_setup): tp_btf or their raw_tp twins. */
	bool raw = !bpf_program__autoload(skel->progs.sched_wake);

	if (bpf_program__autoload(skel->progs.sched_switch))
		tp[0] = (struct tp_prog){ skel->progs.sched_switch, &skel->links.sched_switch };
	else if (bpf_program__autoload(skel->progs.sched_switch_noloop))
		tp[0] = (struct tp_prog){ skel->progs.sched_switch_noloop,
					  &skel->links.sched_switch_noloop };
	else if (bpf_program__autoload(skel->progs.sched_switch_raw))
		tp[0] = (struct tp_prog){ skel->progs.sched_switch_raw,
					  &skel->links.sched_switch_raw };
	else
		tp[0] = (struct tp_prog){ skel->progs.sched_switch_noloop_raw,
					  &skel->links.sched_switch_noloop_raw };
	if (raw) {
		tp[1] = (struct tp_prog){ skel->progs.sched_wake_raw, &skel->links.sched_wake_raw };
		tp[2] = (struct tp_prog){ skel->progs.sched_wake_new_raw,
					  &skel->links.sched_wake_new_raw };
		tp[3] = (struct tp_prog){ skel->progs.sched_exit_raw, &skel->links.sched_exit_raw };
	} else {
		tp[1] = (struct tp_prog){ skel->progs.sched_wake, &skel->links.sched_wake };
		tp[2] = (struct tp_prog){ skel->progs.sched_wake_new, &skel->links.sched_wake_new };
		tp[3] = (struct tp_prog){ skel->progs.sched_exit, &skel->links.sched_exit };
	}
}

static int attach_tracepoints(struct modules_bpf *skel)
{
	struct tp_prog tp[NTP_PROGS];

	tracepoint_progs(skel, tp);
	for (size_t i = 0; i < NTP_PROGS; i++) {
		*tp[i].link = bpf_program__attach(tp[i].prog);
		if (!*tp[i].link) {
			int err = -errno;

			log_error("scheduler view: cannot attach %s: %s",
				  bpf_program__name(tp[i].prog), strerror(-err));
			return err;
		}
	}
	return 0;
}

static void detach_tracepoints(struct modules_bpf *skel)
{
	struct tp_prog tp[NTP_PROGS];

	tracepoint_progs(skel, tp);
	for (size_t i = 0; i < NTP_PROGS; i++) {
		bpf_link__destroy(*tp[i].link);
		*tp[i].link = NULL;
	}
}

static int sm_attach(void *state)
{
	struct sched_mod *m = state;
	uint64_t now = mono_ns();
	int err;

	/* The ring is mapped here, after the load: its pages count in the
	 * collector's RSS from the mmap, and the load's kernel-BTF parse (freed
	 * after it) would come on top. */
	m->budget.fn = on_event;
	m->budget.ctx = m;
	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.sched_offcpu_events), rb_budget_cb,
				 &m->budget, NULL);
	if (!m->rb) {
		err = -errno;
		log_error("scheduler view: cannot set up its ring buffer: %s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < m->npids; i++)
		seed_pid(m, m->pids[i], now);
	err = attach_tracepoints(m->skel);
	if (err)
		return err;
	m->attached = true;
	m->next_harvest_ns = now + HARVEST_PERIOD_NS;
	return 0;
}

/* The kernel takes a thread's name at its creation and at its exit, not
 * per switch (too costly): a live thread renamed since is read here. */
static void refresh_comm(struct sched_mod *m, uint32_t tid, struct ep_sched_thread *t)
{
	char path[512], buf[EP_COMM_LEN + 2];
	int n;

	snprintf(path, sizeof(path), "%s/%u/task/%u/comm", m->ctx->opts->proc_root, t->pid, tid);
	n = read_small(path, buf, sizeof(buf));
	if (n <= 0)
		return; /* exited meanwhile: keep the kernel's */
	if (buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > EP_COMM_LEN - 1)
		n = EP_COMM_LEN - 1;
	memset(t->comm, 0, sizeof(t->comm));
	memcpy(t->comm, buf, (size_t)n);
}

/* Moves exited threads out of the kernel map (all of them when all is set,
 * closing each open interval at now). */
static int harvest(struct sched_mod *m, bool all, uint64_t now)
{
	int fd = bpf_map__fd(m->skel->maps.sched_threads);
	uint32_t key, next, *prev = NULL;
	struct ep_sched_thread t;
	size_t ndead = 0;
	int err = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &t))
			continue;
		if (!all && t.state != EP_TS_DEAD)
			continue;
		if (all) {
			uint64_t rt;

			if (t.state == EP_TS_OFF &&
			    !proc_read_thread_runtime(m->ctx->opts->proc_root, t.pid, key, &rt) &&
			    rt)
				ep_acct_resync(&t, now, rt);
			ep_acct_finish(&t, now);
			if (t.state != EP_TS_DEAD)
				refresh_comm(m, key, &t);
		}
		if (!all) {
			if (ndead == m->cap_dead) {
				size_t cap = m->cap_dead ? 2 * m->cap_dead : 256;
				void *p = realloc(m->dead, cap * sizeof(*m->dead));

				if (!p) {
					err = -ENOMEM;
					break;
				}
				m->dead = p;
				m->cap_dead = cap;
			}
			m->dead[ndead++] = key;
		}
		if (t.state == EP_TS_DEAD && m->nexited_listed >= SCHED_MAX_EXITED_LISTED) {
			sched_rec_fold(&m->st.folded, &t);
			m->st.nfolded++;
			continue;
		}
		err = push_rec(m, key, &t);
		if (err)
			break;
		if (t.state == EP_TS_DEAD)
			m->nexited_listed++;
	}
	/* Deleted after the walk: deleting the key get_next_key stands on
	 * would restart it from the first key. */
	for (size_t i = 0; i < ndead; i++)
		bpf_map_delete_elem(fd, &m->dead[i]);
	return err;
}

/* Events lost so far (kernel counters + collector), for the live view and
 * --alert drops>0; the final figures are summed at stop. */
static void update_live(struct sched_mod *m)
{
	struct live_metrics *l = m->ctx->live;
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[512], sum = m->st.collector_drops;

	if (!l || !cli_live_wanted(m->ctx->opts) || ncpu <= 0 || ncpu > 512)
		return;
	for (uint32_t k = 0; k < EP_SDROP__COUNT; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.sched_drops), &k, v))
			return;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		sum += m->st.drops[k];
	}
	l->drops[LIVE_SRC_SCHED] = (int64_t)sum;
}

static int sm_poll(void *state, uint64_t now_ns)
{
	struct sched_mod *m = state;
	int n = m->rb ? rb_budget_consume(m->rb, &m->budget, POLL_BUDGET_NS) : 0;

	if (now_ns >= m->next_harvest_ns) {
		uint64_t before = m->nrecs + m->st.nfolded;

		if (harvest(m, false, now_ns))
			return -ENOMEM;
		/* A quarter of the map died in a period: come back sooner, before
		 * exits find it full (counted as thread_map_full). */
		m->next_harvest_ns =
			now_ns + (m->nrecs + m->st.nfolded - before > EP_SCHED_MAX_THREADS / 4
					  ? HARVEST_FAST_NS
					  : HARVEST_PERIOD_NS);
		update_live(m);
	}
	return n < 0 ? n : 0;
}

/* Copies the kernel's task-local state of every live traced thread into the
 * `sched_threads` map (the BPF iterator sched_flush), where harvest() reads it. */
static int flush_tls(struct sched_mod *m)
{
	struct bpf_link *link;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	/* Without task storage the state is in `sched_threads` already. */
	if (!bpf_program__autoload(m->skel->progs.sched_flush))
		return 0;
	link = bpf_program__attach_iter(m->skel->progs.sched_flush, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		bpf_link__destroy(link);
		return err;
	}
	/* The program writes nothing: reading to the end runs it on every task. */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = -errno;
	close(fd);
	bpf_link__destroy(link);
	return err;
}

static void sm_stop(void *state)
{
	struct sched_mod *m = state;
	uint64_t end;
	int ncpu = libbpf_num_possible_cpus(), err;

	detach_tracepoints(m->skel);
	end = mono_ns();
	/* The tracepoints are detached: what is queued is finite. */
	if (m->rb)
		rb_budget_consume(m->rb, &m->budget, 20 * POLL_BUDGET_NS);
	err = flush_tls(m);
	if (err) {
		/* Live threads keep only their /proc seed or nothing: say so. */
		log_warn("scheduler view: cannot read the state of live threads: %s "
			 "(their totals are missing)",
			 strerror(-err));
		m->st.collector_drops++;
	}
	if (harvest(m, true, end))
		m->st.collector_drops++;
	if (ncpu > 0) {
		uint64_t *v = calloc((size_t)ncpu, sizeof(*v));

		for (uint32_t k = 0; v && k < EP_SCHED_COUNTERS; k++) {
			uint64_t sum = 0;

			if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.sched_drops), &k, v))
				continue;
			for (int c = 0; c < ncpu; c++)
				sum += v[c];
			if (k < EP_SDROP__COUNT)
				m->st.drops[k] += sum;
			else if (k == EP_SSTAT_USTACK_SKIPPED)
				m->st.ustack_skipped += sum;
			else if (k == EP_SSTAT_USTACK_WALKS)
				m->st.ustack_walks += sum;
		}
		free(v);
	}
	if (m->stacks)
		m->st.folded_file = OFFCPU_FOLDED;
}

static int sm_report(void *state, cJSON *root)
{
	struct sched_mod *m = state;
	cJSON *o = sched_report_json(m->recs, m->nrecs, &m->st);

	if (!o)
		return -ENOMEM;
	cJSON_AddItemToObject(root, "sched", o);
	/* The off-CPU stacks for report.html's flame graph, in the unit of
	 * offcpu.folded (one count = 1 us blocked). */
	if (m->stacks) {
		cJSON *fl = flame_to_json(&m->off, "us", FLAME_MAX_STACKS, FLAME_MAX_THREADS,
					  FLAME_THREAD_STACKS);

		/* The threshold: shorter waits are in no stack. */
		if (fl && !cJSON_AddNumberToObject(fl, "min_us", (double)m->st.offcpu_min_us)) {
			cJSON_Delete(fl);
			fl = NULL;
		}
		if (!fl || !cJSON_AddItemToObject(root, "offcpu_flame", fl)) {
			cJSON_Delete(fl);
			return -ENOMEM;
		}
	}
	return 0;
}

static int write_folded(FILE *f, void *ctx)
{
	return export_folded(ctx, f);
}

static int sm_write_files(void *state, struct output_dir *od)
{
	struct sched_mod *m = state;

	if (!m->stacks)
		return 0;
	return output_write(od, OFFCPU_FOLDED, write_folded, &m->off);
}

static void sm_summary(void *state, FILE *out)
{
	struct sched_mod *m = state;

	sched_print_summary(m->recs, m->nrecs, &m->st, out);
}

static void sm_close(void *state)
{
	struct sched_mod *m = state;

	if (!m)
		return;
	ring_buffer__free(m->rb);
	profile_free(&m->off);
	free(m->pids);
	free(m->recs);
	free(m->dead);
	free(m->py_stash);
	free(m);
}

const struct profile *sched_offcpu_profile(void *state)
{
	struct sched_mod *m = state;

	return m && m->stacks ? &m->off : NULL;
}

static const struct profile *sm_speedscope_profile(void *state, const char **label)
{
	*label = "off-CPU";
	return sched_offcpu_profile(state);
}

const struct rec_module sched_rec_module = {
	.name = "sched",
	.open = sm_open,
	.bpf_part = "sched_",
	.bpf_setup = sm_bpf_setup,
	.bpf_loaded = sm_bpf_loaded,
	.bpf_refused = sm_bpf_refused,
	.add_target = sm_add_target,
	.attach = sm_attach,
	.poll = sm_poll,
	.stop = sm_stop,
	.report_json = sm_report,
	.write_files = sm_write_files,
	.speedscope_profile = sm_speedscope_profile,
	.summary = sm_summary,
	.close = sm_close,
};
