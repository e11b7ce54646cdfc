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
#define EP_COMM_LEN	   16

/* Sizes the target filter: one entry per traced process (not thread). */
#define EP_MAX_TARGETS 4096

enum ep_event_type {
	EP_EV_SAMPLE = 1,
	EP_EV_FORK = 2, /* a traced process created a new process */
	EP_EV_EXIT = 3, /* the last thread of a traced process exited */
	EP_EV_EXEC = 4, /* a traced process replaced its image: new maps, new comm */
	/* A traced process mapped executable file pages (dlopen): --unwind
	 * cfi-kernel loads their tables now rather than at the first miss. */
	EP_EV_MMAP_EXEC = 5,
};

/* Why a sample, or part of it, was lost. Indexes the per-CPU drop counters. */
enum ep_drop_reason {
	EP_DROP_RINGBUF_FULL = 0,	/* sample not delivered at all */
	EP_DROP_USER_STACK_ERR = 1,	/* delivered without user frames */
	EP_DROP_KERN_STACK_ERR = 2,	/* delivered without kernel frames */
	EP_DROP_TARGET_MAP_FULL = 3,	/* forked child could not be followed */
	EP_DROP_EVENT_RINGBUF_FULL = 4, /* fork/exit notice lost */
	EP_DROP_USTACK_COPY_ERR = 5,	/* window for CFI unwinding not copied */
	EP_DROP_UREGS_ERR = 6,		/* no user registers: no CFI unwinding */
	EP_DROP__COUNT
};

