/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames (bpf/pyframes.bpf.h, user/python/): CPython stacks walked
 * in the kernel.
 */
#ifndef EBPF_PROF_EVENTS_PYTHON_H
#define EBPF_PROF_EVENTS_PYTHON_H

#include "common.h"

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

#endif
