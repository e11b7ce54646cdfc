// SPDX-License-Identifier: Dual BSD/GPL
/*
 * Call spans for user-space functions (uprobe + uretprobe) and USDT points.
 * One entry and one return program serve every probe: each attachment
 * carries its probe id, kind and mode in the attach cookie. Entry pushes a
 * frame on a per-thread stack; return pops the matching frame and streams
 * one span to the collector, so nesting and recursion pair exactly.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events/probes.h"
#include "counters.h"
#include "targets.h"
#include "usdt_specs.h"

char LICENSE[] __weak SEC("license") = "Dual BSD/GPL";

/* 2 MiB holds ~33k spans (56 B + 8 B record header): 164 ms at the 200k
 * spans/s design rate, twice the longest gap between drains measured at
 * load 5-6 on 2 CPUs (75 ms). The drains come from the probes module's own
 * thread (at nice -10), so recorder-thread stalls (first symbolization of
 * a large binary: 300-700 ms here) no longer count; 256 KiB at nice 0
 * dropped 0.15-0.6% at ~100k spans/s under that load, 1 and 4 MiB none
 * (docs/performance.md). 4 MiB would cost 3 MiB more resident memory for
 * margin no measurement asked for. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 2 << 20);
} probe_events SEC(".maps");

/* One stack per thread of a traced process that entered a probe. 8192
 * threads x 528 B = 4.3 MiB; a thread whose slot cannot be created is
 * counted (EP_PDROP_NO_THREAD_SLOT). Entries go away when the thread exits
 * with nothing open. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct ep_probe_thread);
} probe_threads SEC(".maps");

/* Kernels without attach cookies (kfeat): the cookie of each function probe
 * by process and probed address, stored by the collector at attach. No
 * preallocation: empty on every other kernel. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_PROBE_IP_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ep_probe_ip_key);
	__type(value, __u64);
} probe_ip_cookies SEC(".maps");

/* Calls entered, per probe id: exact even when spans are dropped, and the
 * only data in count-only mode. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_PROBE_MAX);
	__type(key, __u32);
	__type(value, __u64);
} probe_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_PDROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} probe_drops SEC(".maps");
#define EP_DROPS probe_drops /* count_drop (counters.h) */

/* A zeroed stack to create a thread's slot from (map values cannot live on
 * the 512-byte BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ep_probe_thread);
} probe_zero SEC(".maps");

/* Set by the collector at the start of its stop: from then on every
 * program here returns at once, so what it reads (counts, open calls, the
 * ring) is final while the links' slow detach (a few grace periods per
 * uprobe) runs in the background (user/probes/probes_module.c pm_stop). */
__u32 probe_off;

