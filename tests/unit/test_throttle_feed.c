// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cross-thread feed from the Jetson sampler to the throttling detector:
 * order kept, signals copied, bounded with drops counted, safe under a
 * concurrent producer. */
#include <pthread.h>
#include <stdint.h>

#include "check.h"
#include "sysmon/throttle_feed.h"

struct seen {
	uint64_t last_ts;
	size_t n, nsig, out_of_order;
	char first_source[64];
};

static void on_entry(void *ctx, uint64_t ts, const struct jetson_throttle_signal *sig, size_t nsig)
{
	struct seen *s = ctx;

	if (s->n && ts <= s->last_ts)
		s->out_of_order++;
	if (!s->n && nsig)
		snprintf(s->first_source, sizeof(s->first_source), "%s", sig[0].source);
	s->last_ts = ts;
	s->n++;
	s->nsig += nsig;
}

static void *producer(void *arg)
{
	struct throttle_feed *f = arg;
	struct jetson_throttle_signal sig = { .kind = JETSON_THR_ZONE_TRIP };

	for (uint64_t i = 1; i <= 20000; i++)
		throttle_feed_push(f, i, &sig, 1);
	return NULL;
}

int main(void)
{
	struct throttle_feed *f;
	struct jetson_throttle_signal sig[THROTTLE_FEED_MAX_SIGNALS + 4] = {};
	struct seen s = {};

	CHECK_INT_EQ(throttle_feed_new(&f), 0);
	snprintf(sig[0].source, sizeof(sig[0].source), "gpu-thermal");
	throttle_feed_push(f, 10, sig, 1);
	throttle_feed_push(f, 20, NULL, 0); /* a calm sample ends an episode */
	/* More signals than an entry holds: clipped, not overflowed. */
	throttle_feed_push(f, 30, sig, THROTTLE_FEED_MAX_SIGNALS + 4);
	sig[0].source[0] = 'X'; /* the feed must have copied */
	CHECK_INT_EQ(throttle_feed_drain(f, on_entry, &s), 3);
	CHECK_INT_EQ(s.n, 3);
	CHECK_INT_EQ(s.nsig, 1 + THROTTLE_FEED_MAX_SIGNALS);
	CHECK_STR_EQ(s.first_source, "gpu-thermal");
	CHECK_INT_EQ(s.out_of_order, 0);
	CHECK_INT_EQ(throttle_feed_drain(f, on_entry, &s), 0);

	/* Full: the backlog is kept, the excess counted. */
	for (uint64_t i = 0; i < THROTTLE_FEED_CAP + 7; i++)
		throttle_feed_push(f, 100 + i, NULL, 0);
	CHECK_INT_EQ(throttle_feed_dropped(f), 7);
	memset(&s, 0, sizeof(s));
	CHECK_INT_EQ(throttle_feed_drain(f, on_entry, &s), THROTTLE_FEED_CAP);
	CHECK_INT_EQ(s.last_ts, 100 + THROTTLE_FEED_CAP - 1);

	/* Concurrent producer, draining consumer: every entry either arrives
	 * in order or is counted as dropped. */
	throttle_feed_free(f);
	CHECK_INT_EQ(throttle_feed_new(&f), 0);
	memset(&s, 0, sizeof(s));
	pthread_t t;
	pthread_create(&t, NULL, producer, f);
	for (int i = 0; i < 100000 && s.n + throttle_feed_dropped(f) < 20000; i++)
		throttle_feed_drain(f, on_entry, &s);
	pthread_join(t, NULL);
	throttle_feed_drain(f, on_entry, &s);
	CHECK_INT_EQ(s.n + throttle_feed_dropped(f), 20000);
	CHECK_INT_EQ(s.out_of_order, 0);
	throttle_feed_free(f);
	return check_report("test_throttle_feed");
}
