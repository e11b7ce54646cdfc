/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython frames at sample time: the sampler calls pyframes_emit() once per
 * sample, before sending the sample itself. For a process the collector
 * registered in py_procs it finds the sampled thread's PyThreadState, walks
 * its frame chain and sends (code object, instruction offset) per frame as
 * an EP_EV_PYSTACK record; the collector names the frames and merges them
 * into the native stack (user/python/).
 *
 * Included by profile.bpf.c after `events` with PYFRAMES_RING defined to
 * it, so the record shares that ring and reaches the collector right
 * before its sample. sched.bpf.c includes it without a ring: it walks
 * into its own per-thread slot at a blocking switch-out (py_walk_into).
 * alloc.bpf.c includes it with its own ring (PY_WALK_STATIC): a sampled
 * allocation's record goes right before that sample.
 */
#ifndef EBPF_PROF_PYFRAMES_BPF_H
#define EBPF_PROF_PYFRAMES_BPF_H

#include "counters.h"
#include "events/python.h"

/* Set by the collector (--python mixed|only, and the kernel has bpf_loop);
 * off, the verifier drops the walk and its helpers. */
const volatile bool py_enabled = false;

/* Sized for the Python processes profiled at once; a process beyond it is
 * profiled native only (the collector logs it). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct ep_py_proc);
} py_procs SEC(".maps");

/* Thread -> its PyThreadState (0: it had none when last looked for), so the
 * thread-state list is scanned once per thread, not per sample. */
struct py_tcache {
	__u64 tstate;
	__u64 checked_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct py_tcache);
} py_tstates SEC(".maps");

/* A thread without a thread state (a native worker) is looked for again
 * this often: it may have called into Python since. */
#define PY_NEG_RECHECK_NS (500ull * 1000 * 1000)

/* Checksums of the code objects this CPU walked lately, direct-mapped by
 * address: reading a code object costs as much as reading its frame, and
 * the same few code objects make up most frames. An entry is trusted for
 * PY_CSUM_TTL_NS: a code object freed and another allocated at its address
 * within that time is named after the first until then; at 999 Hz the
 * previous sample of a busy CPU is 1 ms old. */
#define PY_CSUM_SLOTS  256
#define PY_CSUM_TTL_NS (10ull * 1000 * 1000)

struct py_csum_ent {
	__u64 code;
	__u64 ts;
	__u32 csum;
	__u32 _pad;
};

/* 3.11+ keeps a thread's frames in its data stack, contiguous, the newest
 * at the highest address: one read of PY_WIN bytes ending at the current
 * frame holds it and most of its callers, walked from the copy without a
 * read per frame (a frame outside it, in a generator or an older chunk,
 * is read alone). A read costs ~60 ns plus the copy, so 4 KiB (about 30
 * frames of small functions) costs what two frame reads do. */
#define PY_WIN 4096

/* The thread state's first bytes, read once per walk: the cache check's
 * thread id, the current frame (or cframe) pointer and the data stack's
 * chunk all lie in them on 3.8-3.13 (offsets 24-296), one read instead of
 * three. */
#define PY_TS_READ 312
/* _PyStackChunk.data: where a chunk's frames begin (3.11-3.13). */
#define PY_CHUNK_DATA 24

struct py_scratch {
	struct ep_pystack ps;
	/* [0, PY_WIN): the window; [PY_WIN, +EP_PY_FRAME_READ): a frame read
	 * alone. Frames are parsed at an offset into `mem` either way. */
	__u8 mem[PY_WIN + EP_PY_FRAME_READ];
	/* The window holds [win_lo, win_lo + win_len). Here, not in the
	 * walk's stack state: the verifier would follow each way it was set
	 * through the whole walk. */
	__u64 win_lo;
	__u64 win_len;
	__u64 base; /* the frame being parsed, in `mem` */
	__u64 csum[4];
	struct py_csum_ent cc[PY_CSUM_SLOTS];
	__u8 ts[PY_TS_READ]; /* the thread state at ts_addr (0: none read) */
	__u64 ts_addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EP_PY_ST__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} py_stats SEC(".maps");

static __always_inline void py_stat(__u32 st, __u64 n)
{
	ep_count(&py_stats, st, n);
}

static __always_inline __u64 py_rd64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

#define PY_ALONE PY_WIN /* where a frame read alone goes in `mem` */

/* Field loads from the frame copy at base in sc->mem; the offsets come
 * from a map, so they are bounded here for the verifier (and a bad table
 * reads zeros). The caller has checked base <= PY_WIN once: one check per
 * load, not three (each is a fork the verifier follows). */
static __always_inline __u64 py_buf64(const struct py_scratch *sc, __u64 base, __u32 off)
{
	if (off > EP_PY_FRAME_READ - 8)
		return 0;
	return *(const __u64 *)(sc->mem + base + off);
}

