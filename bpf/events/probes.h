/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probes (bpf/probes.bpf.c, user/probes/): uprobe and USDT call spans.
 */
#ifndef EBPF_PROF_EVENTS_PROBES_H
#define EBPF_PROF_EVENTS_PROBES_H

#include "common.h"

/* Probe ids index user-side tables and the per-CPU count array. */
#define EP_PROBE_MAX 1024
/* Open calls tracked per thread; deeper nesting is counted, not timed. */
#define EP_PROBE_STACK_DEPTH 16
/* SQL text kept per prepare/exec call (bytes, NUL included). */
#define EP_PROBE_SQL_LEN 256

/* The attach cookie: probe id in the low 16 bits, kind and mode above. */
#define EP_PROBE_COOKIE(id, kind, mode) \
	((__u64)(id) | ((__u64)(kind) << 16) | ((__u64)(mode) << 24))
#define EP_PROBE_COOKIE_ID(c)	((__u32)((c)&0xffff))
#define EP_PROBE_COOKIE_KIND(c) ((__u32)(((c) >> 16) & 0xff))
#define EP_PROBE_COOKIE_MODE(c) ((__u32)(((c) >> 24) & 0xff))
/* The probe's class (inference, SQL, other: the cycles' span kinds) + 1 in
 * bits 32..39; 0 = none. A call inside a call of its own class on its
 * thread is flagged EP_SPAN_F_NESTED_CLASS: its time is in the outer one. */
#define EP_PROBE_COOKIE_CLASS(c)	   ((__u32)(((c) >> 32) & 0xff))
#define EP_PROBE_COOKIE_WITH_CLASS(c, cls) ((c) | ((__u64)((cls) + 1) << 32))

/* What the entry program saves and the return program reports. */
enum ep_probe_kind {
	EP_PK_PLAIN = 0,	  /* time only */
	EP_PK_SQL_PREPARE_V2 = 1, /* (db, sql, nbyte, ppStmt, tail) */
	EP_PK_SQL_PREPARE_V3 = 2, /* (db, sql, nbyte, flags, ppStmt, tail) */
	EP_PK_SQL_EXEC = 3,	  /* (db, sql, cb, arg, errmsg) */
	EP_PK_SQL_STMT = 4,	  /* (stmt): step, reset, finalize */
	EP_PK_USDT = 5,		  /* a USDT point: zero-length span */
	/* A pair of USDT points timed as one span (e.g. gc__start/gc__done):
	 * begin pushes a frame like a function entry, end pops the matching
	 * one like a return. Both carry the pair's probe id. */
	EP_PK_USDT_BEGIN = 6, /* arg0 of the begin point -> span obj */
	EP_PK_USDT_END = 7,   /* arg0 of the end point -> span ret */
	/* llama.cpp calls whose parameter struct, passed by value, is copied
	 * from the caller's stack at entry (struct ep_llama_args): */
	EP_PK_LLAMA_MODEL = 8, /* (path, llama_model_params): path and params */
	EP_PK_LLAMA_CTX = 9,   /* (model, llama_context_params) */
	/* llama_set_n_threads(ctx, n_threads, n_threads_batch): blob = the
	 * two ints, overriding the context's parameters from then on */
	EP_PK_LLAMA_THREADS = 10,
	/* llama_decode(ctx, batch): the batch's token count and positions,
	 * read at entry, come back with the span (struct ep_span_llama) */
	EP_PK_LLAMA_DECODE = 11,
	EP_PK__COUNT
};

enum ep_probe_mode {
	EP_PM_LATENCY = 0, /* entry + return: a span per call */
	EP_PM_COUNT = 1,   /* entry only: a per-CPU counter, no event */
};

enum ep_probe_event_type {
	EP_EV_SPAN = 16,       /* struct ep_span */
	EP_EV_SPAN_SQL = 17,   /* struct ep_span_sql */
	EP_EV_LIBLOAD = 18,    /* ld.so said the link map changed: rescan maps */
	EP_EV_LLAMA_ARGS = 19, /* struct ep_llama_args */
	EP_EV_SPAN_LLAMA = 20, /* struct ep_span_llama */
	/* Launch mode: a process stopped itself to be probed (a bare
	 * ep_event_hdr, in the CPU sampler's ring: it wakes the recorder
	 * thread, whose module polls then resume the process). Last of the
	 * probes' range, 16-31. */
	EP_EV_HOLD_WAKE = 31,
};