static __always_inline bool traced(__u32 tgid)
{
	return !probe_off && bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void count_call(__u32 id)
{
	ep_count(&probe_counts, id, 1);
}

static __always_inline struct ep_probe_thread *thread_slot(__u32 tid, __u32 tgid)
{
	struct ep_probe_thread *t = bpf_map_lookup_elem(&probe_threads, &tid);
	__u32 zero = 0;

	if (t)
		return t;
	t = bpf_map_lookup_elem(&probe_zero, &zero);
	if (!t)
		return NULL;
	if (bpf_map_update_elem(&probe_threads, &tid, t, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&probe_threads, &tid))
		return NULL;
	t = bpf_map_lookup_elem(&probe_threads, &tid);
	if (t)
		t->tgid = tgid;
	return t;
}

static __always_inline bool is_sql_kind(__u32 kind)
{
	return kind >= EP_PK_SQL_PREPARE_V2 && kind <= EP_PK_SQL_STMT;
}

/* The stack pointer the function's return will show: at entry the return
 * address is on top of the stack on x86_64 (popped by ret), in the link
 * register on arm64 (the stack pointer is the same at return). */
static __always_inline __u64 sp_at_return(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return PT_REGS_SP(ctx) + 8;
#else
	return PT_REGS_SP(ctx);
#endif
}

static __always_inline void push_frame_at(struct ep_probe_thread *t, __u32 d, __u32 probe,
					  __u32 kind, __u32 cls, __u64 arg0, __u64 arg1,
					  __s32 nbyte, __u16 flags, __u64 sp)
{
	struct ep_probe_frame *f = &t->f[d & (EP_PROBE_STACK_DEPTH - 1)];

	f->probe_id = probe;
	f->flags = flags;
	f->kind = kind;
	f->nbyte = nbyte;
	f->cls = cls;
	f->arg0 = arg0;
	f->arg1 = arg1;
	f->sp = sp;
	t->depth = d + 1;
	/* Last, so the time spent above is not charged to the call. */
	f->start_ns = bpf_ktime_get_ns();
}

/* The nesting flags of a call pushed above the thread's d frames, as a
 * global function: the verifier checks its 16 iterations once. Inlined, they
 * are checked again for every path into push_frame (each kind of
 * probe_entry's switch): ~6,000 more instructions, ~9 ms of every load.
 * Only probe_entry calls it: it is loaded only with attach cookies (Linux
 * 5.15+), and global functions take pointer arguments from 5.12; the USDT
 * program, which Linux 5.10 loads, keeps the scan inline. */
__noinline int nest_flags(const struct ep_probe_thread *t, __u32 d, __u32 probe, __u32 sql,
			  __u32 cls)
{
	int flags = 0;

	if (!t)
		return 0;
	for (__u32 i = 0; i < EP_PROBE_STACK_DEPTH; i++) {
		if (i >= d)
			break;
		if (t->f[i].probe_id == probe)
			flags |= EP_SPAN_F_NESTED_SAME;
		if (sql && is_sql_kind(t->f[i].kind))
			flags |= EP_SPAN_F_NESTED_SQL;
		if (cls && t->f[i].cls == cls)
			flags |= EP_SPAN_F_NESTED_CLASS;
	}
	return flags;
}

/* Pushes a frame for a call (or a USDT begin point) of `probe` on the
 * thread's stack. The caller has checked the target filter and counted the
 * call. global_scan (a constant): nest_flags() instead of the inline scan. */
static __always_inline void push_frame(__u32 tid, __u32 tgid, __u32 probe, __u32 kind, __u32 cls,
				       __u64 arg0, __u64 arg1, __s32 nbyte, bool global_scan,
				       __u64 sp)
{
	struct ep_probe_thread *t;
	__u32 d;
	__u16 flags;

	t = thread_slot(tid, tgid);
	if (!t) {
		count_drop(EP_PDROP_NO_THREAD_SLOT);
		return;
	}
	d = t->depth;
	if (d >= EP_PROBE_STACK_DEPTH) {
		t->overflow++;
		count_drop(EP_PDROP_STACK_FULL);
		return;
	}
	/* Recursion: the inner call's time is already inside the outer one. */
	if (global_scan) {
		push_frame_at(t, d, probe, kind, cls, arg0, arg1, nbyte,
			      (__u16)nest_flags(t, d, probe, is_sql_kind(kind), cls), sp);
		return;
	}
	/* Inline for Linux before 5.12, which refuses a global function with
	 * a pointer argument ("Arg#0 type PTR ... not supported yet", JetPack
	 * 5's 5.10); passing the frames by value would cost every hit a copy. */
	flags = 0;
	for (__u32 i = 0; i < EP_PROBE_STACK_DEPTH; i++) {
		if (i >= d)
			break;
		if (t->f[i].probe_id == probe)
			flags |= EP_SPAN_F_NESTED_SAME;
		if (is_sql_kind(kind) && is_sql_kind(t->f[i].kind))
			flags |= EP_SPAN_F_NESTED_SQL;
		if (cls && t->f[i].cls == cls)
			flags |= EP_SPAN_F_NESTED_CLASS;
	}
	push_frame_at(t, d, probe, kind, cls, arg0, arg1, nbyte, flags, sp);
}

/* Where a struct passed by value as the second argument starts, at the
 * callee's first instruction (struct ep_llama_args): x86_64 SysV copies a
 * struct of more than 16 bytes into the caller's outgoing arguments, above
 * the return address; arm64 AAPCS64 passes a pointer to a caller's copy. */
static __always_inline __u64 byval_arg2(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return PT_REGS_SP(ctx) + 8;
#else
	return PT_REGS_PARM2(ctx);
#endif
}

/* The caller's filesystem credentials and root, for the collector to read
 * the file it named as it could have: the event may be handled after the
 * process exited, when /proc has nothing left of it. */
static __always_inline void caller_cred(struct ep_caller_cred *c)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	const struct cred *cr = BPF_CORE_READ(task, cred);
	struct group_info *gi;
	struct dentry *root;
	__u32 n;

	__builtin_memset(c, 0, sizeof(*c));
	if (!cr)
		return;
	c->fsuid = BPF_CORE_READ(cr, fsuid.val);
	c->fsgid = BPF_CORE_READ(cr, fsgid.val);
	gi = BPF_CORE_READ(cr, group_info);
	n = gi ? (__u32)BPF_CORE_READ(gi, ngroups) : 0;
	c->ngroups = n;
	if (n > EP_CRED_GROUPS)
		n = EP_CRED_GROUPS;
	n &= 2 * EP_CRED_GROUPS - 1; /* a bound the verifier sees */
	if (n && bpf_probe_read_kernel(c->groups, n * sizeof(__u32), &gi->gid[0]))
		return;
	c->flags = EP_CRED_F_OK;
	root = BPF_CORE_READ(task, fs, root.dentry);
	if (!root)
		return;
	c->root_ino = BPF_CORE_READ(root, d_inode, i_ino);
	c->root_dev = BPF_CORE_READ(root, d_sb, s_dev);
	if (c->root_ino)
		c->flags |= EP_CRED_F_ROOT;
}

