/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hands throttling evidence from sampler threads (the Jetson sysfs sampler)
 * to the throttling detector, which lives on the recorder thread. Bounded:
 * when the recorder falls behind, the oldest unread entries are kept and new
 * ones are counted as dropped.
 */
#ifndef EBPF_PROF_THROTTLE_FEED_H
#define EBPF_PROF_THROTTLE_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "jetson/jetson.h"

/* At 200 ms per Jetson sample the recorder drains every 10 ms; 256 entries
 * is 50 s of backlog. */
#define THROTTLE_FEED_CAP	  256
#define THROTTLE_FEED_MAX_SIGNALS 16

struct throttle_feed;

typedef void (*throttle_feed_fn)(void *ctx, uint64_t ts_ns,
				 const struct jetson_throttle_signal *sig, size_t nsig);

int throttle_feed_new(struct throttle_feed **out);
void throttle_feed_free(struct throttle_feed *f);
/* Thread-safe. Every sample is pushed, with or without signals: a sample
 * without signals is what ends an episode. */
void throttle_feed_push(struct throttle_feed *f, uint64_t ts_ns,
			const struct jetson_throttle_signal *sig, size_t nsig);
/* Calls fn for each queued entry in order; returns how many. */
size_t throttle_feed_drain(struct throttle_feed *f, throttle_feed_fn fn, void *ctx);
uint64_t throttle_feed_dropped(struct throttle_feed *f);

#endif
