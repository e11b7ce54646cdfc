/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Live metrics: the latest value of each figure the live view (ebpf-prof top)
 * and the alerts show. Modules write their fields from their poll hook (the
 * recorder thread, so no locking); the top module reads them. A field nobody
 * wrote stays "unknown" (NAN for doubles, -1 for integers), never 0: 0 °C or
 * 0 drops would be a claim.
 */
#ifndef EBPF_PROF_TOP_LIVE_H
#define EBPF_PROF_TOP_LIVE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIVE_MAX_PROBES 64
/* Allocating stacks shown in the live view's memory pane (--alloc). */
#define LIVE_MAX_ALLOC	5
#define LIVE_MAX_CYCLES 32
/* Per-item figures of the metrics endpoint (docs/metrics.md). */
#define LIVE_MAX_PIDS  32
#define LIVE_MAX_CPUS  64
#define LIVE_MAX_ZONES 32
/* Upper bounds (seconds) of the latency histograms' buckets, +Inf last. */
#define LIVE_HIST_NB 14
static inline double live_hist_le(int i)
{
	static const double le[LIVE_HIST_NB] = { 1e-6, 1e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2,
						 5e-2, 0.1,  0.25, 0.5,	 1,    5,    10 };

	return le[i];
}

/* Cumulative counts at live_hist_le(i), as Prometheus histograms want them. */
struct live_hist {
	uint64_t le[LIVE_HIST_NB];
	uint64_t count;
	double sum_s;
};

/* Parts of a cycle's wall time in the cycle strip (shares of the wall). */
enum live_cyc_part {
	LIVE_CYC_INFER,
	LIVE_CYC_SQL,
	LIVE_CYC_OFFCPU,
	LIVE_CYC_PROBE, /* other probes and GC */
	LIVE_CYC_OTHER,
	LIVE_CYC_PARTS
};

/* Whose drop counters: each source writes its own running total. */
enum live_src {
	LIVE_SRC_SAMPLER,
	LIVE_SRC_SYSMON,
	LIVE_SRC_SCHED,
	LIVE_SRC_PROBES,
	LIVE_SRC_JETSON,
	LIVE_SRC__COUNT
};

struct live_probe {
	char name[40];
	double rate_hz;	       /* calls per second over the module's last window */
	double p50_ns, p99_ns; /* NAN: count-only probe */
	char library[64];      /* file name of the probed library */
	uint64_t calls;	       /* calls so far */
	bool timed;	       /* has durations (not a count-only probe) */
	struct live_hist dur;  /* their durations; count 0: count-only */
};

/* One allocating stack (--alloc), by its allocating function. */
struct live_alloc {
	char name[48];
	double live_bytes;  /* estimated, not freed so far */
	double alloc_bytes; /* estimated, allocated so far */
};