struct ep_event_hdr {
	__u32 type; /* enum ep_event_type */
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

/* Largest user-stack window a sample may carry (--stack-bytes). Bounded by
 * the per-CPU scratch value (the kernel caps those at 32 KiB) and by ring
 * traffic: 16 KiB at 999 Hz on 2 CPUs is 32 MB/s. perf's default is 8 KiB. */
#define EP_MAX_STACK_BYTES 16384
/* The window is copied in chunks of this size; a chunk that cannot be read
 * (the top of the stack mapping) is retried in EP_STACK_SUBCHUNK pieces, so
 * a window crossing the end of the stack keeps all but < 64 readable bytes. */
#define EP_STACK_CHUNK	  1024
#define EP_STACK_SUBCHUNK 64

/* User registers a CFI unwinder starts from (x86_64: rip, rsp, rbp). */
enum { EP_UREG_IP = 0, EP_UREG_SP = 1, EP_UREG_FP = 2, EP_UREG__COUNT };

struct ep_sample {
	struct ep_event_hdr hdr;
	char comm[EP_COMM_LEN];
	/* Bytes written by bpf_get_stack, or a negative errno. */
	__s32 kstack_sz;
	__s32 ustack_sz;
	__u32 flags; /* EP_SAMPLE_F_* */
	/* Bytes of user stack copied from uregs[EP_UREG_SP] upward; they
	 * follow the user frames in stack[]. 0 without a window. */
	__u32 ustack_copy;
	__u64 uregs[EP_UREG__COUNT]; /* valid with EP_SAMPLE_F_UREGS */
	/* Kernel frames (kstack_sz bytes, leaf first), then user frames
	 * (ustack_sz bytes, leaf first), then ustack_copy bytes of user stack.
	 * Only the used part travels through the ring: a frame-pointer sample
	 * is a few hundred bytes, not 18 KiB. */
	__u64 stack[2 * EP_MAX_STACK_DEPTH + EP_MAX_STACK_BYTES / 8];
};
#define EP_SAMPLE_HDR_SIZE ((unsigned long)&((struct ep_sample *)0)->stack)

#define EP_SAMPLE_F_USER_MODE 1u /* interrupted in user mode */
#define EP_SAMPLE_F_UREGS     2u /* uregs hold the user registers */
/* A uretprobe trampoline address in the window (or ip) was replaced by the
 * original return address. */
#define EP_SAMPLE_F_URETPROBE_FIXED 4u
/* User frames come from the in-kernel CFI walker (bpf/uwalk.h): return
 * addresses already point at their call (minus 1), ustack_copy is 0, and
 * bits 8-15 of flags say why the walk ended (enum ep_uw_end). */
#define EP_SAMPLE_F_KWALK	8u
#define EP_SAMPLE_UW_END_SHIFT	8
#define EP_SAMPLE_UW_END(flags) (((flags) >> EP_SAMPLE_UW_END_SHIFT) & 0xff)

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

/* Bytes of a by-value parameter struct copied at a llama.cpp call: more
 * than any llama_context_params / llama_model_params layout we decode uses
 * (user/llama/llama_layout.c). */
#define EP_LLAMA_BLOB_LEN 256
#define EP_LLAMA_PATH_LEN 256

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

#endif /* EBPF_PROF_EVENTS_PROBES_H */

/* ---- sched (bpf/sched.bpf.c, user/sched/sched_module.c, user/sched/sched_view.c): on/off-CPU ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_SCHED_H
#define EBPF_PROF_EVENTS_SCHED_H

/* Where an off-CPU interval of a thread goes. The per-thread off_ns[]
 * entries add up to the thread's whole off-CPU time. */
enum ep_off_reason {
	EP_OFF_SLEEP = 0,     /* TASK_INTERRUPTIBLE: waiting for an event, until woken */
	EP_OFF_BLOCKED = 1,   /* TASK_UNINTERRUPTIBLE (D): disk I/O, page-in, some locks */
	EP_OFF_PREEMPTED = 2, /* switched out while still runnable, until back on CPU */
	EP_OFF_RUNQ = 3,      /* woken (or new), waiting for a CPU */
	EP_OFF_OTHER = 4,     /* stopped, traced, parked, frozen */
	EP_OFF__COUNT
};

/* Run-queue latency per thread, in the kernel: log-linear buckets, 8 per
 * power of two (half a bucket = 6.25% error), values >= 2^36 ns (69 s) in
 * the last one; 272 u32 = 1088 bytes per thread. */
#define EP_SCHED_HIST_SUB_BITS 3
#define EP_SCHED_HIST_MAX_EXP  35
#define EP_SCHED_HIST_BUCKETS \
	((EP_SCHED_HIST_MAX_EXP - EP_SCHED_HIST_SUB_BITS + 2) << EP_SCHED_HIST_SUB_BITS)

/* Threads of traced processes followed at once (all processes together).
 * ML jobs run tens to a few hundred threads per process; full: counted. */
#define EP_SCHED_MAX_THREADS 8192

enum ep_sched_tstate {
	EP_TS_SEEDED = 0, /* entered by the collector from /proc before attach */
	EP_TS_ON = 1,
	EP_TS_OFF = 2,
	EP_TS_DEAD = 3, /* switched out for the last time */
};

struct ep_sched_thread {
	__u64 last_ts; /* start of the current on- or off-CPU interval */
	__u64 out_ts;  /* switch-out that began the current off-CPU episode */
	__u64 on_ns;
	__u64 off_ns[EP_OFF__COUNT];
	__u64 nvcsw;  /* switched out blocking (sleep, D, other) */
	__u64 nivcsw; /* switched out while runnable */
	__u64 rq_count, rq_sum_ns, rq_max_ns;
	__u64 episodes_long; /* off-CPU episodes >= the stack threshold */
	__u32 pid;	     /* tgid */
	__u8 state;	     /* enum ep_sched_tstate */
	__u8 reason;	     /* enum ep_off_reason of the current off interval */
	__u8 out_reason;     /* reason at the switch-out of the current episode */
	__u8 ustack_ok;	     /* the user stack slot holds this episode's stack */
	__u8 last_long;	     /* the last blocking episode was >= the stack threshold */
	__u8 walk_ctr;	     /* blocking switch-outs since the last sampled stack walk */
	__u8 out_site;	     /* wait site (ep_ustack_key >> 58) of the current episode */
	__u8 out_site2;	     /* the same site's second bit (key >> 52 & 63) */
	/* Switches the kernel did not report, inferred from the state (a
	 * switch-out of a thread believed off-CPU; see ep_acct_missed). */
	__u32 missed;
	/* The task's own run time (se.sum_exec_runtime) at its last event,
	 * plus 1; 0 when unknown. */
	__u64 rt_mark;
	/* Bit per wait site, under two hashes (a site is two bits, one in each
	 * pair): its last blocking episode was long; a stack was walked there. */
	__u64 long_sites, long_sites2;
	__u64 seen_sites, seen_sites2;
	__u64 ustack_key;	/* wait site of the stack in the thread's slot (0: none) */
	char comm[EP_COMM_LEN]; /* at creation, then at exit (the collector reads /proc for
				 * threads alive at the end) */
	__u32 rq_hist[EP_SCHED_HIST_BUCKETS];
};

/* User stack taken at a blocking switch-out, kept until the switch-in says
 * whether the episode was long enough to report. */
/* User frames kept per off-CPU stack: deeper than the sampler's 127 of
 * bpf_get_stack, since Python and Node block with deep native stacks (the
 * walker goes to EP_UW_MAX_FRAMES; what does not fit is marked truncated).
 * 2 KiB per thread that blocked, EP_SCHED_MAX_THREADS of them. */
#define EP_OFFCPU_USER_FRAMES 256

struct ep_sched_ustack {
	__s32 size;  /* bytes from bpf_get_stack, or negative errno */
	__u16 kwalk; /* walked by bpf/uwalk.h: return addresses are already - 1 */
	__u16 trunc; /* the walk had more frames than ips holds */
	__u64 ips[EP_OFFCPU_USER_FRAMES];
};

enum ep_sched_event_type {
	EP_EV_OFFCPU = 32, /* struct ep_offcpu */
};

/* One off-CPU episode >= the threshold; hdr.ts_ns is its switch-in. Only
 * the frames used are sent: the record is offsetof(ips) + the kernel and
 * user bytes (a few hundred bytes typically, not 2 KiB). */
struct ep_offcpu {
	struct ep_event_hdr hdr;
	__u64 dur_ns;	 /* switch-out to switch-in */
	__u32 reason;	 /* enum ep_off_reason at the switch-out */
	__s32 kstack_sz; /* bytes of kernel frames at ips[0], or negative errno */
	__s32 ustack_sz; /* bytes of user frames right after them, or negative errno */
	__u16 ukwalk;	 /* user frames from bpf/uwalk.h: return addresses already - 1 */
	__u16 utrunc;	 /* the user stack was deeper than EP_OFFCPU_USER_FRAMES */
	char comm[EP_COMM_LEN];
	__u64 ips[EP_MAX_STACK_DEPTH + EP_OFFCPU_USER_FRAMES]; /* leaf first, kernel then user */
};

enum ep_sched_drop {
	EP_SDROP_THREAD_MAP_FULL = 0, /* a thread could not be followed */
	EP_SDROP_RINGBUF_FULL = 1,    /* a long episode's stack not delivered */
	EP_SDROP_USER_STACK = 2,      /* episode delivered without user frames */
	EP_SDROP_KERN_STACK = 3,      /* episode delivered without kernel frames */
	EP_SDROP_USTACK_SLOT = 4,     /* no slot to keep the user stack in */
	EP_SDROP__COUNT
};

/* Not a drop (a designed trade-off, see docs/performance.md): a long episode
 * reported with its kernel stack only, because its user stack was not walked
 * at the switch-out (no long wait was predicted there, see ep_ustack_plan).
 * Same per-CPU array. */
#define EP_SSTAT_USTACK_SKIPPED EP_SDROP__COUNT
/* User stack walks made at blocking switch-outs (their cost, ~1 us each). */
#define EP_SSTAT_USTACK_WALKS (EP_SDROP__COUNT + 1)
#define EP_SCHED_COUNTERS     (EP_SDROP__COUNT + 2)

#endif /* EBPF_PROF_EVENTS_SCHED_H */

/* ---- sysmon: memory, CPU frequency, thermal (bpf/sysmon.bpf.c) ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_SYSMON_H
#define EBPF_PROF_EVENTS_SYSMON_H
enum ep_sysmon_type {
	EP_SM_RSS = 1,	       /* a traced mm's RSS moved by at least rss_step */
	EP_SM_OOM = 2,	       /* oom/mark_victim of a traced process */
	EP_SM_FREQ = 3,	       /* power/cpu_frequency */
	EP_SM_FREQ_LIMITS = 4, /* power/cpu_frequency_limits */
	EP_SM_TEMP = 5,	       /* thermal/thermal_temperature */
	EP_SM_TRIP = 6,	       /* thermal/thermal_zone_trip */
	EP_SM_CDEV = 7,	       /* thermal/cdev_update */
	EP_SM_EXEC = 8,	       /* sched/sched_process_exec of a traced process: new mm */
};

