// SPDX-License-Identifier: Dual BSD/GPL
/*
 * Cycle boundaries: --cycle / --cycle-every probes (uprobe + uretprobe or a
 * USDT point), the cycle marker's USDT points, CPython's function__entry /
 * function__return filtered by function name (py:FUNCTION, interpreters
 * with the probes when Python frames are off), a hardware watchpoint on
 * FUNCTION's code object (py:FUNCTION otherwise) and CPython's gc__start /
 * gc__done. Each hit becomes one small event; the collector
 * pairs begins and ends per thread (user/cycle_sink.c).
 *
 * Own object and ring, apart from probes.bpf.c: boundaries are a few per
 * cycle, and must not queue behind (or be lost with) 200k spans/s.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events/cycles.h"
#include "counters.h"
#include "targets.h"
#include "usdt_specs.h"

char LICENSE[] __weak SEC("license") = "Dual BSD/GPL";

/* py:FUNCTION: the name, NUL included in py_name_len; 0 = no py: filter. */
const volatile char py_name[EP_CYC_PY_NAME_LEN] = {};
const volatile __u32 py_name_len = 0;

/* 256 KiB = ~5400 events of 48 B: boundaries come a few per cycle; GC
 * events of a Python target at most some thousands per second; the
 * collector drains every 10 ms and stalls up to ~0.3 s at start-up. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} cycle_events SEC(".maps");

/* Open calls of the cycle function per thread, so recursion (or the
 * CPython name matching an inner function of the same name) yields one
 * cycle for the outermost call. LRU: a thread that exits mid-call leaves an
 * entry behind; 8192 threads of traced processes at once is plenty. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u32);
} cycle_depth SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_CYC_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cycle_drops SEC(".maps");
#define EP_DROPS cycle_drops /* count_drop (counters.h) */

static __always_inline bool traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void emit(__u64 pid_tgid, __u32 kind, __s64 arg, __u64 ts)
{
	struct ep_cycle_event *e = bpf_ringbuf_reserve(&cycle_events, sizeof(*e), 0);

	if (!e) {
		count_drop(EP_CYC_DROP_RINGBUF_FULL);
		return;
	}
	e->hdr.type = EP_EV_CYCLE;
	e->hdr.pid = pid_tgid >> 32;
	e->hdr.tid = (__u32)pid_tgid;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = ts;
	e->kind = kind;
	e->_pad = 0;
	e->arg = arg;
	/* The collector drains every 10 ms anyway; GC events can be frequent
	 * enough that a wakeup each would cost the target. */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* Entry side: true when this is the outermost call on the thread. */
static __always_inline bool depth_enter(__u32 tid)
{
	__u32 *d = bpf_map_lookup_elem(&cycle_depth, &tid), one = 1;

	if (d) {
		*d += 1;
		return *d == 1;
	}
	if (bpf_map_update_elem(&cycle_depth, &tid, &one, BPF_ANY))
		count_drop(EP_CYC_DROP_DEPTH_MAP_FULL);
	return true;
}

/* Return side: true when the outermost call returns, or when no entry was
 * seen (a call already running at attach: the collector counts the lone
 * end as unmatched). */
static __always_inline bool depth_leave(__u32 tid)
{
	__u32 *d = bpf_map_lookup_elem(&cycle_depth, &tid);

	if (!d || *d == 0)
		return true;
	*d -= 1;
	return *d == 0;
}

static __always_inline void on_hit(__u64 cookie, bool is_return, __s64 arg)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 kind = EP_CYC_COOKIE_KIND(cookie);

	if (cookie & EP_CYC_COOKIE_DEPTH) {
		if (is_return ? !depth_leave((__u32)id) : !depth_enter((__u32)id))
			return;
	}
	emit(id, kind, arg, ts);
}

/* Linux before 5.15 has no attach cookies: the one function boundary's
 * cookies (--cycle LIB:SYMBOL), set by the collector before load. */
const volatile __u64 cycle_entry_cookie = 0;
const volatile __u64 cycle_return_cookie = 0;

SEC("uprobe")
int cycle_entry_nc(struct pt_regs *ctx)
{
	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	on_hit(cycle_entry_cookie, false, 0);
	return 0;
}

SEC("uretprobe")
int cycle_return_nc(struct pt_regs *ctx)
{
	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	on_hit(cycle_return_cookie, true, 0);
	return 0;
}

SEC("uprobe")
int cycle_entry(struct pt_regs *ctx)
{
	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	on_hit(bpf_get_attach_cookie(ctx), false, 0);
	return 0;
}

SEC("uretprobe")
int cycle_return(struct pt_regs *ctx)
{
	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	on_hit(bpf_get_attach_cookie(ctx), true, 0);
	return 0;
}

