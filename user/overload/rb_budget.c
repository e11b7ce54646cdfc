// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/clock.h"
#include "overload/rb_budget.h"

#include <errno.h>
#include <time.h>

/* Reading the clock per record would cost ~20 ns against records handled in
 * ~1-50 us: every 16 keeps the overshoot under a millisecond. */
#define CHECK_EVERY 16
/* What the callback returns to make libbpf stop; told apart from a
 * handler's own error by b->spent. */
#define STOP_ERR (-ECANCELED)

int rb_budget_cb(void *ctx, void *data, size_t size)
{
	struct rb_budget *b = ctx;
	int err = 0;

	if (!b->discard)
		err = b->fn(b->ctx, data, size);
	b->handled++;
	if (err)
		return err;
	if (++b->since_check >= CHECK_EVERY) {
		b->since_check = 0;
		if (mono_ns() >= b->end_ns) {
			b->spent = true;
			return STOP_ERR;
		}
	}
	return 0;
}

static void start(struct rb_budget *b, uint64_t budget_ns, bool discard)
{
	b->end_ns = mono_ns() + budget_ns;
	b->since_check = 0;
	b->spent = false;
	b->discard = discard;
	b->handled = 0;
}

/* A libbpf return value into records handled or -errno. */
static int finish(struct rb_budget *b, int ret)
{
	if (b->spent) {
		b->cut_short++;
		ret = 0;
	}
	if (ret < 0 && ret != -EINTR)
		return ret;
	return b->handled > (uint64_t)INT32_MAX ? INT32_MAX : (int)b->handled;
}

int rb_budget_poll(struct ring_buffer *rb, struct rb_budget *b, int timeout_ms, uint64_t budget_ns)
{
	int ret;

	start(b, budget_ns, false);
	ret = ring_buffer__poll(rb, timeout_ms);
	/* Producers mostly submit without a wakeup, so the poll often returns
	 * on its timeout with data waiting: consume it, on the same budget. */
	if (!b->spent && (ret >= 0 || ret == -EINTR))
		ret = ring_buffer__consume(rb);
	return finish(b, ret);
}

int rb_budget_consume(struct ring_buffer *rb, struct rb_budget *b, uint64_t budget_ns)
{
	start(b, budget_ns, false);
	return finish(b, ring_buffer__consume(rb));
}

int64_t rb_budget_discard(struct ring_buffer *rb, struct rb_budget *b, uint64_t budget_ns)
{
	int ret;

	start(b, budget_ns, true);
	ret = ring_buffer__consume(rb);
	b->discard = false;
	if (b->spent)
		b->cut_short++;
	if (ret < 0 && !b->spent)
		return ret;
	return (int64_t)b->handled;
}