enum ep_sysmon_drop {
	EP_SM_DROP_RINGBUF_FULL = 0, /* event not delivered */
	EP_SM_DROP_MM_MAP_FULL = 1,  /* a traced mm could not be tracked (peak lost) */
	EP_SM_DROP__COUNT
};

#define EP_SM_NAME_LEN 32
/* MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES (kmem/rss_stat member) */
#define EP_SM_RSS_MEMBERS 4

struct ep_sysmon_event {
	__u32 type;  /* enum ep_sysmon_type */
	__u32 pid;   /* RSS, OOM: tgid (OOM: the victim's pid) */
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	/* RSS: bytes per member; OOM: total_vm, anon_rss, file_rss, shmem_rss
	 * (kB); FREQ: cpu, kHz; FREQ_LIMITS: cpu, min kHz, max kHz; TEMP: zone
	 * id, mC, previous mC; TRIP: zone id, trip index, trip type; CDEV:
	 * target state. */
	__s64 v[4];
	__s64 peak;  /* RSS: highest RSS (bytes) of this mm seen in the kernel */
	__u32 mm_id; /* RSS: kmem/rss_stat mm_id */
	__u32 _pad;
	char name[EP_SM_NAME_LEN]; /* zone / cooling device type, OOM comm */
};

/* Per-mm RSS state kept in the kernel so the peak is exact at fault
 * granularity even when events are coalesced. */