/* llama.cpp's loaders take their parameter struct by value: copy it (and
 * the model path) at entry, before the callee may reuse that memory. One
 * event per model or context created: rare, so no per-call cost matters. */
static __always_inline void emit_llama_args(struct pt_regs *ctx, __u64 id, __u32 probe, __u32 kind)
{
	struct ep_llama_args *a = bpf_ringbuf_reserve(&probe_events, sizeof(*a), 0);
	__u64 src;

	if (!a) {
		count_drop(EP_PDROP_LLAMA_ARGS);
		return;
	}
	a->hdr.type = EP_EV_LLAMA_ARGS;
	a->hdr.pid = id >> 32;
	a->hdr.tid = (__u32)id;
	a->hdr.cpu = bpf_get_smp_processor_id();
	a->hdr.ts_ns = bpf_ktime_get_ns();
	a->probe_id = probe;
	a->kind = kind;
	a->path_len = 0;
	a->path[0] = '\0';
	if (kind == EP_PK_LLAMA_THREADS) {
		__s32 v[2] = { (__s32)PT_REGS_PARM2(ctx), (__s32)PT_REGS_PARM3(ctx) };

		__builtin_memcpy(a->blob, v, sizeof(v));
		a->blob_len = sizeof(v);
		bpf_ringbuf_submit(a, 0);
		return;
	}
	src = byval_arg2(ctx);
	a->blob_len = bpf_probe_read_user(a->blob, sizeof(a->blob), (void *)src)
			      ? -14 /* EFAULT */
			      : (__s32)sizeof(a->blob);
	a->path_len = 0;
	a->path[0] = '\0';
	a->cred.flags = 0;
	if (kind == EP_PK_LLAMA_MODEL) {
		a->path_len = (__s32)bpf_probe_read_user_str(a->path, sizeof(a->path),
							     (void *)PT_REGS_PARM1(ctx));
		caller_cred(&a->cred);
	}
	if (a->blob_len < 0)
		count_drop(EP_PDROP_LLAMA_ARGS);
	bpf_ringbuf_submit(a, 0);
}

/* llama_decode(ctx, batch): the batch's token count (frame nbyte, -1 when
 * unreadable) and its first and last positions (frame arg1: low and high
 * 32 bits, EP_LLAMA_POS_NONE when batch.pos is NULL), read at entry: the
 * caller may reuse the arrays once the call returned. */
static __always_inline void llama_batch_at_entry(struct pt_regs *ctx, __s32 *n_tokens, __u64 *pos)
{
	__u8 b[EP_LLAMA_BATCH_READ];
	__s32 n, first = EP_LLAMA_POS_NONE, last = EP_LLAMA_POS_NONE;
	__u64 p;

	*n_tokens = -1;
	*pos = ((__u64)(__u32)last << 32) | (__u32)first;
	if (bpf_probe_read_user(b, sizeof(b), (void *)byval_arg2(ctx))) {
		count_drop(EP_PDROP_LLAMA_BATCH);
		return;
	}
	ep_llama_batch_fields(b, &n, &p);
	*n_tokens = n;
	if (p && n > 0 && n <= (1 << 24)) {
		if (bpf_probe_read_user(&first, sizeof(first), (void *)p))
			first = EP_LLAMA_POS_NONE;
		if (bpf_probe_read_user(&last, sizeof(last), (void *)(p + 4 * (__u64)(n - 1))))
			last = EP_LLAMA_POS_NONE;
	}
	*pos = ((__u64)(__u32)last << 32) | (__u32)first;
}