/* Launch mode: why a process of the launched tree stopped itself
 * (struct ep_hold.held). */
enum ep_hold_why {
	EP_HOLD_NONE = 0,
	EP_HOLD_FORK = 1,  /* a forked child, before its first instruction */
	EP_HOLD_EXEC = 2,  /* a new image, before ld.so (or a static binary) runs */
	EP_HOLD_LDSO = 3,  /* ld.so's link map consistent after a dlopen, dlclose */
	EP_HOLD_START = 4, /* ld.so's link map consistent at start-up (after an exec) */
	EP_HOLD__COUNT
};

/* Launch mode: per process of the launched tree (key: tgid), the hold
 * state shared by bpf/probes.bpf.c (sets held, then stops the process) and
 * the collector (scans and attaches, clears held, resumes it). */
struct ep_hold {
	__u32 calls;	/* ld.so link-map calls since the exec (parity fallback) */
	__u32 held;	/* enum ep_hold_why while stopped for the collector, else 0 */
	__u64 since_ns; /* when it stopped (bpf_ktime_get_ns) */
	__u32 fresh;	/* exec'd, its start-up hold still to come */
	__u32 pad;
};

enum ep_probe_drop {
	EP_PDROP_RINGBUF_FULL = 0,   /* span completed but not delivered */
	EP_PDROP_STACK_FULL = 1,     /* nested deeper than EP_PROBE_STACK_DEPTH */
	EP_PDROP_NO_THREAD_SLOT = 2, /* thread map full: call not timed */
	EP_PDROP_UNMATCHED_RET = 3,  /* return without a matching entry */
	EP_PDROP_LOST_RET = 4,	     /* entry whose return never came (longjmp) */
	EP_PDROP_SQL_READ = 5,	     /* SQL text unreadable */
	EP_PDROP_LLAMA_ARGS = 6,     /* llama.cpp parameters not delivered or unreadable */
	EP_PDROP_NO_COOKIE = 7,	     /* no cookie stored for the probed address (before 5.15) */
	EP_PDROP_LLAMA_BATCH = 8,    /* llama_decode's batch unreadable: tokens unknown */
	EP_PDROP_HOLD_FULL = 9,	     /* launch mode: a process not held (hold map full) */
	EP_PDROP__COUNT
};

#define EP_SPAN_F_NESTED_SAME 1u /* inside another call of the same probe */
#define EP_SPAN_F_SQL_TRUNC   2u /* SQL text cut at EP_PROBE_SQL_LEN - 1 */
/* An SQLite call made by another probed SQLite call (sqlite3_exec runs
 * prepare/step itself): not counted again in per-statement stats. */
#define EP_SPAN_F_NESTED_SQL 4u
/* Inside a call of the same class (EP_PROBE_COOKIE_CLASS) on its thread. */
#define EP_SPAN_F_NESTED_CLASS 8u

struct ep_span {
	struct ep_event_hdr hdr; /* ts_ns: call start */
	__u64 dur_ns;
	__s64 ret; /* return value register */
	__u64 obj; /* sqlite3_stmt* (prepare: *ppStmt after the call) */
	__u32 probe_id;
	__u16 flags; /* EP_SPAN_F_* */
	__u16 depth; /* open probed calls below this one on the thread */
};

struct ep_span_sql {
	struct ep_span span;
	__s32 nbyte;   /* prepare's nByte (<0: up to NUL) */
	__s32 sql_len; /* bytes read, or negative errno */
	char sql[EP_PROBE_SQL_LEN];
};

/* struct llama_batch on LP64: { int32_t n_tokens; llama_token *token;
 * float *embd; llama_pos *pos; int32_t *n_seq_id; llama_seq_id **seq_id;
 * int8_t *logits; }, 56 bytes in the builds of the layout table
 * (user/llama/llama_layout.c). Its first four fields have not moved since
 * llama_decode took a batch (autumn 2023); only the later ones changed
 * (n_seq_id added, the trailing all_pos_0/all_pos_1/all_seq_id removed),
 * so the prefix read here needs no per-version table. llama_decode takes
 * the batch by value: the callee finds it as the set-up parameter structs
 * (struct ep_llama_args), x86_64 at sp + 8 at entry, arm64 through the
 * pointer in x1. The prefix read: */