struct ep_sysmon_mm {
	__u32 tgid;
	__u32 _pad;
	__s64 size[EP_SM_RSS_MEMBERS];
	__s64 peak;
	__s64 last_emit;
};

#endif /* EBPF_PROF_EVENTS_SYSMON_H */

/* ---- cycles (bpf/cycles.bpf.c, user/cycles_module.c): cycle boundaries ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_CYCLES_H
#define EBPF_PROF_EVENTS_CYCLES_H

enum ep_cycle_event_type {
	EP_EV_CYCLE = 48, /* struct ep_cycle_event */
};

/* What a boundary event says (ep_cycle_event.kind). */
enum ep_cycle_kind {
	EP_CYC_BEGIN = 1,    /* --cycle entry, marker begin, py: entry (outermost) */
	EP_CYC_END = 2,	     /* --cycle return, marker end, py: return (outermost) */
	EP_CYC_ENTRY = 3,    /* --cycle-every: a new cycle starts here */
	EP_CYC_GC_START = 4, /* CPython gc__start */
	EP_CYC_GC_DONE = 5,  /* CPython gc__done */
};

/* The attach cookie: the kind to report, and how the program decides. */
#define EP_CYC_COOKIE_KIND(c) ((__u32)((c)&0xff))
#define EP_CYC_COOKIE_PY      0x100ull /* CPython function__entry/return: filter by name */
#define EP_CYC_COOKIE_DEPTH   0x200ull /* pair entry/return per thread: outermost only */

/* Longest py:FUNCTION name matched in the kernel (NUL included). */
#define EP_CYC_PY_NAME_LEN 64

enum ep_cycle_drop {
	EP_CYC_DROP_RINGBUF_FULL = 0,	/* boundary or GC event not delivered */
	EP_CYC_DROP_DEPTH_MAP_FULL = 1, /* thread not tracked: its cycle calls not paired */
	EP_CYC_DROP__COUNT
};

/* py:FUNCTION by watchpoint (bpf/cycles.bpf.c cycle_watch,
 * user/cycles/py_watch.c): the last reference count seen of a watched code
 * object, per process and object. 64: a name matches a few code objects
 * (methods of the same name in several classes) in a few processes; the
 * collector arms at most EP_CYC_WATCH_PER_PID per process (x86_64 and arm64
 * have 4 debug registers per thread). */
#define EP_CYC_WATCH_MAX     64
#define EP_CYC_WATCH_PER_PID 2

struct ep_cyc_watch_key {
	__u32 tgid;
	__u32 _pad;
	__u64 addr; /* the code object (its ob_refcnt is at offset 0) */
};

enum ep_cyc_watch_stat {
	EP_CYC_W_HITS = 0,	 /* watchpoint hits in traced processes */
	EP_CYC_W_FIRST = 1,	 /* first hit of an object: its count learnt, no boundary */
	EP_CYC_W_UNCHANGED = 2,	 /* count as last seen: a second event for one write */
	EP_CYC_W_UNREADABLE = 3, /* the count could not be read */
	EP_CYC_W_DEAD = 4,	 /* the object was freed: not followed from there */
	EP_CYC_W__COUNT
};

/* cycle_watch_rc's value once the object is freed. */
#define EP_CYC_WATCH_DEAD (-1ll)

struct ep_cycle_event {
	struct ep_event_hdr hdr; /* ts_ns: the boundary */
	__u32 kind;		 /* enum ep_cycle_kind */
	__u32 _pad;
	__s64 arg; /* marker: the id; gc: generation / collected */
};

#endif /* EBPF_PROF_EVENTS_CYCLES_H */

/* ---- in-kernel CFI unwinding (bpf/unwind*.h, user/unwind/): unwind rows ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_UNWIND_H
#define EBPF_PROF_EVENTS_UNWIND_H

/* How the canonical frame address (CFA: the caller's stack pointer after
 * the call returns) is found at a pc. One value per row. */
