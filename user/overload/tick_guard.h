/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sampler's own limit on its perf interrupt rate. Every CPU takes a
 * cpu-clock interrupt per sampling period whatever runs there (the BPF
 * program's target filter comes after the interrupt's cost is paid): on our
 * 2-vCPU VM such a tick costs ~6 us without any BPF program (the timer is
 * reprogrammed through the hypervisor), so -F 100000 took ~60% of every
 * CPU, an idle target included, and the collector's start-up (BPF loads)
 * ran 3-4 times slower. The kernel bounds this only where it throttles
 * perf (perf_event_max_sample_rate lowered, NMI-driven events); with the
 * sysctl at 100000 nothing does. Above TICK_GUARD_MAX_HZ the perf events
 * run at that rate instead of -F; each tick taken on a target stands for
 * requested/tick requested ticks, and the ones not taken are counted as
 * lost ("rate_limited"). docs/performance.md ("Overload guard").
 */
#ifndef EBPF_PROF_TICK_GUARD_H
#define EBPF_PROF_TICK_GUARD_H

#include <stdbool.h>
#include <stdint.h>

/* Per CPU. 10 kHz is a tick every 100 us: ~4-6% of a CPU in the tick here,
 * ~1% on bare metal, and room for the BPF program's own cost per target
 * sample (0.5-5 us) within the 10% the project allows itself. */
#define TICK_GUARD_MAX_HZ 10000u

struct tick_guard {
	uint32_t requested_hz; /* -F */
	uint32_t tick_hz;      /* what the perf events run at */
	/* Skipped ticks not yet whole, in units of 1/tick_hz. */
	uint64_t rem;
};

/* Sets the tick rate for requested_hz (> 0): itself, or the limit. */
void tick_guard_init(struct tick_guard *g, uint32_t requested_hz);
static inline bool tick_guard_limited(const struct tick_guard *g)
{
	return g->tick_hz < g->requested_hz;
}
/* The requested ticks skipped around n ticks taken on targets (kept or
 * dropped later: each stood for requested/tick of them). Exact over a run:
 * the fraction left is carried to the next call. */
uint64_t tick_guard_skipped(struct tick_guard *g, uint64_t n);

#endif