/* A function's entry, its cookie known. global_scan: as push_frame. */
static __always_inline int on_entry(struct pt_regs *ctx, __u64 cookie, bool global_scan)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, probe = EP_PROBE_COOKIE_ID(cookie);
	__u32 kind = EP_PROBE_COOKIE_KIND(cookie);
	__u64 arg0 = 0, arg1 = 0;
	__s32 nbyte = -1;

	count_call(probe);
	/* Set-up calls send their parameters in either mode: the presets
	 * count them only (an entry probe detaches at half the cost). */
	if (kind == EP_PK_LLAMA_MODEL || kind == EP_PK_LLAMA_CTX || kind == EP_PK_LLAMA_THREADS)
		emit_llama_args(ctx, id, probe, kind);
	if (EP_PROBE_COOKIE_MODE(cookie) == EP_PM_COUNT)
		return 0;
	switch (kind) {
	case EP_PK_SQL_PREPARE_V2:
		arg0 = PT_REGS_PARM2(ctx);
		nbyte = (__s32)PT_REGS_PARM3(ctx);
		arg1 = PT_REGS_PARM4(ctx);
		break;
	case EP_PK_SQL_PREPARE_V3:
		arg0 = PT_REGS_PARM2(ctx);
		nbyte = (__s32)PT_REGS_PARM3(ctx);
		arg1 = PT_REGS_PARM5(ctx);
		break;
	case EP_PK_SQL_EXEC:
		arg0 = PT_REGS_PARM2(ctx);
		break;
	case EP_PK_SQL_STMT:
		arg0 = PT_REGS_PARM1(ctx);
		break;
	case EP_PK_LLAMA_DECODE:
		arg0 = PT_REGS_PARM1(ctx);
		llama_batch_at_entry(ctx, &nbyte, &arg1);
		break;
	}
	push_frame((__u32)id, tgid, probe, kind, EP_PROBE_COOKIE_CLASS(cookie), arg0, arg1, nbyte,
		   global_scan, sp_at_return(ctx));
	return 0;
}

SEC("uprobe")
int probe_entry(struct pt_regs *ctx)
{
	if (!traced((__u32)(bpf_get_current_pid_tgid() >> 32)))
		return 0;
	return on_entry(ctx, bpf_get_attach_cookie(ctx), true);
}

/* Linux before 5.15: the cookie from probe_ip_cookies. The inline nesting
 * scan: such kernels refuse nest_flags (pointer argument). */
SEC("uprobe")
int probe_entry_nc(struct pt_regs *ctx)
{
	struct ep_probe_ip_key k = { .tgid = (__u32)(bpf_get_current_pid_tgid() >> 32) };
	__u64 *cookie;

	if (!traced(k.tgid))
		return 0;
	k.ip = PT_REGS_IP(ctx);
	cookie = bpf_map_lookup_elem(&probe_ip_cookies, &k);
#if defined(__TARGET_ARCH_x86)
	/* In case the breakpoint's address is still ip + 1 (int3's length). */
	if (!cookie) {
		k.ip--;
		cookie = bpf_map_lookup_elem(&probe_ip_cookies, &k);
	}
#endif
	if (!cookie) {
		count_drop(EP_PDROP_NO_COOKIE);
		return 0;
	}
	return on_entry(ctx, *cookie, false);
}

static __always_inline void fill_span(struct ep_span *s, __u64 pid_tgid,
				      const struct ep_probe_frame *f, __u64 now, __s64 ret,
				      __u32 depth)
{
	s->hdr.type = EP_EV_SPAN;
	s->hdr.pid = pid_tgid >> 32;
	s->hdr.tid = (__u32)pid_tgid;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts_ns = f->start_ns;
	s->dur_ns = now - f->start_ns;
	s->ret = ret;
	s->obj = f->arg0;
	s->probe_id = f->probe_id;
	s->flags = f->flags;
	s->depth = depth;
}

/* Pops the frame of `probe` (normally the top one) off the thread's stack;
 * NULL when there is none to pop (counted). *depth: frames left below it. */
/* by_sp: the frame whose entry stack pointer is sp (kernels without
 * cookies, where a return does not know its probe); else the frame of
 * probe. */