enum ep_uw_cfa {
	/* No CFI covers this pc (a gap between FDEs, or code without an FDE):
	 * this frame is walked by frame pointers. */
	EP_UW_CFA_NONE = 0,
	EP_UW_CFA_SP = 1, /* CFA = sp + cfa_off */
	EP_UW_CFA_FP = 2, /* CFA = fp + cfa_off (x86_64 rbp, arm64 x29) */
	/* x86_64 .plt stub expression: CFA = sp + cfa_off, plus 8 when
	 * (pc & 15) >= fp_off8: 11 in binutils' lazy PLT, 9 or 10 (by
	 * binutils version) in its IBT PLT, endbr64 first. The stubs never
	 * touch the frame pointer (fp is EP_UW_REG_SAME), so fp_off8 is free
	 * to carry the threshold. */
	EP_UW_CFA_PLT = 3,
	/* Signal trampoline (__restore_rt): the interrupted registers are in
	 * the ucontext at sp. */
	EP_UW_CFA_SIGNAL = 4,
	/* Return address undefined: the outermost frame (_start, clone's
	 * thread entry); the walk is complete. */
	EP_UW_CFA_END = 5,
	/* CFI whose rule the walker cannot evaluate (other expressions, CFA
	 * from another register): the walk ends here, counted. */
	EP_UW_CFA_UNSUPPORTED = 6,
	/* CFA = *(u64 *)(fp + cfa_off): gcc's stack realignment (DRAP) in
	 * functions with over-aligned locals, e.g. ggml's AVX kernels
	 * (DW_OP_breg6 (rbp) off; DW_OP_deref). */
	EP_UW_CFA_FP_DEREF = 7,
};

/* How a caller's register (frame pointer, return address) is recovered. */
enum ep_uw_reg {
	/* Unchanged: the callee did not touch it (for the return address on
	 * arm64: it is still in the link register). */
	EP_UW_REG_SAME = 0,
	EP_UW_REG_AT_CFA = 1, /* saved in memory at CFA + 8 * off8 */
	EP_UW_REG_UNDEF = 2,  /* not recoverable (the frame pointer then reads 0) */
	/* Saved in memory at fp + 8 * off8, fp being this frame's own frame
	 * pointer register (with EP_UW_CFA_FP_DEREF: DW_OP_breg6 (rbp) 0). */
	EP_UW_REG_AT_FP = 3,
	/* arm64, with an sp-based CFA: the frame pointer saved at sp + 8 *
	 * fp_off8 (unchanged when fp_off8 < 0: slots above sp are never below
	 * it) and the return address at sp + 8 * ra_off8, sp being this
	 * frame's own. gcc puts the frame record at the bottom of frames of up
	 * to a few KiB (stp x29, x30, [sp] after sub sp), too far from the CFA
	 * for an 8-bit offset, not from sp. */
	EP_UW_REG_AT_SP = 4,
};

/* One row of an object's unwind table: the rules in force from pc up to the
 * next row's pc. Rows are sorted by pc and keyed by ELF virtual address
 * (the link-time address .eh_frame speaks in; the walker subtracts the
 * mapping's load bias). Consecutive rows with the same rules are merged,
 * and rules for registers the walker does not restore (rbx, r12-r15, ...)
 * are dropped, so one row per CFA change is typical. 12 bytes. */
struct ep_uw_row {
	__u32 pc;
	__s32 cfa_off;
	__u8 cfa; /* enum ep_uw_cfa */
	__u8 fp;  /* enum ep_uw_reg for the caller's frame pointer */
	/* EP_UW_REG_AT_CFA/AT_FP: the saved frame pointer's offset / 8;
	 * EP_UW_CFA_PLT rows: the pc & 15 threshold. */
	__s8 fp_off8;
	/* The return address: saved at CFA + 8 * ra_off8 when non-zero (x86_64:
	 * always -1; sp + 8 * ra_off8 with EP_UW_REG_AT_SP); 0 = still in the
	 * link register (arm64 leaf code). */
	__s8 ra_off8;
};

/* ---- the in-kernel walker's maps (bpf/uwalk.h, user/unwind/ktables.c) ----
 * Rows live in blocks of EP_UW_BLOCK_ROWS in shards: BPF arrays (inner maps
 * of an array-of-maps) created as tables are loaded, each sized to the
 * objects of one maps scan plus room for later dlopens. Not one array per
 * object: every insertion into an array-of-maps waits for an RCU grace
 * period (12-20 ms here), 2 s for a process with 100 libraries. A frame
 * costs one helper lookup into a shard plus searches in memory: over
 * per-block first pcs (a global array the verifier inlines), then inside
 * the block. Unused tail rows of a block have pc ~0. */
