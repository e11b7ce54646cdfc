// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cycle facts sink alone (user/cycles/cycle_sink.c), as the recorder drives
 * it: RATE spans/s (plus 2 x 999 samples/s) for SECONDS of simulated time,
 * cycles of CYCLE_MS, a flush every 10 ms. Prints the CPU time per fact
 * (append, prune, attribution) and the peak of held facts.
 *
 *   cc -O2 -Iuser -Ibpf -D_GNU_SOURCE tools/bench/cycle_sink_bench.c \
 *      BUILD/libebpfprof_core.a -lm -o /tmp/csb && /tmp/csb [RATE] [SECONDS] [CYCLE_MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cycles/cycle_sink.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 200000, secs = argc > 2 ? atof(argv[2]) : 60;
	uint64_t cyc = (uint64_t)((argc > 3 ? atof(argv[3]) : 100) * 1e6), t = 1000000000ull;
	uint64_t end = t + (uint64_t)(secs * 1e9), tick = 10000000ull, facts = 0, open_at = t;
	struct cycle_sink_cfg cfg = { CYCLE_MODE_PAIRS, 1000000000ull, 1001001, 1u << 20, false };
	struct cycle_sink *s = cycle_sink_new(&cfg);
	const char *fn[4] = { "a", "b", "c", "d" };
	double c0 = cpu_s();

	if (!s || rate <= 0 || secs <= 0 || !cyc)
		return 2;
	cycle_sink_set_active(s, true);
	cycle_sink_begin(s, t, 1);
	for (; t < end; t += tick) {
		uint64_t n = (uint64_t)(rate * tick / 1e9), step = tick / (n ? n : 1);

		for (uint64_t k = 0; k < n; k++) {
			struct cyc_span sp = { t + k * step,
					       t + k * step + step / 2,
					       1,
					       CYC_SPAN_OTHER,
					       0,
					       "span_fn",
					       NULL };

			cycle_sink_span(s, &sp);
		}
		for (int k = 0; k < 20; k++)
			cycle_sink_sample(s, t + (uint64_t)k * 500000, 1, fn[k % 4]);
		facts += n + 20;
		if (t + tick - open_at >= cyc) {
			cycle_sink_end(s, t + tick, 1);
			cycle_sink_begin(s, t + tick, 1);
			open_at = t + tick;
		}
		if (cycle_sink_flush(s, t + tick, false) < 0)
			return 1;
	}
	cycle_sink_flush(s, end, true);
	double c1 = cpu_s();

	printf("rate %.0f spans/s, %.0f s, cycles of %.0f ms: %zu cycles, %.1f ns CPU per fact "
	       "(%.2f%% of a core), peak %zu facts held, late %llu, over cap %llu\n",
	       rate, secs, cyc / 1e6, cycle_sink_table(s)->n, (c1 - c0) * 1e9 / (double)facts,
	       (c1 - c0) / secs * 100, cycle_sink_stats(s)->peak_held_facts,
	       (unsigned long long)cycle_sink_stats(s)->late_facts,
	       (unsigned long long)cycle_sink_stats(s)->dropped_facts);
	cycle_sink_free(s);
	return 0;
}
