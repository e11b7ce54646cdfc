// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "sysmon/throttle_feed.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct feed_entry {
	uint64_t ts_ns;
	size_t nsig;
	struct jetson_throttle_signal sig[THROTTLE_FEED_MAX_SIGNALS];
};

struct throttle_feed {
	pthread_mutex_t lock;
	struct feed_entry *q;
	size_t head, len;
	uint64_t dropped;
};

int throttle_feed_new(struct throttle_feed **out)
{
	struct throttle_feed *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->q = calloc(THROTTLE_FEED_CAP, sizeof(*f->q));
	if (!f->q) {
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->lock, NULL);
	*out = f;
	return 0;
}

void throttle_feed_free(struct throttle_feed *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f->q);
	free(f);
}

void throttle_feed_push(struct throttle_feed *f, uint64_t ts_ns,
			const struct jetson_throttle_signal *sig, size_t nsig)
{
	struct feed_entry *e;

	pthread_mutex_lock(&f->lock);
	if (f->len == THROTTLE_FEED_CAP) {
		f->dropped++;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	e = &f->q[(f->head + f->len) % THROTTLE_FEED_CAP];
	e->ts_ns = ts_ns;
	/* More simultaneous causes than this is one board on fire; the first
	 * ones are enough to name the episode. */
	e->nsig = nsig < THROTTLE_FEED_MAX_SIGNALS ? nsig : THROTTLE_FEED_MAX_SIGNALS;
	if (e->nsig)
		memcpy(e->sig, sig, e->nsig * sizeof(*sig));
	f->len++;
	pthread_mutex_unlock(&f->lock);
}

size_t throttle_feed_drain(struct throttle_feed *f, throttle_feed_fn fn, void *ctx)
{
	size_t n = 0;

	for (;;) {
		struct feed_entry e;

		/* Copy out so fn runs without the lock held. */
		pthread_mutex_lock(&f->lock);
		if (!f->len) {
			pthread_mutex_unlock(&f->lock);
			return n;
		}
		e = f->q[f->head];
		f->head = (f->head + 1) % THROTTLE_FEED_CAP;
		f->len--;
		pthread_mutex_unlock(&f->lock);
		fn(ctx, e.ts_ns, e.sig, e.nsig);
		n++;
	}
}

uint64_t throttle_feed_dropped(struct throttle_feed *f)
{
	uint64_t d;

	pthread_mutex_lock(&f->lock);
	d = f->dropped;
	pthread_mutex_unlock(&f->lock);
	return d;
}
