// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Recording glue for memory, CPU frequency, thermal and throttling: loads
 * bpf/sysmon.bpf.c (tracepoints), seeds from sysfs, samples /proc at
 * SYSMON_SAMPLE_PERIOD_MS, and runs the pure throttle detector at stop.
 */
#include "util/clock.h"
#include "sysmon/sysmon_module.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "events/sysmon.h"
#include "cycles/cycle_sink.h"
#include "util/log.h"
#include "kernel/kfeat.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "overload/links.h"
#include "sysmon/memory.h"
#include "sysmon/sysfs_seed.h"
#include "sysmon/thermal.h"
#include "sysmon/throttle_feed.h"
#include "sysmon/throttle.h"
#include "top/top_live.h"

enum { TP_RSS, TP_OOM, TP_FREQ, TP_LIMITS, TP_TEMP, TP_TRIP, TP_CDEV, TP_EXEC, NTP };

static const char *const tp_names[NTP] = {
	"kmem/rss_stat",
	"oom/mark_victim",
	"power/cpu_frequency",
	"power/cpu_frequency_limits",
	"thermal/thermal_temperature",
	"thermal/thermal_zone_trip",
	"thermal/cdev_update",
	"sched/sched_process_exec",
};

struct sysmon {
	const struct rec_ctx *ctx;
	struct modules_bpf *skel; /* owned by the recorder (record/modules.c, bpf_parts.h) */
	struct ring_buffer *rb;
	struct bpf_link *links[NTP];
	bool tp_ok[NTP];
	bool tp_refused[NTP]; /* the kernel refused its program: left out */
	bool rss_btf_refused; /* sm_rss_btf refused: the classic tracepoint instead */
	bool tp_logged;	      /* setup runs again if the shared BPF load failed */
	struct memstate mem;
	struct thermal_tl tl;
	struct sysfs_seed seed;
	bool seed_ok;
	struct cpu_times *prev, *cur;
	size_t ncpu;
	bool prev_ok;
	uint64_t prev_ts, next_sample, next_counter;
	uint32_t *live;
	size_t nlive, cap_live;
	/* Exited since the last poll: their mm entries are collected in one
	 * walk of sm_mm_states per poll (collect_exited), not one per exit. */
	uint32_t *exited;
	size_t nexited, cap_exited;
	long page_size;
	uint64_t drops[EP_SM_DROP__COUNT];
	struct thr_result res;
	bool stopped;
	bool attached;
	uint64_t exit_reads_skipped; /* short-lived children's exits, /proc not read */
	uint64_t next_live;
};

/* Small /proc file into buf; length or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

static bool tracepoint_exists(const char *name)
{
	char p[160];
	struct stat st;

	snprintf(p, sizeof(p), "/sys/kernel/tracing/events/%s", name);
	if (stat(p, &st) == 0)
		return true;
	snprintf(p, sizeof(p), "/sys/kernel/debug/tracing/events/%s", name);
	return stat(p, &st) == 0;
}

/* RSS from the raw tracepoint where the kernel has BTF (sm_rss_btf: ~25%
 * less added to every page fault on the machine than the classic one,
 * docs/thermal.md), else the classic tracepoint. */
static struct bpf_program *tp_prog(struct modules_bpf *skel, int i, bool btf)
{
	struct bpf_program *const p[NTP] = {
		btf ? skel->progs.sm_rss_btf : skel->progs.sm_rss,
		skel->progs.sm_oom,
		skel->progs.sm_cpufreq,
		skel->progs.sm_cpufreq_lim,
		skel->progs.sm_thermal,
		skel->progs.sm_trip,
		skel->progs.sm_cdev,
		skel->progs.sm_exec,
	};

	return p[i];
}

static bool rss_btf(const struct sysmon *m)
{
	return m->ctx->kf && m->ctx->kf->btf && !m->rss_btf_refused;
}