struct live_metrics {
	double rss_bytes; /* sum over live targets */
	double rss_pct;	  /* of MemTotal */
	double proc_cpu_pct;
	double temp_c;	/* hottest thermal zone */
	double cpu_mhz; /* mean current frequency */
	double gpu_load_pct, gpu_power_w, gpu_temp_c;
	int throttled;			/* -1 unknown, 0 no, 1 yes (now) */
	int64_t drops[LIVE_SRC__COUNT]; /* running totals, -1 unknown */
	struct live_probe probes[LIVE_MAX_PROBES];
	size_t nprobes;
	/* --alloc (estimates from the sampled allocations): off when !alloc_on. */
	bool alloc_on;
	double alloc_rate_bps;	 /* bytes allocated per second, last window */
	double alloc_live_bytes; /* sampled blocks not freed */
	double alloc_growth_bps; /* change of alloc_live_bytes per second, last window */
	struct live_alloc alloc[LIVE_MAX_ALLOC]; /* most live bytes first */
	size_t nalloc;
	char slowest_sql[160]; /* "" unknown */
	double slowest_sql_ns;
	double tokens_per_s;
	/* LLM timing from llama_decode's batches (llama/llm_track.h), since
	 * the start; llm_on false until a decode's batch was read. Rates,
	 * KV fill and size NAN when unknown. */
	bool llm_on;
	uint64_t llm_prompts, llm_prompt_tokens, llm_generated_tokens;
	double llm_prompt_tps, llm_gen_tps;
	double llm_ttft_p50_ms, llm_itl_p50_ms;
	double llm_kv_used, llm_kv_size; /* the last decode's fill, n_ctx */
	struct live_hist llm_ttft, llm_itl;
	/* Cycles (one iteration of the experiment's main loop), newest last. */
	int64_t cycle_no;
	double cycle_ms[LIVE_MAX_CYCLES];
	size_t ncycles;
	/* Over every cycle closed so far (not only the strip). */
	double cycle_p50_ms, cycle_p95_ms, cycle_max_ms;
	int64_t cycle_max_no;
	/* Per strip entry: its start (to find it when attributed, a lag
	 * later) and the shares of its wall time, NAN until then. */
	uint64_t cycle_start_ns[LIVE_MAX_CYCLES];
	double cycle_part[LIVE_MAX_CYCLES][LIVE_CYC_PARTS];
	/* For the metrics endpoint: running totals and per-item values. */
	uint64_t cycles_closed;
	struct live_hist cycle_wall;
	double cycle_part_s[LIVE_CYC_PARTS]; /* summed over attributed cycles */
	struct {
		uint32_t pid;
		double bytes;
	} rss[LIVE_MAX_PIDS];
	size_t nrss;
	struct {
		int cpu;
		double hz;
	} cpu_freq[LIVE_MAX_CPUS];
	size_t ncpu_freq;
	struct {
		int id;	       /* N of thermal_zoneN */
		char name[48]; /* its type, e.g. x86_pkg_temp */
		double c;
	} zones[LIVE_MAX_ZONES];
	size_t nzones;
};

static inline void live_metrics_init(struct live_metrics *m)
{
	*m = (struct live_metrics){
		.rss_bytes = NAN,
		.rss_pct = NAN,
		.proc_cpu_pct = NAN,
		.temp_c = NAN,
		.cpu_mhz = NAN,
		.gpu_load_pct = NAN,
		.gpu_power_w = NAN,
		.gpu_temp_c = NAN,
		.throttled = -1,
		.slowest_sql_ns = NAN,
		.tokens_per_s = NAN,
		.llm_prompt_tps = NAN,
		.llm_gen_tps = NAN,
		.llm_ttft_p50_ms = NAN,
		.llm_itl_p50_ms = NAN,
		.llm_kv_used = NAN,
		.llm_kv_size = NAN,
		.cycle_no = -1,
		.cycle_p50_ms = NAN,
		.cycle_p95_ms = NAN,
		.cycle_max_ms = NAN,
		.cycle_max_no = -1,
	};
	for (int i = 0; i < LIVE_SRC__COUNT; i++)
		m->drops[i] = -1;
	for (int i = 0; i < LIVE_MAX_CYCLES; i++)
		for (int k = 0; k < LIVE_CYC_PARTS; k++)
			m->cycle_part[i][k] = NAN;
}

/* h from a log-linear histogram of ns values (histogram.h). A bucket that
 * straddles a bound counts under it: a value up to one bucket width (1/16
 * of it) above a bound may be counted at that bound. */
struct histogram;
void live_hist_from(struct live_hist *h, const struct histogram *src);

/* Sum of the known drop totals, -1 when none is known. */
static inline int64_t live_drops_total(const struct live_metrics *m)
{
	int64_t t = -1;

	for (int i = 0; i < LIVE_SRC__COUNT; i++)
		if (m->drops[i] >= 0)
			t = (t < 0 ? 0 : t) + m->drops[i];
	return t;
}

#endif
