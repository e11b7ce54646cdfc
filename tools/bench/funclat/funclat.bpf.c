// SPDX-License-Identifier: Dual BSD/GPL
/*
 * Bench-only reference (tools/bench/probe_overhead.sh): the per-call work
 * of libbpf-tools' funclatency, written for this project. Entry stores the
 * time in a hash keyed by thread id; return looks it up, deletes it and
 * bumps a log2 histogram bucket. No event leaves the kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 target_tgid = 0;

/* Threads inside the function at once: a bench has a handful. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} starts SEC(".maps");

/* log2(ns) buckets, 0..63: every possible latency has one. */
__u64 hist[64] = {};

SEC("uprobe")
int fl_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ts;
	__u32 tid = (__u32)id;

	if (target_tgid && (id >> 32) != target_tgid)
		return 0;
	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&starts, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int fl_return(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *ts = bpf_map_lookup_elem(&starts, &tid), d;
	__u32 b = 0;

	if (!ts)
		return 0;
	d = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&starts, &tid);
	for (int i = 0; i < 63; i++) {
		if (!(d >> 1))
			break;
		d >>= 1;
		b++;
	}
	__sync_fetch_and_add(&hist[b & 63], 1);
	return 0;
}