static int on_sm_event(void *c, void *data, size_t size)
{
	struct sysmon *m = c;
	const struct ep_sysmon_event *e = data;
	struct thr_event *t;

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case EP_SM_RSS: {
		int64_t sz[4] = { e->v[0], e->v[1], e->v[2], e->v[3] };

		mem_on_rss(&m->mem, e->ts_ns, e->pid, e->mm_id, sz, e->peak);
		/* RSS = file + anon + shmem pages (swap is not resident). */
		if (sz[0] >= 0 && sz[1] >= 0 && sz[3] >= 0)
			cycle_sink_rss(m->ctx->cycles, e->pid, e->ts_ns,
				       (uint64_t)(sz[0] + sz[1] + sz[3]));
		break;
	}
	case EP_SM_OOM: {
		struct mem_oom o = { .ts_ns = e->ts_ns, .pid = e->pid };

		memcpy(o.comm, e->name, sizeof(o.comm) - 1);
		o.total_vm_kb = e->v[0];
		o.anon_rss_kb = e->v[1];
		o.file_rss_kb = e->v[2];
		o.shmem_rss_kb = e->v[3];
		mem_on_oom(&m->mem, &o);
		log_warn("traced process %u (%s) was OOM-killed", e->pid, o.comm);
		break;
	}
	case EP_SM_EXEC:
		mem_on_exec(&m->mem, e->ts_ns, e->pid);
		break;
	case EP_SM_FREQ:
		if ((t = thermal_tl_push(&m->tl, e->ts_ns, THR_EV_FREQ))) {
			t->cpu = (int32_t)e->v[0];
			t->a = e->v[1];
		}
		cycle_sink_freq(m->ctx->cycles, e->ts_ns, (double)e->v[1] / 1000.0);
		break;
	case EP_SM_FREQ_LIMITS:
		if ((t = thermal_tl_push(&m->tl, e->ts_ns, THR_EV_FREQ_LIMITS))) {
			t->cpu = (int32_t)e->v[0];
			t->a = e->v[1];
			t->b = e->v[2];
		}
		break;
	case EP_SM_TEMP:
		if ((t = thermal_tl_push(&m->tl, e->ts_ns, THR_EV_TEMP))) {
			t->id = (int32_t)e->v[0];
			t->a = e->v[1];
			memcpy(t->name, e->name, EP_SM_NAME_LEN - 1);
		}
		break;
	case EP_SM_TRIP:
		if ((t = thermal_tl_push(&m->tl, e->ts_ns, THR_EV_TRIP_CROSSED))) {
			t->id = (int32_t)e->v[0];
			t->idx = (int32_t)e->v[1];
			t->trip_type = (uint16_t)(e->v[2] >= 0 && e->v[2] <= 3 ? e->v[2] : 1);
			memcpy(t->name, e->name, EP_SM_NAME_LEN - 1);
		}
		break;
	case EP_SM_CDEV:
		if ((t = thermal_tl_push(&m->tl, e->ts_ns, THR_EV_CDEV))) {
			t->a = e->v[0];
			memcpy(t->name, e->name, EP_SM_NAME_LEN - 1);
		}
		break;
	}
	return 0;
}

static void sm_close(void *state);

/* Goes on without the tracepoints (RSS from /proc sampling). */
static void drop_bpf(struct sysmon *m)
{
	ring_buffer__free(m->rb);
	m->rb = NULL;
	m->skel = NULL;
	memset(m->tp_ok, 0, sizeof(m->tp_ok));
}

static int open_fail(void **state, struct sysmon *m, int err)
{
	sm_close(m);
	*state = NULL;
	return err;
}

