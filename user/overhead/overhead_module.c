// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Our own cost inside the target, measured during the run (overhead.h):
 * the kernel's BPF statistics are on from open, before any module attaches
 * anything, to stop (the fd of BPF_ENABLE_STATS; about two clock reads per
 * program run); each of our programs' runs and run time is read at stop.
 * The trap of a probe hit is measured on a function of our own by a thread
 * started at open: its uprobes' detach waits for RCU grace periods (0.5 s
 * of a loaded machine's stop when it ran at stop).
 * Reports before the cycles module, whose findings read report.json
 * "overhead".
 */
#include "overhead_module.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "overhead.h"

struct ovh_state {
	const struct rec_ctx *ctx;
	int stats_fd;
	struct overhead o;
	/* the calibration thread and its results */
	pthread_t calib;
	bool calib_started;
	int calib_err;
	double entry_ns, ret_ns;
	bool want_watch; /* py: cycles: they may watch */
	int watch_err;
	double watch_ns;
};

static void *calibrate(void *arg)
{
	struct ovh_state *s = arg;
	struct sched_param sp = { 0 };

	/* Not at the recorder's real-time priority (inherited): it spins. */
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	s->calib_err = overhead_calibrate(&s->entry_ns, &s->ret_ns);
	if (s->want_watch)
		s->watch_err = overhead_calibrate_watch(&s->watch_ns);
	return NULL;
}

static int calib_join(struct ovh_state *s)
{
	if (!s->calib_started)
		return -ESRCH;
	pthread_join(s->calib, NULL);
	s->calib_started = false;
	return s->calib_err;
}

static int ovh_open(void **state, const struct rec_ctx *ctx)
{
	struct ovh_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->stats_fd = -1;
	s->o.trap_ns = -1;
	s->o.watch_ns = -1;
	*state = s;
	/* As the cycles module decides (x86_64, Python frames on). */
#if defined(__x86_64__)
	s->want_watch = ctx->opts->cycle && !strncmp(ctx->opts->cycle, "py:", 3) && ctx->py;
#endif
	/* From before any module attaches anything: every run counts. */
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (s->stats_fd < 0)
		log_info("overhead: no BPF run-time statistics (%s): probe cost from the trap "
			 "alone",
			 strerror(errno));
	s->calib_started = !pthread_create(&s->calib, NULL, calibrate, s);
	return 0;
}

static enum overhead_kind kind_of(uint32_t type, const char *name)
{
	if (type == BPF_PROG_TYPE_KPROBE) /* uprobes, uretprobes, USDT */
		return OVH_PROBE;
	/* bpf/cycles.bpf.c: on watchpoints, not the sampler's clock */
	if (type == BPF_PROG_TYPE_PERF_EVENT && !strcmp(name, "cycle_watch"))
		return OVH_WATCH;
	if (type == BPF_PROG_TYPE_PERF_EVENT)
		return OVH_SAMPLE;
	return OVH_OTHER;
}

/* Our BPF programs: the fds of this process that are programs (each once:
 * several fds may refer to one program). */
static void read_programs(struct ovh_state *s)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint32_t *ids = NULL;
	size_t cap = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[300], link[64];
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		ssize_t n;
		int fd = atoi(e->d_name);
		bool dup = false;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:bpf-prog"))
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		for (size_t i = 0; i < s->o.n && !dup; i++)
			dup = ids[i] == info.id;
		if (dup)
			continue;
		if (s->o.n == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct overhead_prog *np = realloc(s->o.progs, c * sizeof(*np));
			uint32_t *ni;

			if (!np)
				break;
			s->o.progs = np;
			ni = realloc(ids, c * sizeof(*ni));
			if (!ni)
				break;
			ids = ni;
			cap = c;
		}
		ids[s->o.n] = info.id;
		struct overhead_prog *op = &s->o.progs[s->o.n++];

		memset(op, 0, sizeof(*op));
		snprintf(op->name, sizeof(op->name), "%s", info.name);
		op->kind = kind_of(info.type, info.name);
		op->runs = info.run_cnt;
		op->run_ns = info.run_time_ns;
	}
	free(ids);
	closedir(d);
}

static void ovh_stop(void *state)
{
	struct ovh_state *s = state;
	int err = calib_join(s);

	if (s->stats_fd >= 0) {
		s->o.stats = true;
		read_programs(s);
		close(s->stats_fd);
		s->stats_fd = -1;
	}
	/* Reported when a probe fired. */
	if (!overhead_probe_ns(&s->o, NULL) && s->o.stats)
		return;
	if (err) {
		log_info("overhead: cannot measure the uprobe trap: %s", strerror(-err));
		return;
	}
	/* A latency probe is one of each per call. */
	s->o.trap_ns = (s->entry_ns + s->ret_ns) / 2;
	log_info("overhead: uprobe trap %.0f ns, uretprobe %.0f ns", s->entry_ns, s->ret_ns);
	if (s->want_watch && !s->watch_err) {
		s->o.watch_ns = s->watch_ns;
		log_info("overhead: watchpoint hit %.0f ns", s->watch_ns);
	} else if (s->want_watch) {
		log_info("overhead: cannot measure a watchpoint hit: %s", strerror(-s->watch_err));
	}
}

static int ovh_report(void *state, cJSON *root)
{
	struct ovh_state *s = state;
	const cJSON *on = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "sched"), "on_cpu_ns");

	overhead_count_samples(&s->o, s->ctx->prof);
	if (cJSON_IsNumber(on) && on->valuedouble > 0)
		s->o.target_cpu_ns = (uint64_t)on->valuedouble;
	else if (cJSON_IsRaw(on) && on->valuestring)
		s->o.target_cpu_ns = strtoull(on->valuestring, NULL, 10);
	return overhead_report_json(&s->o, root);
}

static void ovh_summary(void *state, FILE *out)
{
	overhead_summary(&((struct ovh_state *)state)->o, out);
}

static void ovh_close(void *state)
{
	struct ovh_state *s = state;

	if (!s)
		return;
	calib_join(s);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	overhead_free(&s->o);
	free(s);
}

const struct rec_module overhead_rec_module = {
	.name = "overhead",
	.open = ovh_open,
	.stop = ovh_stop,
	.report_json = ovh_report,
	.summary = ovh_summary,
	.close = ovh_close,
};
