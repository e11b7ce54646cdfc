/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The --metrics endpoint (docs/metrics.md): Prometheus / OpenMetrics text
 * at GET /metrics, served by libmicrohttpd in a process of its own that
 * runs without root (metrics_server.c).
 *
 * The recorder thread fills a snapshot from what the modules already
 * computed (struct live_metrics, the profile's sample counts) and
 * publishes it into memory shared with that process, which copies it and
 * renders its copy. It never sees module or recorder state.
 */
#ifndef EP_EXPORT_METRICS_H
#define EP_EXPORT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "profile/profile.h"
#include "top/top_live.h"

struct run_info;

struct metrics_pid {
	uint32_t pid;
	char comm[PROF_COMM_LEN];
	uint64_t samples;
};

struct metrics_snap {
	struct live_metrics live;
	struct metrics_pid pids[LIVE_MAX_PIDS]; /* the first targets seen */
	size_t npids;
};

/* The snapshot of the recorder's state now (recorder thread). */
void metrics_snap_fill(struct metrics_snap *s, const struct live_metrics *l,
		       const struct profile *p, const struct run_info *ri);

/* The exposition text: OpenMetrics 1.0 (with "# EOF") when openmetrics,
 * else Prometheus text 0.0.4. Unknown values are left out, not 0. Returns
 * 0 or -EIO. */
int metrics_render(const struct metrics_snap *s, bool openmetrics, FILE *out);

/* Parses ADDR:PORT: an IPv4 literal or a bracketed IPv6 literal ("[::1]"),
 * no host names (no resolver in a root process), port 1..65535. Sets
 * *loopback. Returns 0 or -EINVAL with the reason in why. */
int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, bool *loopback,
		       char *why, size_t whylen);

struct metrics_server;

/* Listens on addr (validated by metrics_parse_addr) and serves from now
 * on, from a forked process (uid SUDO_UID or nobody, no capabilities,
 * seccomp); until the first publish, /metrics has only the families
 * without values. Returns 0 or -errno (logged). */
int metrics_server_start(struct metrics_server **out, const char *addr);

/* Recorder thread: a fresh snapshot at most every 250 ms (scrapes are
 * seconds apart; the copy is cheap, the per-pid sums are not free). */
void metrics_server_update(struct metrics_server *m, const struct live_metrics *l,
			   const struct profile *p, const struct run_info *ri, uint64_t now_ns);

/* The recorder is about to start a fresh profile (--rotate): p's sample
 * counts are carried into the counters, which never go back. */
void metrics_server_fold(struct metrics_server *m, const struct profile *p);

/* Requests answered so far (any status). */
uint64_t metrics_server_requests(struct metrics_server *m);

/* The server process (tests), 0 once it has ended. */
pid_t metrics_server_pid(const struct metrics_server *m);

void metrics_server_stop(struct metrics_server *m);

#endif
