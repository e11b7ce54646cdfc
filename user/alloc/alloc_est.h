/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The arithmetic of allocation sampling (pure): the exponential draws the
 * BPF side counts down from, the unbiased weight of a sampled allocation,
 * and the least-squares slope the leak finding rests on.
 *
 * Sampling is a Poisson process over the bytes a thread allocates, of mean
 * spacing `rate`: an allocation of s bytes holds at least one sample point
 * with probability p(s) = 1 - exp(-s/rate), independently of what came
 * before (the draws are memoryless). A sampled allocation therefore stands
 * for s/p(s) bytes and 1/p(s) allocations on average (tcmalloc weighs its
 * heap samples the same way): a block much larger than rate counts once at
 * its size, a small one for about rate bytes.
 */
#ifndef EP_ALLOC_EST_H
#define EP_ALLOC_EST_H

#include <stddef.h>
#include <stdint.h>

/* Fills out[0..n) with the quantiles (i + 0.5)/n of Exp(rate), scaled so
 * that their mean is rate exactly (the truncated tail moved into the
 * others), rounded to bytes, at least 1. */
void alloc_draw_table(uint64_t rate, uint64_t *out, size_t n);

/* Bytes one sampled allocation of size bytes stands for: size / p(size). */
double alloc_weight_bytes(uint64_t size, uint64_t rate);
/* Allocations it stands for: 1 / p(size). */
double alloc_weight_count(uint64_t size, uint64_t rate);

/*
 * The sampling variance of an estimate. A block of s bytes is sampled
 * with probability p independently of every other block (the Poisson
 * points fall in disjoint byte ranges), so an estimate sum(x_i I_i / p_i)
 * over a set of blocks (I_i: sampled; x_i: s_i, or s_i times a
 * coefficient as in the slope below) has variance sum(x_i^2 (1-p_i)/p_i),
 * estimated without bias from the samples alone by
 * sum over sampled blocks of (x_i/p_i)^2 (1-p_i) (Horvitz-Thompson). This
 * is one sampled block's term for x = size: weight^2 x (1 - p); 0 when
 * every block is sampled (rate 0, or size far above it).
 */
double alloc_var_bytes(uint64_t size, uint64_t rate);

struct alloc_fit {
	double slope;	 /* per x unit */
	double slope_se; /* standard error of the slope from the residuals (0 when n < 3) */
	double intercept;
	double r2; /* 1 when y is constant and fits exactly */
};

/* Least squares of y[i] against x = i, i in [0, n). Returns 0, or -EINVAL
 * when n < 2. */
int alloc_fit_line(const double *y, size_t n, struct alloc_fit *out);

/* The coefficients of that slope: slope = sum(coef[i] y[i]), coef[i] =
 * (i - mean)/sxx. Fills coef[0..n); n >= 2. */
void alloc_fit_coefs(size_t n, double *coef);

#endif