static int sm_open(void **state, const struct rec_ctx *ctx)
{
	struct sysmon *m = calloc(1, sizeof(*m));
	long pages;
	int err, ncpu;

	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	*state = m;
	m->page_size = sysconf(_SC_PAGESIZE);
	if (mem_init(&m->mem, 0))
		return open_fail(state, m, -ENOMEM);
	pages = sysconf(_SC_PHYS_PAGES);
	m->mem.total_ram = pages > 0 && m->page_size > 0 ? (int64_t)pages * m->page_size : -1;
	m->mem.sample_period_ms = SYSMON_SAMPLE_PERIOD_MS;

	err = sysfs_seed_read(ctx->opts->sysfs_root, &m->seed);
	if (err == -ENOMEM)
		return open_fail(state, m, err);
	if (err)
		log_warn("cannot read cpufreq/thermal state under %s: %s", ctx->opts->sysfs_root,
			 strerror(-err));
	m->seed_ok = !err;
	ncpu = libbpf_num_possible_cpus();
	m->ncpu = ncpu > 0 ? (size_t)ncpu : 1;
	for (size_t i = 0; m->seed_ok && i < m->seed.ncpus; i++)
		if ((size_t)m->seed.cpus[i].cpu >= m->ncpu)
			m->ncpu = (size_t)m->seed.cpus[i].cpu + 1;
	if (m->ncpu > THERMAL_MAX_CPUS)
		m->ncpu = THERMAL_MAX_CPUS;
	m->prev = calloc(m->ncpu, sizeof(*m->prev));
	m->cur = calloc(m->ncpu, sizeof(*m->cur));
	if (!m->prev || !m->cur || thermal_tl_init(&m->tl, m->ncpu, 0))
		return open_fail(state, m, -ENOMEM);
	return 0;
}

static int sm_bpf_setup(void *state, struct modules_bpf *skel)
{
	struct sysmon *m = state;

	m->mem.rss_step = (uint64_t)skel->rodata->rss_step;
	for (int i = 0; i < NTP; i++) {
		m->tp_ok[i] = tracepoint_exists(tp_names[i]) && !m->tp_refused[i];
		if (!m->tp_ok[i] && !m->tp_refused[i] && !m->tp_logged)
			log_info("tracepoint %s not in this kernel: its data is unavailable",
				 tp_names[i]);
		bpf_program__set_autoload(tp_prog(skel, i, rss_btf(m)), m->tp_ok[i]);
	}
	bpf_program__set_autoload(rss_btf(m) ? skel->progs.sm_rss : skel->progs.sm_rss_btf, false);
	skel->rodata->sm_page_size = m->page_size > 0 ? m->page_size : 4096;
	skel->rodata->sm_task_btf = m->ctx->kf && m->ctx->kf->have[KFEAT_CURRENT_TASK_BTF];
	m->tp_logged = true;
	return 1;
}

static int sm_bpf_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct sysmon *m = state;

	if (!skel) {
		log_warn("memory/thermal tracepoints unavailable (BPF load: %s); RSS falls back "
			 "to /proc sampling",
			 strerror(-err));
		drop_bpf(m);
		return 0;
	}
	m->skel = skel;
	return 0;
}

/* Each tracepoint's program stands alone: one the kernel refuses costs its
 * own data, not the others' (RSS then comes from /proc sampling, as where
 * the tracepoint is missing). */
static const char *sm_bpf_refused(void *state, const char *prog)
{
	static const char *const lost[NTP] = {
		"RSS from /proc sampling instead of every change; the other tracepoints kept",
		"OOM kills not seen as they happen; the other tracepoints kept",
		"CPU frequency changes not seen; the other tracepoints kept",
		"CPU frequency limits not seen; the other tracepoints kept",
		"thermal zone temperatures from sysfs sampling only; the other tracepoints kept",
		"thermal trip points not seen; the other tracepoints kept",
		"cooling device changes not seen; the other tracepoints kept",
		"exec of a followed process seen only from /proc; the other tracepoints kept",
	};
	/* tp_prog's order. */
	static const char *const names[NTP] = {
		"sm_rss",     "sm_oom",	 "sm_cpufreq", "sm_cpufreq_lim",
		"sm_thermal", "sm_trip", "sm_cdev",    "sm_exec",
	};
	struct sysmon *m = state;

	if (!strcmp(prog, "sm_rss_btf") && !m->rss_btf_refused) {
		m->rss_btf_refused = true;
		return "RSS from the classic tracepoint (costlier per page fault); the other "
		       "tracepoints kept";
	}
	for (int i = 0; i < NTP; i++) {
		if (m->tp_refused[i] || strcmp(prog, names[i]))
			continue;
		m->tp_refused[i] = true;
		return lost[i];
	}
	return NULL;
}

