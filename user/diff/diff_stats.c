// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Statistics for `ebpf-prof diff` (see diff_stats.h). */
#include "diff/diff_stats.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double ds_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct ranked {
	double v;
	int side; /* 0: x, 1: y */
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_dbl(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

int ds_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct ds_mwu *out)
{
	size_t n = nx + ny;
	struct ranked *r;
	double rank_x = 0, tie_term = 0;

	memset(out, 0, sizeof(*out));
	if (!nx || !ny)
		return -EINVAL;
	r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r[i].v = i < nx ? x[i] : y[i - nx];
		r[i].side = i >= nx;
		if (!isfinite(r[i].v)) {
			free(r);
			return -EINVAL;
		}
	}
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && r[j].v == r[i].v)
			j++;
		/* Ranks i+1..j share their mean. */
		double t = (double)(j - i), mid = (double)(i + 1 + j) / 2.0;

		for (size_t k = i; k < j; k++)
			if (!r[k].side)
				rank_x += mid;
		tie_term += t * t * t - t;
		i = j;
	}
	free(r);
	double n1 = (double)nx, n2 = (double)ny, nn = (double)n;
	double u1 = rank_x - n1 * (n1 + 1) / 2, u2 = n1 * n2 - u1;
	double mu = n1 * n2 / 2;
	double var = n1 * n2 / 12 * ((nn + 1) - (nn > 1 ? tie_term / (nn * (nn - 1)) : 0));

	out->u = u1;
	if (var <= 0) {
		out->p = 1;
		return 0;
	}
	out->z = ((u1 > u2 ? u1 : u2) - mu - 0.5) / sqrt(var);
	out->p = 2 * (1 - ds_norm_cdf(out->z));
	if (out->p > 1)
		out->p = 1;
	if (out->p < 0)
		out->p = 0;
	return 0;
}

