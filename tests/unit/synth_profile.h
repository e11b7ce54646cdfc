/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small hand-made profile shared by the exporter tests. Every expected
 * value in those tests is derived from the sample list below, by hand. */
#ifndef EP_SYNTH_PROFILE_H
#define EP_SYNTH_PROFILE_H

#include <stdlib.h>

#include "profile/profile.h"

#define SYNTH_PERIOD 10000000ULL /* 100 Hz */

enum { F_MAIN, F_WORK, F_SEMI, F_COLON, F_NL, F_SYS, F__N };

struct synth_frames {
	uint32_t f[F__N];
};

/*
 * thread A  pid 100 tid 100 "app":    ts 1000 [main,work] ; 2000 [main,work] ;
 *                                      3000 [main,work,sys_read(k)] (in kernel) ;
 *                                      4000 [main,work]
 * thread B  pid 100 tid 101 "app":    ts 1500 [main,"a;b"] x2 (1500, 2500) ;
 *                                      3500 [main,work] ;
 *                                      4500 [main,"a:b"(other module)] x3 (4500,5500,6500)
 * thread C  pid 200 tid 200 "other":  ts 400 [main,"line\nbreak"]
 * thread D  pid 300 tid 300 "we;ird": ts 7000 [main] x2 (7000, 8000)
 * thread E  pid 300 tid 301 "idle":   no samples
 * totals: 13 samples, 1 kernel, 12 user.
 */
static inline int synth_build(struct profile *p, struct synth_frames *fr)
{
	if (profile_init(p, 100))
		return -1;
	fr->f[F_MAIN] = (uint32_t)profile_intern_frame(p, "main", "/usr/bin/app", false);
	fr->f[F_WORK] = (uint32_t)profile_intern_frame(p, "work", "/usr/bin/app", false);
	fr->f[F_SEMI] = (uint32_t)profile_intern_frame(p, "a;b", "/usr/lib/libx.so", false);
	fr->f[F_COLON] = (uint32_t)profile_intern_frame(p, "a:b", "/usr/lib/liby.so", false);
	fr->f[F_NL] = (uint32_t)profile_intern_frame(p, "line\nbreak", NULL, false);
	fr->f[F_SYS] = (uint32_t)profile_intern_frame(p, "sys_read", NULL, true);
	uint32_t a = (uint32_t)profile_thread(p, 100, 100, "app");
	uint32_t b = (uint32_t)profile_thread(p, 100, 101, "app");
	uint32_t c = (uint32_t)profile_thread(p, 200, 200, "other");
	uint32_t d = (uint32_t)profile_thread(p, 300, 300, "we;ird");
	profile_thread(p, 300, 301, "idle");
	uint32_t mw[] = { fr->f[F_MAIN], fr->f[F_WORK] };
	uint32_t mws[] = { fr->f[F_MAIN], fr->f[F_WORK], fr->f[F_SYS] };
	uint32_t ms[] = { fr->f[F_MAIN], fr->f[F_SEMI] };
	uint32_t mc[] = { fr->f[F_MAIN], fr->f[F_COLON] };
	uint32_t mn[] = { fr->f[F_MAIN], fr->f[F_NL] };
	uint32_t m[] = { fr->f[F_MAIN] };
	int e = 0;
	e |= profile_add_sample(p, a, 1000, mw, 2, 0, false);
	e |= profile_add_sample(p, a, 2000, mw, 2, 0, false);
	e |= profile_add_sample(p, a, 3000, mws, 3, 1, true);
	e |= profile_add_sample(p, a, 4000, mw, 2, 0, false);
	e |= profile_add_sample(p, b, 1500, ms, 2, 0, false);
	e |= profile_add_sample(p, b, 2500, ms, 2, 0, false);
	e |= profile_add_sample(p, b, 3500, mw, 2, 0, false);
	for (int i = 0; i < 3; i++)
		e |= profile_add_sample(p, b, 4500 + 1000 * (uint64_t)i, mc, 2, 0, false);
	e |= profile_add_sample(p, c, 400, mn, 2, 0, false);
	e |= profile_add_sample(p, d, 7000, m, 1, 0, false);
	e |= profile_add_sample(p, d, 8000, m, 1, 0, false);
	return e ? -1 : 0;
}

#endif