static __always_inline struct ep_probe_frame *pop_frame(__u32 tid, __u32 probe, __u32 *depth,
							bool by_sp, __u64 sp)
{
	struct ep_probe_thread *t;
	__u32 d, top;

	t = bpf_map_lookup_elem(&probe_threads, &tid);
	if (!t) {
		count_drop(EP_PDROP_UNMATCHED_RET);
		return NULL;
	}
	/* Calls beyond the stack depth return first (they are innermost). */
	if (t->overflow) {
		t->overflow--;
		return NULL;
	}
	d = t->depth;
	if (d == 0 || d > EP_PROBE_STACK_DEPTH) {
		count_drop(EP_PDROP_UNMATCHED_RET);
		return NULL;
	}
	/* Normally the top frame is ours. If not, frames above ours belong to
	 * calls whose return was skipped (longjmp, exceptions): drop them. */
	top = d - 1;
	for (__u32 i = 0; i < EP_PROBE_STACK_DEPTH; i++) {
		const struct ep_probe_frame *c = &t->f[top & (EP_PROBE_STACK_DEPTH - 1)];

		if (by_sp ? c->sp == sp : c->probe_id == probe)
			break;
		if (top == 0) {
			count_drop(EP_PDROP_UNMATCHED_RET);
			return NULL;
		}
		top--;
		count_drop(EP_PDROP_LOST_RET);
	}
	t->depth = top;
	*depth = top;
	return &t->f[top & (EP_PROBE_STACK_DEPTH - 1)];
}

/* Streams the span of a popped frame. */
static __always_inline void emit_span(__u64 id, const struct ep_probe_frame *f, __u64 now,
				      __s64 ret, __u32 depth)
{
	struct ep_span *s = bpf_ringbuf_reserve(&probe_events, sizeof(*s), 0);

	if (!s) {
		count_drop(EP_PDROP_RINGBUF_FULL);
		return;
	}
	fill_span(s, id, f, now, ret, depth);
	/* The collector drains every 10 ms on its own; a wakeup per span
	 * would cost the traced thread more than the span. */
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
}

/* A function's return, matched to its entry by probe or by stack pointer. */
static __always_inline int on_return(struct pt_regs *ctx, __u64 cookie, bool by_sp)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, probe = EP_PROBE_COOKIE_ID(cookie);
	struct ep_probe_frame *f;
	__s64 ret = (__s64)PT_REGS_RC(ctx);
	__u32 top = 0;

	if (!traced(tgid))
		return 0;
	f = pop_frame((__u32)id, probe, &top, by_sp, PT_REGS_SP(ctx));
	if (!f)
		return 0;

	if (f->kind == EP_PK_SQL_PREPARE_V2 || f->kind == EP_PK_SQL_PREPARE_V3 ||
	    f->kind == EP_PK_SQL_EXEC) {
		struct ep_span_sql *s = bpf_ringbuf_reserve(&probe_events, sizeof(*s), 0);
		__u64 stmt = 0;
		long n;

		if (!s) {
			count_drop(EP_PDROP_RINGBUF_FULL);
			return 0;
		}
		fill_span(&s->span, id, f, now, ret, top);
		s->span.hdr.type = EP_EV_SPAN_SQL;
		if (f->arg1 && bpf_probe_read_user(&stmt, sizeof(stmt), (void *)f->arg1))
			stmt = 0;
		s->span.obj = stmt;
		s->nbyte = f->nbyte;
		n = bpf_probe_read_user_str(s->sql, sizeof(s->sql), (void *)f->arg0);
		if (n < 0) {
			count_drop(EP_PDROP_SQL_READ);
			s->sql[0] = '\0';
		} else if (n == sizeof(s->sql)) {
			s->span.flags |= EP_SPAN_F_SQL_TRUNC;
		}
		s->sql_len = (__s32)n;
		bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
		return 0;
	}
	if (f->kind == EP_PK_LLAMA_DECODE) {
		struct ep_span_llama *s = bpf_ringbuf_reserve(&probe_events, sizeof(*s), 0);

		if (!s) {
			count_drop(EP_PDROP_RINGBUF_FULL);
			return 0;
		}
		fill_span(&s->span, id, f, now, ret, top);
		s->span.hdr.type = EP_EV_SPAN_LLAMA;
		s->n_tokens = f->nbyte;
		s->pos_first = (__s32)(__u32)f->arg1;
		s->pos_last = (__s32)(__u32)(f->arg1 >> 32);
		s->_pad = 0;
		bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
		return 0;
	}
	emit_span(id, f, now, ret, top);
	return 0;
}

