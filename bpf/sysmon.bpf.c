// SPDX-License-Identifier: Dual BSD/GPL
/*
 * System monitors beside the CPU sampler: RSS of traced processes
 * (kmem/rss_stat), OOM kills of traced processes (oom/mark_victim), and the
 * machine's CPU frequency and thermal events (power/cpu_frequency*,
 * thermal tracepoints). Frequency and thermal events are per CPU / per zone, not per
 * process, so they are not filtered by target. Design: docs/thermal.md.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events/sysmon.h"
#include "counters.h"
#include "targets.h"

char LICENSE[] __weak SEC("license") = "Dual BSD/GPL";

/* rss_stat fires on every counter change (each page fault): an event goes
 * out only when a mm's RSS moved this far from the last one sent. The peak
 * is kept exactly in sm_mm_states regardless. Set before load. */
const volatile __s64 rss_step = 512 << 10;
/* The counters count pages; the classic tracepoint's record, bytes. */
const volatile __s64 sm_page_size = 4096;
/* bpf_get_current_task_btf (5.11+). */
const volatile bool sm_task_btf = false;
/* Same watermark rule as the CPU sampler: no wakeup per event; a quarter of
 * the ring (~290 events) wakes the collector before its 10 ms drain. */
const volatile __u64 sm_wakeup_watermark = 32 << 10;

/* One entry per traced mm: a process and the image it exec'd into may both
 * be alive for a moment, hence twice the target bound. Userspace deletes
 * entries of exited processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * EP_MAX_TARGETS);
	__type(key, __u32); /* rss_stat mm_id */
	__type(value, struct ep_sysmon_mm);
} sm_mm_states SEC(".maps");

/* Records are ~112 bytes: 128 KiB holds ~1170. RSS events are bounded by
 * rss_step (a process faulting in 1 GB/s sends ~2000/s), frequency ones
 * come per cpufreq policy change and thermal ones at the zones' polling
 * rates, so this holds a 10 ms drain many times over and a 300 ms collector
 * stall at ~3900 events/s. Not larger: a ring's pages are resident in the
 * collector, mapped twice (was 1 MiB: 2 MiB of its RSS for nothing). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 128 << 10);
} sm_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_SM_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} sm_drops SEC(".maps");
#define EP_DROPS sm_drops /* count_drop (counters.h) */

static __always_inline struct ep_sysmon_event *reserve(__u32 type)
{
	struct ep_sysmon_event *e = bpf_ringbuf_reserve(&sm_events, sizeof(*e), 0);

	if (!e) {
		count_drop(EP_SM_DROP_RINGBUF_FULL);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->ts_ns = bpf_ktime_get_ns();
	return e;
}

static __always_inline void submit(struct ep_sysmon_event *e)
{
	__u64 f = bpf_ringbuf_query(&sm_events, BPF_RB_AVAIL_DATA) >= sm_wakeup_watermark
			  ? BPF_RB_FORCE_WAKEUP
			  : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, f);
}

/* A __data_loc string: offset in the low 16 bits, relative to the record. */
static __always_inline void read_loc_str(void *ctx, __u32 loc, char *dst)
{
	bpf_probe_read_kernel_str(dst, EP_SM_NAME_LEN, (char *)ctx + (loc & 0xffff));
}

/* One RSS counter change of mm mm_id (curr: by a thread of the mm's own
 * process), size the member's new value in bytes. */