static int sm_add_target(void *state, uint32_t pid)
{
	struct sysmon *m = state;
	struct mem_proc *p = mem_proc(&m->mem, pid, true);

	if (!p)
		return -ENOMEM;
	/* A child followed during the run (not a named process). */
	if (m->attached && !p->added_ns)
		p->added_ns = mono_ns();
	for (size_t i = 0; i < m->nlive; i++)
		if (m->live[i] == pid)
			return 0;
	if (m->nlive == m->cap_live) {
		size_t nc = m->cap_live ? 2 * m->cap_live : 8;
		uint32_t *nv = realloc(m->live, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->live = nv;
		m->cap_live = nc;
	}
	m->live[m->nlive++] = pid;
	return 0;
}

/* -ENOENT: pid is gone (nothing read), else 0. */
static int sample_proc(struct sysmon *m, uint32_t pid, uint64_t now)
{
	const char *root = m->ctx->opts->proc_root ? m->ctx->opts->proc_root : "/proc";
	char path[256], buf[4096];
	int64_t vm = -1, rss = -1, hwm = -1;
	uint64_t minf = 0, majf = 0;
	bool fok = false;
	int n;

	snprintf(path, sizeof(path), "%s/%u/statm", root, pid);
	n = read_small(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return n;
	if (n > 0 && mem_parse_statm(buf, m->page_size, &vm, &rss)) {
		vm = rss = -1;
	}
	snprintf(path, sizeof(path), "%s/%u/stat", root, pid);
	if (read_small(path, buf, sizeof(buf)) > 0)
		fok = mem_parse_stat_faults(buf, &minf, &majf) == 0;
	snprintf(path, sizeof(path), "%s/%u/status", root, pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || mem_parse_status_hwm(buf, &hwm))
		hwm = -1;
	/* An exited process reads as all zeros in statm: not a sample. */
	if (vm == 0 && rss == 0)
		vm = rss = -1;
	mem_on_proc(&m->mem, now, pid, vm, rss, hwm, fok, minf, majf);
	if (rss > 0)
		cycle_sink_rss(m->ctx->cycles, pid, now, (uint64_t)rss);
	return 0;
}

static void sample_busy(struct sysmon *m, uint64_t now)
{
	char *buf = malloc(1 << 20);
	int n;

	if (!buf)
		return;
	n = read_small("/proc/stat", buf, 1 << 20);
	if (n > 0 && thermal_parse_proc_stat(buf, m->cur, m->ncpu) > 0) {
		if (m->prev_ok)
			thermal_tl_busy(&m->tl, m->prev, m->cur, m->ncpu, m->prev_ts, now);
		struct cpu_times *x = m->prev;

		m->prev = m->cur;
		m->cur = x;
		m->prev_ts = now;
		m->prev_ok = true;
	}
	free(buf);
}

static void sample_counters(struct sysmon *m, uint64_t now)
{
	if (!m->seed_ok || !m->seed.throttle_counters_available)
		return;
	if (sysfs_seed_read_counters(m->ctx->opts->sysfs_root, &m->seed) == 0)
		sysfs_seed_counters_to_events(&m->seed, now, &m->tl.ev, &m->tl.n, &m->tl.cap);
}

static int sm_attach(void *state)
{
	struct sysmon *m = state;
	uint64_t now = mono_ns();

	/* The ring is mapped here, after the load: its pages count in the
	 * collector's RSS from the mmap, and the load's kernel-BTF parse (freed
	 * after it) would come on top. */
	if (m->skel) {
		m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.sm_events), on_sm_event, m,
					 NULL);
		if (!m->rb) {
			log_warn("memory/thermal tracepoints unavailable (ring buffer: %s); RSS "
				 "falls back to /proc sampling",
				 strerror(errno));
			drop_bpf(m);
		}
	}
	for (int i = 0; m->skel && i < NTP; i++) {
		if (!m->tp_ok[i])
			continue;
		m->links[i] = bpf_program__attach(tp_prog(m->skel, i, rss_btf(m)));
		if (!m->links[i]) {
			log_warn("cannot attach %s: %s; its data is unavailable", tp_names[i],
				 strerror(errno));
			m->tp_ok[i] = false;
		}
	}
	m->mem.rss_tracepoint = m->tp_ok[TP_RSS];
	m->mem.rss_raw = m->tp_ok[TP_RSS] && rss_btf(m);
	m->mem.oom_tracepoint = m->tp_ok[TP_OOM];
	if (m->seed_ok && sysfs_seed_to_events(&m->seed, 0, &m->tl.ev, &m->tl.n, &m->tl.cap) < 0)
		return -ENOMEM;
	sample_busy(m, now);
	for (size_t i = 0; i < m->nlive; i++)
		sample_proc(m, m->live[i], now);
	m->next_sample = now + SYSMON_SAMPLE_PERIOD_MS * 1000000ull;
	m->next_counter = now + SYSMON_COUNTER_PERIOD_MS * 1000000ull;
	m->attached = true;
	return 0;
}

