/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * NVIDIA Jetson telemetry from sysfs: board detection, one-shot snapshots,
 * a periodic sampler for recording runs, throttling signals, report.json and
 * trace.json output, the `ebpf-prof jetson` subcommand and a tegrastats line
 * parser. Units and sources: docs/jetson.md.
 *
 * Raw integers are kept exactly as the kernel reports them (per-mille, Hz,
 * mV, mA, milli-C); conversions happen once, in the JSON writers, so that
 * values match the test oracle bit for bit.
 */
#ifndef EBPF_PROF_JETSON_H
#define EBPF_PROF_JETSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#define JETSON_NAME_LEN	   64
#define JETSON_MAX_RAILS   16
#define JETSON_MAX_ZONES   32
#define JETSON_MAX_TRIPS   12
#define JETSON_MAX_COOLING 32
#define JETSON_MAX_FANS	   4
#define JETSON_MAX_OC	   6
#define JETSON_MAX_SIGNALS 48

/* Default sampling period; see docs/jetson.md for the measured cost behind it. */
#define JETSON_DEFAULT_INTERVAL_MS 200
#define JETSON_MIN_INTERVAL_MS	   10

/* Temperature that Tegra thermal drivers report for a powered-down sensor. */
#define JETSON_TEMP_OFFLINE_MC (-256000LL)

struct jetson_board {
	bool is_jetson;
	char model[128];	/* device-tree model, "" if unknown */
	char soc[32];		/* last "nvidia,tegraNNN" of compatible, without "nvidia," */
	char l4t[32];		/* "36.4.3" from etc/nv_tegra_release, "" if absent */
	char why[256];		/* evidence for / against */
	char nvidia_driver[64]; /* desktop driver version (proc/driver/nvidia/version), "" */
};

/* A reading: ok, or err = -errno / -EINVAL (garbage) / -ERANGE (absurd value). */
struct jetson_val {
	bool ok;
	int err;
	long long v;
};

struct jetson_gpu {
	bool present;
	char devfreq[JETSON_NAME_LEN]; /* devfreq device name, e.g. 17000000.gpu */
	char of_node_name[JETSON_NAME_LEN];
	char governor[JETSON_NAME_LEN];
	struct jetson_val load_permille; /* 0..1000 */
	struct jetson_val cur_hz, min_hz, max_hz;
};

enum jetson_rail_layout { JETSON_RAIL_HWMON, JETSON_RAIL_IIO };

struct jetson_rail {
	char name[JETSON_NAME_LEN];
	char device[JETSON_NAME_LEN]; /* i2c device, e.g. 1-0040 */
	int channel;
	enum jetson_rail_layout layout;
	struct jetson_val mv, ma;
	struct jetson_val power_uw; /* mV x mA (hwmon) or driver mW x 1000 (iio) */
};

struct jetson_trip {
	long long temp_mc;
	long long hyst_mc; /* 0 if unreadable */
	char type[16];	   /* active, passive, hot, critical */
};

enum jetson_zone_state { JETSON_ZONE_OK, JETSON_ZONE_OFFLINE, JETSON_ZONE_UNAVAILABLE };

struct jetson_zone {
	char type[JETSON_NAME_LEN];
	char node[24]; /* thermal_zoneN */
	enum jetson_zone_state state;
	int err; /* for UNAVAILABLE */
	long long temp_mc;
	size_t ntrips;
	struct jetson_trip trips[JETSON_MAX_TRIPS];
};

struct jetson_cooling {
	char type[JETSON_NAME_LEN];
	char node[24];
	struct jetson_val cur_state, max_state;
};

struct jetson_fan {
	char source[JETSON_NAME_LEN]; /* "pwmfan hwmon0", "pwm-fan" */
	struct jetson_val pwm;	      /* 0..255 */
	struct jetson_val rpm;
};

struct jetson_snapshot {
	uint64_t mono_ns;
	struct jetson_board board;
	struct jetson_gpu gpu;
	size_t nrails;
	struct jetson_rail rails[JETSON_MAX_RAILS];
	int total_rail; /* index of VDD_IN/POM_5V_IN, -1 = sum of all rails */
	struct jetson_val total_uw;
	size_t nzones;
	struct jetson_zone zones[JETSON_MAX_ZONES];
	size_t ncooling;
	struct jetson_cooling cooling[JETSON_MAX_COOLING];
	size_t nfans;
	struct jetson_fan fans[JETSON_MAX_FANS];
	struct jetson_val emc_hz;     /* debugfs, root only */
	struct jetson_val emc_mc_all; /* actmon average activity */
	size_t noc;
	struct jetson_val oc_event_cnt[JETSON_MAX_OC]; /* soctherm_oc ocN_event_cnt, N = i+1 */
	struct jetson_val power_mode_id;
	char power_mode_name[JETSON_NAME_LEN];
	bool debugfs_denied; /* some debugfs file returned EACCES/EPERM */
};

struct jetson_reader_opts {
	const char *sysfs_root; /* NULL or "/" = the real system */
	bool deny_debugfs;	/* behave as if sys/kernel/debug were root-only and we were not */
};

/* Discovery state: where the GPU, rails, zones, fans are. Re-probes on loss. */
struct jetson_reader;