#define EP_UW_BLOCK_ROWS 256
#define EP_UW_BLOCK_MASK (EP_UW_BLOCK_ROWS - 1)
struct ep_uw_block {
	struct ep_uw_row rows[EP_UW_BLOCK_ROWS];
};
/* Shards of rows at once. */
#define EP_UW_MAX_SHARDS 1024
/* Blocks of all objects: 2^16 * 256 rows = 16.7 M rows (200 MB), far more
 * than the memory budget allows; the index itself is 256 KiB. */
#define EP_UW_MAX_BLOCKS (1u << 16)
/* Executable mappings per process the walker knows; more are counted and
 * walked as unknown. Python with many extension modules stays below. */
#define EP_UW_MAX_MAPS 512
/* Frames one walk emits: deeper stacks end with EP_UW_END_DEPTH. */
#define EP_UW_MAX_FRAMES 512

enum ep_uw_kind {
	EP_UW_MAP_CFI = 1, /* file with a table: rows, frame pointers in gaps */
	EP_UW_MAP_FP = 2,  /* file without CFI (or over budget): frame pointers */
	EP_UW_MAP_JIT = 3, /* anonymous executable memory: frame pointers, marked */
};

/* One executable mapping of a process; pc - bias is the object's ELF
 * virtual address. Sorted by start in struct ep_uw_proc. */
struct ep_uw_map {
	__u64 start, end;
	__u64 bias;
	__u32 shard;  /* index in the array-of-maps (EP_UW_MAP_CFI) */
	__u32 blk_lo; /* first block in the global block index */
	__u32 nblk;   /* blocks of the object */
	__u32 sblk;   /* first block in the shard */
	__u32 kind;   /* enum ep_uw_kind */
	__u32 _pad;
};

struct ep_uw_proc {
	__u32 n; /* maps in use */
	__u32 _pad;
	struct ep_uw_map m[EP_UW_MAX_MAPS];
};

/* Why a walk ended (bits 8-15 of ep_sample.flags). */
enum ep_uw_end {
	EP_UW_END_NONE = 0,	   /* not walked in the kernel */
	EP_UW_END_ROOT = 1,	   /* outermost frame reached (CFI: return address undefined) */
	EP_UW_END_FP_ROOT = 2,	   /* frame-pointer chain ended (fp 0) */
	EP_UW_END_DEPTH = 3,	   /* EP_UW_MAX_FRAMES frames emitted */
	EP_UW_END_JIT = 4,	   /* in JIT/anonymous code whose frame chain is unusable */
	EP_UW_END_UNKNOWN = 5,	   /* pc in no known mapping (dlopen since the scan?) */
	EP_UW_END_NO_TABLES = 6,   /* process without tables: frame-pointer walk */
	EP_UW_END_READ = 7,	   /* user stack unreadable */
	EP_UW_END_BAD = 8,	   /* CFA not above sp, pc 0: inconsistent state */
	EP_UW_END_UNSUPPORTED = 9, /* CFI rule the walker cannot evaluate */
	EP_UW_END_NO_REGS = 10,	   /* no user registers */
	EP_UW_END_URETPROBE = 11,  /* trampoline return address with no matching instance */
	EP_UW_END__COUNT
};

#endif /* EBPF_PROF_EVENTS_UNWIND_H */

/* ---- Python frames (bpf/pyframes.bpf.h, user/python/): CPython stacks ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_PY_H
#define EBPF_PROF_EVENTS_PY_H

/* Python frames walked per sample (the bound); deeper ones are cut
 * at the root side and the record is flagged. */
#define EP_PY_MAX_FRAMES 128
/* Thread states scanned to find a thread's own; more threads than this and
 * the rest keep their native stacks only. */
#define EP_PY_MAX_THREADS 64
/* An offset the interpreter's layout does not have. */
#define EP_PY_NO_OFF 0xffff
/* Bytes of a frame read at once (the largest field offset + 8 fits). */
#define EP_PY_FRAME_READ 128

enum ep_py_event_type {
	/* struct ep_pystack, sent right before the ep_sample it belongs to
	 * (same cpu, tid and ts_ns). */
	EP_EV_PYSTACK = 64,
};

/* Where an interpreter keeps what the walk needs, written by the collector
 * per traced process (user/python/py_layout.c has the per-version values
 * and their source). */