static void sm_on_jetson(void *ctx, uint64_t ts, const struct jetson_throttle_signal *sig,
			 size_t nsig)
{
	struct sysmon *m = ctx;

	thermal_tl_jetson(&m->tl, ts, sig, nsig);
}

/* Events lost so far (kernel counters + timeline overflow) for the live
 * view and --alert drops>0; the final figures are summed at stop. */
static void live_drops(struct sysmon *m, struct live_metrics *l)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[512], sum = m->tl.dropped;

	if (!m->skel || ncpu <= 0 || ncpu > 512)
		return;
	for (uint32_t k = 0; k < EP_SM_DROP__COUNT; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.sm_drops), &k, v))
			return;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	}
	l->drops[LIVE_SRC_SYSMON] = (int64_t)sum;
}

/* Latest RSS, hottest zone and mean CPU MHz for the live view and alerts
 * (top_live.h): once a second, and only when something shows them. */
static void update_live(struct sysmon *m, uint64_t now)
{
	struct live_metrics *l = m->ctx->live;
	const char *root = m->ctx->opts->sysfs_root;
	double rss = 0, hot = NAN, khz = 0;
	size_t nrss = 0, nkhz = 0;
	char path[512], buf[64];

	if (!l || !cli_live_wanted(m->ctx->opts) || now < m->next_live)
		return;
	m->next_live = now + 1000000000ull;
	l->nrss = l->nzones = l->ncpu_freq = 0;
	for (size_t i = 0; i < m->nlive; i++) {
		struct mem_proc *p = mem_proc(&m->mem, m->live[i], false);

		if (p && p->rss >= 0) {
			rss += (double)p->rss;
			nrss++;
			if (l->nrss < LIVE_MAX_PIDS) {
				l->rss[l->nrss].pid = m->live[i];
				l->rss[l->nrss++].bytes = (double)p->rss;
			}
		}
	}
	l->rss_bytes = nrss ? rss : NAN;
	l->rss_pct = nrss && m->mem.total_ram > 0 ? 100.0 * rss / (double)m->mem.total_ram : NAN;
	for (size_t i = 0; m->seed_ok && i < m->seed.nzones; i++) {
		snprintf(path, sizeof(path), "%s/sys/class/thermal/thermal_zone%d/temp", root,
			 m->seed.zones[i].id);
		if (read_small(path, buf, sizeof(buf)) > 0) {
			double t = strtod(buf, NULL) / 1000.0;

			/* A sensor reading outside this range is broken, not hot. */
			if (t > -60 && t < 250 && (isnan(hot) || t > hot))
				hot = t;
			if (t > -60 && t < 250 && l->nzones < LIVE_MAX_ZONES) {
				l->zones[l->nzones].id = m->seed.zones[i].id;
				snprintf(l->zones[l->nzones].name, sizeof(l->zones[0].name), "%s",
					 m->seed.zones[i].type);
				l->zones[l->nzones++].c = t;
			}
		}
	}
	l->temp_c = hot;
	for (size_t i = 0; m->seed_ok && i < m->seed.ncpus; i++) {
		if (!m->seed.cpus[i].has_cpufreq)
			continue;
		snprintf(path, sizeof(path),
			 "%s/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", root,
			 m->seed.cpus[i].cpu);
		if (read_small(path, buf, sizeof(buf)) > 0) {
			double f = strtod(buf, NULL);

			if (f > 0 && f < 1e8) {
				khz += f;
				nkhz++;
				if (l->ncpu_freq < LIVE_MAX_CPUS) {
					l->cpu_freq[l->ncpu_freq].cpu = m->seed.cpus[i].cpu;
					l->cpu_freq[l->ncpu_freq++].hz = f * 1000.0;
				}
			}
		}
	}
	l->cpu_mhz = nkhz ? khz / (double)nkhz / 1000.0 : NAN;
	live_drops(m, l);
}

