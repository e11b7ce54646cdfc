// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc_est.h"

#include <errno.h>
#include <math.h>

void alloc_draw_table(uint64_t rate, uint64_t *out, size_t n)
{
	double sum = 0, scale;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		sum += -log(1.0 - ((double)i + 0.5) / (double)n);
	/* The quantiles' mean falls short of 1 by the tail cut above the
	 * last one: scale it back so the mean spacing is rate. */
	scale = (double)rate * (double)n / sum;
	for (size_t i = 0; i < n; i++) {
		double v = -log(1.0 - ((double)i + 0.5) / (double)n) * scale;

		out[i] = v < 1 ? 1 : (uint64_t)llround(v);
	}
}

static double p_sampled(uint64_t size, uint64_t rate)
{
	if (!rate)
		return 1;
	/* -expm1 keeps precision for sizes far below the rate. */
	return -expm1(-(double)size / (double)rate);
}

double alloc_weight_bytes(uint64_t size, uint64_t rate)
{
	double p = p_sampled(size, rate);

	return p > 0 ? (double)size / p : 0;
}

double alloc_weight_count(uint64_t size, uint64_t rate)
{
	double p = p_sampled(size, rate);

	return p > 0 ? 1.0 / p : 0;
}

double alloc_var_bytes(uint64_t size, uint64_t rate)
{
	double p = p_sampled(size, rate), w;

	if (!(p > 0) || p >= 1)
		return 0;
	w = (double)size / p;
	/* 1 - p = exp(-size/rate), exact for sizes far below the rate. */
	return w * w * exp(-(double)size / (double)rate);
}

void alloc_fit_coefs(size_t n, double *coef)
{
	double mx = ((double)n - 1) / 2, sxx = 0;

	for (size_t i = 0; i < n; i++)
		sxx += ((double)i - mx) * ((double)i - mx);
	for (size_t i = 0; i < n; i++)
		coef[i] = sxx > 0 ? ((double)i - mx) / sxx : 0;
}

int alloc_fit_line(const double *y, size_t n, struct alloc_fit *out)
{
	double mx, my = 0, sxx = 0, sxy = 0, syy = 0, sse;

	if (n < 2)
		return -EINVAL;
	mx = ((double)n - 1) / 2;
	for (size_t i = 0; i < n; i++)
		my += y[i];
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double dx = (double)i - mx, dy = y[i] - my;

		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	out->slope = sxy / sxx;
	out->intercept = my - out->slope * mx;
	sse = syy - out->slope * sxy;
	if (sse < 0)
		sse = 0;
	out->r2 = syy > 0 ? 1 - sse / syy : 1;
	out->slope_se = n > 2 ? sqrt(sse / (double)(n - 2) / sxx) : 0;
	return 0;
}