uint64_t ds_rng_next(struct ds_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double ds_median_sort(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* k-th smallest of v[0..n) (k < n), partially reordering v: Hoare's
 * selection, O(n) on average; the bootstrap takes medians of thousands of
 * resamples. */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
		/* Median of three as the pivot: sorted input stays linear. */
		double pivot = a < b ? (b < c ? b : (a < c ? c : a))
				     : (a < c ? a : (b < c ? c : b));
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

double ds_median_select(double *v, size_t n)
{
	if (!n)
		return 0;
	if (n % 2)
		return select_kth(v, n, n / 2);
	double upper = select_kth(v, n, n / 2), lower = v[0];

	/* After the selection everything left of n/2 is <= upper. */
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lower)
			lower = v[i];
	return (lower + upper) / 2;
}

static double change(double mx, double my, double denom_floor)
{
	double d = fabs(mx) > denom_floor ? fabs(mx) : denom_floor;

	return (my - mx) / d;
}

/* Circular block bootstrap: blocks of `block` values from random starts,
 * wrapping at the end so that every value is drawn as often. */
static void resample(const double *src, size_t n, size_t block, double *dst, struct ds_rng *r)
{
	for (size_t i = 0; i < n;) {
		size_t start = (size_t)(ds_rng_next(r) % n);

		for (size_t k = 0; k < block && i < n; k++, i++)
			dst[i] = src[(start + k) % n];
	}
}

size_t ds_block_len(size_t n)
{
	size_t b = (size_t)ceil(sqrt((double)n));

	return b ? b : 1;
}

int ds_bootstrap_median_change(const double *x, size_t nx, const double *y, size_t ny,
			       double denom_floor, size_t block, unsigned iters, uint64_t seed,
			       struct ds_effect *out)
{
	struct ds_rng rng = { seed };
	double *bx, *by, *est;

	memset(out, 0, sizeof(*out));
	if (!nx || !ny || !(denom_floor > 0) || iters < 10 || !block)
		return -EINVAL;
	bx = malloc(nx * sizeof(*bx));
	by = malloc(ny * sizeof(*by));
	est = malloc(iters * sizeof(*est));
	if (!bx || !by || !est) {
		free(bx);
		free(by);
		free(est);
		return -ENOMEM;
	}
	memcpy(bx, x, nx * sizeof(*bx));
	memcpy(by, y, ny * sizeof(*by));
	out->est = change(ds_median_sort(bx, nx), ds_median_sort(by, ny), denom_floor);
	for (unsigned i = 0; i < iters; i++) {
		resample(x, nx, block < nx ? block : nx, bx, &rng);
		resample(y, ny, block < ny ? block : ny, by, &rng);
		est[i] = change(ds_median_select(bx, nx), ds_median_select(by, ny), denom_floor);
	}
	qsort(est, iters, sizeof(*est), cmp_dbl);
	/* Nearest-rank 2.5th and 97.5th percentiles. */
	size_t k = (size_t)(0.025 * iters);
	out->lo = est[k];
	out->hi = est[iters - 1 - k];
	free(bx);
	free(by);
	free(est);
	return 0;
}

int ds_two_proportions(uint64_t a, uint64_t n1, uint64_t b, uint64_t n2, struct ds_count_test *out)
{
	memset(out, 0, sizeof(*out));
	if (!n1 || !n2 || a > n1 || b > n2)
		return -EINVAL;
	double p1 = (double)a / (double)n1, p2 = (double)b / (double)n2;
	double pp = (double)(a + b) / (double)(n1 + n2);
	double se = sqrt(pp * (1 - pp) * (1 / (double)n1 + 1 / (double)n2));

	out->z = se > 0 ? (p2 - p1) / se : 0;
	out->p = se > 0 ? 2 * (1 - ds_norm_cdf(fabs(out->z))) : 1;
	/* Haldane: 0.5 added to a zero count keeps the ratio finite. */
	double ca = a ? (double)a : 0.5, cb = b ? (double)b : 0.5;
	double lr = log((cb / (double)n2) / (ca / (double)n1));
	double sl = sqrt(fmax(1 / ca - 1 / (double)n1 + 1 / cb - 1 / (double)n2, 0));

	out->est = a ? p2 / p1 - 1 : exp(lr) - 1;
	out->lo = exp(lr - DS_Z95 * sl) - 1;
	out->hi = exp(lr + DS_Z95 * sl) - 1;
	return 0;
}

int ds_rate_ratio(uint64_t a, double ta, uint64_t b, double tb, double phi,
		  struct ds_count_test *out)
{
	memset(out, 0, sizeof(*out));
	if (!(ta > 0) || !(tb > 0) || !isfinite(ta) || !isfinite(tb))
		return -EINVAL;
	if (!(phi >= 1) || !isfinite(phi))
		phi = 1;
	double m = (double)(a + b), p0 = tb / (ta + tb);
	double sd = sqrt(m * p0 * (1 - p0) * phi);

	out->z = sd > 0 ? ((double)b - m * p0) / sd : 0;
	out->p = sd > 0 ? 2 * (1 - ds_norm_cdf(fabs(out->z))) : 1;
	double ca = a ? (double)a : 0.5, cb = b ? (double)b : 0.5;
	double lr = log((cb / tb) / (ca / ta)), sl = sqrt(phi * (1 / ca + 1 / cb));

	out->est = a ? ((double)b / tb) / ((double)a / ta) - 1 : exp(lr) - 1;
	out->lo = exp(lr - DS_Z95 * sl) - 1;
	out->hi = exp(lr + DS_Z95 * sl) - 1;
	return 0;
}

double ds_dispersion(const double *v, size_t n)
{
	double sum = 0, ss = 0;

	if (n < 3)
		return 1;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	double mean = sum / (double)n;
	if (!(mean > 0))
		return 1;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	double d = ss / (double)(n - 1) / mean;
	return d > 1 && isfinite(d) ? d : 1;
}

void ds_run_floor(struct ds_count_test *t, double run_sd)
{
	if (!(run_sd > 0) || !isfinite(t->est) || !isfinite(t->lo) || !isfinite(t->hi))
		return;
	double floor_var = 2 * run_sd * run_sd;
	bool log_scale = 1 + t->lo > 0 && 1 + t->est > 0;
	double c = log_scale ? log1p(t->est) : t->est, l = log_scale ? log1p(t->lo) : t->lo,
	       h = log_scale ? log1p(t->hi) : t->hi;
	/* Each side of the interval on its own: a bootstrap interval of
	 * skewed cycles is far from symmetric. */
	double sd_lo = sqrt(pow((c - l) / DS_Z95, 2) + floor_var),
	       sd_hi = sqrt(pow((h - c) / DS_Z95, 2) + floor_var);

	l = c - DS_Z95 * sd_lo;
	h = c + DS_Z95 * sd_hi;
	t->lo = log_scale ? expm1(l) : l;
	t->hi = log_scale ? expm1(h) : h;
	/* Against no change: the side of the interval towards 0. */
	t->z = c / (c >= 0 ? sd_lo : sd_hi);
	double p = 2 * (1 - ds_norm_cdf(fabs(t->z)));
	if (!(t->p >= p))
		t->p = p;
}
