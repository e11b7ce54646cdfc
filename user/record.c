// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "proc/pid_index.h"
#include "record.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <malloc.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/bpf_parts.h"
#include "kernel/check_cmd.h"
#include "kernel/vstat.h"
#include "jetson/jetson_module.h"
#include "probes/probes.h"
#include "cycles/cycles_module.h"
#include "alloc/alloc_module.h"
#include "overhead/overhead_module.h"
#include "util/log.h"
#include "report/output.h"
#include "overload/links.h"
#include "overload/priority.h"
#include "overload/tick_guard.h"
#include "proc/proc_info.h"
#include "rec_module.h"
#include "profile/profile.h"
#include "python/pyframes.h"
#include "report/report.h"
#include "cycles/cycle_sink.h"
#include "export/metrics.h"
#include "export/pprof.h"
#include "export/pprof_elf.h"
#include "export/rotate.h"
#include "profile/sampler.h"
#include "kernel/kfeat.h"
#include "sched/sched_view.h"
#include "symbolize/ksym_cache.h"
#include "symbolize/ksym_part.h"
#include "symbolize/symbolize.h"
#include "top/top_live.h"
#include "unwind/ktables.h"
#include "unwind/unwind.h"
#include "top/top_module.h"
#include "sysmon/throttle_feed.h"
#include "sysmon/sysmon_module.h"

/* Data sources beside the CPU sampler; see rec_module.h. The order is
 * meaningful, hence one per line. */
// clang-format off
static const struct rec_module *const modules[] = {
	&jetson_rec_module,
	&sysmon_rec_module,
	&sched_rec_module,
	&probes_rec_module,
	&overhead_rec_module, /* after the sections it reads, before the findings */
	&alloc_rec_module,    /* after overhead (its cost), before cycles (findings, HTML) */
	&cycles_rec_module, /* after the modules whose report sections it reads */
	&top_rec_module, /* last: shows what the others polled this round */
};
// clang-format on
#define NMODULES (sizeof(modules) / sizeof(modules[0]))

#define for_each_module(r, i)                 \
	for (size_t i = 0; i < NMODULES; i++) \
		if ((r)->mstate[i])

/* How often the loop wakes to drain the ring buffer when no watermark
 * wakeup came: bounds both latency and the ring's fill between drains. */
#define DRAIN_PERIOD_MS 10
/* The longest the final drain of the sampler's ring takes at stop; what is
 * left then is counted as unread_at_stop. Stop is bounded at any rate. */
#define STOP_DRAIN_BUDGET_NS (300 * 1000000ull)
/* Free space the output filesystem must have before a run starts: the
 * outputs of a minute at 999 Hz are ~2-5 MB. */
#define OUTPUT_MIN_FREE (4ull << 20)
/* How long the exited launched command stays unreaped waiting for its exit
 * event (check_liveness). */
#define CHILD_REAP_GRACE_NS (200 * 1000000ull)
/* How often target liveness is re-checked in /proc, as a backstop for a lost
 * exit event and for zombies of processes that are not our children. */
#define LIVENESS_PERIOD_NS (100 * 1000000ull)
/* How often the live view's drop counts are refreshed: the alert on drops
 * reacts within a quarter second for a few map reads. */
#define LIVE_DROPS_PERIOD_NS (250 * 1000000ull)
/* Freed heap pages go back to the system this often: malloc keeps them
 * otherwise, in the helper threads' arenas too, and a long run's RSS would
 * show its high-water mark. Well under a millisecond for ~30 MB of heap. */
#define TRIM_PERIOD_NS (20 * 1000000000ull)
/* --rotate with no sample past an interval's end: how long after it the
 * interval is closed anyway (samples reach us within a drain or two). */
#define ROTATE_LAG_NS (100 * 1000000ull)

struct recorder {
	const struct cli_opts *opts;
	/* The verifier's figures of every program loaded (kernel/vstat.h). */
	struct vstat vs;
	struct profile prof;
	struct symbolizer *sym;
	struct unwinder *uw;
	struct ktables *kt; /* --unwind cfi-kernel */
	struct sampler *sampler;
	struct pyframes *py; /* NULL: --python native or no bpf_loop */
	struct run_info ri;
	struct rec_ctx mctx;
	struct output_dir *od;		/* while the bundle is written */
	void *mstate[8];		/* per module in `modules`, NULL when off */
	struct bpf_parts_objs bpf_objs; /* the modules' BPF object(s) */
	struct ksym_part ksym;		/* kallsyms iterator (symbolize/ksym_part.h) */
	size_t cap_targets;
	struct pid_index tgidx; /* pid -> ri.targets[] */
	size_t nalive;
	pid_t child;
	bool child_reaped;
	uint64_t child_zombie_ns; /* when check_liveness first saw it exited */
	uint64_t next_liveness_ns;
	uint64_t next_live_drops_ns;
	uint64_t next_trim_ns;
	uint32_t frames[EP_MAX_STACK_DEPTH + EP_UW_MAX_FRAMES + 2 + EP_PY_MAX_FRAMES];
	uint64_t uaddrs[EP_UW_MAX_FRAMES];
	int64_t unavailable_frame;
	int64_t truncated_frame;
	int64_t jit_frame;
	int64_t unknown_map_frame;
	struct live_metrics live;
	bool stop_requested;
	struct metrics_server *metrics; /* --metrics */
	struct rotator *rot;		/* --rotate */
	struct tick_guard tick;		/* -F against the perf interrupt limit */
};

/* rec_ctx.notify_held: every module attaches to the held command first. */
static void notify_held(void *rec, uint32_t pid)
{
	struct recorder *r = rec;

	for_each_module(r, i)
		if (modules[i]->on_held)
			modules[i]->on_held(r->mstate[i], pid);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A module's bpf_loaded, with -ENODEV turning the module off here. */
struct part_ctx {
	struct recorder *r;
	size_t i;
};

static int part_setup(void *state, struct modules_bpf *skel)
{
	struct part_ctx *pc = state;

	return modules[pc->i]->bpf_setup(pc->r->mstate[pc->i], skel);
}

static int part_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct part_ctx *pc = state;
	size_t i = pc->i;

	err = modules[i]->bpf_loaded(pc->r->mstate[i], skel, err);
	if (err == -ENODEV) {
		modules[i]->close(pc->r->mstate[i]);
		pc->r->mstate[i] = NULL;
		return 0;
	}
	if (err)
		log_error("cannot start %s: %s", modules[i]->name, strerror(-err));
	return err;
}

static const char *part_refused(void *state, const char *prog)
{
	struct part_ctx *pc = state;

	if (!modules[pc->i]->bpf_refused)
		return NULL;
	return modules[pc->i]->bpf_refused(pc->r->mstate[pc->i], prog);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	return !uname(&u) && sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

/* Loads the modules' BPF parts as one object (bpf_parts.h). The
 * environment variable EBPF_PROF_FAULT_BPF=PREFIX makes that part fail
 * to load: the fallback it exercises otherwise runs only on kernels that
 * lack something, and the tests need to reach it here. */
static int load_module_bpf(struct recorder *r)
{
	struct bpf_part parts[NMODULES + 1];
	struct part_ctx pcs[NMODULES];
	size_t n = 0;

	for_each_module(r, i) {
		if (!modules[i]->bpf_part)
			continue;
		pcs[n] = (struct part_ctx){ .r = r, .i = i };
		parts[n] = (struct bpf_part){ .prefix = modules[i]->bpf_part,
					      .setup = part_setup,
					      .loaded = part_loaded,
					      .refused = part_refused,
					      .what = modules[i]->name,
					      .state = &pcs[n] };
		n++;
	}
	if (r->ksym.want)
		parts[n++] = ksym_part_def(&r->ksym);
	if (!n)
		return 0;
	return bpf_parts_load(parts, n, r->mctx.targets_map_fd, r->opts->btf_path,
			      getenv("EBPF_PROF_FAULT_BPF"), &r->bpf_objs, &r->vs);
}

/* CPU time, not wall time: on a busy machine the collector is preempted
 * mid-unwind and wall time would blame the unwinder for the wait. */
#define UNWIND_TIME_EVERY 16

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* -v shows libbpf warnings and the verifier log; -vv everything. */
	enum log_level lvl = level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO;

	if (log_get_level() < lvl)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Capabilities bpf() and perf_event_open() check (CAP_SYS_ADMIN stands for
 * both). Checked for root too: root in a container or under
 * `capsh --drop` lacks them, and the load failed with "Operation not
 * permitted (rerun with -v for the verifier log)" (issue 17). Returns the
 * names of the missing ones in buf, empty when none is missing. */
static const char *missing_bpf_caps(char *buf, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	bool sys_admin, bpf, perfmon;

	buf[0] = '\0';
	if (syscall(SYS_capget, &hdr, data)) {
		if (geteuid() != 0)
			snprintf(buf, len, "CAP_BPF and CAP_PERFMON");
		return buf;
	}
	sys_admin = data[0].effective & (1u << 21);
	/* CAP_PERFMON (38) and CAP_BPF (39) live in the second word. */
	perfmon = sys_admin || (data[1].effective & (1u << (38 - 32)));
	bpf = sys_admin || (data[1].effective & (1u << (39 - 32)));
	if (!bpf || !perfmon)
		snprintf(buf, len, "%s%s%s", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
			 perfmon ? "" : "CAP_PERFMON");
	return buf;
}

/* Tracepoints attached through perf need tracefs; some boots leave it
 * unmounted. The CPU sampler itself does not, so failing here is a warning. */
static void ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0)
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		log_info("mounted tracefs at /sys/kernel/tracing");
		return;
	}
	log_warn("tracefs is not mounted and could not be mounted (%s); "
		 "tracepoint-based features may be unavailable: "
		 "mount -t tracefs nodev /sys/kernel/tracing",
		 strerror(errno));
}