#define EP_LLAMA_BATCH_N_TOKENS 0
#define EP_LLAMA_BATCH_POS	24
#define EP_LLAMA_BATCH_READ	32
/* Position unknown: batch.pos NULL (llama.cpp numbers the tokens on from
 * the cache itself) or unreadable. Real positions are >= 0. */
#define EP_LLAMA_POS_NONE (-1)

/* The fields read from the batch's first EP_LLAMA_BATCH_READ bytes, shared
 * by the BPF program and the collector's tests of the layout. */
static inline void ep_llama_batch_fields(const __u8 *b, __s32 *n_tokens, __u64 *pos)
{
	__builtin_memcpy(n_tokens, b + EP_LLAMA_BATCH_N_TOKENS, sizeof(*n_tokens));
	__builtin_memcpy(pos, b + EP_LLAMA_BATCH_POS, sizeof(*pos));
}

/* A llama_decode call (EP_PK_LLAMA_DECODE): span.obj is the context. */
struct ep_span_llama {
	struct ep_span span;
	__s32 n_tokens;	 /* batch.n_tokens; -1: the batch was unreadable */
	__s32 pos_first; /* batch.pos[0], or EP_LLAMA_POS_NONE */
	__s32 pos_last;	 /* batch.pos[n_tokens - 1], or EP_LLAMA_POS_NONE */
	__u32 _pad;
};

/* Bytes of a by-value parameter struct copied at a llama.cpp call: more
 * than any llama_context_params / llama_model_params layout we decode uses
 * (user/llama/llama_layout.c). */
#define EP_LLAMA_BLOB_LEN 256
#define EP_LLAMA_PATH_LEN 256

/* Supplementary groups sent with a caller's credentials: more than a
 * desktop user has; beyond, the file is opened with the first ones only
 * (fewer rights, never more). */
#define EP_CRED_GROUPS 32
#define EP_CRED_F_OK   1u /* credentials read */
#define EP_CRED_F_ROOT 2u /* root_dev and root_ino read */

/* A caller's filesystem identity at the call (kernel values, the initial
 * user namespace's ids): a file it named is read with these rights after
 * it exits, when /proc no longer has them. */
struct ep_caller_cred {
	__u32 flags; /* EP_CRED_F_* */
	__u32 fsuid, fsgid;
	__u32 ngroups;	/* the caller's count; groups[] holds the first EP_CRED_GROUPS */
	__u32 root_dev; /* its root directory's superblock s_dev (major << 20 | minor) */
	__u32 _pad;
	__u64 root_ino; /* and inode number */
	__u32 groups[EP_CRED_GROUPS];
};

/* Sent at the entry of an EP_PK_LLAMA_* call. On x86-64 (SysV) a struct
 * larger than 16 bytes passed by value is copied by the caller into its
 * outgoing argument area: at the callee's first instruction it starts at
 * sp + 8, above the return address. On arm64 (AAPCS64) the caller passes
 * a pointer to a copy in x1 (the second argument): blob is read from
 * there. */
struct ep_llama_args {
	struct ep_event_hdr hdr;
	__u32 probe_id;
	__u32 kind;	/* enum ep_probe_kind */
	__s32 blob_len; /* bytes read, or negative errno */
	__s32 path_len; /* EP_PK_LLAMA_MODEL: bytes read incl. NUL, or negative errno */
	__u8 blob[EP_LLAMA_BLOB_LEN];
	char path[EP_LLAMA_PATH_LEN];
	struct ep_caller_cred cred; /* EP_PK_LLAMA_MODEL: who named the path */
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
	__u32 cls; /* EP_PROBE_COOKIE_CLASS */
	/* Stack pointer at entry, as the return will see it: without attach
	 * cookies (before Linux 5.15) a return is matched to its entry by it. */
	__u64 sp;
};

/* Without attach cookies the collector stores each function probe's cookie
 * under the traced process and the probed instruction's address. */
struct ep_probe_ip_key {
	__u32 tgid;
	__u32 _pad;
	__u64 ip;
};

/* Function probes x processes, entries made only without cookies. */
#define EP_PROBE_IP_MAX 4096

struct ep_probe_thread {
	__u32 depth;	/* frames in use */
	__u32 overflow; /* calls entered beyond EP_PROBE_STACK_DEPTH, not timed */
	__u32 tgid;
	__u32 _pad;
	struct ep_probe_frame f[EP_PROBE_STACK_DEPTH];
};

#endif