static __always_inline __u8 py_buf8(const struct py_scratch *sc, __u64 base, __u32 off)
{
	if (off > EP_PY_FRAME_READ - 1)
		return 0;
	return sc->mem[base + off];
}

/* A word of thread state ts: from the copy when it holds it. */
static __always_inline __u64 py_ts64(struct py_scratch *sc, __u64 ts, __u32 off)
{
	if (sc->ts_addr == ts && off <= PY_TS_READ - 8)
		return *(const __u64 *)(sc->ts + off);
	return py_rd64(ts + off);
}

struct py_walk {
	struct py_scratch *sc;
	struct ep_pystack *ps; /* frames go to ps->frames */
	const struct ep_py_proc *cfg;
	__u64 frame;  /* next frame to read */
	__u64 tstate; /* list scan: next thread state */
	__u64 fsbase; /* list scan: the sampled thread's pthread_self() */
	__u64 found;
	__u64 now;
	__u32 n;
	__u32 err;
};

static long py_scan_step(__u32 i, struct py_walk *w)
{
	__u64 t = w->tstate;

	if (!t)
		return 1;
	if (py_rd64(t + w->cfg->tstate_thread_id) == w->fsbase) {
		w->found = t;
		return 1;
	}
	w->tstate = py_rd64(t + w->cfg->tstate_next);
	return 0;
}

static long py_frame_step(__u32 i, struct py_walk *w)
{
	const struct ep_py_proc *c = w->cfg;
	struct py_scratch *sc = w->sc;
	struct ep_pystack *ps = w->ps;
	__u64 f = w->frame, code, instr;
	__u32 n = w->n;

	if (!f)
		return 1;
	if (n >= EP_PY_MAX_FRAMES)
		return 1;
	__u64 b;

	if (f >= sc->win_lo && f - sc->win_lo + EP_PY_FRAME_READ <= sc->win_len) {
		sc->base = f - sc->win_lo;
	} else if (bpf_probe_read_user(sc->mem + PY_ALONE, EP_PY_FRAME_READ, (void *)f)) {
		w->err = 1;
		return 1;
	} else {
		sc->base = PY_ALONE;
	}
	/* Through the map: one unknown value from here on for the verifier,
	 * not a constant on one way and a range on the other (each field
	 * load below would be followed both ways: 46x the instructions). */
	b = *(volatile __u64 *)&sc->base;
	/* One register for the check and the loads (else clang checks one
	 * copy and indexes with another, unbounded one). */
	__asm__ volatile("" : "+r"(b));
	if (b > PY_WIN)
		return 1;
	w->frame = py_buf64(sc, b, c->frame_back);
	/* 3.12+: the evaluator's shim frame on the C stack ends the frames of
	 * one _PyEval_EvalFrameDefault call: the frame before it is an entry. */
	if (c->cstack_owner != 0xff && py_buf8(sc, b, c->frame_owner) == c->cstack_owner) {
		if (n > 0 && n <= EP_PY_MAX_FRAMES)
			ps->frames[(n - 1) & (EP_PY_MAX_FRAMES - 1)].code |= EP_PY_F_ENTRY;
		return 0;
	}
	code = py_buf64(sc, b, c->frame_code);
	if (!code)
		return 0;
	if (c->instr_is_ptr) {
		instr = py_buf64(sc, b, c->frame_instr) - code;
		if (instr > 0xffffffffull)
			instr = 0;
	} else {
		instr = (__u32)py_buf64(sc, b, c->frame_instr);
	}
	struct ep_py_frame *pf = &ps->frames[n & (EP_PY_MAX_FRAMES - 1)];

	pf->code = code & ~EP_PY_F_ENTRY;
	if (c->every_entry ||
	    (c->frame_is_entry != EP_PY_NO_OFF && py_buf8(sc, b, c->frame_is_entry)))
		pf->code |= EP_PY_F_ENTRY;
	pf->instr = (__u32)instr;
	pf->csum = 0;
	struct py_csum_ent *ce = &sc->cc[(code >> 4) & (PY_CSUM_SLOTS - 1)];

	if (ce->code == code && w->now - ce->ts < PY_CSUM_TTL_NS) {
		pf->csum = ce->csum;
	} else if (!bpf_probe_read_user(sc->csum, sizeof(sc->csum),
					(void *)(code + c->code_csum))) {
		pf->csum = ep_py_csum(sc->csum);
		ce->code = code;
		ce->ts = w->now;
		ce->csum = pf->csum;
	}
	w->n = n + 1;
	return 0;
}

static __always_inline __u64 py_find_tstate(struct py_walk *w, __u32 tid)
{
	const struct ep_py_proc *c = w->cfg;
	struct py_tcache *tc = bpf_map_lookup_elem(&py_tstates, &tid);
	__u64 now = w->now, interp;
	struct py_tcache nc = {};

#if defined(__TARGET_ARCH_x86)
	w->fsbase = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), thread.fsbase);