/* Does the user string at p equal py_name? Bounded: EP_CYC_PY_NAME_LEN. */
static __always_inline bool py_name_matches(long p)
{
	char buf[EP_CYC_PY_NAME_LEN];
	long n;

	if (!p)
		return false;
	n = bpf_probe_read_user_str(buf, sizeof(buf), (const void *)p);
	if (n <= 0 || (__u32)n != py_name_len)
		return false;
	for (__u32 i = 0; i < EP_CYC_PY_NAME_LEN; i++) {
		if (i >= py_name_len)
			break;
		if (buf[i] != py_name[i])
			return false;
	}
	return true;
}

SEC("usdt")
int cycle_usdt(struct pt_regs *ctx)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 kind = EP_CYC_COOKIE_KIND(cookie);
	long arg = 0;

	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (cookie & EP_CYC_COOKIE_PY) {
		/* function__entry/return(filename, funcname, lineno) */
		if (!py_name_len || bpf_usdt_arg(ctx, 1, &arg) || !py_name_matches(arg))
			return 0;
		arg = 0;
		if (bpf_usdt_arg_cnt(ctx) > 2 && bpf_usdt_arg(ctx, 2, &arg))
			arg = 0;
		on_hit(cookie, kind == EP_CYC_END, arg);
		return 0;
	}
	if (bpf_usdt_arg_cnt(ctx) > 0 && bpf_usdt_arg(ctx, 0, &arg))
		arg = 0;
	on_hit(cookie, kind == EP_CYC_END, arg);
	return 0;
}

/* py:FUNCTION by watchpoint (user/cycles/py_watch.c, docs/cycles.md): each
 * thread of a target has a hardware write watchpoint on the reference count
 * of FUNCTION's code object. CPython takes a reference to the code when a
 * call's frame is set up and drops it when the frame is cleared, so the
 * count goes up at every call of FUNCTION and down at every return, and
 * nothing traps for any other function (the USDT points trap at every
 * Python call). The direction of the change tells a call from a return:
 * the last count seen is kept per process and object, which is exact
 * because threads change counts one at a time under the GIL. A count moved
 * by something else (a reference held elsewhere) looks like a call or a
 * return; the per-thread depth keeps a nested pair inside a cycle. */
const volatile __u32 watch_kind = EP_CYC_BEGIN; /* EP_CYC_ENTRY for --cycle-every */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_CYC_WATCH_MAX);
	__type(key, struct ep_cyc_watch_key);
	__type(value, __s64);
} cycle_watch_rc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_CYC_W__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cycle_watch_stats SEC(".maps");

static __always_inline void watch_stat(__u32 k)
{
	ep_count(&cycle_watch_stats, k, 1);
}

SEC("perf_event")
int cycle_watch(struct bpf_perf_event_data *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	/* A breakpoint event's sample address is the watched address. */
	struct ep_cyc_watch_key k = { .tgid = id >> 32, .addr = ctx->addr };
	__s64 rc, *last;
	bool up;

	if (!traced(k.tgid))
		return 0;
	watch_stat(EP_CYC_W_HITS);
	/* The watchpoint traps after the write: this is the new count. */
	if (bpf_probe_read_user(&rc, sizeof(rc), (const void *)k.addr)) {
		watch_stat(EP_CYC_W_UNREADABLE);
		return 0;
	}
	last = bpf_map_lookup_elem(&cycle_watch_rc, &k);
	if (!last) {
		/* A forked child inherits the watchpoints: its count starts
		 * here. The collector seeds the parent's at arming. */
		bpf_map_update_elem(&cycle_watch_rc, &k, &rc, BPF_NOEXIST);
		watch_stat(EP_CYC_W_FIRST);
		return 0;
	}
	if (*last == EP_CYC_WATCH_DEAD)
		return 0;
	if (rc == *last) {
		watch_stat(EP_CYC_W_UNCHANGED);
		return 0;
	}
	/* 0: the object is freed (a function deleted, the interpreter
	 * shutting down), after which its memory holds anything. A live
	 * object's count is small and positive (3.12+ keeps it in the low
	 * 32 bits; code objects are not immortal). */
	if (rc <= 0 || rc > 0x7fffffff) {
		*last = EP_CYC_WATCH_DEAD;
		watch_stat(EP_CYC_W_DEAD);
		return 0;
	}
	up = rc > *last;
	*last = rc;
	/* Outermost calls only, for --cycle-every too: a recursive
	 * FUNCTION starts one cycle per call from its caller. */
	if (up ? !depth_enter((__u32)id) : !depth_leave((__u32)id))
		return 0;
	if (watch_kind == EP_CYC_ENTRY) {
		if (up)
			emit(id, EP_CYC_ENTRY, 0, ts);
		return 0;
	}
	emit(id, up ? EP_CYC_BEGIN : EP_CYC_END, 0, ts);
	return 0;
}