SEC("uretprobe")
int probe_return(struct pt_regs *ctx)
{
	return on_return(ctx, bpf_get_attach_cookie(ctx), false);
}

/* Linux before 5.15: no cookie to say which probe returns; its frame is the
 * one pushed at the same stack pointer. */
SEC("uretprobe")
int probe_return_nc(struct pt_regs *ctx)
{
	return on_return(ctx, 0, true);
}

/* Every USDT attachment: a single point (a zero-length span carrying its
 * first argument), or the begin or end point of a pair, paired per thread
 * exactly like a function's entry and return. */
SEC("usdt")
int probe_usdt(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, probe = EP_PROBE_COOKIE_ID(cookie);
	__u32 kind = EP_PROBE_COOKIE_KIND(cookie);
	struct ep_probe_frame *f;
	struct ep_span *s;
	__u32 top = 0;
	long arg = 0;

	if (!traced(tgid))
		return 0;
	if (bpf_usdt_arg_cnt(ctx) > 0 && bpf_usdt_arg(ctx, 0, &arg))
		arg = 0;
	if (kind == EP_PK_USDT_END) {
		f = pop_frame((__u32)id, probe, &top, false, 0);
		if (f)
			emit_span(id, f, now, arg, top);
		return 0;
	}
	count_call(probe);
	if (EP_PROBE_COOKIE_MODE(cookie) == EP_PM_COUNT)
		return 0;
	if (kind == EP_PK_USDT_BEGIN) {
		push_frame((__u32)id, tgid, probe, kind, EP_PROBE_COOKIE_CLASS(cookie), (__u64)arg,
			   0, -1, false, 0);
		return 0;
	}
	s = bpf_ringbuf_reserve(&probe_events, sizeof(*s), 0);
	if (!s) {
		count_drop(EP_PDROP_RINGBUF_FULL);
		return 0;
	}
	s->hdr.type = EP_EV_SPAN;
	s->hdr.pid = tgid;
	s->hdr.tid = (__u32)id;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts_ns = now;
	s->dur_ns = 0;
	s->ret = arg;
	s->obj = 0;
	s->probe_id = probe;
	s->flags = 0;
	s->depth = 0;
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Launch mode: every process of the launched tree is held (stopped, by a
 * SIGSTOP to itself) where the collector must look at it before it runs
 * on, and resumed by the collector (SIGCONT) once its maps are scanned and
 * every module attached there (user/probes/probes_hold.c):
 *  - a forked child, before its first instruction (EP_HOLD_FORK): per-pid
 *    uprobes do not follow a fork (the kernel's filter wants the probed
 *    process's own mm, and removes the breakpoints the child inherited at
 *    its first hit), so a child that runs on in its parent's image would
 *    call the probed functions unseen until attached;
 *  - a new image after exec, before ld.so runs (EP_HOLD_EXEC), unless it
 *    is dynamically linked and the system ld.so is hooked for every
 *    process (ldso_global: its start-up hold comes before any of its
 *    code runs): a static binary (no ld.so call to come) gets its probes
 *    here, and without the global hook the collector hooks its ld.so;
 *  - each time ld.so's link map is consistent, at start-up (EP_HOLD_START)
 *    (all needed libraries mapped, no constructor nor main run yet) and
 *    after each dlopen/dlclose (the new objects mapped, their constructors
 *    not run yet): a program that loads libllama with dlopen (ctypes, a
 *    Node addon) and sets up its model or starts its cycles at once would
 *    otherwise run them unprobed until the next poll and scan.
 * The state is per process (probe_holds, by tgid), so several may be held at
 * once. The collector walks the map when hold_gen moved, and clears held
 * before it resumes the process (a stopped process cannot set it again in
 * between). Off (hold_tree 0) in --pid mode and once the run stops.
 *
 * ld.so calls _dl_debug_state twice per change (RT_ADD, then RT_CONSISTENT
 * once the objects are mapped); the stop must come at the second. A dlopen
 * failing after it began mapping makes an odd call (RT_ADD, RT_DELETE,
 * RT_CONSISTENT: a library whose DT_NEEDED is missing, as an optional
 * native module in Node), so where the collector found ld.so's _r_debug
 * (dl_rdebug_delta: &_r_debug - &_dl_debug_state in the system ld.so) the
 * hold follows its r_state, checked by r_brk (the debugger's breakpoint
 * address, _dl_debug_state itself); elsewhere, the parity of the calls
 * counted since the exec. */
__u32 hold_tree;
/* The system ld.so is hooked for every process (the collector's
 * ldso_hook_global): a dynamically linked program exec'd is held at its
 * start-up only, not at its exec too. */
__u32 ldso_global;
__s64 dl_rdebug_delta;
__u64 hold_gen;
/* Set when probe_wake is the CPU sampler's ring (the recorder thread
 * waits on it between its polls): a hold then costs the process the
 * collector's scan, not the rest of its 10 ms poll period. */
__u32 hold_wake;

/* The CPU sampler's ring, shared by the collector (bpf_map__reuse_fd);
 * this size only where it is not. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} probe_wake SEC(".maps");

/* One entry per process of the tree that ld.so reported or that was held
 * (the targets map bounds the tree at EP_MAX_TARGETS; 1024 live ones
 * suffice for the launchers and worker pools this is for, 32 KiB):
 * created at its first hold or ld.so call, deleted at its exit. A process
 * that finds it full runs on unheld (EP_PDROP_HOLD_FULL): its probes come
 * from the next scan, as in --pid mode. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ep_hold);
} probe_holds SEC(".maps");

/* glibc's struct r_debug (<link.h>), 64-bit. */
struct ep_r_debug {
	__s32 r_version;
	__u64 r_map;
	__u64 r_brk;
	__s32 r_state; /* RT_CONSISTENT 0, RT_ADD 1, RT_DELETE 2 */
	__u64 r_ldbase;
};

static __always_inline struct ep_hold *hold_entry(__u32 tgid)
{
	struct ep_hold *h = bpf_map_lookup_elem(&probe_holds, &tgid), z = {};

	if (h)
		return h;
	if (bpf_map_update_elem(&probe_holds, &tgid, &z, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&probe_holds, &tgid)) {
		count_drop(EP_PDROP_HOLD_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&probe_holds, &tgid);
}

/* Wakes the recorder thread up (a lost wake-up costs the wait for its
 * next poll only). */
static __always_inline void wake_collector(__u64 ts)
{
	struct ep_event_hdr *e;

	if (!hold_wake)
		return;
	e = bpf_ringbuf_reserve(&probe_wake, sizeof(*e), 0);
	if (!e)
		return;
	e->type = EP_EV_HOLD_WAKE;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = ts;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* Stops the current process until the collector resumes it. */
static __always_inline void hold_self(struct ep_hold *h, __u32 why)
{
	h->since_ns = bpf_ktime_get_ns();
	h->held = why;
	__sync_fetch_and_add(&hold_gen, 1);
	bpf_send_signal(19 /* SIGSTOP */);
	wake_collector(h->since_ns);
}

/* Asks for a rescan of the current process's maps (EP_EV_LIBLOAD, read by
 * the probes' drain) without stopping it. */
static __always_inline void ask_rescan(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ep_event_hdr *e = bpf_ringbuf_reserve(&probe_events, sizeof(*e), 0);

	if (!e) {
		count_drop(EP_PDROP_RINGBUF_FULL);
		return;
	}
	e->type = EP_EV_LIBLOAD;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, 0);
}

/* Whether the current process's new image has an ELF interpreter (AT_BASE
 * in its auxiliary vector, filled before the exec tracepoint runs). */
static __always_inline bool exec_dynamic(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	unsigned long av[2];

	if (!mm)
		return false;
	/* AT_BASE is among the first ten entries (fs/binfmt_elf.c). */
	for (int i = 0; i < 20; i++) {
		if (bpf_core_read(av, sizeof(av), &mm->saved_auxv[2 * i]))
			return false;
		if (av[0] == 0 /* AT_NULL */)
			return false;
		if (av[0] == 7 /* AT_BASE */)
			return av[1] != 0;
	}
	return false;
}

/* Should the process stop at this call of _dl_debug_state? */
static __always_inline bool dl_hold_here(struct pt_regs *ctx, struct ep_hold *h)
{
	struct ep_r_debug r;
	__u64 fn = PT_REGS_IP(ctx);
	bool odd = ++h->calls & 1;

	/* The uprobe's ip is the function's address (x86_64: the kernel
	 * rewinds it over the breakpoint before the handlers run). */
	if (!dl_rdebug_delta ||
	    bpf_probe_read_user(&r, sizeof(r), (void *)(fn + dl_rdebug_delta)) || r.r_brk != fn)
		return !odd;
	return r.r_state == 0;
}

/* ld.so calls _dl_debug_state() whenever its link map changed (startup,
 * dlopen, dlclose): the cue to look for newly mapped libraries now instead
 * of at the next periodic rescan, and in launch mode to hold the process. */
SEC("uprobe")
int probe_ldso(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ep_event_hdr *e;
	struct ep_hold *h;

	if (!traced(id >> 32))
		return 0;
	if (hold_tree && (h = hold_entry(id >> 32)) && dl_hold_here(ctx, h)) {
		hold_self(h, h->fresh ? EP_HOLD_START : EP_HOLD_LDSO);
		h->fresh = 0;
	}
	e = bpf_ringbuf_reserve(&probe_events, sizeof(*e), 0);
	if (!e) {
		count_drop(EP_PDROP_RINGBUF_FULL);
		return 0;
	}
	e->type = EP_EV_LIBLOAD;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Launch mode: a traced process's new image, before its first instruction
 * (the signal is taken on the way back to user space). The link-map calls
 * are counted afresh. Twice, as the thread-exit programs below. */
static __always_inline int hold_exec(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct ep_hold *h;

	if (!hold_tree || !traced(tgid) || !(h = hold_entry(tgid)))
		return 0;
	h->calls = 0;
	h->fresh = 1;
	/* Its start-up hold (in the system ld.so, hooked for every process)
	 * comes before any of its code runs; meanwhile a rescan, should it
	 * use another ld.so, to hook that one (held from its next link-map
	 * change). Not dynamically linked: no ld.so call to hold it at. */
	if (ldso_global && exec_dynamic()) {
		ask_rescan();
		wake_collector(bpf_ktime_get_ns());
		return 0;
	}
	hold_self(h, EP_HOLD_EXEC);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(probe_exec, struct task_struct *task)
{
	return hold_exec();
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(probe_exec_raw, struct task_struct *task)
{
	return hold_exec();
}

/* Launch mode: a forked child, in its own context on its way out of the
 * fork (the syscall's exit tracepoint runs in the child too, returning 0),
 * before its first instruction. A child sharing its parent's memory (vfork,
 * posix_spawn) is not held: the parent's uprobes see its calls (the kernel
 * filters them by mm), and it execs at once (held then). Nor a new thread
 * (pid != tgid). Linux on arm64 does not run this tracepoint in the child:
 * there, a forked child is probed at the collector's next poll, as in
 * --pid mode. */
static __always_inline int hold_fork(long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task;
	struct ep_hold *h;

	if (ret != 0 || !hold_tree || (__u32)id != id >> 32 || !traced(id >> 32))
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, mm) == BPF_CORE_READ(task, real_parent, mm))
		return 0;
	h = hold_entry(id >> 32);
	if (h)
		hold_self(h, EP_HOLD_FORK);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_clone")
int probe_fork_clone(struct trace_event_raw_sys_exit *ctx)
{
	return hold_fork(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_clone3")
int probe_fork_clone3(struct trace_event_raw_sys_exit *ctx)
{
	return hold_fork(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_fork")
int probe_fork_fork(struct trace_event_raw_sys_exit *ctx)
{
	return hold_fork(ctx->ret);
}

/* A thread that leaves with nothing open frees its slot; one that leaves
 * mid-call keeps it, so the collector reports those calls as open. Twice,
 * as profile.bpf.c's lifecycle programs: raw_tp on kernels without BTF. */
static __always_inline int thread_exit(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);
	struct ep_probe_thread *t;

	if (!traced(tgid))
		return 0;
	t = bpf_map_lookup_elem(&probe_threads, &tid);
	if (t && t->depth == 0 && t->overflow == 0)
		bpf_map_delete_elem(&probe_threads, &tid);
	/* The process's last thread (do_exit() decrements signal->live
	 * before this tracepoint): its hold state goes with it. */
	if (hold_tree && BPF_CORE_READ(task, signal, live.counter) == 0)
		bpf_map_delete_elem(&probe_holds, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(probe_thread_exit, struct task_struct *task)
{
	return thread_exit(task);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(probe_thread_exit_raw, struct task_struct *task)
{
	return thread_exit(task);
}