#else
	return 0;
#endif
	w->sc->ts_addr = 0;
	if (tc) {
		__u64 t = tc->tstate;

		if (t && !bpf_probe_read_user(w->sc->ts, PY_TS_READ, (void *)t))
			w->sc->ts_addr = t;
		if (t && py_ts64(w->sc, t, c->tstate_thread_id) == w->fsbase)
			return t;
		if (!tc->tstate && now - tc->checked_ns < PY_NEG_RECHECK_NS)
			return 0;
	}
	py_stat(EP_PY_ST_SCANS, 1);
	interp = py_rd64(c->interp_head);
	w->tstate = interp ? py_rd64(interp + c->interp_tstate_head) : 0;
	w->found = 0;
	if (w->tstate)
		bpf_loop(EP_PY_MAX_THREADS, py_scan_step, w, 0);
	nc.tstate = w->found;
	nc.checked_ns = now;
	bpf_map_update_elem(&py_tstates, &tid, &nc, BPF_ANY);
	return w->found;
}

/* Walks the frames of the current thread (thread tid of the process whose
 * registration is cfg, looked up by the caller) into ps: ps->nframes and
 * ps->flags set, nothing else. now: bpf_ktime_get_ns() of the caller. The
 * number of frames, 0 when the thread runs no Python. A global function:
 * the verifier checks it once per program, with unknown arguments, where
 * inlined it was checked along every path that reached it (sched_switch
 * 17,449 -> 12,859 processed instructions, on_cpu_sample 12,649 -> 7,813;
 * ~40% of their verification time, paid at every start). */
#ifdef PY_WALK_STATIC
/* The includer's programs load on kernels without bpf_loop (Linux 5.15,
 * 5.16), with the walk off: before 6.8 the kernel verifies every global
 * function whether reached or not, and this one's bpf_loop would refuse
 * the whole object. A static one is verified where it is reached only. */
#define PY_WALK_FN static __noinline
#else
#define PY_WALK_FN __noinline
#endif
PY_WALK_FN __u32 py_walk_into(const struct ep_py_proc *cfg, __u32 tid, struct ep_pystack *ps,
			      __u64 now)
{
	struct py_walk w = {};
	__u32 zero = 0;
	__u64 tstate, frame;

	if (!ps)
		return 0;
	ps->nframes = 0;
	ps->flags = 0;
	w.cfg = cfg;
	if (!w.cfg)
		return 0;
	w.sc = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w.sc)
		return 0;
	w.ps = ps;
	w.now = now;
	tstate = py_find_tstate(&w, tid);
	if (!tstate) {
		py_stat(EP_PY_ST_NO_TSTATE, 1);
		return 0;
	}
	frame = py_ts64(w.sc, tstate, w.cfg->tstate_frame);
	if (frame && w.cfg->cframe_frame != EP_PY_NO_OFF)
		frame = py_rd64(frame + w.cfg->cframe_frame);
	if (!frame) {
		py_stat(EP_PY_ST_IDLE, 1);
		return 0;
	}
	w.frame = frame;
	/* 3.11+ (frames in the data stack): the window ending past the
	 * current frame; where PY_WIN bytes below it are not all mapped (the
	 * data stack's first chunk), from its page. */
	w.sc->win_lo = 0;
	w.sc->win_len = 0;
	if (!w.cfg->every_entry) {
		__u64 hi = frame + EP_PY_FRAME_READ, floor = 0, len;

		/* Not below the current chunk's frames: what lies there may be
		 * unmapped, and a read that faults costs more than the walk
		 * (a shallow stack sits at the chunk's start). */
		if (w.cfg->tstate_chunk != EP_PY_NO_OFF) {
			floor = py_ts64(w.sc, tstate, w.cfg->tstate_chunk);
			floor = floor ? floor + PY_CHUNK_DATA : 0;
		}
		len = floor && frame >= floor && hi - floor < PY_WIN ? hi - floor : PY_WIN;
		/* Bounds the register for the verifier; changes nothing. */
		len &= 2 * PY_WIN - 1;
		if (hi > len && len <= PY_WIN &&
		    !bpf_probe_read_user(w.sc->mem, len, (void *)(hi - len))) {
			w.sc->win_lo = hi - len;
			w.sc->win_len = len;
		} else {
			__u64 lo = frame & ~4095ull;
			/* hi - lo < 8 KiB: the mask changes nothing but bounds
			 * the register the call gets, for the verifier. */
			__u64 len = (hi - lo) & (2 * PY_WIN - 1);

			if (len <= PY_WIN && !bpf_probe_read_user(w.sc->mem, len, (void *)lo)) {
				w.sc->win_lo = lo;
				w.sc->win_len = len;
			}
		}
	}
	/* Shim frames take iterations too: room for one per Python frame. */
	bpf_loop(2 * EP_PY_MAX_FRAMES, py_frame_step, &w, 0);
	if (w.err)
		py_stat(EP_PY_ST_READ_ERR, 1);
	if (w.frame && w.n >= EP_PY_MAX_FRAMES) {
		ps->flags |= EP_PYSTACK_F_TRUNCATED;
		py_stat(EP_PY_ST_TRUNCATED, 1);
	}
	ps->nframes = w.n;
	return w.n;
}