static struct report_target *find_target(struct recorder *r, uint32_t pid)
{
	int64_t i = pid_index_find(&r->tgidx, r->ri.targets, pid);

	return i >= 0 ? &r->ri.targets[i] : NULL;
}

static int add_target(struct recorder *r, uint32_t pid, uint32_t parent, const char *comm)
{
	const struct report_target *pt;
	struct report_target *t;

	if (!r->tgidx.stride)
		pid_index_init(&r->tgidx, sizeof(*t), offsetof(struct report_target, pid));
	if (find_target(r, pid))
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
	pt = parent && comm ? find_target(r, parent) : NULL;
	if (pt) {
		/* A fork: the parent's command line until an exec (which
		 * re-reads it), the name from the event. No /proc read: a fork
		 * storm's children must cost little each (issue 17). */
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
	const struct report_target *t = find_target(r, pid);

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
static void refresh_target_after_exec(struct recorder *r, uint32_t pid, const char *comm,
				      bool force)
{
	struct report_target *t = find_target(r, pid);
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

static int64_t intern_symbol(struct recorder *r, const struct sym_result *res, bool kernel)
{
	return profile_intern_frame_stable(&r->prof, res->name, res->module, kernel);
}

/* The user stack of a sample, leaf first, into r->uaddrs as addresses ready
 * to symbolize, per the --unwind mode: the CFI unwinder over the copied
 * window, or the kernel's frame-pointer walk. Returns the frame count and
 * sets *truncated when the stack was cut short of its outermost frame. */
/* A stack walked in the kernel (bpf/uwalk.h): its frames are ready to
 * symbolize; how the walk ended decides the marker at its root. */
static int kwalk_stack(struct recorder *r, const struct ep_sample *s, const __u64 *ips, int n,
		       bool *truncated, int64_t **marker)
{
	struct run_unwind *st = &r->ri.unwind;
	uint32_t end = EP_SAMPLE_UW_END(s->flags);

	st->kw_end[end < 16 ? end : 0]++;
	if (s->flags & EP_SAMPLE_F_URETPROBE_FIXED)
		st->kw_uretprobe_fixed++;
	switch (end) {
	case EP_UW_END_NO_TABLES:
		/* Walked by frame pointers: the process was not scanned yet
		 * (launch mode, a fork the collector has not seen). */
		st->fp++;
		st->fp_fallback++;
		if (r->kt)
			ktables_miss(r->kt, s->hdr.pid, mono_ns());
		break;
	case EP_UW_END_DEPTH:
		st->cfi++;
		st->truncated++;
		*truncated = true;
		break;
	case EP_UW_END_JIT:
		st->cfi++;
		*marker = &r->jit_frame;
		break;
	case EP_UW_END_UNKNOWN:
		st->cfi++;
		*marker = &r->unknown_map_frame;
		if (r->kt)
			ktables_miss(r->kt, s->hdr.pid, mono_ns());
		break;
	case EP_UW_END_ROOT:
	case EP_UW_END_FP_ROOT:
		st->cfi++;
		break;
	default:
		st->cfi++;
		st->errors++;
	}
	for (int i = 0; i < n; i++)
		r->uaddrs[i] = ips[i];
	return n;
}

static int user_stack(struct recorder *r, const struct ep_sample *s, const __u64 *fpstack, int nfp,
		      const void *win, size_t winlen, bool *truncated, int64_t **marker)
{
	struct run_unwind *st = &r->ri.unwind;
	bool fallback = false;

	*truncated = false;
	*marker = NULL;
	if (s->flags & EP_SAMPLE_F_KWALK)
		return kwalk_stack(r, s, fpstack, nfp, truncated, marker);
	if (r->opts->unwind != CLI_UNWIND_FP && r->uw) {
		if ((s->flags & EP_SAMPLE_F_UREGS) && winlen) {
			struct unwind_input in = {
				.pid = s->hdr.pid,
				.ip = s->uregs[EP_UREG_IP],
				.sp = s->uregs[EP_UREG_SP],
				.fp = s->uregs[EP_UREG_FP],
				.stack = win,
				.stack_len = winlen,
			};
			struct unwind_result res;
			/* Reading the thread's CPU clock is a system call (~1 us
			 * here, 3% of the collector at 999 Hz when done for every
			 * stack): time one call in UNWIND_TIME_EVERY. */
			bool timed = st->calls++ % UNWIND_TIME_EVERY == 0;
			uint64_t t0 = timed ? thread_cpu_ns() : 0;
			int err = unwinder_unwind(r->uw, &in, r->uaddrs, EP_MAX_STACK_DEPTH, &res);

			if (timed) {
				st->unwind_ns += thread_cpu_ns() - t0;
				st->timed++;
			}
			if (err)
				return err;
			/* auto: a walk that failed at once (a pc without CFI
			 * whose frame pointer leads nowhere, e.g. JIT code) is
			 * better served by the kernel's frame-pointer walk. */
			if (r->opts->unwind == CLI_UNWIND_DWARF || res.n > 1 ||
			    (res.n == 1 && res.status != UNWIND_ERROR) || !nfp) {
				st->cfi++;
				if (res.status == UNWIND_TRUNCATED || res.status == UNWIND_DEPTH) {
					st->truncated++;
					*truncated = true;
				} else if (res.status == UNWIND_ERROR) {
					st->errors++;
				}
				return (int)res.n;
			}
			fallback = true;
		} else {
			st->no_window++;
			if (r->opts->unwind == CLI_UNWIND_DWARF) {
				st->cfi++;
				st->errors++;
				return 0;
			}
			fallback = true;
		}
	}
	st->fp++;
	if (fallback)
		st->fp_fallback++;
	/* Every frame but the leaf is a return address: look up address - 1
	 * so a call at the very end of a function is not blamed on the next
	 * one. */
	for (int i = 0; i < nfp; i++)
		r->uaddrs[i] = i && fpstack[i] ? fpstack[i] - 1 : fpstack[i];
	return nfp;
}

/* --rotate: the interval's profile goes to its files and a fresh profile
 * starts; drops stay running totals (the intervals' files show their part),
 * metrics keep counting across the reset. Returns 0 or -ENOMEM. */
static int rotate(struct recorder *r)
{
	uint64_t drops[PROF_DROP__COUNT];

	rotator_write(r->rot, &r->prof, &r->ri);
	metrics_server_fold(r->metrics, &r->prof);
	memcpy(drops, r->prof.drops, sizeof(drops));
	profile_free(&r->prof);
	if (profile_init(&r->prof, r->tick.tick_hz)) {
		log_error("rotate: out of memory for a new profile");
		r->stop_requested = true;
		return -ENOMEM;
	}
	r->prof.run_gap_ns = 2 * r->prof.period_ns;
	memcpy(r->prof.drops, drops, sizeof(drops));
	r->unavailable_frame = r->truncated_frame = -1;
	/* The freed profile's heap back to the system: flat RSS over hours. */
	malloc_trim(0);
	return 0;
}

static int handle_sample(struct recorder *r, const struct ep_sample *s, size_t size)
{
	uint32_t depth = 0, nkernel = 0;
	int nkern = s->kstack_sz > 0 ? s->kstack_sz / 8 : 0;
	int nuser = s->ustack_sz > 0 ? s->ustack_sz / 8 : 0;
	size_t avail = (size - EP_SAMPLE_HDR_SIZE) / 8, winoff, winlen = 0;
	const __u64 *kstack = s->stack, *ustack;
	int maxu = s->flags & EP_SAMPLE_F_KWALK ? EP_UW_MAX_FRAMES : EP_MAX_STACK_DEPTH;
	struct sym_result res;
	int64_t thread, fi, *marker, user_leaf = -1;
	bool truncated;
	int nu;

	/* Trust the record's size, not its length fields. */
	if (nkern > EP_MAX_STACK_DEPTH)
		nkern = EP_MAX_STACK_DEPTH;
	if ((size_t)nkern > avail)
		nkern = (int)avail;
	ustack = s->stack + nkern;
	if (nuser > maxu)
		nuser = maxu;
	if ((size_t)nuser > avail - (size_t)nkern)
		nuser = (int)(avail - (size_t)nkern);
	/* The stack window follows the frames (bpf/events.h). */
	winoff = EP_SAMPLE_HDR_SIZE + ((size_t)nkern + (size_t)nuser) * 8;
	if (s->ustack_copy && winoff <= size && s->ustack_copy <= size - winoff &&
	    s->ustack_copy <= EP_MAX_STACK_BYTES)
		winlen = s->ustack_copy;
	if (!r->ri.first_sample_ns)
		r->ri.first_sample_ns = s->hdr.ts_ns;
	/* --rotate: intervals end in sample time (rotate.h). A bounded
	 * number per sample: a bogus timestamp cannot spin here. */
	for (int k = 0; k < 16 && rotator_due(r->rot, s->hdr.ts_ns); k++)
		if (rotate(r))
			return -ENOMEM;

	char comm[EP_COMM_LEN + 1];

	memcpy(comm, s->comm, EP_COMM_LEN);
	comm[EP_COMM_LEN] = '\0';
	if (s->hdr.pid == s->hdr.tid)
		refresh_target_after_exec(r, s->hdr.pid, comm, false);
	thread = profile_thread(&r->prof, s->hdr.pid, s->hdr.tid, comm);
	if (thread < 0)
		return (int)thread;

	nu = user_stack(r, s, ustack, nuser, (const char *)s + winoff, winlen, &truncated, &marker);
	if (nu < 0)
		return nu;
	/* A walk that ended in JIT code or at an unknown pc says so at its
	 * root, like a cut one. */
	if (marker) {
		if (*marker < 0) {
			*marker = profile_intern_frame(
				&r->prof, marker == &r->jit_frame ? "[jit]" : "[unknown mapping]",
				NULL, false);
			if (*marker < 0)
				return (int)*marker;
		}
		r->frames[depth++] = (uint32_t)*marker;
	}
	/* A cut stack hangs under one [truncated] root instead of posing as
	 * a root of its own (perf's convention for the same case is to show
	 * nothing; this keeps the time and says why it floats). */
	if (truncated) {
		if (r->truncated_frame < 0) {
			r->truncated_frame =
				profile_intern_frame(&r->prof, "[truncated]", NULL, false);
			if (r->truncated_frame < 0)
				return (int)r->truncated_frame;
		}
		r->frames[depth++] = (uint32_t)r->truncated_frame;
	}
	/* Stacks arrive leaf first; the profile wants root first. */
	for (int i = nu - 1; i >= 0; i--) {
		uint64_t addr = r->uaddrs[i];

		if (!addr)
			continue;
		if (symbolizer_user(r->sym, s->hdr.pid, addr, &res))
			continue;
		/* The walk's last pc, outside every mapping it knew: kept when
		 * the maps name its file (a library dlopen'ed before its table
		 * arrived), not as a bare address. */
		if (i == nu - 1 && marker == &r->unknown_map_frame && !res.module)
			continue;
		fi = intern_symbol(r, &res, false);
		if (fi < 0)
			return (int)fi;
		r->frames[depth++] = (uint32_t)fi;
	}
	if (r->py) {
		size_t n = depth, leaf = SIZE_MAX;

		if (!pyframes_merge(r->py, &s->hdr, r->frames, &n,
				    sizeof(r->frames) / sizeof(r->frames[0]) - (size_t)nkern,
				    &leaf)) {
			depth = (uint32_t)n;
			if (leaf < n)
				user_leaf = (int64_t)leaf;
		}
	}
	for (int i = nkern - 1; i >= 0; i--) {
		uint64_t addr = kstack[i];

		if (!addr)
			continue;
		if (symbolizer_kernel(r->sym, i ? addr - 1 : addr, &res))
			continue;
		fi = intern_symbol(r, &res, true);
		if (fi < 0)
			return (int)fi;
		r->frames[depth++] = (uint32_t)fi;
		nkernel++;
	}
	if (!depth || (truncated && depth == 1 && !nu)) {
		/* Keep the sample: its time is real even if its stack is not. */
		depth = 0;
		if (r->unavailable_frame < 0) {
			r->unavailable_frame =
				profile_intern_frame(&r->prof, "[stack unavailable]", NULL, false);
			if (r->unavailable_frame < 0)
				return (int)r->unavailable_frame;
		}
		r->frames[depth++] = (uint32_t)r->unavailable_frame;
	}
	int err = profile_add_sample(&r->prof, (uint32_t)thread, s->hdr.ts_ns, r->frames, depth,
				     nkernel, !(s->flags & EP_SAMPLE_F_USER_MODE));

	/* Per-cycle top functions: the innermost user frame (the user's
	 * code; in a Python process the innermost one that is not the
	 * interpreter's C code: the Python function, or the library it
	 * called), the kernel leaf for kernel-only stacks. */
	if (!err && r->mctx.cycles) {
		uint32_t leaf = r->frames[user_leaf >= 0 && (uint32_t)user_leaf < depth
						  ? (uint32_t)user_leaf
					  : depth > nkernel ? depth - nkernel - 1
							    : depth - 1];

		cycle_sink_sample(r->mctx.cycles, s->hdr.ts_ns, s->hdr.tid,
				  r->prof.frames[leaf].name);
	}
	return err;
}

static int on_event(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct ep_event_hdr *h = data;
	int err = 0;

	if (size < sizeof(*h)) {
		r->prof.drops[PROF_DROP_COLLECTOR]++;
		return 0;
	}
	switch (h->type) {
	case EP_EV_PYSTACK:
		if (r->py)
			pyframes_on_event(r->py, data, size);
		break;
	case EP_EV_SAMPLE:
		/* Here, not at stop: a --rotate interval and the live view get
		 * their share. */
		r->prof.drops[PROF_DROP_RATE_LIMITED] += tick_guard_skipped(&r->tick, 1);
		if (size < EP_SAMPLE_HDR_SIZE) {
			r->prof.drops[PROF_DROP_COLLECTOR]++;
			return 0;
		}
		err = handle_sample(r, data, size);
		if (err) {
			/* Counted, not fatal: one sample must not end the run. */
			r->prof.drops[PROF_DROP_COLLECTOR]++;
			err = 0;
		}
		break;
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
		if (add_target(r, h->pid, e->parent_pid, comm))
			r->prof.drops[PROF_DROP_COLLECTOR]++;
		/* The child has its parent's mappings until it execs. */
		if (r->kt)
			ktables_fork(r->kt, e->parent_pid, h->pid, mono_ns());
		for_each_module(r, i)
			if (modules[i]->add_target)
				modules[i]->add_target(r->mstate[i], h->pid);
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
		refresh_target_after_exec(r, h->pid, comm, true);
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
		struct report_target *t = find_target(r, h->pid);

		if (t)
			mark_exited(r, t, h->ts_ns);
		for_each_module(r, i)
			if (modules[i]->on_exit)
				modules[i]->on_exit(r->mstate[i], h->pid, h->ts_ns);
		/* Not forgotten: the modules' rings may still hold its records. */
		symbolizer_retire_pid(r->sym, h->pid);
		if (r->kt)
			ktables_forget(r->kt, h->pid);
		if (r->py)
			pyframes_forget_pid(r->py, h->pid, true, h->ts_ns);
		break;
	}
	default:
		r->prof.drops[PROF_DROP_COLLECTOR]++;
	}
	return err;
}

/* Backstop for lost exit events and for our own child, which stays a zombie
 * (and thus "alive" to BPF) until reaped. */
static void check_liveness(struct recorder *r, uint64_t now)
{
	if (r->child > 0 && !r->child_reaped) {
		struct report_target *ct = find_target(r, (uint32_t)r->child);
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

static int check_environment(const char *btf_path)
{
	char caps[64];

	if (*missing_bpf_caps(caps, sizeof(caps))) {
		if (geteuid() == 0)
			log_error(
				"permission denied: running as root but without %s (a container, "
				"capsh --drop or a systemd CapabilityBoundingSet?): grant them, or "
				"run from a root shell with full capabilities",
				caps);
		else
			log_error("permission denied: run as root (sudo ebpf-prof ...) or grant "
				  "%s",
				  caps);
		return -EPERM;
	}
	/* With --btf the programs' relocations come from the file: the load
	 * says whether the kernel takes them. Without it, libbpf looks where
	 * a kernel older than sysfs BTF kept it (/boot/vmlinux-RELEASE, ...):
	 * what it finds there serves as --btf would (parsed once more here,
	 * only on such kernels). */
	if (!btf_path && !kfeat_kernel_btf()) {
		struct btf *b = btf__load_vmlinux_btf();
		struct utsname u;

		if (b) {
			btf__free(b);
			return 0;
		}
		if (uname(&u))
			snprintf(u.release, sizeof(u.release), "?");
		log_error("this kernel has no BTF (/sys/kernel/btf/vmlinux missing): give it "
			  "with --btf FILE: BTFHub's file for %s, or `pahole -J` on this "
			  "kernel's vmlinux (docs/jetson.md)",
			  u.release);
		return -ENOTSUP;
	}
	return 0;
}

struct launch {
	int go_fd;   /* write end: release the child */
	int exec_fd; /* read end: child's errno if exec failed (CLOEXEC) */
};

static pid_t launch_child(char **argv, const sigset_t *orig_mask, int nice_val, struct launch *l)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		collector_priority_child(nice_val);
		/* Wait until the profiler is attached so the first instruction of
		 * the command is already sampled; EOF means the profiler gave up. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	l->go_fd = go[1];
	l->exec_fd = ex[0];
	return pid;
}

/* The exec's ELF load is done once the child's memory has a code segment
 * of its own: startcode (stat field 26, set at the end of the load) is
 * neither ours (the forked copy) nor 0 (the new, still empty mm). The
 * exec fd closes earlier, when the old image is dropped. Bounded: 1 s. */
static void wait_exec_loaded(const char *proc_root, pid_t child)
{
	const struct timespec ms = { 0, 1000000 };
	uint64_t self, v;

	if (proc_read_stat_field(proc_root, (uint32_t)getpid(), 26, &self))
		return;
	for (int i = 0; i < 1000; i++) {
		if (proc_read_stat_field(proc_root, (uint32_t)child, 26, &v) < 0)
			return;
		if (v && v != self)
			return;
		nanosleep(&ms, NULL);
	}
}

/* Releases the child; returns 0 once it has exec'ed, or -errno of the exec. */
static int release_child(struct launch *l)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->exec_fd);
	l->exec_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

static char *join_argv(char **argv, int n)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < n; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static char *default_output_dir(uint32_t pid)
{
	char stamp[32], *path;
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (asprintf(&path, "ebpf-prof-%u-%s", pid, stamp) < 0)
		return NULL;
	return path;
}

struct export_ctx {
	const struct profile *p;
	const struct run_info *ri;
	struct recorder *r;
};

static int write_speedscope(FILE *f, void *c)
{
	struct export_ctx *x = c;
	struct speedscope_part parts[1 + NMODULES] = { { x->p, NULL } };
	size_t n = 1;

	/* Modules' profiles (off-CPU time) go in the same file: one frame
	 * table, so a function is one frame whichever view shows it. */
	for_each_module(x->r, i) {
		const char *label = NULL;
		const struct profile *p;

		if (!modules[i]->speedscope_profile)
			continue;
		p = modules[i]->speedscope_profile(x->r->mstate[i], &label);
		if (p)
			parts[n++] = (struct speedscope_part){ p, label };
	}
	return export_speedscope_multi(parts, n, x->ri, f);
}

static int write_folded(FILE *f, void *c)
{
	struct export_ctx *x = c;

	return export_folded(x->p, f);
}

static int write_pprof(FILE *f, void *c)
{
	struct export_ctx *x = c;

	return export_pprof_run(x->p, PPROF_CPU, x->ri, cycle_sink_table(x->r->mctx.cycles), f);
}

/* The scheduler module's off-CPU profile (sched_view.h), when it ran. */
static const struct profile *offcpu_profile(struct recorder *r)
{
	for_each_module(r, i)
		if (modules[i] == &sched_rec_module)
			return sched_offcpu_profile(r->mstate[i]);
	return NULL;
}

static int write_pprof_offcpu(FILE *f, void *c)
{
	struct export_ctx *x = c;

	return export_pprof_run(offcpu_profile(x->r), PPROF_OFFCPU, x->ri,
				cycle_sink_table(x->r->mctx.cycles), f);
}

static int write_report(FILE *f, void *c)
{
	return report_json_print(c, f);
}

static int module_trace_events(void *c, FILE *out, bool *first)
{
	struct recorder *r = c;
	int err;

	for_each_module(r, i) {
		if (!modules[i]->trace_events ||
		    (modules[i]->has_trace && !modules[i]->has_trace(r->mstate[i])))
			continue;
		err = modules[i]->trace_events(r->mstate[i], out, first);
		if (err)
			return err;
	}
	return 0;
}

static int write_trace(FILE *f, void *c)
{
	struct export_ctx *x = c;

	return export_trace_json(x->ri, module_trace_events, x->r, f);
}

/* The report lists the files of the bundle written so far and itself,
 * before it exists. */
static void set_output_files(struct recorder *r)
{
	const char **names = calloc(r->od->nwritten + 1, sizeof(*names));
	size_t n = 0;
	bool self = false;

	if (!names)
		return;
	for (size_t i = 0; i < r->od->nwritten; i++) {
		names[n++] = r->od->written[i];
		self |= !strcmp(r->od->written[i], "report.json");
	}
	if (!self)
		names[n++] = "report.json";
	free((void *)r->ri.output_files);
	r->ri.output_files = names;
	r->ri.noutput_files = n;
}

static int module_report_json(void *c, cJSON *root)
{
	struct recorder *r = c;
	int err;

	for_each_module(r, i) {
		if (!modules[i]->report_json)
			continue;
		err = modules[i]->report_json(r->mstate[i], root);
		if (err) {
			log_error("cannot add the %s section to report.json: %s", modules[i]->name,
				  strerror(-err));
			return err;
		}
	}
	/* A module may have written files while its section was assembled. */
	set_output_files(r);
	return report_json_set_output(root, &r->ri);
}

/* report.json, and when the disk is too full for it (and may_compact),
 * the same without its large sections. */
static int write_report_json(struct output_dir *od, cJSON *report, bool may_compact)
{
	int err = output_write(od, "report.json", write_report, report);

	if ((err == -ENOSPC || err == -EDQUOT) && may_compact && !report_json_is_compact(report) &&
	    !report_json_compact(report)) {
		log_warn("report.json: %s: writing it without its large sections (flame graphs, "
			 "timelines, per-thread lists; output.left_out names them)",
			 strerror(-err));
		err = output_write(od, "report.json", write_report, report);
	}
	return err;
}

static int write_outputs(struct recorder *r, struct output_dir *od)
{
	struct export_ctx x = { &r->prof, &r->ri, r };
	cJSON *report = NULL;
	bool trace = false, early;
	int err = 0, e;

	const struct profile *pp[2] = { &r->prof, offcpu_profile(r) };

	pprof_elf_prefetch(r->ri.elf_cache, pp, 2);
	/* report.json first: the summary that report.html, cycles.csv and
	 * `ebpf-prof diff` are rebuilt from gets the space a filling disk has
	 * left. Written again at the end with the list of every file
	 * (output.complete); if that fails, this one stays. Then every other
	 * file even if one fails, so one bad exporter cannot take the
	 * others' data with it. */
	r->ri.extend_report = module_report_json;
	r->ri.extend_ctx = r;
	r->od = od;
	set_output_files(r);
	/* Kept until the modules' files are written (report.html embeds it),
	 * whatever happens. */
	e = report_json_build(&r->prof, &r->ri, &report);
	if (e) {
		log_error("cannot assemble report.json: %s", strerror(-e));
		err = -EIO;
	}
	early = !e && !write_report_json(od, report, true);
	if (output_write(od, "profile.speedscope.json", write_speedscope, &x))
		err = -EIO;
	if (output_write(od, "stacks.folded", write_folded, &x))
		err = -EIO;
	if (output_write(od, "profile.pb.gz", write_pprof, &x))
		err = -EIO;
	if (offcpu_profile(r) && output_write(od, "offcpu.pb.gz", write_pprof_offcpu, &x))
		err = -EIO;
	for_each_module(r, i) {
		if (modules[i]->write_files && modules[i]->write_files(r->mstate[i], od))
			err = -EIO;
		if (modules[i]->trace_events &&
		    (!modules[i]->has_trace || modules[i]->has_trace(r->mstate[i])))
			trace = true;
	}
	if (trace && output_write(od, "trace.json", write_trace, &x))
		err = -EIO;
	if (!e) {
		r->ri.output_complete = true;
		set_output_files(r);
		/* A whole early one is worth more than a short final one. */
		if (report_json_set_output(report, &r->ri) ||
		    write_report_json(od, report, !early)) {
			err = -EIO;
			if (early)
				log_warn(
					"report.json: the version written before the other files "
					"stays (output.complete false: its output.files ends there)");
		}
	}
	cJSON_Delete(report);
	return err;
}

static const char *unwind_mode_name(enum cli_unwind m)
{
	switch (m) {
	case CLI_UNWIND_FP:
		return "fp";
	case CLI_UNWIND_DWARF:
		return "dwarf";
	case CLI_UNWIND_KERNEL:
		return "cfi-kernel";
	case CLI_UNWIND_AUTO:
		break;
	}
	return "auto";
}

/* The sampler's and every module's BPF links, handed over for release
 * beside the modules' stop and the outputs (overload/links.h: by a child
 * process, or a thread joined before anything is closed). */
static struct links_reaper *start_reaping(struct recorder *r)
{
	struct link_list l = { 0 };

	sampler_take_links(r->sampler, &l);
	for_each_module(r, i)
		if (modules[i]->take_links)
			modules[i]->take_links(r->mstate[i], &l);
	return links_reaper_start(&l);
}

static void collect_drops(struct recorder *r)
{
	uint64_t d[EP_DROP__COUNT] = {};

	if (sampler_read_drops(r->sampler, d))
		return;
	r->prof.drops[PROF_DROP_RINGBUF_FULL] += d[EP_DROP_RINGBUF_FULL];
	/* Ticks taken on targets whose record never reached the handler (the
	 * ones read stood for their skipped ticks there). unread_at_stop
	 * counts records of any kind, at a limited rate nearly all samples. */
	r->prof.drops[PROF_DROP_RATE_LIMITED] += tick_guard_skipped(
		&r->tick, d[EP_DROP_RINGBUF_FULL] + r->prof.drops[PROF_DROP_UNREAD]);
	r->prof.drops[PROF_DROP_USER_STACK] += d[EP_DROP_USER_STACK_ERR];
	r->prof.drops[PROF_DROP_KERN_STACK] += d[EP_DROP_KERN_STACK_ERR];
	r->prof.drops[PROF_DROP_TARGET_MAP_FULL] += d[EP_DROP_TARGET_MAP_FULL];
	r->prof.drops[PROF_DROP_EVENT_LOST] += d[EP_DROP_EVENT_RINGBUF_FULL];
	/* Not lost: the sample is kept, with the frame-pointer stack in auto
	 * mode. Reported with the unwinding figures. */
	r->ri.unwind.copy_errors += d[EP_DROP_USTACK_COPY_ERR];
	r->ri.unwind.regs_errors += d[EP_DROP_UREGS_ERR];
}

/* The sampler's losses so far (kernel counters + collector) for the live
 * view and --alert drops>0; the final figures are summed at stop. */
static void update_live_drops(struct recorder *r, uint64_t now)
{
	uint64_t d[EP_DROP__COUNT] = {}, sum = 0;

	if (!cli_live_wanted(r->opts) || now < r->next_live_drops_ns)
		return;
	r->next_live_drops_ns = now + LIVE_DROPS_PERIOD_NS;
	if (sampler_read_drops(r->sampler, d))
		return;
	for (int i = 0; i < EP_DROP__COUNT; i++)
		sum += d[i];
	for (int i = 0; i < PROF_DROP__COUNT; i++)
		sum += r->prof.drops[i];
	r->live.drops[LIVE_SRC_SAMPLER] = (int64_t)sum;
}

/* Verbose only: how many samples of Python processes got Python frames,
 * and what the walk met. */
static void log_python_stats(struct pyframes *py)
{
	struct pyframes_stats st;

	pyframes_get_stats(py, &st);
	if (!st.samples)
		return;
	log_info("python: %llu of %llu samples of Python processes with Python frames "
		 "(%llu frames; %llu code objects read, %llu unreadable); walk: %llu threads "
		 "without a thread state, %llu idle, %llu read errors, %llu truncated, %llu lost",
		 (unsigned long long)st.with_python, (unsigned long long)st.samples,
		 (unsigned long long)st.frames, (unsigned long long)st.code_reads,
		 (unsigned long long)st.code_errors, (unsigned long long)st.bpf[EP_PY_ST_NO_TSTATE],
		 (unsigned long long)st.bpf[EP_PY_ST_IDLE],
		 (unsigned long long)st.bpf[EP_PY_ST_READ_ERR],
		 (unsigned long long)st.bpf[EP_PY_ST_TRUNCATED],
		 (unsigned long long)st.bpf[EP_PY_ST_RINGBUF_FULL]);
	if (st.offcpu_with_python)
		log_info("python: %llu off-CPU episodes with Python frames (%llu frames)",
			 (unsigned long long)st.offcpu_with_python,
			 (unsigned long long)st.offcpu_frames);
	if (st.bpf[EP_PY_ST_WALKS])
		log_info("python: walk cost %.0f ns per sample, %.1f frames per sample",
			 (double)st.bpf[EP_PY_ST_WALK_NS] / (double)st.bpf[EP_PY_ST_WALKS],
			 (double)st.bpf[EP_PY_ST_FRAMES] / (double)st.bpf[EP_PY_ST_WALKS]);
	log_debug(
		"python: walks %llu, stacks sent %llu, thread-state scans %llu, frames skipped %llu, "
		"stacks without their sample %llu",
		(unsigned long long)st.bpf[EP_PY_ST_WALKS],
		(unsigned long long)st.bpf[EP_PY_ST_STACKS],
		(unsigned long long)st.bpf[EP_PY_ST_SCANS], (unsigned long long)st.frames_skipped,
		(unsigned long long)st.unpaired);
}

/* --pid values, checked, as processes. A thread id is accepted by the
 * kernel's calls (kill, /proc/TID) but the BPF filter is by process:
 * given as is, it recorded nothing (issue 17). Like perf -p with a thread
 * id... which perf takes as the thread alone; here a thread is profiled
 * with its whole process, and said so. */
static int resolve_pids(const struct cli_opts *o, uint32_t *pids, int *npids)
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
		 * and the run ended with "0 samples" and no word why (issue 17). */
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

/* A second Ctrl-C or SIGTERM while the outputs are written would, once the
 * mask is restored, kill the process before stdout is flushed: the files
 * are complete but the summary is lost (issue 17). As perf record does, the
 * run is finished instead (stop is bounded: STOP_DRAIN_BUDGET_NS, and the
 * outputs are written in well under a second); SIGKILL still ends it. */
static void ignore_late_signals(int sfd)
{
	struct signalfd_siginfo si;
	bool late = false;

	fflush(stdout);
	while (read(sfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			late = true;
	if (late)
		log_warn("signal received while finishing the run: ignored, the outputs and "
			 "summary are complete");
	/* From here to the exit (a sanitizer's leak check can take a while)
	 * the run is complete: a second Ctrl-C must not turn it into a death
	 * by signal. */
	{
		struct sigaction ign = { .sa_handler = SIG_IGN };

		sigemptyset(&ign.sa_mask);
		sigaction(SIGINT, &ign, NULL);
		sigaction(SIGTERM, &ign, NULL);
		sigaction(SIGHUP, &ign, NULL);
	}
}

/* The default unwinding (cfi-kernel) and Python frames need bpf_loop
 * (5.17+): without it the defaults degrade by themselves, in one line, to
 * what the kernel can do (an explicit --unwind cfi-kernel still fails, in
 * sampler_open; an explicit --python warns there). x86_64 copies a stack
 * window and unwinds it in the collector; the arm64 collector has no such
 * unwinder, so it walks frame pointers in the kernel. */
static void degrade_defaults(struct cli_opts *o, const struct kfeat *kf)
{
	bool loop = kf->have[KFEAT_BPF_LOOP];
	/* The in-kernel walk also needs the kernel's BTF (sampler_open);
	 * Python frames bpf_loop only. */
	bool unwind = o->unwind == CLI_UNWIND_KERNEL && !o->unwind_given && (!loop || !kf->btf);
	bool python = o->python != CLI_PYTHON_NATIVE && !o->python_given && !loop;
	const char *why = loop ? "this kernel has no BTF"
			       : "this kernel has no bpf_loop (Linux 5.17+)";

	if (!unwind && !python)
		return;
	if (python)
		o->python = CLI_PYTHON_NATIVE;
	if (!unwind) {
		log_warn("%s: Python frames are not walked", why);
		return;
	}
#if defined(__x86_64__)
	o->unwind = CLI_UNWIND_AUTO;
	log_warn("%s: user stacks are unwound from a copied stack window (--unwind auto), not in "
		 "the kernel%s",
		 why, python ? "; Python frames are not walked" : "");
#else
	o->unwind = CLI_UNWIND_FP;
	log_warn("%s: user stacks are walked by frame pointers (--unwind fp), not from CFI in the "
		 "kernel%s",
		 why, python ? "; Python frames are not walked" : "");
#endif
}

int record_main(const struct cli_opts *cli)
{
	struct cli_opts eff = *cli;
	const struct cli_opts *o = &eff;
	struct kfeat kf;
	struct recorder r = { .opts = o,
			      .child = -1,
			      .unavailable_frame = -1,
			      .truncated_frame = -1,
			      .jit_frame = -1,
			      .unknown_map_frame = -1 };
	struct output_dir od = { .dirfd = -1 };
	struct launch l = { -1, -1 };
	struct sampler_opts so;
	struct symbolizer_opts symo = {
		.proc_root = o->proc_root,
		.kallsyms_path = "/proc/kallsyms",
		.perfmap_dir = "/tmp",
		.no_demangle = o->no_demangle,
	};
	sigset_t mask, orig_mask;
	int sfd = -1, rc = 1, err;
	char *outdir = NULL;
	uint64_t deadline = 0, t_drained, t_stopped;
	struct links_reaper *reaper = NULL;
	double reap_ms;
	int reap_pid;
	uint32_t pids[CLI_MAX_PIDS];
	int npids = 0;
	struct collector_prio prio;

	libbpf_set_print(libbpf_print);
	/* First: until then a target with hundreds of busy threads leaves us
	 * one share in hundreds, and the feature probes below load ~340 BPF
	 * programs (~50 ms of CPU, seconds at that share). Before any thread
	 * or child is started: they inherit it. */
	collector_priority_raise(&prio);
	if (check_environment(o->btf_path))
		return 1;
	kfeat_probe(&kf);
	/* Tests run this kernel as an older one (kernel/kfeat.h). */
	if (getenv("EBPF_PROF_FAULT_KFEAT") && *getenv("EBPF_PROF_FAULT_KFEAT") &&
	    kfeat_hide(&kf, getenv("EBPF_PROF_FAULT_KFEAT"))) {
		log_error("EBPF_PROF_FAULT_KFEAT=%s: not a list of known helper names",
			  getenv("EBPF_PROF_FAULT_KFEAT"));
		return 1;
	}
	degrade_defaults(&eff, &kf);
	/* What a kernel without BTF costs beyond the unwinding (the line
	 * above) and --alloc (its own line), once. */
	if (!kf.btf)
		log_warn("this kernel has no BTF: its tracepoints are followed by raw_tp programs "
			 "(types from %s); off-CPU episodes have no kernel frames "
			 "(bpf_get_task_stack needs the kernel's BTF)",
			 o->btf_path ? o->btf_path : "libbpf's vmlinux file");
	tick_guard_init(&r.tick, o->freq_hz);
	if (tick_guard_limited(&r.tick))
		log_warn("-F %u: sampling at %u Hz per CPU, the overload guard's limit (each tick "
			 "is a timer interrupt on every CPU, whatever runs there); the ticks not "
			 "taken on the targets are counted as lost (rate_limited)",
			 r.tick.requested_hz, r.tick.tick_hz);
	so = (struct sampler_opts){
		.freq_hz = r.tick.tick_hz,
		.kernel_stacks = o->kernel_stacks,
		.stack_bytes = o->unwind == CLI_UNWIND_FP || o->unwind == CLI_UNWIND_KERNEL
				       ? 0
				       : o->stack_bytes,
		.kwalk = o->unwind == CLI_UNWIND_KERNEL,
		.python = o->python != CLI_PYTHON_NATIVE,
		.btf_path = o->btf_path,
		.kf = &kf,
		.vs = &r.vs,
	};
	/* Tests: EBPF_PROF_FAULT_BPF=profile:PROGRAM refuses a sampler program
	 * (the modules' parts take the rest of the variable, bpf_parts.h). */
	if (getenv("EBPF_PROF_FAULT_BPF") && !strncmp(getenv("EBPF_PROF_FAULT_BPF"), "profile:", 8))
		so.fault_prog = getenv("EBPF_PROF_FAULT_BPF") + 8;
	r.ri.exit_status = -1;
	r.ri.freq_hz = r.tick.tick_hz;
	r.ri.requested_hz = o->freq_hz;
	r.ri.kernel_frames = o->kernel_stacks;
	r.ri.unwind.mode = unwind_mode_name(o->unwind);
	r.ri.kernel_btf = kf.btf;
	r.ri.btf_file = o->btf_path;
	r.ri.tracepoint_programs = kfeat_prog_kind(&kf);
	r.ri.vstat = &r.vs;
	r.ri.unwind.stack_bytes = so.stack_bytes;
	err = resolve_pids(o, pids, &npids);
	if (err)
		return err == -EINVAL ? 2 : 1; /* a kernel thread: a usage error */
	if (pprof_elf_cache_new(&r.ri.elf_cache))
		r.ri.elf_cache = NULL; /* each pprof file reads the DWARF itself */
	ensure_tracefs();
	r.mctx.child_nice = prio.old_nice;
	if (prio.nice_err || prio.rt_err)
		log_info("collector priority not raised (%s): a target with more busy threads "
			 "than CPUs can starve it (slow start, samples lost)",
			 strerror(prio.rt_err ? prio.rt_err : prio.nice_err));
	else
		log_info("collector at nice %d, recorder thread SCHED_FIFO %d, so that busy "
			 "targets cannot starve it; the command and --alert-exec run at nice %d",
			 COLLECTOR_NICE, COLLECTOR_RT_PRIO, prio.old_nice);

	/* Signals arrive through a descriptor polled by the loop: no handler,
	 * no global flag, and every thread started later inherits the mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &orig_mask);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		log_error("cannot create signalfd: %s", strerror(errno));
		goto out;
	}

	/* Forked while the recorder is small (nothing loaded yet), and a port
	 * in use is reported before the run. */
	if (o->metrics_addr && !o->check && metrics_server_start(&r.metrics, o->metrics_addr))
		goto out;

	/* A sample weighs the period it was taken at. */
	if (profile_init(&r.prof, r.tick.tick_hz)) {
		log_error("out of memory");
		goto out;
	}
	r.prof.run_gap_ns = 2 * r.prof.period_ns; /* see profile.h */
	err = symbolizer_new(&r.sym, &symo);
	if (err) {
		log_error("cannot set up the symbolizer: %s", strerror(-err));
		goto out;
	}
	if (o->unwind == CLI_UNWIND_AUTO || o->unwind == CLI_UNWIND_DWARF) {
		err = unwinder_new(&r.uw, r.sym);
		if (err) {
			log_error("cannot set up the stack unwinder: %s", strerror(-err));
			goto out;
		}
	}
	if (sampler_open(&r.sampler, &so, on_event, &r))
		goto out;
	symbolizer_set_mmap_gen(r.sym, sampler_mmap_gen(r.sampler));
	if (sampler_kwalk(r.sampler)) {
		struct sampler_uw_fds fds;
		struct ktables_opts ko = { .proc_root = o->proc_root,
					   .fault_unmapped = getenv("EBPF_PROF_FAULT_NO_TABLE") };

		sampler_get_uw_fds(r.sampler, &fds);
		ko.objs_fd = fds.objs;
		ko.blk_pc_fd = fds.blk_pc;
		ko.procs_fd = fds.procs;
		err = ktables_new(&r.kt, &ko);
		if (err) {
			log_error("cannot set up the unwind tables: %s", strerror(-err));
			goto out;
		}
		r.ri.unwind.kernel_walk = true;
		pprof_elf_cache_set_dir(r.ri.elf_cache, ktables_cache_dirfd(r.kt));
	}
	if (sampler_py_procs_fd(r.sampler) >= 0) {
		struct pyframes_opts pyo = {
			.mode = o->python == CLI_PYTHON_ONLY ? PY_MODE_ONLY : PY_MODE_MIXED,
			.proc_root = o->proc_root,
			.procs_fd = sampler_py_procs_fd(r.sampler),
			.stats_fd = sampler_py_stats_fd(r.sampler),
			.prof = &r.prof,
		};

		err = pyframes_new(&r.py, &pyo);
		if (err) {
			log_error("cannot set up Python frames: %s", strerror(-err));
			goto out;
		}
	}

	if (o->ncommand) {
		r.ri.launched = true;
		r.ri.command = join_argv(o->command, o->ncommand);
		r.child = launch_child(o->command, &orig_mask, r.mctx.child_nice, &l);
		if (r.child < 0) {
			log_error("cannot start %s: %s", o->command[0], strerror(-r.child));
			goto out;
		}
		if (sampler_add_target(r.sampler, (uint32_t)r.child) ||
		    add_target(&r, (uint32_t)r.child, 0, NULL))
			goto out;
	} else {
		for (int i = 0; i < npids; i++) {
			if (sampler_add_target(r.sampler, pids[i]) ||
			    add_target(&r, pids[i], 0, NULL))
				goto out;
			symbolizer_prepare_pid(r.sym, pids[i]);
		}
	}

	outdir = o->output_dir ? strdup(o->output_dir) : default_output_dir(r.ri.targets[0].pid);
	/* Before attaching: a read-only or full output filesystem found only
	 * after the run lost the recording (issue 17). */
	/* Never a directory that someone else could fill first or edit after:
	 * new (a fresh name for the default one), or empty, or --force. */
	if (!outdir ||
	    output_dir_open_run(&od, outdir,
				(o->force ? OUTPUT_DIR_FORCE : 0) |
					(o->output_dir ? 0 : OUTPUT_DIR_NEW_NAME)) ||
	    output_dir_check(&od, OUTPUT_MIN_FREE))
		goto out;
	err = output_dir_guard(&od);
	if (err)
		log_warn("cannot start the helper that removes %s if this run is killed before "
			 "writing: %s",
			 od.path, strerror(-err));
	r.ri.output_dir = od.path;

	/* CPU sampling starts before the other modules load (each load parses
	 * the kernel's BTF): an attached process is sampled ~25 ms after start
	 * instead of ~110 ms. Samples wait in the ring meanwhile; a launched
	 * command is still held until everything is attached. */
	/* Tables before the first sample: a running process's objects are
	 * all mapped already (a launched command is scanned at its exec). */
	for (size_t t = 0; r.kt && t < r.ri.ntargets; t++) {
		err = ktables_scan(r.kt, r.ri.targets[t].pid, mono_ns());
		if (err && err != -ESRCH)
			log_warn("unwind tables of %u: %s", r.ri.targets[t].pid, strerror(-err));
	}
	clock_gettime(CLOCK_REALTIME, &r.ri.start_wall);
	r.ri.start_mono_ns = mono_ns();
	if (sampler_attach(r.sampler))
		goto out;

	r.mctx.opts = o;
	r.mctx.kf = &kf;
	r.mctx.vs = &r.vs;
	r.mctx.targets_map_fd = sampler_targets_fd(r.sampler);
	r.mctx.uw_objs_fd = r.mctx.uw_blk_pc_fd = r.mctx.uw_procs_fd = -1;
	if (sampler_kwalk(r.sampler)) {
		struct sampler_uw_fds fds;

		sampler_get_uw_fds(r.sampler, &fds);
		r.mctx.uw_objs_fd = fds.objs;
		r.mctx.uw_blk_pc_fd = fds.blk_pc;
		r.mctx.uw_procs_fd = fds.procs;
	}
	r.mctx.py = r.py;
	r.mctx.py_procs_fd = r.py ? sampler_py_procs_fd(r.sampler) : -1;
	r.mctx.py_tstates_fd = r.py ? sampler_py_tstates_fd(r.sampler) : -1;
	r.mctx.sym = r.sym;
	r.mctx.mmap_gen = sampler_mmap_gen(r.sampler);
	r.mctx.ri = &r.ri;
	r.mctx.prof = &r.prof;
	live_metrics_init(&r.live);
	r.mctx.live = &r.live;
	r.mctx.stop_requested = &r.stop_requested;
	r.mctx.notify_held = notify_held;
	r.mctx.rec = &r;
	r.mctx.cycles = cycles_sink_new(o, r.prof.period_ns);
	if (!r.mctx.cycles)
		log_warn("cycles: out of memory: no per-cycle table");
	if (throttle_feed_new(&r.mctx.throttle) || probe_bus_new(&r.mctx.probe_bus)) {
		log_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < NMODULES; i++) {
		err = modules[i]->open(&r.mstate[i], &r.mctx);
		if (err == -ENODEV) {
			r.mstate[i] = NULL;
			continue;
		}
		if (err) {
			r.mstate[i] = NULL;
			log_error("cannot start %s: %s", modules[i]->name, strerror(-err));
			goto out;
		}
	}
	/* The iterator is worth its load only when this boot's cache holds
	 * the core kernel's symbols (ksym_cache.h); it needs Linux 6.0. */
	r.ksym.want = o->kernel_stacks && r.kt && kernel_at_least(6, 0) && kf.btf &&
		      ksym_cache_present(ktables_cache_dirfd(r.kt));
	if (load_module_bpf(&r))
		goto out;
	if (o->kernel_stacks && r.kt)
		symbolizer_set_kernel_cache(r.sym, ktables_cache_dirfd(r.kt),
					    ksym_part_link_fd(&r.ksym));
	/* The sampler's load parsed the kernel's BTF (~11 MB) and so did
	 * the modules' one; returning that heap keeps the peak at one parse. */
	malloc_trim(0);
	/* Children that came and went while the sampler started (a fork
	 * storm on a loaded machine) are nothing for the modules to follow. */
	for_each_module(&r, i)
		for (size_t t = 0; t < r.ri.ntargets; t++)
			if (modules[i]->add_target && !r.ri.targets[t].exited &&
			    modules[i]->add_target(r.mstate[i], r.ri.targets[t].pid))
				goto out;

	for_each_module(&r, i) {
		if (modules[i]->attach && modules[i]->attach(r.mstate[i]))
			goto out;
		malloc_trim(0);
	}
	/* `ebpf-prof check`: everything loaded and attached; the held command
	 * never runs (closing its pipe below ends it). */
	if (o->check) {
		check_result_fill(o->check, &kf, &r.vs);
		rc = 0;
		goto out;
	}
	if (o->rotate_s > 0 && rotator_new(&r.rot, &od, o->rotate_s, o->keep, r.ri.start_mono_ns)) {
		log_error("out of memory");
		goto out;
	}
	/* Parsing kallsyms takes 64 ms quiet, 300-600 ms on a loaded VM; done
	 * at the first kernel frame it stalls the loop that long. On a thread
	 * it overlaps the start of the run instead. Not earlier: its ~5 MB on
	 * top of a BPF load's BTF parse (~11 MB, freed after each load above)
	 * would raise the peak RSS by as much (docs/performance.md). */
	if (o->kernel_stacks)
		symbolizer_preload_kernel(r.sym);
	if (o->duration_s > 0)
		deadline = r.ri.start_mono_ns + (uint64_t)(o->duration_s * 1e9);

	if (r.child > 0) {
		err = release_child(&l);
		if (err) {
			log_error("cannot run '%s': %s", o->command[0], strerror(-err));
			waitpid(r.child, NULL, 0);
			r.child_reaped = true;
			goto out;
		}
	}
	if (r.child > 0) {
		struct report_target *t = find_target(&r, (uint32_t)r.child);
		char *cmdline = NULL;

		/* Exec'ed: the executable and ld.so are mapped. */
		if (r.kt)
			ktables_scan(r.kt, (uint32_t)r.child, mono_ns());
		/* Read its maps as soon as its image is loaded: a short command
		 * can exit before its first samples are drained (a recorder
		 * stalled at start-up, a slow board), and its maps with it. */
		wait_exec_loaded(o->proc_root, r.child);
		symbolizer_prepare_pid(r.sym, (uint32_t)r.child);

		proc_read_comm(o->proc_root, t->pid, t->comm, sizeof(t->comm));
		if (proc_read_cmdline(o->proc_root, t->pid, &cmdline) == 0) {
			free(t->cmdline);
			t->cmdline = cmdline;
		}
	}
	if (log_get_level() >= LOG_INFO)
		log_info("sampling %zu process(es) at %u Hz%s; Ctrl-C to stop", r.ri.ntargets,
			 r.tick.tick_hz, deadline ? "" : " until they exit");

	r.ri.stop_reason = "targets-exited";
	const struct timespec rt_yield = { 0, COLLECTOR_RT_YIELD_MS * 1000000l };

	for (;;) {
		struct signalfd_siginfo si;
		bool signalled = false;
		uint64_t now;

		err = sampler_poll(r.sampler, DRAIN_PERIOD_MS);
		if (err < 0) {
			log_error("ring buffer: %s", strerror(-err));
			goto out;
		}
		/* Real-time and behind: leave the CPU to the rest for a while
		 * (overload/priority.h); the BPF side counts what is lost. */
		if (prio.realtime && sampler_behind(r.sampler))
			nanosleep(&rt_yield, NULL);
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				signalled = true;
		now = mono_ns();
		/* Before the modules' polls: the live view (last) shows it. */
		update_live_drops(&r, now);
		if (now >= r.next_trim_ns) {
			if (r.next_trim_ns)
				malloc_trim(0);
			r.next_trim_ns = now + TRIM_PERIOD_NS;
		}
		for_each_module(&r, i)
			if (modules[i]->poll && modules[i]->poll(r.mstate[i], now) < 0)
				r.prof.drops[PROF_DROP_COLLECTOR]++;
		metrics_server_update(r.metrics, &r.live, &r.prof, &r.ri, now);
		/* No sample past the interval's end (an idle target): rotate once
		 * the ring has had ROTATE_LAG_NS to deliver the last ones. */
		for (int k = 0; k < 16 && rotator_due(r.rot, now - ROTATE_LAG_NS); k++)
			if (rotate(&r))
				break;
		check_liveness(&r, now);
		if (signalled) {
			r.ri.stop_reason = "signal";
			break;
		}
		if (r.stop_requested) {
			r.ri.stop_reason = "user";
			break;
		}
		if (deadline && now >= deadline) {
			r.ri.stop_reason = "duration";
			break;
		}
		if (!r.nalive)
			break;
	}
	/* Everything the kernel queued before we stopped is part of the run,
	 * as far as a bounded drain reads it: the rest is counted. */
	r.ri.end_mono_ns = mono_ns();
	clock_gettime(CLOCK_REALTIME, &r.ri.end_wall);
	sampler_stop(r.sampler, STOP_DRAIN_BUDGET_NS, &r.prof.drops[PROF_DROP_UNREAD]);
	collect_drops(&r);
	if (r.kt) {
		uint64_t us[3];

		ktables_get_stats(r.kt, &r.ri.unwind.kt);
		if (!sampler_read_uw_stats(r.sampler, us)) {
			r.ri.unwind.kw_walk_ns = us[0];
			r.ri.unwind.kw_walks = us[1];
			r.ri.unwind.kw_frames = us[2];
		}
	}
	if (r.py) {
		log_python_stats(r.py);
		r.ri.python.mode = o->python == CLI_PYTHON_ONLY ? "only" : "mixed";
		pyframes_get_stats(r.py, &r.ri.python.st);
	}
	if (sampler_polls_cut_short(r.sampler))
		log_warn(
			"the collector fell behind the sampler in %llu of its polls (records "
			"waited in the ring; any loss is under 'lost:'); a lower -F reduces the load",
			(unsigned long long)sampler_polls_cut_short(r.sampler));
	t_drained = mono_ns();
	reaper = start_reaping(&r);
	for_each_module(&r, i) {
		uint64_t t0 = mono_ns();

		if (modules[i]->stop)
			modules[i]->stop(r.mstate[i]);
		log_debug("stop: %s took %.1f ms", modules[i]->name, (mono_ns() - t0) / 1e6);
	}
	t_stopped = mono_ns();

	if (r.child > 0 && !r.child_reaped && !strcmp(r.ri.stop_reason, "targets-exited")) {
		/* The kernel reported the child's last thread gone; it becomes a
		 * zombie right after, so this wait is short and gives the report
		 * its exit status. */
		int status;

		if (waitpid(r.child, &status, 0) == r.child) {
			r.child_reaped = true;
			r.ri.exit_status = WIFEXITED(status) ? WEXITSTATUS(status)
							     : 128 + WTERMSIG(status);
		}
	}
	if (r.child > 0 && !r.child_reaped && !strcmp(r.ri.stop_reason, "signal")) {
		/* A terminal Ctrl-C reaches the command too: give it a moment to
		 * exit so its status makes the report. If it keeps running (we alone
		 * got SIGTERM) it is left alone, as perf leaves a -p target. */
		uint64_t until = mono_ns() + 250 * 1000000ull;
		struct timespec tick = { 0, 5 * 1000000 };

		while (!r.child_reaped && mono_ns() < until) {
			check_liveness(&r, 0);
			if (!r.child_reaped)
				nanosleep(&tick, NULL);
		}
	}
	{
		uint64_t t0 = mono_ns();

		sampler_close(r.sampler);
		log_debug("stop: sampler closed in %.1f ms", (mono_ns() - t0) / 1e6);
	}
	r.sampler = NULL;

	rc = write_outputs(&r, &od) ? 1 : 0;
	/* The summary lists what is on disk, not what report.json expected. */
	free((void *)r.ri.output_files);
	r.ri.output_files = (const char *const *)od.written;
	r.ri.noutput_files = od.nwritten;
	r.ri.failed_files = (const char *const *)od.failed;
	r.ri.failed_errs = od.failed_errs;
	r.ri.nfailed_files = od.nfailed;
	log_info("stop took %.0f ms: sampler drain %.0f, modules %.0f, outputs %.0f",
		 (mono_ns() - r.ri.end_mono_ns) / 1e6, (t_drained - r.ri.end_mono_ns) / 1e6,
		 (t_stopped - t_drained) / 1e6, (mono_ns() - t_stopped) / 1e6);
	if (o->verbosity >= 0) {
		print_summary(&r.prof, &r.ri, stdout);
		for_each_module(&r, i)
			if (modules[i]->summary)
				modules[i]->summary(r.mstate[i], stdout);
	}
	{
		struct symbolizer_stats st;

		symbolizer_get_stats(r.sym, &st);
		log_info("symbolizer: %llu lookups, %llu cache hits, %llu unresolved, %llu reloads",
			 (unsigned long long)st.lookups, (unsigned long long)st.cache_hits,
			 (unsigned long long)st.unresolved, (unsigned long long)st.reloads);
		if (st.perfmaps_cut)
			log_warn("%llu perf map(s) cut at their size limit: %.1f MiB not read, JIT "
				 "frames named there show as [unknown]",
				 (unsigned long long)st.perfmaps_cut,
				 (double)st.perfmap_unread_bytes / (1 << 20));
	}
out:
	if (l.go_fd >= 0) {
		/* Never released: the child sees EOF and exits without running. */
		close(l.go_fd);
		if (r.child > 0 && !r.child_reaped)
			waitpid(r.child, NULL, 0);
	}
	if (l.exec_fd >= 0)
		close(l.exec_fd);
	/* Before any close: the links point at programs and rings. */
	links_reaper_join(reaper, &reap_ms, &reap_pid);
	if (reaper)
		log_debug("stop: BPF links dropped in %.0f ms%s", reap_ms,
			  reap_pid ? ", released by a child process" : " (beside the outputs)");
	sampler_close(r.sampler);
	/* Before the modules' close: its thread reads only its snapshot, but
	 * a scrape during teardown has no run left to describe. */
	metrics_server_stop(r.metrics);
	rotator_free(r.rot);
	pyframes_free(r.py);
	for_each_module(&r, i)
		modules[i]->close(r.mstate[i]);
	/* After the modules' close: their links and rings point into them. */
	bpf_parts_close(&r.bpf_objs);
	throttle_feed_free(r.mctx.throttle);
	/* After the modules' close: the probes module points into it. */
	probe_bus_free(r.mctx.probe_bus);
	cycle_sink_free(r.mctx.cycles);
	if (r.ri.output_files != (const char *const *)od.written)
		free((void *)r.ri.output_files);
	/* After the symbolizer: its Dwfl sessions were attached with the
	 * unwinder's callbacks and ELF header. */
	symbolizer_free(r.sym);
	/* After the symbolizer: its kallsyms thread may read the iterator. */
	ksym_part_free(&r.ksym);
	unwinder_free(r.uw);
	ktables_free(r.kt);
	profile_free(&r.prof);
	output_dir_remove_if_unused(&od);
	output_dir_close(&od);
	for (size_t i = 0; i < r.ri.ntargets; i++)
		free(r.ri.targets[i].cmdline);
	free(r.ri.targets);
	pprof_elf_cache_free(r.ri.elf_cache);
	pid_index_free(&r.tgidx);
	vstat_free(&r.vs);
	free(r.ri.command);
	free(outdir);
	if (sfd >= 0) {
		ignore_late_signals(sfd);
		close(sfd);
	}
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
	return rc;
}
