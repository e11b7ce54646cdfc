/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records shared by the BPF programs and the collector. This is the only
 * place these layouts are defined; both sides include it.
 */
#ifndef EBPF_PROF_EVENTS_H
#define EBPF_PROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* 127 is the kernel's default perf_event_max_stack; deeper stacks are cut
 * by the kernel anyway, so a larger buffer would only waste ring space. */
#define EP_MAX_STACK_DEPTH 127
#define EP_COMM_LEN 16

/* Sizes the target filter: one entry per traced process (not thread). */
#define EP_MAX_TARGETS 4096

enum ep_event_type {
	EP_EV_SAMPLE = 1,
	EP_EV_FORK = 2, /* a traced process created a new process */
	EP_EV_EXIT = 3, /* the last thread of a traced process exited */
};

/* Why a sample, or part of it, was lost. Indexes the per-CPU drop counters. */
enum ep_drop_reason {
	EP_DROP_RINGBUF_FULL = 0,   /* sample not delivered at all */
	EP_DROP_USER_STACK_ERR = 1, /* delivered without user frames */
	EP_DROP_KERN_STACK_ERR = 2, /* delivered without kernel frames */
	EP_DROP_TARGET_MAP_FULL = 3, /* forked child could not be followed */
	EP_DROP_EVENT_RINGBUF_FULL = 4, /* fork/exit notice lost */
	EP_DROP__COUNT
};

struct ep_event_hdr {
	__u32 type; /* enum ep_event_type */
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

struct ep_sample {
	struct ep_event_hdr hdr;
	char comm[EP_COMM_LEN];
	/* Bytes written by bpf_get_stack, or a negative errno. */
	__s32 kstack_sz;
	__s32 ustack_sz;
	__u32 flags; /* EP_SAMPLE_F_* */
	__u32 _pad;
	__u64 kstack[EP_MAX_STACK_DEPTH];
	__u64 ustack[EP_MAX_STACK_DEPTH];
};

#define EP_SAMPLE_F_USER_MODE 1u /* interrupted in user mode */

struct ep_task_event {
	struct ep_event_hdr hdr;
	__u32 parent_pid; /* EP_EV_FORK: the traced parent's tgid */
	__s32 exit_code;  /* EP_EV_EXIT: task->exit_code */
	char comm[EP_COMM_LEN];
};

#endif

/* ---- probes (bpf/probes.bpf.c, user/probes*.c): uprobe/USDT call spans ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_PROBES_H
#define EBPF_PROF_EVENTS_PROBES_H

/* Probe ids index user-side tables and the per-CPU count array. */
#define EP_PROBE_MAX 1024
/* Open calls tracked per thread; deeper nesting is counted, not timed. */
#define EP_PROBE_STACK_DEPTH 16
/* SQL text kept per prepare/exec call (bytes, NUL included). */
#define EP_PROBE_SQL_LEN 256

/* The attach cookie: probe id in the low 16 bits, kind and mode above. */
#define EP_PROBE_COOKIE(id, kind, mode) \
	((__u64)(id) | ((__u64)(kind) << 16) | ((__u64)(mode) << 24))
#define EP_PROBE_COOKIE_ID(c) ((__u32)((c)&0xffff))
#define EP_PROBE_COOKIE_KIND(c) ((__u32)(((c) >> 16) & 0xff))
#define EP_PROBE_COOKIE_MODE(c) ((__u32)(((c) >> 24) & 0xff))

/* What the entry program saves and the return program reports. */
enum ep_probe_kind {
	EP_PK_PLAIN = 0,	/* time only */
	EP_PK_SQL_PREPARE_V2 = 1, /* (db, sql, nbyte, ppStmt, tail) */
	EP_PK_SQL_PREPARE_V3 = 2, /* (db, sql, nbyte, flags, ppStmt, tail) */
	EP_PK_SQL_EXEC = 3,	/* (db, sql, cb, arg, errmsg) */
	EP_PK_SQL_STMT = 4,	/* (stmt): step, reset, finalize */
	EP_PK_USDT = 5,		/* a USDT point: zero-length span */
	EP_PK__COUNT
};

enum ep_probe_mode {
	EP_PM_LATENCY = 0, /* entry + return: a span per call */
	EP_PM_COUNT = 1,   /* entry only: a per-CPU counter, no event */
};

enum ep_probe_event_type {
	EP_EV_SPAN = 16,     /* struct ep_span */
	EP_EV_SPAN_SQL = 17, /* struct ep_span_sql */
	EP_EV_LIBLOAD = 18,  /* ld.so said the link map changed: rescan maps */
};

enum ep_probe_drop {
	EP_PDROP_RINGBUF_FULL = 0, /* span completed but not delivered */
	EP_PDROP_STACK_FULL = 1,   /* nested deeper than EP_PROBE_STACK_DEPTH */
	EP_PDROP_NO_THREAD_SLOT = 2, /* thread map full: call not timed */
	EP_PDROP_UNMATCHED_RET = 3,  /* return without a matching entry */
	EP_PDROP_LOST_RET = 4,	     /* entry whose return never came (longjmp) */
	EP_PDROP_SQL_READ = 5,	     /* SQL text unreadable */
	EP_PDROP__COUNT
};

#define EP_SPAN_F_NESTED_SAME 1u /* inside another call of the same probe */
#define EP_SPAN_F_SQL_TRUNC 2u	 /* SQL text cut at EP_PROBE_SQL_LEN - 1 */
/* An SQLite call made by another probed SQLite call (sqlite3_exec runs
 * prepare/step itself): not counted again in per-statement stats. */
#define EP_SPAN_F_NESTED_SQL 4u

struct ep_span {
	struct ep_event_hdr hdr; /* ts_ns: call start */
	__u64 dur_ns;
	__s64 ret;  /* return value register */
	__u64 obj;  /* sqlite3_stmt* (prepare: *ppStmt after the call) */
	__u32 probe_id;
	__u16 flags; /* EP_SPAN_F_* */
	__u16 depth; /* open probed calls below this one on the thread */
};

struct ep_span_sql {
	struct ep_span span;
	__s32 nbyte; /* prepare's nByte (<0: up to NUL) */
	__s32 sql_len; /* bytes read, or negative errno */
	char sql[EP_PROBE_SQL_LEN];
};

/* Per-thread stack of open probed calls (BPF map value; the collector reads
 * it at the end to report calls still open). */
struct ep_probe_frame {
	__u64 start_ns;
	__u64 arg0; /* kind-specific: SQL text or stmt pointer */
	__u64 arg1; /* kind-specific: ppStmt */
	__u32 probe_id;
	__u16 flags; /* EP_SPAN_F_* decided at entry */
	__u16 kind;
	__s32 nbyte;
	__u32 _pad;
};

struct ep_probe_thread {
	__u32 depth;	/* frames in use */
	__u32 overflow; /* calls entered beyond EP_PROBE_STACK_DEPTH, not timed */
	__u32 tgid;
	__u32 _pad;
	struct ep_probe_frame f[EP_PROBE_STACK_DEPTH];
};

#endif /* EBPF_PROF_EVENTS_PROBES_H */
