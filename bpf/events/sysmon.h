/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * System monitor (bpf/sysmon.bpf.c, user/sysmon/): memory, CPU frequency
 * and thermal events.
 */
#ifndef EBPF_PROF_EVENTS_SYSMON_H
#define EBPF_PROF_EVENTS_SYSMON_H

#include "common.h"

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

#endif