static void collect_exited(struct sysmon *m);

static int sm_poll(void *state, uint64_t now)
{
	struct sysmon *m = state;

	if (m->ctx->throttle)
		throttle_feed_drain(m->ctx->throttle, sm_on_jetson, m);

	if (m->rb)
		ring_buffer__consume(m->rb);
	collect_exited(m);
	if (now >= m->next_sample) {
		/* A process gone without its exit event (lost in a full ring,
		 * as in a fork storm) would be read here for the rest of the
		 * run. */
		for (size_t i = 0; i < m->nlive; i++)
			if (sample_proc(m, m->live[i], now) == -ENOENT)
				m->live[i--] = m->live[--m->nlive];
		sample_busy(m, now);
		m->next_sample = now + SYSMON_SAMPLE_PERIOD_MS * 1000000ull;
	}
	if (now >= m->next_counter) {
		sample_counters(m, now);
		m->next_counter = now + SYSMON_COUNTER_PERIOD_MS * 1000000ull;
	}
	update_live(m, now);
	return 0;
}

/* Kernel-side peaks of pid's mms (all of them if pid == 0); entries of
 * exited processes are removed so a reused mm_id starts clean. */
static void collect_peaks(struct sysmon *m, uint32_t pid, bool remove)
{
	int fd;
	uint32_t key, next, *prev = NULL;
	struct ep_sysmon_mm v;

	if (!m->skel)
		return;
	fd = bpf_map__fd(m->skel->maps.sm_mm_states);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (pid && v.tgid != pid)
			continue;
		struct mem_proc *p = mem_proc(&m->mem, v.tgid, false);

		/* Only the current image: an exec'd-away mm is a past image. */
		if (p && v.peak > p->peak_rss && (!p->mm_id || p->mm_id == key))
			p->peak_rss = v.peak;
		if (remove)
			bpf_map_delete_elem(fd, &key);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The peaks of the processes that exited since the last call, and their
 * entries removed, in one walk of sm_mm_states. Walking it at each exit
 * (as collect_peaks(pid) did) cost two system calls per live mm per exit:
 * in a fork storm the map holds hundreds of not yet collected children, and
 * this was most of the collector's CPU (4.5 s of CPU in an 8 s run). A child's
 * entry replaced by another process reusing its mm before the poll loses
 * that child's kernel-side peak (its /proc samples stay). */
static void collect_exited(struct sysmon *m)
{
	uint32_t key, next, *prev = NULL, *del = NULL;
	size_t ndel = 0, cap = 0;
	struct ep_sysmon_mm v;
	int fd;

	if (!m->nexited)
		return;
	if (!m->skel) {
		m->nexited = 0;
		return;
	}
	qsort(m->exited, m->nexited, sizeof(*m->exited), cmp_u32);
	fd = bpf_map__fd(m->skel->maps.sm_mm_states);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v) ||
		    !bsearch(&v.tgid, m->exited, m->nexited, sizeof(*m->exited), cmp_u32))
			continue;
		struct mem_proc *p = mem_proc(&m->mem, v.tgid, false);

		if (p && v.peak > p->peak_rss && (!p->mm_id || p->mm_id == key))
			p->peak_rss = v.peak;
		if (ndel == cap) {
			size_t nc = cap ? 2 * cap : 64;
			uint32_t *nd = realloc(del, nc * sizeof(*nd));

			if (!nd)
				break; /* left in the map: the next walk takes them */
			del = nd;
			cap = nc;
		}
		del[ndel++] = key;
	}
	/* After the walk: deleting the key get_next_key stands on would
	 * restart it from the first key. */
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, &del[i]);
	free(del);
	m->nexited = 0;
}