static __always_inline int on_rss(__u32 mm_id, int member, bool curr, __s64 size)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct ep_sysmon_mm *st;
	struct ep_sysmon_event *e;
	__s64 rss, d;

	if (member < 0 || member >= EP_SM_RSS_MEMBERS)
		return 0;
	st = bpf_map_lookup_elem(&sm_mm_states, &mm_id);
	if (st && curr && st->tgid != tgid) {
		/* The mm's id was reused by another process. */
		bpf_map_delete_elem(&sm_mm_states, &mm_id);
		st = NULL;
	}
	if (!st) {
		struct ep_sysmon_mm init = { .tgid = tgid };
		long err;

		/* Only a traced process touching its own mm starts tracking;
		 * later updates from elsewhere (reclaim, exit) find the entry. */
		if (!curr || !bpf_map_lookup_elem(&targets, &tgid))
			return 0;
		err = bpf_map_update_elem(&sm_mm_states, &mm_id, &init, BPF_NOEXIST);
		if (err && err != -17 /* EEXIST: another CPU won the race */) {
			count_drop(EP_SM_DROP_MM_MAP_FULL);
			return 0;
		}
		st = bpf_map_lookup_elem(&sm_mm_states, &mm_id);
		if (!st)
			return 0;
	}
	/* Threads of one process may race here; each write is a fresh reading
	 * of the kernel's counter, so the worst case is one stale member. */
	st->size[member & (EP_SM_RSS_MEMBERS - 1)] = size;
	rss = st->size[0] + st->size[1] + st->size[3]; /* file + anon + shmem */
	if (rss > st->peak)
		st->peak = rss;
	d = rss - st->last_emit;
	if (d < rss_step && -d < rss_step)
		return 0;
	st->last_emit = rss;
	e = reserve(EP_SM_RSS);
	if (!e)
		return 0;
	e->pid = st->tgid;
	e->mm_id = mm_id;
	e->v[0] = st->size[0];
	e->v[1] = st->size[1];
	e->v[2] = st->size[2];
	e->v[3] = st->size[3];
	e->peak = st->peak;
	submit(e);
	return 0;
}

/* Kernels without BTF (the tracepoint's record has the mm's hashed id, the
 * value and whether the change came from the mm's own process). */
SEC("tracepoint/kmem/rss_stat")
int sm_rss(struct trace_event_raw_rss_stat *ctx)
{
	return on_rss(ctx->mm_id, ctx->member, ctx->curr, ctx->size);
}

/* The counters' layouts: an atomic per member until 6.1, a per-CPU counter
 * (whose approximate total the classic tracepoint reports too) since 6.2. */
struct mm_rss_stat___old {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));
struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));
struct percpu_counter___new {
	__s64 count;
} __attribute__((preserve_access_index));
struct mm_struct___new {
	struct percpu_counter___new rss_stat[4];
} __attribute__((preserve_access_index));

/* The member's counter in pages. Since 6.2 read directly through the
 * trusted pointer (constant offsets: the verifier refuses a variable one);
 * before, by a probe read: 5.10's verifier does not follow the typedef
 * (atomic_long_t) inside the array ("Type 'atomic_long_t' is not a
 * struct"). */
static __always_inline __s64 rss_pages(struct mm_struct *mm, int member)
{
	if (bpf_core_type_exists(struct mm_rss_stat___old)) {
		struct mm_struct___old *o = (void *)mm;

		return BPF_CORE_READ(o, rss_stat.count[member & 3].counter);
	} else {
		struct mm_struct___new *n = (void *)mm;

		if (member == 0)
			return n->rss_stat[0].count;
		if (member == 1)
			return n->rss_stat[1].count;
		if (member == 2)
			return n->rss_stat[2].count;
		return n->rss_stat[3].count;
	}
}

/* With BTF: the raw tracepoint's arguments, not the classic tracepoint's
 * record. rss_stat fires on every page fault of every process on the
 * machine, and the classic tracepoint builds its record (a keyed hash of
 * the mm pointer, the counter) before any program runs. Here a fault of an
 * untraced process costs a comparison and one lookup (docs/thermal.md
 * has both costs). The mm's id is a hash of its address, as the record's
 * is: it only has to be stable while the mm lives. An id reused by an
 * untraced process leaves the stale entry to the collector's cleanup of
 * exited processes. */
SEC("tp_btf/rss_stat")
int BPF_PROG(sm_rss_btf, struct mm_struct *mm, int member)
{
	struct mm_struct *cur;
	__u64 a = 0;
	__s64 pages;
	bool curr;

	if (member < 0 || member >= EP_SM_RSS_MEMBERS)
		return 0;
	if (sm_task_btf)
		cur = bpf_get_current_task_btf()->mm;
	else
		cur = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm);
	curr = cur == mm;
	if (curr) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		if (!bpf_map_lookup_elem(&targets, &tgid))
			return 0;
	}
	/* The address as a number: no arithmetic on the trusted pointer. */
	bpf_probe_read_kernel(&a, sizeof(a), &ctx[0]);
	pages = rss_pages(mm, member);
	if (pages < 0)
		pages = 0; /* percpu_counter_read_positive, as the record */
	return on_rss((__u32)((a * 0x9E3779B97F4A7C15ull) >> 32) | 1, member, curr,
		      pages * sm_page_size);
}

