/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --alert EXPR: thresholds on live metrics (docs/top.md). Pure: parsing,
 * evaluation against a struct live_metrics, and edge-triggered firing with
 * a bounded history for report.json. No I/O.
 */
#ifndef EBPF_PROF_ALERTS_H
#define EBPF_PROF_ALERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "top/top_live.h"

enum alert_metric {
	ALERT_RSS,	/* rss>80% (of RAM) or rss>4G (bytes, K/M/G/T suffix) */
	ALERT_TEMP,	/* hottest zone, °C */
	ALERT_GPU_TEMP, /* °C */
	ALERT_GPU_LOAD, /* % */
	ALERT_CYCLE,	/* last cycle / median of the earlier ones: cycle>1.5x */
	ALERT_DROPS,	/* events lost, all sources */
	ALERT_THROTTLED,
	ALERT_DISK, /* free space of the output directory's fs, % */
};

enum alert_op { ALERT_OP_GT, ALERT_OP_LT, ALERT_OP_SET };

enum alert_state { ALERT_OFF, ALERT_ON, ALERT_UNKNOWN };

struct alert_rule {
	enum alert_metric metric;
	enum alert_op op;
	double threshold;
	bool percent;  /* rss: threshold is a % of RAM */
	char text[48]; /* the expression, normalized (no blanks) */
};

/* Parses expr into *r. Returns 0 or -EINVAL with a reason in why. */
int alert_parse(const char *expr, struct alert_rule *r, char *why, size_t whylen);

/* Inputs the live metrics do not carry. NAN: unknown. */
struct alert_env {
	double disk_free_pct;
};

/* Evaluates r; *value gets the compared figure (NAN when unknown). */
enum alert_state alert_eval(const struct alert_rule *r, const struct live_metrics *m,
			    const struct alert_env *env, double *value);

/* Keeps at most this many fired alerts for report.json; later ones are
 * counted in `dropped`. */
#define ALERT_MAX_EVENTS 1024

struct alert_event {
	uint64_t ts_ns; /* CLOCK_MONOTONIC */
	int rule;	/* index into the set's rules */
	double value;
};

struct alert_set {
	struct alert_rule rules[16];
	size_t nrules;
	bool active[16]; /* condition held at the last step */
	bool unknown_said[16];
	bool evaluated[16];	/* had a known value at least once */
	int64_t cycle_seen[16]; /* cycle rules: newest cycle number judged, -1 none */
	struct alert_event *events;
	size_t nevents, cap;
	uint64_t dropped;
};

/* Parses every expression; on error *why names the bad one. */
int alert_set_init(struct alert_set *s, const char *const *exprs, size_t n, char *why,
		   size_t whylen);
void alert_set_free(struct alert_set *s);

/* What one evaluation round found for rule i. */
struct alert_fire {
	int rule;
	double value;
	bool unavailable; /* first time the rule could not be evaluated */
};

/* Evaluates every rule; an alert fires when its condition becomes true
 * (edge, not level), and once per rule the first time it cannot be
 * evaluated. Fired ones go to out (up to max) and the history. Returns how
 * many were written to out. */
size_t alert_set_step(struct alert_set *s, uint64_t now_ns, const struct live_metrics *m,
		      const struct alert_env *env, struct alert_fire *out, size_t max);

/* "rss 83.1% > 80%" style text for a fired alert. */
void alert_describe(const struct alert_rule *r, double value, char *buf, size_t len);

#endif