int jetson_reader_open(struct jetson_reader **out, const struct jetson_reader_opts *opts);
void jetson_reader_close(struct jetson_reader *r);
const struct jetson_board *jetson_reader_board(const struct jetson_reader *r);
/* Reads everything once into s (timestamps with CLOCK_MONOTONIC). Never fails on
 * a missing or unreadable source: that source is marked in s instead. */
int jetson_reader_sample(struct jetson_reader *r, struct jetson_snapshot *s);

/* Board detection only (also used for "not a Jetson"). */
int jetson_detect(const char *sysfs_root, struct jetson_board *b);

/* Throttling evidence of one snapshot. */
enum jetson_throttle_kind {
	JETSON_THR_GPU_BUSY_BELOW_MAX, /* load >= 90 % while cur_freq < max_freq */
	JETSON_THR_ZONE_TRIP,	       /* zone at/above a passive/hot/critical trip */
	JETSON_THR_COOLING_ALERT,      /* *-throttle-alert / hot-surface-alert cur_state > 0 */
};

struct jetson_throttle_signal {
	enum jetson_throttle_kind kind;
	char source[JETSON_NAME_LEN]; /* zone type, cooling device type, "gpu" */
	long long value;	      /* milli-C, cur_state, or load per-mille */
	long long limit;	      /* trip milli-C, 0, or max_freq Hz */
	char detail[160];	      /* human sentence */
};

#define JETSON_GPU_BUSY_PERMILLE 900

/* Fills up to max signals; returns how many were found (may exceed max). */
size_t jetson_throttle_signals(const struct jetson_snapshot *s, struct jetson_throttle_signal *out,
			       size_t max);
/* 1 throttled, 0 not, -1 not determined (not a Jetson). */
int jetson_snapshot_throttled(const struct jetson_snapshot *s);
const char *jetson_throttle_kind_name(enum jetson_throttle_kind k);

/* Snapshot as JSON in the shape of shared/fixtures/jetson/expected/<tree>.json. */
cJSON *jetson_snapshot_json(const struct jetson_snapshot *s);

/* ---- sampler for a recording run ---- */
struct jetson_sampler;

/* Called from the sampler thread after each sample (optional). */
typedef void (*jetson_sample_cb)(void *ctx, const struct jetson_snapshot *s,
				 const struct jetson_throttle_signal *sig, size_t nsig);

struct jetson_sampler_opts {
	const char *sysfs_root;
	unsigned interval_ms; /* 0 = JETSON_DEFAULT_INTERVAL_MS */
	bool deny_debugfs;
	size_t timeline_cap; /* 0 = JETSON_TIMELINE_CAP */
	jetson_sample_cb on_sample;
	void *cb_ctx;
};

/* Points kept for counter tracks; when full the timeline is halved (every
 * second point dropped) and the keep-stride doubles, so it always covers the
 * whole run at decreasing resolution. */
#define JETSON_TIMELINE_CAP 4096

/* -ENODEV when not a Jetson (logged once at info level). */
int jetson_sampler_start(struct jetson_sampler **out, const char *sysfs_root, unsigned interval_ms);
int jetson_sampler_start_opts(struct jetson_sampler **out, const struct jetson_sampler_opts *o);
/* Joins the thread; samples and aggregates stay readable until free. */
void jetson_sampler_stop(struct jetson_sampler *s);
void jetson_sampler_free(struct jetson_sampler *s);
uint64_t jetson_sampler_count(const struct jetson_sampler *s);
/* Total energy so far (J), trapezoid over total board power; <0 if unknown. */
double jetson_sampler_energy_j(const struct jetson_sampler *s);
/* Energy (J) between two CLOCK_MONOTONIC instants, from the timeline; <0 if
 * not covered. For per-cycle energy. */
double jetson_sampler_energy_between(const struct jetson_sampler *s, uint64_t t0_ns,
				     uint64_t t1_ns);
/* Samples seen throttled, and the first/last such time (0 if none). */
uint64_t jetson_sampler_throttled_samples(const struct jetson_sampler *s, uint64_t *first_ns,
					  uint64_t *last_ns);

int jetson_report_json(const struct jetson_sampler *s, cJSON *report);
int jetson_trace_counters(const struct jetson_sampler *s, FILE *out, uint32_t pid, bool *first);

/* ---- tegrastats ---- */
/* Parses one tegrastats line into a JSON object (same keys as snapshots where
 * they overlap). Returns NULL if the line has no recognisable field. */
cJSON *jetson_tegrastats_parse_line(const char *line);
/* tegrastats lines are < 2 KiB; a line longer than this is not one. */
#define JETSON_TEGRASTATS_LINE_MAX 65536
/* Reads one line (without its '\n') into buf (cap bytes, NUL-terminated),
 * never holding more than cap bytes whatever the input (reading
 * /dev/zero grew getline's buffer to 3.7 GB). Returns its length, -1 at
 * the end of input, or -E2BIG when the line does not fit: the rest of it is
 * left unread, the input is not tegrastats output. */
int jetson_tegrastats_read_line(FILE *f, char *buf, size_t cap);

/* ---- CLI ---- */
int jetson_cmd_main(int argc, char **argv);

#endif