static void sm_on_exit(void *state, uint32_t pid, uint64_t ts)
{
	struct sysmon *m = state;
	struct mem_proc *p;

	if (m->rb)
		ring_buffer__consume(m->rb);
	/* After the drain: its events may grow (move) the array. */
	p = mem_proc(&m->mem, pid, false);
	/* A child that lived less than a sampling period is not read at its
	 * exit (three /proc files per child of a fork storm); its
	 * kernel-side peak is still collected. */
	if (p && p->added_ns && ts < p->added_ns + SYSMON_CHILD_MIN_LIFE_NS)
		m->exit_reads_skipped++;
	else
		sample_proc(m, pid, ts);
	if (m->nexited == m->cap_exited) {
		size_t nc = m->cap_exited ? 2 * m->cap_exited : 64;
		uint32_t *ne = realloc(m->exited, nc * sizeof(*ne));

		if (ne) {
			m->exited = ne;
			m->cap_exited = nc;
		}
	}
	if (m->nexited < m->cap_exited)
		m->exited[m->nexited++] = pid;
	else
		collect_peaks(m, pid, true);
	p = mem_proc(&m->mem, pid, false);
	if (p)
		p->exited = true;
	for (size_t i = 0; i < m->nlive; i++)
		if (m->live[i] == pid)
			m->live[i--] = m->live[--m->nlive];
}

static void sm_take_links(void *state, struct link_list *out)
{
	struct sysmon *m = state;

	for (int i = 0; i < NTP; i++) {
		link_list_push(out, m->links[i]);
		m->links[i] = NULL;
	}
}

static void sm_stop(void *state)
{
	struct sysmon *m = state;
	const struct run_info *ri = m->ctx->ri;
	uint64_t now = mono_ns();
	struct thr_opts o = { 0 };

	links_destroy_parallel(m->links, NTP);
	if (m->rb)
		ring_buffer__consume(m->rb);
	collect_exited(m);
	collect_peaks(m, 0, false);
	if (m->skel) {
		int fd = bpf_map__fd(m->skel->maps.sm_drops);
		int ncpu = libbpf_num_possible_cpus();
		uint64_t *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;

		for (uint32_t k = 0; v && k < EP_SM_DROP__COUNT; k++)
			if (bpf_map_lookup_elem(fd, &k, v) == 0)
				for (int c = 0; c < ncpu; c++)
					m->drops[k] += v[c];
		free(v);
	}
	sample_busy(m, now);
	sample_counters(m, now);
	/* The Jetson module stops first (rec_modules[] order), so its last
	 * samples are queued by now. */
	if (m->ctx->throttle)
		throttle_feed_drain(m->ctx->throttle, sm_on_jetson, m);
	thermal_tl_flush(&m->tl);
	o.start_ns = ri->start_mono_ns;
	o.end_ns = ri->end_mono_ns > ri->start_mono_ns ? ri->end_mono_ns : now;
	if (throttle_analyze(m->tl.ev, m->tl.n, &o, &m->res))
		log_warn("throttling analysis failed: out of memory");
	m->stopped = true;
}

static int sm_report(void *state, cJSON *root)
{
	struct sysmon *m = state;
	const struct run_info *ri = m->ctx->ri;
	cJSON *mem = mem_report_json(&m->mem, ri->start_mono_ns), *sm, *d, *tp;
	int err;

	if (!mem)
		return -ENOMEM;
	cJSON_AddItemToObject(root, "memory", mem);
	err = thermal_report_json(&m->tl, m->seed_ok ? &m->seed : NULL, &m->res, ri->start_mono_ns,
				  ri->end_mono_ns, root);
	if (err)
		return err;
	sm = cJSON_AddObjectToObject(root, "sysmon");
	d = cJSON_AddObjectToObject(sm, "dropped");
	cJSON_AddNumberToObject(d, "ringbuf_full", (double)m->drops[EP_SM_DROP_RINGBUF_FULL]);
	cJSON_AddNumberToObject(d, "mm_map_full", (double)m->drops[EP_SM_DROP_MM_MAP_FULL]);
	cJSON_AddNumberToObject(d, "timeline_events", (double)m->tl.dropped);
	cJSON_AddNumberToObject(sm, "exit_reads_skipped", (double)m->exit_reads_skipped);
	tp = cJSON_AddObjectToObject(sm, "tracepoints");
	for (int i = 0; i < NTP; i++)
		cJSON_AddBoolToObject(tp, tp_names[i], m->tp_ok[i]);
	return 0;
}