/* Where the current thread is in Python, in one word, with a short walk:
 * its PY_WHERE_DEPTH innermost frames' addresses, code objects and
 * instructions hashed (0 when it runs none). The off-CPU side mixes it
 * into the wait site's key (sched_acct.h), so a thread blocking at the
 * same native call from another Python caller is walked again instead of
 * taking the previous caller's stack (3.11+ calls Python from Python
 * without a C frame: the native site alone cannot tell them apart). */
#define PY_WHERE_DEPTH 4

/* Out of line: its walk state would otherwise sit in the caller's frame,
 * under the deeper call chain of the native stack walk that follows it. */
static __noinline __attribute__((unused)) __u64 py_where(__u32 pid, __u32 tid)
{
	struct py_walk w = {};
	__u32 zero = 0;
	__u64 tstate, frame, h = 0;

	w.cfg = bpf_map_lookup_elem(&py_procs, &pid);
	if (!w.cfg)
		return 0;
	w.sc = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w.sc)
		return 0;
	w.now = bpf_ktime_get_ns();
	tstate = py_find_tstate(&w, tid);
	if (!tstate)
		return 0;
	frame = py_ts64(w.sc, tstate, w.cfg->tstate_frame);
	if (frame && w.cfg->cframe_frame != EP_PY_NO_OFF)
		frame = py_rd64(frame + w.cfg->cframe_frame);
	for (int i = 0; i < PY_WHERE_DEPTH && frame; i++) {
		if (bpf_probe_read_user(w.sc->mem + PY_ALONE, EP_PY_FRAME_READ, (void *)frame))
			break;
		h = (h ^ frame ^ py_buf64(w.sc, PY_ALONE, w.cfg->frame_code) ^
		     (py_buf64(w.sc, PY_ALONE, w.cfg->frame_instr) << 17)) *
		    0x9e3779b97f4a7c15ull;
		frame = py_buf64(w.sc, PY_ALONE, w.cfg->frame_back);
	}
	return h;
}

#ifdef PYFRAMES_RING
static __always_inline void py_walk_emit(const struct ep_event_hdr *hdr,
					 const struct ep_py_proc *cfg, __u64 now)
{
	struct py_scratch *sc;
	__u32 zero = 0, n;
	__u64 size;

	sc = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!sc)
		return;
	n = py_walk_into(cfg, hdr->tid, &sc->ps, now);
	if (!n)
		return;
	sc->ps.hdr = *hdr;
	sc->ps.hdr.type = EP_EV_PYSTACK;
	size = EP_PYSTACK_HDR_SIZE + (__u64)n * sizeof(struct ep_py_frame);
	if (size > sizeof(sc->ps))
		size = sizeof(sc->ps);
	/* No wakeup of its own: the sample right after it decides. */
	if (bpf_ringbuf_output(&PYFRAMES_RING, &sc->ps, size, BPF_RB_NO_WAKEUP)) {
		py_stat(EP_PY_ST_RINGBUF_FULL, 1);
		return;
	}
	py_stat(EP_PY_ST_STACKS, 1);
	py_stat(EP_PY_ST_FRAMES, n);
}

/* The hook: called with the header of the sample about to be sent. Its
 * own time is counted (two clock reads): the walk's cost per sample is
 * EP_PY_ST_WALK_NS / EP_PY_ST_WALKS, which the run-time stats of the whole
 * sampler cannot separate from the stack copies. */
static __always_inline void pyframes_emit(const struct ep_event_hdr *hdr)
{
	const struct ep_py_proc *cfg;
	__u32 pid = hdr->pid;
	__u64 t0;

	if (!py_enabled)
		return;
	/* Looked up once here for the whole walk, and the clock read once:
	 * each was done twice (~0.1 us of a ~1 us fixed cost). */
	cfg = bpf_map_lookup_elem(&py_procs, &pid);
	if (!cfg)
		return;
	py_stat(EP_PY_ST_WALKS, 1);
	t0 = bpf_ktime_get_ns();
	py_walk_emit(hdr, cfg, t0);
	py_stat(EP_PY_ST_WALK_NS, bpf_ktime_get_ns() - t0);
}
#endif

#endif
