/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the sampled allocations say (pure: no BPF, no I/O): the samples with
 * their stacks and, when seen, their frees; from them the estimated bytes
 * allocated and still live by stack, per cycle, and the stacks whose live
 * bytes grow from cycle to cycle (leaks). Weights: alloc_est.h.
 *
 * Memory is bounded: at most max_samples samples are kept (later ones are
 * counted in dropped_samples and left out of every estimate).
 */
#ifndef EP_ALLOC_MODEL_H
#define EP_ALLOC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/alloc_est.h"
#include "util/hashmap.h"
#include "profile/profile.h"

struct alloc_sample {
	uint64_t ts_ns;
	uint64_t free_ns; /* 0: not seen freed (live at the end) */
	uint64_t addr, size;
	double bytes, count; /* what it stands for (alloc_est.h) */
	uint32_t pid, tid;
	uint32_t thread; /* index in alloc_model.names.threads */
	uint32_t stack;	 /* index in alloc_model.stacks */
	bool tracked;	 /* its free would be seen */
};

struct alloc_stack {
	uint32_t off, depth; /* frames pool[off .. off+depth), root first */
};

struct alloc_model {
	uint64_t rate;
	size_t max_samples;
	/* Frames interned here (names.frames); its threads carry comms. */
	struct profile names;
	uint32_t *pool;
	size_t npool, cap_pool;
	struct alloc_stack *stacks;
	size_t nstacks, cap_stacks;
	struct hashmap stack_index;
	struct alloc_sample *s;
	size_t n, cap;
	struct hashmap sample_index; /* (pid, addr, ts): a free names its sample */
	uint64_t dropped_samples;    /* over max_samples */
	uint64_t unmatched_frees;    /* free of a sample not kept */
};

int alloc_model_init(struct alloc_model *m, uint64_t rate, size_t max_samples);
void alloc_model_free(struct alloc_model *m);

/* The index of the stack frames[0..depth) (indexes into m->names.frames,
 * root first), interned. Returns >= 0 or -ENOMEM / -EINVAL. */
int64_t alloc_model_stack(struct alloc_model *m, const uint32_t *frames, uint32_t depth);

/* A sampled allocation by thread (pid, tid) named comm (NULL: keep the
 * name known). Returns 0, -ENOSPC (over max_samples: counted) or -ENOMEM. */
int alloc_model_add(struct alloc_model *m, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack, bool tracked);

/* The free of the block sampled at alloc_ts_ns. Returns 0 or -ENOENT
 * (counted in unmatched_frees). */
int alloc_model_free_block(struct alloc_model *m, uint32_t pid, uint64_t addr, uint64_t alloc_ts_ns,
			   uint64_t free_ns);

/* Estimates by stack: bytes and allocations made, and still live at the
 * end, sorted by alloc_bytes (then inuse_bytes) descending; the *_var are
 * the sampling variances of the byte estimates (alloc_var_bytes). */
struct alloc_by_stack {
	uint32_t stack;
	uint64_t samples;
	double alloc_bytes, alloc_count;
	double inuse_bytes, inuse_count;
	double alloc_bytes_var, inuse_bytes_var;
};
int alloc_model_by_stack(const struct alloc_model *m, struct alloc_by_stack **out, size_t *n);

struct alloc_totals {
	double alloc_bytes, alloc_count, inuse_bytes, inuse_count;
	double alloc_bytes_var, inuse_bytes_var; /* sampling variances */
	uint64_t samples, live_samples, untracked;
};
void alloc_model_totals(const struct alloc_model *m, struct alloc_totals *t);

/* Cycles, by their [start, end) times (end non-decreasing). */
struct alloc_cycle {
	double alloc_bytes;	  /* allocated during the cycle */
	double kept_bytes;	  /* allocated during the cycle, still live at the end */
	double live_at_end_bytes; /* all sampled blocks live at the cycle's end */
};
int alloc_model_cycles(const struct alloc_model *m, const uint64_t *start, const uint64_t *end,
		       size_t ncycles, struct alloc_cycle *out);

/* Live bytes of one stack at each cycle's end. out has ncycles entries. */
void alloc_model_stack_series(const struct alloc_model *m, uint32_t stack, const uint64_t *end,
			      size_t ncycles, double *out);

struct alloc_leak_cfg {
	size_t min_cycles;	/* default 4 */
	double min_t;		/* slope / its standard error; default 3 */
	double min_r2;		/* default 0.5 */
	double min_growth_rate; /* total growth over the cycles, in units of rate; default 1 */
	double min_t_total;	/* slope / its whole standard error (se below); default 2 */
	size_t min_kept_cycles; /* cycles from the first to the last holding live blocks; default 2 */
};
void alloc_leak_default_cfg(struct alloc_leak_cfg *c);

struct alloc_leak {
	uint32_t stack;
	struct alloc_fit fit;		  /* live bytes against cycle number */
	double sampling_se;		  /* the slope's standard error from sampling */
	double se;			  /* both: sqrt(fit.slope_se^2 + sampling_se^2) */
	uint32_t first_cycle, last_cycle; /* cycles holding its still-live blocks */
	double live_end;		  /* live bytes at the last cycle's end */
	double live_end_se;		  /* its standard error from sampling */
	double *series;			  /* live bytes at each cycle's end (ncycles) */
};

/* Stacks whose live bytes grow across the cycles: a positive fitted slope
 * at least min_t standard errors of the fit from 0 and min_t_total of its
 * whole standard error, fitting at least min_r2, growing by at least
 * min_growth_rate x rate in all. Sorted by slope descending; at most
 * max_out. free with alloc_leaks_free.
 *
 * The slope is linear in the samples' weights: slope = sum over sampled
 * blocks of w_i A_i, A_i the sum of the fit's coefficients
 * (alloc_fit_coefs) over the cycle ends the block was live at. Its
 * sampling variance is therefore estimated as sum (w_i A_i)^2 (1 - p_i)
 * (alloc_est.h). The fit's residuals alone miss most of it: a block
 * sampled (or not) in one cycle moves every later point of the series
 * together, which a straight line absorbs. The fit's own error is kept in
 * the total for what sampling does not explain (growth that is not a
 * straight line). */
int alloc_model_leaks(const struct alloc_model *m, const uint64_t *end, size_t ncycles,
		      const struct alloc_leak_cfg *cfg, size_t max_out, struct alloc_leak **out,
		      size_t *n);
void alloc_leaks_free(struct alloc_leak *l, size_t n);

/* The leaf function of a stack (the allocating function), or "[unknown]". */
const char *alloc_model_leaf(const struct alloc_model *m, uint32_t stack);

/* Builds a profile (period 1: counts are bytes) of the bytes allocated
 * (inuse false) or still live (true) by (thread, stack), for the folded,
 * speedscope and pprof exporters. p must be freshly profile_init'ed. */
int alloc_model_profile(const struct alloc_model *m, bool inuse, struct profile *p);

#endif
