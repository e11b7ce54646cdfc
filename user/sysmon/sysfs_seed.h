/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Start-of-run state of CPU frequency, thermal zones, cooling devices and the
 * x86 thermal_throttle counters, read from sysfs relative to a root (the real
 * "/" or a fake tree: --sysfs-root). Paths are confined to the root (see
 * jetson_fs.h). Nothing here fails on a missing or unreadable file: each
 * value carries ok/err, and each family says whether it exists at all, so
 * "this machine has no cpufreq" is reported as unavailable, never as zeros.
 */
#ifndef EBPF_PROF_SYSFS_SEED_H
#define EBPF_PROF_SYSFS_SEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sysmon/throttle.h"

/* Bounds against hostile trees: more entries than this are counted, not read. */
#define SEED_MAX_CPUS  4096
#define SEED_MAX_ZONES 128
#define SEED_MAX_CDEVS 128
#define SEED_MAX_TRIPS 16
#define SEED_NAME_LEN  48

/* A reading: ok, or err = -errno, -EINVAL (garbage) or -ERANGE (absurd). */
struct seed_val {
	bool ok;
	int err;
	long long v;
};

enum seed_counter {
	SEED_CORE_THROTTLE,
	SEED_PKG_THROTTLE,
	SEED_CORE_PL,
	SEED_PKG_PL,
	SEED_NCOUNTERS
};

struct seed_cpu {
	int cpu;
	bool has_cpufreq;			   /* cpuN/cpufreq exists */
	struct seed_val cur_khz, min_khz, max_khz; /* scaling_* (policy) */
	struct seed_val hw_min_khz, hw_max_khz;	   /* cpuinfo_* (hardware) */
	char governor[32];
	char driver[32];
	bool has_throttle; /* cpuN/thermal_throttle exists (x86) */
	struct seed_val counters[SEED_NCOUNTERS];
};

struct seed_trip {
	int idx;
	struct seed_val temp_mc, hyst_mc;
	char type[16];
	int ttype; /* enum thr_trip_type, -1 unknown */
};

struct seed_zone {
	int id; /* N of thermal_zoneN */
	char type[SEED_NAME_LEN];
	struct seed_val temp_mc;
	size_t ntrips;
	struct seed_trip trips[SEED_MAX_TRIPS];
};

struct seed_cdev {
	int id;
	char type[SEED_NAME_LEN];
	struct seed_val cur_state, max_state;
};

struct sysfs_seed {
	struct seed_cpu *cpus;
	size_t ncpus;
	struct seed_zone *zones;
	size_t nzones;
	struct seed_cdev *cdevs;
	size_t ncdevs;
	size_t skipped;		/* entries beyond the bounds or with unusable names */
	bool cpufreq_available; /* some CPU has a readable frequency */
	bool thermal_available; /* some zone exists */
	bool throttle_counters_available;
};

/* Returns 0 (with whatever could be read), -ENOMEM, or -errno when the root
 * itself cannot be opened. */
int sysfs_seed_read(const char *root, struct sysfs_seed *s);
/* Re-reads the thermal_throttle counters of the CPUs in s (periodic use). */
int sysfs_seed_read_counters(const char *root, struct sysfs_seed *s);
void sysfs_seed_free(struct sysfs_seed *s);

/* Appends the seed as throttle events at time ts (0 = run start): hardware
 * max, policy limits, current frequency, trips, temperatures, cooling
 * states, counters. Returns the number appended or -ENOMEM. */
int sysfs_seed_to_events(const struct sysfs_seed *s, uint64_t ts, struct thr_event **ev, size_t *n,
			 size_t *cap);
/* Only the counters, for the periodic re-reads. */
int sysfs_seed_counters_to_events(const struct sysfs_seed *s, uint64_t ts, struct thr_event **ev,
				  size_t *n, size_t *cap);
/* "passive" -> THR_TRIP_PASSIVE ...; -1 if unknown. */
int seed_trip_type(const char *s);
/* Appends one event to a growable array; returns a pointer to it (zeroed) or NULL. */
struct thr_event *thr_events_push(struct thr_event **ev, size_t *n, size_t *cap);

#endif
