/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Recording module: memory, CPU frequency, thermal and throttling
 * (bpf/sysmon.bpf.c + memory.c + thermal.c + throttle.c). */
#ifndef EBPF_PROF_SYSMON_MODULE_H
#define EBPF_PROF_SYSMON_MODULE_H

#include "rec_module.h"

/* /proc sampling period (VM size, faults, CPU busy shares). */
#define SYSMON_SAMPLE_PERIOD_MS 100
/* thermal_throttle counters are one file per CPU and kind: read less often. */
#define SYSMON_COUNTER_PERIOD_MS 1000
/* A child followed during the run that exits younger than this (since it
 * was followed) is not read from /proc at its exit. */
#define SYSMON_CHILD_MIN_LIFE_NS (20ull * 1000 * 1000)

extern const struct rec_module sysmon_rec_module;

#endif