struct ep_py_proc {
	__u64 interp_head; /* address of _PyRuntime.interpreters.head */
	__u16 interp_tstate_head;
	__u16 tstate_next;
	__u16 tstate_thread_id; /* pthread_self() of the thread: its fsbase */
	__u16 tstate_frame;	/* the current frame, or the _PyCFrame holding it */
	__u16 cframe_frame;	/* _PyCFrame -> current_frame; EP_PY_NO_OFF: no _PyCFrame */
	__u16 frame_code;	/* f_code / f_executable */
	__u16 frame_back;	/* f_back / previous */
	__u16 frame_instr;	/* f_lasti (int) or prev_instr / instr_ptr (pointer) */
	__u16 frame_owner;	/* EP_PY_NO_OFF: none (<= 3.10) */
	__u16 frame_is_entry;	/* 3.11's is_entry; EP_PY_NO_OFF: none */
	__u16 code_csum;	/* 32 immutable bytes of the code object, checksummed */
	__u8 instr_is_ptr;	/* frame_instr is a pointer into the code object */
	__u8 every_entry;	/* <= 3.10: each frame has its own evaluator call */
	__u8 cstack_owner;	/* 3.12+: owner of the evaluator's C-stack shim frame; 0xff none */
	__u8 _pad;
	__u16 tstate_chunk; /* 3.11+: datastack_chunk (its frames' memory); EP_PY_NO_OFF */
	__u8 _pad2[4];
};

/* Set in ep_py_frame.code: this frame is the first one its evaluator call
 * (one _PyEval_EvalFrameDefault on the native stack) executes. */
#define EP_PY_F_ENTRY 1ull

struct ep_py_frame {
	__u64 code;  /* code object address | EP_PY_F_ENTRY */
	__u32 instr; /* instruction pointer - code (3.11+), or f_lasti (<= 3.10) */
	__u32 csum;  /* ep_py_csum of the code object's immutable fields */
};

#define EP_PYSTACK_F_TRUNCATED 1u /* more frames than EP_PY_MAX_FRAMES */

struct ep_pystack {
	struct ep_event_hdr hdr;
	__u32 nframes;
	__u32 flags;				     /* EP_PYSTACK_F_* */
	struct ep_py_frame frames[EP_PY_MAX_FRAMES]; /* leaf first; only nframes travel */
};
#define EP_PYSTACK_HDR_SIZE ((unsigned long)&((struct ep_pystack *)0)->frames)

/* Per-CPU counters of the walk (not drops of samples: a sample without
 * Python frames keeps its native stack). */
enum ep_py_stat {
	EP_PY_ST_WALKS = 0,	   /* samples of a Python process */
	EP_PY_ST_STACKS = 1,	   /* records sent */
	EP_PY_ST_FRAMES = 2,	   /* frames sent */
	EP_PY_ST_NO_TSTATE = 3,	   /* thread without a Python thread state */
	EP_PY_ST_IDLE = 4,	   /* thread state without a current frame */
	EP_PY_ST_SCANS = 5,	   /* thread-state list scans (cache misses) */
	EP_PY_ST_READ_ERR = 6,	   /* a frame could not be read: stack cut there */
	EP_PY_ST_TRUNCATED = 7,	   /* deeper than EP_PY_MAX_FRAMES */
	EP_PY_ST_RINGBUF_FULL = 8, /* record lost: the sample goes out native only */
	EP_PY_ST_WALK_NS = 9,	   /* time in pyframes_emit of walked samples (its cost) */
	EP_PY_ST__COUNT
};

/* The checksum that tells a code object from a later one at the same
 * address: both sides compute it over the same 32 bytes. */