static int sm_trace(void *state, FILE *out, bool *first)
{
	struct sysmon *m = state;
	const struct run_info *ri = m->ctx->ri;
	uint32_t pid = ri->ntargets ? ri->targets[0].pid : 0;
	int err = mem_trace_events(&m->mem, out, first);

	return err ? err : thermal_trace_events(&m->tl, pid, out, first);
}

static bool sm_has_trace(void *state)
{
	struct sysmon *m = state;

	return m->mem.ntl > 0 || thermal_has_trace(&m->tl);
}

static void sm_summary(void *state, FILE *out)
{
	struct sysmon *m = state;
	int64_t peak = -1;
	uint32_t pid = 0;
	uint64_t drops = m->drops[0] + m->drops[1] + m->tl.dropped;

	for (size_t i = 0; i < m->mem.nprocs; i++)
		if (m->mem.procs[i].peak_rss > peak) {
			peak = m->mem.procs[i].peak_rss;
			pid = m->mem.procs[i].pid;
		}
	if (peak >= 0)
		fprintf(out, "memory: peak RSS %.1f MiB (pid %u%s)", (double)peak / 1048576.0, pid,
			m->mem.nprocs > 1 ? ", largest" : "");
	else
		fprintf(out, "memory: peak RSS unavailable");
	if (peak >= 0 && m->mem.total_ram > 0)
		fprintf(out, ", %.1f%% of RAM", 100.0 * (double)peak / (double)m->mem.total_ram);
	if (m->mem.nooms)
		fprintf(out, "; %zu OOM kill(s)", m->mem.nooms);
	fputc('\n', out);
	fprintf(out, "throttling: %s", thr_verdict_name(m->res.verdict));
	if (m->res.verdict == THR_VERDICT_THROTTLED)
		fprintf(out, " (%.1f%% of the run, %zu episode(s))", 100.0 * m->res.share,
			m->res.nepisodes);
	else if (m->res.verdict == THR_VERDICT_UNKNOWN)
		fprintf(out, " (no cpufreq/thermal data on this machine)");
	fputc('\n', out);
	if (drops)
		fprintf(out, "sysmon: %" PRIu64 " event(s) lost (see report.json sysmon.dropped)\n",
			drops);
}

static void sm_close(void *state)
{
	struct sysmon *m = state;

	if (!m)
		return;
	for (int i = 0; i < NTP; i++)
		bpf_link__destroy(m->links[i]);
	ring_buffer__free(m->rb);
	mem_free(&m->mem);
	thermal_tl_free(&m->tl);
	sysfs_seed_free(&m->seed);
	throttle_result_free(&m->res);
	free(m->prev);
	free(m->cur);
	free(m->live);
	free(m->exited);
	free(m);
}

const struct rec_module sysmon_rec_module = {
	.name = "sysmon",
	.open = sm_open,
	.bpf_part = "sm_",
	.bpf_setup = sm_bpf_setup,
	.bpf_loaded = sm_bpf_loaded,
	.bpf_refused = sm_bpf_refused,
	.add_target = sm_add_target,
	.attach = sm_attach,
	.poll = sm_poll,
	.on_exit = sm_on_exit,
	.take_links = sm_take_links,
	.stop = sm_stop,
	.report_json = sm_report,
	.trace_events = sm_trace,
	.has_trace = sm_has_trace,
	.summary = sm_summary,
	.close = sm_close,
};