SEC("tracepoint/oom/mark_victim")
int sm_oom(struct trace_event_raw_mark_victim *ctx)
{
	__u32 pid = ctx->pid;
	struct ep_sysmon_event *e;

	/* The victim is picked by process; its pid is the tgid for the usual
	 * single-mm case. */
	if (!bpf_map_lookup_elem(&targets, &pid))
		return 0;
	e = reserve(EP_SM_OOM);
	if (!e)
		return 0;
	e->pid = pid;
	/* Before 6.1 (JetPack 5's 5.10, 6's 5.15) the tracepoint has the pid
	 * only: the sizes stay 0 and the name empty. */
	if (bpf_core_field_exists(ctx->total_vm)) {
		e->v[0] = ctx->total_vm;
		e->v[1] = ctx->anon_rss;
		e->v[2] = ctx->file_rss;
		e->v[3] = ctx->shmem_rss;
	}
	if (bpf_core_field_exists(ctx->__data_loc_comm))
		read_loc_str(ctx, ctx->__data_loc_comm, e->name);
	submit(e);
	return 0;
}

SEC("tracepoint/power/cpu_frequency")
int sm_cpufreq(struct trace_event_raw_cpu *ctx)
{
	struct ep_sysmon_event *e = reserve(EP_SM_FREQ);

	if (!e)
		return 0;
	e->v[0] = ctx->cpu_id;
	e->v[1] = ctx->state;
	submit(e);
	return 0;
}

SEC("tracepoint/power/cpu_frequency_limits")
int sm_cpufreq_lim(struct trace_event_raw_cpu_frequency_limits *ctx)
{
	struct ep_sysmon_event *e = reserve(EP_SM_FREQ_LIMITS);

	if (!e)
		return 0;
	e->v[0] = ctx->cpu_id;
	e->v[1] = ctx->min_freq;
	e->v[2] = ctx->max_freq;
	submit(e);
	return 0;
}

SEC("tracepoint/thermal/thermal_temperature")
int sm_thermal(struct trace_event_raw_thermal_temperature *ctx)
{
	struct ep_sysmon_event *e = reserve(EP_SM_TEMP);

	if (!e)
		return 0;
	e->v[0] = ctx->id;
	e->v[1] = ctx->temp;
	e->v[2] = ctx->temp_prev;
	read_loc_str(ctx, ctx->__data_loc_thermal_zone, e->name);
	submit(e);
	return 0;
}

SEC("tracepoint/thermal/thermal_zone_trip")
int sm_trip(struct trace_event_raw_thermal_zone_trip *ctx)
{
	struct ep_sysmon_event *e = reserve(EP_SM_TRIP);

	if (!e)
		return 0;
	e->v[0] = ctx->id;
	e->v[1] = ctx->trip;
	e->v[2] = ctx->trip_type;
	read_loc_str(ctx, ctx->__data_loc_thermal_zone, e->name);
	submit(e);
	return 0;
}

SEC("tracepoint/thermal/cdev_update")
int sm_cdev(struct trace_event_raw_cdev_update *ctx)
{
	struct ep_sysmon_event *e = reserve(EP_SM_CDEV);

	if (!e)
		return 0;
	e->v[0] = ctx->target;
	read_loc_str(ctx, ctx->__data_loc_type, e->name);
	submit(e);
	return 0;
}

/* A new image means a new mm: the memory figures restart (docs/thermal.md). */
SEC("tracepoint/sched/sched_process_exec")
int sm_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct ep_sysmon_event *e;

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	e = reserve(EP_SM_EXEC);
	if (!e)
		return 0;
	e->pid = tgid;
	bpf_get_current_comm(e->name, sizeof(e->name));
	submit(e);
	return 0;
}
