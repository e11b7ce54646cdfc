/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cycles (bpf/cycles.bpf.c, user/cycles/): cycle boundaries.
 */
#ifndef EBPF_PROF_EVENTS_CYCLES_H
#define EBPF_PROF_EVENTS_CYCLES_H

#include "common.h"

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

#endif
