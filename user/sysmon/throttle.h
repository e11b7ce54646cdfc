/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Throttling detection. PURE: a timeline of typed events in, throttle
 * episodes and a verdict out; no I/O, no clock, no globals. Every source
 * feeds the same event type: sysfs seeding (ts = run start), the
 * power/thermal tracepoints, /proc/stat busy shares, x86 thermal_throttle
 * counters and the Jetson sampler's throttle signals. Rules: docs/thermal.md.
 *
 * Events may come in any order and with gaps; each stream is sorted here.
 */
#ifndef EBPF_PROF_THROTTLE_H
#define EBPF_PROF_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define THR_NAME_LEN 48
/* Affected entities kept per episode; more are counted, not listed. */
#define THR_MAX_AFFECTED 32

enum thr_ev_type {
	THR_EV_FREQ = 1,     /* cpu: current frequency, a = kHz */
	THR_EV_FREQ_LIMITS,  /* cpu: policy limits, a = min kHz, b = max kHz */
	THR_EV_HW_MAX,	     /* cpu: hardware max (cpuinfo_max_freq), a = kHz */
	THR_EV_BUSY,	     /* cpu: busy share a (per-mille) over [ts - dur_ns, ts] */
	THR_EV_TRIP_DEF,     /* zone: trip `idx`: a = temp mC, b = hyst mC, trip_type */
	THR_EV_TEMP,	     /* zone: temperature a (mC) */
	THR_EV_TRIP_CROSSED, /* zone: trip `idx` of trip_type crossed upward */
	THR_EV_CDEV,	     /* cooling device `name`: cur state a */
	THR_EV_COUNTER,	     /* cpu: cumulative counter a of kind `counter` (x86) */
	THR_EV_EXTERNAL,     /* `name`: a != 0 active / 0 inactive, with `cause` */
};

enum thr_trip_type { THR_TRIP_ACTIVE, THR_TRIP_PASSIVE, THR_TRIP_HOT, THR_TRIP_CRITICAL };

enum thr_counter_kind {
	THR_CNT_CORE_THROTTLE, /* thermal_throttle/core_throttle_count */
	THR_CNT_PKG_THROTTLE,  /* thermal_throttle/package_throttle_count */
	THR_CNT_CORE_POWER_LIMIT,
	THR_CNT_PKG_POWER_LIMIT,
};

/* Causes, as bits: an episode may have several. */
enum thr_cause {
	THR_CAUSE_THERMAL_TRIP = 1u << 0,   /* zone at/above a passive/hot/critical trip */
	THR_CAUSE_FREQ_CAP = 1u << 1,	    /* busy CPU, policy max lowered during the run */
	THR_CAUSE_COOLING = 1u << 2,	    /* a non-fan cooling device above state 0 */
	THR_CAUSE_POWER_CAP = 1u << 3,	    /* power-limit counter rose / external power signal */
	THR_CAUSE_BUSY_BELOW_MAX = 1u << 4, /* busy CPU (or GPU) below its allowed max */
	THR_CAUSE_HW_THERMAL = 1u << 5,	    /* x86 thermal throttle counter rose */
};
#define THR_NCAUSES 6

enum thr_entity_kind { THR_ENT_CPU, THR_ENT_ZONE, THR_ENT_CDEV, THR_ENT_SOURCE };

struct thr_event {
	uint64_t ts_ns;	    /* CLOCK_MONOTONIC; 0 = "at run start" (seeding) */
	uint16_t type;	    /* enum thr_ev_type */
	uint16_t trip_type; /* enum thr_trip_type */
	int32_t cpu;	    /* CPU events */
	int32_t id;	    /* zone id (thermal_zoneN), trip index for TRIP_* in idx */
	int32_t idx;
	uint32_t counter; /* enum thr_counter_kind */
	uint32_t cause;	  /* THR_EV_EXTERNAL: enum thr_cause bit */
	int64_t a, b;
	uint64_t dur_ns;	 /* THR_EV_BUSY window */
	char name[THR_NAME_LEN]; /* zone type, cooling device type, external source */
};

struct thr_opts {
	uint64_t start_ns, end_ns;  /* the run; intervals are clipped to it */
	unsigned busy_permille;	    /* busy at or above this (0 = 900) */
	unsigned freq_tol_permille; /* "below max" means < max * (1 - tol) (0 = 50) */
	uint64_t merge_gap_ns;	    /* episodes closer than this are merged */
};

struct thr_entity {
	uint8_t kind; /* enum thr_entity_kind */
	int32_t id;   /* cpu or zone id; -1 if by name */
	char name[THR_NAME_LEN];
};

struct thr_episode {
	uint64_t start_ns, end_ns;
	uint32_t causes; /* enum thr_cause bits */
	size_t naffected;
	size_t affected_dropped;
	struct thr_entity affected[THR_MAX_AFFECTED];
};

enum thr_verdict { THR_VERDICT_UNKNOWN, THR_VERDICT_NOT_THROTTLED, THR_VERDICT_THROTTLED };

/* What could be judged: decides "not throttled" vs "unknown". */
enum thr_input {
	THR_IN_FREQ = 1u << 0, /* frequency and a max to compare with */
	THR_IN_BUSY = 1u << 1,
	THR_IN_ZONES = 1u << 2, /* temperature and trip points */
	THR_IN_COOLING = 1u << 3,
	THR_IN_COUNTERS = 1u << 4,
	THR_IN_EXTERNAL = 1u << 5,
};

struct thr_result {
	struct thr_episode *episodes;
	size_t nepisodes;
	uint64_t run_ns;
	uint64_t throttled_ns;
	double share; /* throttled_ns / run_ns, 0 if run_ns == 0 */
	enum thr_verdict verdict;
	uint32_t inputs; /* enum thr_input bits */
	uint32_t causes; /* union over episodes */
	size_t ignored;	 /* events rejected as invalid (bad cpu, unknown type) */
};

/* Returns 0 or -ENOMEM / -EINVAL; out is always safe to free afterwards. */
int throttle_analyze(const struct thr_event *ev, size_t n, const struct thr_opts *o,
		     struct thr_result *out);
void throttle_result_free(struct thr_result *r);
/* Share of [t0, t1) spent in episodes (for per-cycle shares); 0 if empty. */
double throttle_share_between(const struct thr_result *r, uint64_t t0, uint64_t t1);
const char *thr_cause_name(uint32_t cause_bit);
const char *thr_verdict_name(enum thr_verdict v);
/* Cooling devices whose type says fan: their state is cooling, not throttling. */
bool thr_cdev_is_fan(const char *type);

#endif