static inline __u32 ep_py_csum(const __u64 w[4])
{
	__u64 h = w[0] * 0x9e3779b97f4a7c15ull;

	h ^= (w[1] + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (w[2] + 0x85ebca6b27d4eb4full) * 0x94d049bb133111ebull;
	h ^= (w[3] + 0x165667b19e3779f9ull) * 0xd6e8feb86659fd93ull;
	return (__u32)(h ^ (h >> 32));
}

#endif /* EBPF_PROF_EVENTS_PY_H */

/* ---- allocations (bpf/alloc.bpf.c, user/alloc/): --alloc ---- */
/* Own guard: this section sits after the file's #endif. */
#ifndef EBPF_PROF_EVENTS_ALLOC_H
#define EBPF_PROF_EVENTS_ALLOC_H

/* Frames kept per sampled allocation (deeper stacks are cut at the root). */
#define EP_ALLOC_MAX_FRAMES 127
/* Entries of the exponential draw table (quantiles of Exp(rate), filled by
 * the collector): a power of two, indexed by a random number. */
#define EP_ALLOC_DRAWS 4096
/* Sampled blocks tracked until freed, default (--alloc-max-live); more are
 * counted in dropped (live_full) and stay in alloc, not inuse. */
#define EP_ALLOC_MAX_LIVE 65536

/* What the entry probe was attached to: the attach cookie. */
enum ep_alloc_kind {
	EP_AK_NONE = 0,
	EP_AK_MALLOC = 1,	  /* malloc(size) */
	EP_AK_CALLOC = 2,	  /* calloc(n, size) */
	EP_AK_REALLOC = 3,	  /* realloc(ptr, size) */
	EP_AK_MEMALIGN = 4,	  /* memalign/aligned_alloc(align, size) */
	EP_AK_POSIX_MEMALIGN = 5, /* posix_memalign(&ptr, align, size) */
	EP_AK_VALLOC = 6,	  /* valloc/pvalloc(size) */
	EP_AK_MMAP = 7,		  /* an anonymous private mmap by the program (syscall) */
	EP_AK__COUNT
};

enum ep_alloc_event_type {
	EP_EV_ALLOC = 80, /* struct ep_alloc_event: a sampled allocation */
	EP_EV_FREE = 81,  /* struct ep_alloc_free: a tracked block was freed */
};

/* A sampled allocation; hdr.ts_ns is its return. Only the used frames
 * travel when the ring has room: offsetof(ips) + ustack_sz bytes. */
struct ep_alloc_event {
	struct ep_event_hdr hdr;
	__u64 addr;
	__u64 size;
	__u32 kind;	 /* enum ep_alloc_kind */
	__u32 flags;	 /* EP_ALLOC_F_* */
	__s32 ustack_sz; /* bytes of frames in ips (leaf first), or negative errno */
	__u32 _pad;
	__u64 ips[EP_ALLOC_MAX_FRAMES];
};
#define EP_ALLOC_F_KWALK     1u /* frames from bpf/uwalk.h: return addresses already - 1 */
#define EP_ALLOC_F_UNTRACKED 2u /* the live table was full: its free will not be seen */

/* A tracked block freed (free, or realloc that moved or shrank it to 0). */
struct ep_alloc_free {
	struct ep_event_hdr hdr;
	__u64 addr;
	__u64 alloc_ts_ns; /* the sampled allocation's hdr.ts_ns: tells reuses apart */
};

struct ep_alloc_key {
	__u32 tgid;
	__u32 _pad;
	__u64 addr;
};

struct ep_alloc_block {
	__u64 size;
	__u64 ts_ns;
	__u64 addr0; /* a mapping whose head was unmapped: its start when sampled, else 0 */
};

/* Per-thread state (task storage). */
struct ep_alloc_thread {
	__s64 countdown;  /* bytes to allocate before the next sample */
	__u64 pend_size;  /* the call in flight: its size, */
	__u64 pend_old;	  /* realloc's old block (tracked), */
	__u64 pend_ptr;	  /* posix_memalign's result pointer */
	__u32 pend_kind;  /* enum ep_alloc_kind, 0: none in flight */
	__u32 pend_flags; /* EP_ALLOC_P_* */
	__u32 init;
	__u32 mmap_sample; /* the mmap in flight was sampled */
	__u64 mmap_len;	   /* its length, pages rounded */
	__u64 alloc_sp;	   /* user SP at the last allocator entry, */
	__u64 alloc_ra;	   /* and the return address found there */
	__u32 depth;	   /* allocation calls in flight whose return is awaited */
	__u32 _pad2;
};
#define EP_ALLOC_P_SAMPLE   1u
#define EP_ALLOC_P_FREE_OLD 2u

/* Per-CPU counters. */
enum ep_alloc_stat {
	EP_AST_CALLS = 0,	   /* allocation calls (every kind) */
	EP_AST_BYTES = 1,	   /* bytes asked for */
	EP_AST_FREES = 2,	   /* free calls */
	EP_AST_SAMPLED = 3,	   /* allocations sampled */
	EP_AST_TRACKED_FREES = 4,  /* frees of sampled blocks */
	EP_AST_DROP_LIVE_FULL = 5, /* sampled, not tracked: live table full */
	EP_AST_DROP_RINGBUF = 6,   /* sample or free not delivered */
	EP_AST_DROP_NO_THREAD = 7, /* no per-thread state: call not counted */
	EP_AST_STACK_ERR = 8,	   /* sample delivered without user frames */
	EP_AST_SAMPLE_NS = 9,	   /* time in the sampled path (stack, map, ring) */
	EP_AST_NESTED = 10,	   /* an entry while a call was in flight */
	EP_AST_MMAPS = 11,	   /* anonymous private mmaps by the program */
	EP_AST_MMAP_BYTES = 12,	   /* their bytes (pages rounded) */
	EP_AST_MMAP_IN_ALLOC = 13, /* anonymous mmaps inside a probed allocator: left out */
	EP_AST_MUNMAP_PART = 14,   /* munmap of a tracked mapping's head only */
	EP_AST__COUNT
};

#endif /* EBPF_PROF_EVENTS_ALLOC_H */
