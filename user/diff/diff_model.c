// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Comparison model of `ebpf-prof diff` (see diff_model.h). */
#include "diff/diff_model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_paths.h"
#include "diff/diff_stats.h"

/* Fewer per-cycle values than this on a side: no rank test. */
#define DM_MIN_CYCLES 3

void dm_default_opts(struct dm_opts *o)
{
	o->threshold = 0.10;
	/* Per section, split over its tests (Bonferroni). With the run-level
	 * floor below, on 1,000 simulated comparisons of 20 cycles against 20
	 * with 15% noise of which 2% per run (tests/unit/test_diff_stats.c,
	 * five seeds): 0.03 flagged 2.3-3.5% of equal runs and found
	 * 91.6-93.5% of 25% slowdowns; 0.04 3.2-4.1% and 92.7-94.5%; 0.05
	 * 3.8-4.6% and 93.7-95.1%. 0.04: function samples, whose power the
	 * Poisson noise limits, need it (100 samples per cycle: 88-90% at
	 * 0.03, 91-92% at 0.04). */
	o->alpha = 0.04;
	/* Run-to-run noise no run can show (a whole run some percent faster
	 * or slower), relative sd per run; drifts within a run widen the
	 * intervals through the block bootstrap, and a busier machine is
	 * told apart by the CPU share (cycle_rows). 2% is the most the
	 * targets allow: at 3% run-level noise (of 15%) no alpha gives both
	 * < 5% false alarms and >= 90% power for 25% over 20 cycles
	 * (0.05: 5.1% and 89.3%, 0.06: 5.9% and 90.2%). Noisier machines:
	 * --run-noise. */
	o->run_noise = 0.02;
	o->min_share = 0.01;
	o->boot_iters = 2000;
	/* Below 2^53: written exactly as a JSON number. */
	o->seed = 0x5eed0ebbf;
}

const char *dm_status_name(enum dm_status s)
{
	switch (s) {
	case DM_SAME:
		return "same";
	case DM_REGRESSION:
		return "regression";
	case DM_IMPROVEMENT:
		return "improvement";
	case DM_CHANGED:
		return "changed";
	case DM_UNTESTED:
		return "untested";
	}
	return "?";
}

const char *dm_section_name(enum dm_section s)
{
	switch (s) {
	case DM_S_CYCLE:
		return "cycle";
	case DM_S_RUN:
		return "run";
	case DM_S_FUNCTION:
		return "function";
	case DM_S_PROBE:
		return "probe";
	case DM_S_SQL:
		return "sql";
	}
	return "?";
}

const char *dm_test_name(enum dm_test t)
{
	switch (t) {
	case DM_T_NONE:
		return "none";
	case DM_T_MWU:
		return "mann-whitney";
	case DM_T_RATE:
		return "rate-ratio";
	case DM_T_TWO_PROP:
		return "two-proportion";
	case DM_T_RUN_MEANS:
		return "run-means";
	}
	return "?";
}

enum dm_status dm_decide(double est, double p, double alpha, double threshold,
			 enum dm_better better, bool gating)
{
	if (!isfinite(est) || fabs(est) <= threshold)
		return DM_SAME;
	if (isnan(p))
		return DM_UNTESTED;
	if (!(p < alpha))
		return DM_SAME;
	if (better == DM_NEITHER)
		return DM_CHANGED;
	bool worse = better == DM_LOWER ? est > 0 : est < 0;
	if (!worse)
		return DM_IMPROVEMENT;
	return gating ? DM_REGRESSION : DM_CHANGED;
}

int dm_compare_dist(const double *x, size_t nx, const double *y, size_t ny, double denom,
		    const struct dm_opts *o, double *est, double *lo, double *hi, double *p)
{
	return dm_compare_dist_sp(x, nx, y, ny, denom, o, NULL, est, lo, hi, p);
}

int dm_compare_dist_sp(const double *x, size_t nx, const double *y, size_t ny, double denom,
		       const struct dm_opts *o, const struct ds_spread *sp, double *est, double *lo,
		       double *hi, double *p)
{
	struct ds_mwu m;
	struct ds_effect ef;
	int e;

	if (nx < DM_MIN_CYCLES || ny < DM_MIN_CYCLES)
		return -EINVAL;
	/* Each resample sorts both sides: with tens of thousands of cycles
	 * fewer resamples (the interval is narrow there anyway) keep a
	 * comparison within seconds. */
	unsigned iters = o->boot_iters;
	if ((double)iters * (double)(nx + ny) > 4e6)
		iters = (unsigned)fmax(200, 4e6 / (double)(nx + ny));
	if (iters > o->boot_iters)
		iters = o->boot_iters;
	e = ds_mann_whitney(x, nx, y, ny, &m);
	if (!e)
		e = ds_bootstrap_median_change(x, nx, y, ny, denom, ds_block_len(nx < ny ? nx : ny),
					       iters, o->seed, &ef);
	if (e)
		return e;
	/* The rank test takes cycles as independent; the block bootstrap
	 * and the floor do not: p is the larger of the two. */
	struct ds_count_test t = { .est = ef.est, .lo = ef.lo, .hi = ef.hi, .p = m.p };
	if (sp)
		ds_run_floor_var(&t, sp);
	else
		ds_run_floor(&t, o->run_noise);
	*est = t.est;
	*lo = t.lo;
	*hi = t.hi;
	*p = t.p;
	return 0;
}

static int warn(struct dm_result *r, const char *fmt, ...)
{
	va_list ap;
	char *s;
	char **nw = realloc(r->warnings, (r->nwarnings + 1) * sizeof(*nw));

	if (!nw)
		return -ENOMEM;
	r->warnings = nw;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	r->warnings[r->nwarnings++] = s;
	return 0;
}

static struct dm_row *add_row(struct dm_result *r, enum dm_section sec, const char *name,
			      const char *detail, const char *metric, const char *unit)
{
	if (r->nrows == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 64;
		struct dm_row *nr = realloc(r->rows, nc * sizeof(*nr));

		if (!nr)
			return NULL;
		r->rows = nr;
		r->cap = nc;
	}
	struct dm_row *w = &r->rows[r->nrows];
	memset(w, 0, sizeof(*w));
	w->name = strdup(name ? name : "");
	w->detail = detail ? strdup(detail) : NULL;
	if (!w->name || (detail && !w->detail)) {
		free(w->name);
		free(w->detail);
		return NULL;
	}
	w->section = sec;
	w->metric = metric;
	w->unit = unit;
	w->base = w->new = w->est = w->lo = w->hi = w->p = NAN;
	w->base_share = w->new_share = NAN;
	w->est_eq = w->p_eq = NAN;
	w->sd_base = w->sd_new = NAN;
	w->better = DM_LOWER;
	r->nrows++;
	return w;
}

static double rel(double b, double n)
{
	if (!isfinite(b) || !isfinite(n))
		return NAN;
	if (b == 0)
		return n == 0 ? 0 : INFINITY;
	return (n - b) / fabs(b);
}

/* Run j of a side: the side itself when it is one run. */
static const struct dl_run *run_at(const struct dl_run *s, size_t j)
{
	return s->runs ? &s->runs[j] : s;
}

static bool several_runs(const struct dl_run *b, const struct dl_run *n)
{
	return b->nruns > 1 || n->nruns > 1;
}

/* Standard deviation of k values (on the log scale: a relative sd), NAN
 * below two. */
static double side_sd(const double *y, size_t k)
{
	double m = 0, ss = 0;

	if (k < 2)
		return NAN;
	for (size_t j = 0; j < k; j++)
		m += y[j];
	m /= (double)k;
	for (size_t j = 0; j < k; j++)
		ss += (y[j] - m) * (y[j] - m);
	return sqrt(ss / (double)(k - 1));
}

/* dm_compare_runs with the counts' variance phi times Poisson (per-cycle
 * counts more spread than Poisson: dm_dispersion). */
static int compare_runs_phi(const uint64_t *cb, const double *eb, size_t kb, const uint64_t *cn,
			    const double *en, size_t kn, double phi, const struct dm_opts *o,
			    struct ds_count_test *t, struct ds_spread *sp_out)
{
	double *y = malloc((kb + kn + 1) * sizeof(*y)), *v = malloc((kb + kn + 1) * sizeof(*v));
	uint64_t sb = 0, sn = 0;
	double tb = 0, tn = 0;
	struct ds_spread sp;
	int e = 0;

	memset(t, 0, sizeof(*t));
	if (!y || !v) {
		e = -ENOMEM;
		goto out;
	}
	if (!kb || !kn) {
		e = -EINVAL;
		goto out;
	}
	for (size_t j = 0; j < kb + kn; j++) {
		uint64_t c = j < kb ? cb[j] : cn[j - kb];
		double ex = j < kb ? eb[j] : en[j - kb];

		if (!(ex > 0) || !isfinite(ex)) {
			e = -EINVAL;
			goto out;
		}
		if (j < kb) {
			sb = sb + c < sb ? UINT64_MAX : sb + c;
			tb += ex;
		} else {
			sn = sn + c < sn ? UINT64_MAX : sn + c;
			tn += ex;
		}
		/* Per run: log rate and its Poisson variance (0.5 added: a run
		 * without a sample of the function). */
		y[j] = log(((double)c + 0.5) / ex);
		v[j] = phi / ((double)c + 0.5);
	}
	e = ds_rate_ratio(sb, tb, sn, tn, phi, t);
	if (!e)
		e = ds_run_spread(y, v, kb, y + kb, v + kb, kn, o->run_noise, &sp);
	if (!e) {
		ds_run_floor_var(t, &sp);
		if (sp_out)
			*sp_out = sp;
	}
out:
	free(y);
	free(v);
	return e;
}

int dm_compare_runs(const uint64_t *cb, const double *eb, size_t kb, const uint64_t *cn,
		    const double *en, size_t kn, const struct dm_opts *o, struct ds_count_test *t,
		    struct ds_spread *sp_out)
{
	return compare_runs_phi(cb, eb, kb, cn, en, kn, 1, o, t, sp_out);
}

/* A row's test from the runs of both sides: their counts of the key's
 * function (self or total), or of all samples when key is NULL, each over
 * its run's exposure (1 / period; per cycle: cycles / period), variance
 * phi times Poisson. */
static int runs_row(struct dm_row *w, const struct dl_run *b, const struct dl_run *n,
		    const char *key, bool self, bool per_cycle, double phi, const struct dm_opts *o)
{
	size_t kb = b->nruns, kn = n->nruns, k = kb + kn;
	uint64_t *c = malloc(k * sizeof(*c));
	double *ex = malloc(k * sizeof(*ex)), *y = malloc(k * sizeof(*y));
	struct ds_count_test t;
	struct ds_spread sp;
	int e = 0;

	if (!c || !ex || !y) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < k; j++) {
		const struct dl_run *r = j < kb ? run_at(b, j) : run_at(n, j - kb);
		const struct dl_func *f = key ? dl_find_func(r, key) : NULL;

		c[j] = key ? (f ? (self ? f->self : f->total) : 0) : r->samples;
		ex[j] = (per_cycle ? (double)(r->ncycles_all ? r->ncycles_all : 1) : 1) /
			r->period_ns;
		y[j] = log(((double)c[j] + 0.5) / ex[j]);
	}
	e = compare_runs_phi(c, ex, kb, c + kb, ex + kb, kn, phi, o, &t, &sp);
	if (e) {
		e = e == -ENOMEM ? e : 0;
		goto out;
	}
	w->test = DM_T_RATE;
	w->est = t.est;
	w->lo = t.lo;
	w->hi = t.hi;
	w->p = t.p;
	w->from_spread = sp.estimated;
	w->sd_base = side_sd(y, kb);
	w->sd_new = side_sd(y + kb, kn);
out:
	free(c);
	free(ex);
	free(y);
	return e;
}

/* ---- per-cycle distributions ---- */

struct cyc_def {
	enum dl_cyc k;
	const char *name, *unit;
	enum dm_better better;
	int floor_kind; /* 0: share of the wall median, 1: 1 MiB, 2: absolute (fraction), 3: 1 unit */
	/* Wall-clock figure a busier machine stretches: 1 a time (times the
	 * CPU share to compare at equal share), -1 a rate (divided by it). */
	int stretch;
};

static const struct cyc_def cyc_defs[] = {
	{ DL_C_WALL, "wall time", "ns", DM_LOWER, 0, 1 },
	{ DL_C_ON_CPU, "on-CPU time", "ns", DM_LOWER, 0 },
	{ DL_C_INFERENCE, "inference", "ns", DM_LOWER, 0, 1 },
	{ DL_C_SQL, "SQL", "ns", DM_LOWER, 0, 1 },
	{ DL_C_GC, "GC", "ns", DM_LOWER, 0, 1 },
	{ DL_C_OFF_SLEEP, "off-CPU sleep", "ns", DM_LOWER, 0 },
	{ DL_C_OFF_UNINT, "off-CPU uninterruptible", "ns", DM_LOWER, 0 },
	{ DL_C_OFF_PREEMPTED, "off-CPU preempted", "ns", DM_LOWER, 0 },
	{ DL_C_OFF_RUNQUEUE, "off-CPU run queue", "ns", DM_LOWER, 0 },
	{ DL_C_OFF_OTHER, "off-CPU other", "ns", DM_LOWER, 0 },
	{ DL_C_OTHER, "unattributed", "ns", DM_LOWER, 0, 1 },
	{ DL_C_TOKENS_PER_S, "tokens/s", "tokens/s", DM_HIGHER, 3, -1 },
	{ DL_C_PREFILL, "LLM prefill", "ns", DM_LOWER, 0, 1 },
	{ DL_C_DECODE, "LLM decode", "ns", DM_LOWER, 0, 1 },
	{ DL_C_TTFT, "time to first token", "ns", DM_LOWER, 0, 1 },
	{ DL_C_RSS_DELTA, "RSS growth", "bytes", DM_LOWER, 1 },
	{ DL_C_THROTTLED, "throttled share", "fraction", DM_LOWER, 2 },
	{ DL_C_GPU_POWER, "GPU power", "mW", DM_LOWER, 3 },
	{ DL_C_GPU_ENERGY, "GPU energy", "mJ", DM_LOWER, 3 },
};

/* Finite values of a per-cycle column. */
static size_t finite_values(const struct dl_run *r, enum dl_cyc k, double *out, bool *nonzero)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ncycles; i++)
		if (isfinite(r->cyc[k][i])) {
			out[n++] = r->cyc[k][i];
			if (r->cyc[k][i] != 0)
				*nonzero = true;
		}
	return n;
}

/* Share of a cycle's runnable time its thread got a CPU: on-CPU time over
 * wall time less the voluntary waits (sleep, uninterruptible, other), at
 * most 1; NAN when not known. A busier machine lowers it, whether the
 * wait for a CPU shows as preempted / run-queue time or nowhere. */
static double cpu_share(const struct dl_run *r, size_t i)
{
	double on = r->cyc[DL_C_ON_CPU][i], wall = r->cyc[DL_C_WALL][i], vol = 0;
	const enum dl_cyc waits[] = { DL_C_OFF_SLEEP, DL_C_OFF_UNINT, DL_C_OFF_OTHER };

	for (size_t k = 0; k < sizeof(waits) / sizeof(waits[0]); k++)
		if (isfinite(r->cyc[waits[k]][i]))
			vol += r->cyc[waits[k]][i];
	double runnable = wall - vol;
	if (!(on > 0) || !(runnable > 0) || !isfinite(on) || !isfinite(runnable))
		return NAN;
	return on < runnable ? on / runnable : 1;
}

/* Values of a stretched column at equal CPU share (times the share, or a
 * rate divided by it), for cycles where both are known. */
static size_t at_equal_share(const struct dl_run *r, enum dl_cyc k, int stretch, double *out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ncycles; i++) {
		double s = cpu_share(r, i), v = r->cyc[k][i];

		if (isfinite(s) && isfinite(v))
			out[n++] = stretch > 0 ? v * s : v / s;
	}
	return n;
}

static double median_share(const struct dl_run *r, double *tmp)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ncycles; i++) {
		double s = cpu_share(r, i);

		if (isfinite(s))
			tmp[n++] = s;
	}
	return n ? ds_median_sort(tmp, n) : NAN;
}

/* Several runs a side: the spread of the runs' medians of column k,
 * relative to the base side's median (at least denom; abs: as they are).
 * It holds the medians' own sampling error too, so it errs wide. -ENOENT
 * when a run has no value. */
static int cycle_spread(const struct dl_run *b, const struct dl_run *n, enum dl_cyc k, double denom,
			bool abs_change, double floor_sd, struct ds_spread *sp, double *sdb,
			double *sdn)
{
	size_t kb = b->nruns, kn = n->nruns,
	       cap = b->ncycles > n->ncycles ? b->ncycles : n->ncycles;
	double *tmp = malloc((cap + 1) * sizeof(*tmp)), *y = malloc((kb + kn) * sizeof(*y)), d = 1;
	bool nz = false;
	int e = 0;

	if (!tmp || !y) {
		e = -ENOMEM;
		goto out;
	}
	if (!abs_change) {
		size_t nx = finite_values(b, k, tmp, &nz);

		d = fmax(nx ? fabs(ds_median_select(tmp, nx)) : 0, denom);
	}
	for (size_t j = 0; j < kb + kn; j++) {
		const struct dl_run *r = j < kb ? run_at(b, j) : run_at(n, j - kb);
		size_t m = r->ncycles <= cap ? finite_values(r, k, tmp, &nz) : 0;

		if (!m || !(d > 0)) {
			e = -ENOENT;
			goto out;
		}
		y[j] = ds_median_select(tmp, m) / d;
	}
	e = ds_run_spread(y, NULL, kb, y + kb, NULL, kn, floor_sd, sp);
	*sdb = side_sd(y, kb);
	*sdn = side_sd(y + kb, kn);
out:
	free(tmp);
	free(y);
	return e;
}

static int cycle_rows(const struct dl_run *b, const struct dl_run *n, const struct dm_opts *o,
		      struct dm_result *r)
{
	double *x = malloc((b->ncycles + 1) * sizeof(*x)),
	       *y = malloc((n->ncycles + 1) * sizeof(*y));
	double wall_med;
	int e = 0;

	if (!x || !y) {
		e = -ENOMEM;
		goto out;
	}
	{
		bool nz = false;
		size_t nx = finite_values(b, DL_C_WALL, x, &nz);
		wall_med = ds_median_sort(x, nx);
		r->wall_median = nx ? wall_med : NAN;
	}
	r->share_base = median_share(b, x);
	r->share_new = median_share(n, y);
	for (size_t i = 0; i < sizeof(cyc_defs) / sizeof(cyc_defs[0]); i++) {
		const struct cyc_def *d = &cyc_defs[i];
		bool nz = false;
		size_t nx = finite_values(b, d->k, x, &nz), ny = finite_values(n, d->k, y, &nz);
		double denom;

		if (!nz || (!nx && !ny))
			continue;
		struct dm_row *w =
			add_row(r, DM_S_CYCLE, d->name, NULL, "median per cycle", d->unit);
		if (!w) {
			e = -ENOMEM;
			goto out;
		}
		w->better = d->better;
		w->gating = true;
		w->n_base = nx;
		w->n_new = ny;
		switch (d->floor_kind) {
		case 0:
			/* A component under 5% of the cycle is measured against 5%
			 * of it: what it adds or saves, in points of the cycle. Its
			 * own run-to-run spread is larger than the floor allows:
			 * SQL of diff_experiment (42 probed calls, ~150 us of a
			 * 23 ms cycle) gave medians 128-182 us over six runs of one
			 * build, tight within each run (docs/diff.md). */
			denom = fmax(DM_SMALL_SHARE * wall_med, 1000);
			break;
		case 1:
			denom = 1048576;
			break;
		case 2:
			denom = 1;
			w->abs_change = true;
			break;
		default:
			denom = 1;
		}
		/* The floor is relative: not for differences of fractions. */
		struct dm_opts od = *o;
		if (w->abs_change)
			od.run_noise = 0;
		/* Several runs a side: the run-level noise from the spread of
		 * the runs' medians (at least the floor). */
		struct ds_spread spv, *sp = NULL;
		if (several_runs(b, n)) {
			int se = cycle_spread(b, n, d->k, denom, w->abs_change, od.run_noise, &spv,
					      &w->sd_base, &w->sd_new);
			if (se == -ENOMEM) {
				e = se;
				goto out;
			}
			if (!se) {
				sp = &spv;
				w->from_spread = spv.estimated;
			}
		}
		if (dm_compare_dist_sp(x, nx, y, ny, denom, &od, sp, &w->est, &w->lo, &w->hi,
				       &w->p) == 0) {
			w->test = DM_T_MWU;
		} else {
			w->est = NAN;
		}
		/* Medians last: ds_median_sort sorts x and y in place. */
		w->base = nx ? ds_median_sort(x, nx) : NAN;
		w->new = ny ? ds_median_sort(y, ny) : NAN;
		w->of_cycle = d->floor_kind == 0 && isfinite(w->base) && w->base != 0 &&
			      fabs(w->base) < denom;
		if (w->test == DM_T_NONE && nx && ny) {
			double dn = fmax(fabs(w->base), denom);
			w->est = (w->new - w->base) / dn;
		}
		/* The same at equal CPU share: the verdict needs both. */
		if (d->stretch && w->test == DM_T_MWU) {
			size_t ex = at_equal_share(b, d->k, d->stretch, x),
			       ey = at_equal_share(n, d->k, d->stretch, y);
			double lo, hi;

			if (dm_compare_dist_sp(x, ex, y, ey, denom, &od, sp, &w->est_eq, &lo, &hi,
					       &w->p_eq) == 0)
				w->has_eq = true;
		}
	}
out:
	free(x);
	free(y);
	return e;
}

/* ---- whole-run figures ---- */

static int run_row(struct dm_result *r, const char *name, const char *unit, double b, double n,
		   enum dm_better better, bool abs_change)
{
	if (isnan(b) && isnan(n))
		return 0;
	struct dm_row *w = add_row(r, DM_S_RUN, name, NULL, "per run", unit);
	if (!w)
		return -ENOMEM;
	w->base = b;
	w->new = n;
	w->better = better;
	w->abs_change = abs_change;
	w->est = abs_change ? (isfinite(b) && isfinite(n) ? n - b : NAN) : rel(b, n);
	return 0;
}

/* Wall time of runs of the same work, several runs on a side: the runs'
 * spread (at least --run-noise) is the only noise there is. Not gating: a
 * loaded machine stretches it (docs/diff.md). */
static int duration_test(struct dm_row *w, const struct dl_run *b, const struct dl_run *n,
			 const struct dm_opts *o)
{
	size_t kb = b->nruns, kn = n->nruns;
	double *y = malloc((kb + kn) * sizeof(*y));
	struct ds_spread sp;
	struct ds_count_test t = { 0 };

	if (!y)
		return -ENOMEM;
	for (size_t j = 0; j < kb + kn; j++) {
		double d = j < kb ? run_at(b, j)->duration_ns : run_at(n, j - kb)->duration_ns;

		if (!(d > 0) || !isfinite(d)) {
			free(y);
			return 0;
		}
		y[j] = log(d);
	}
	if (ds_run_spread(y, NULL, kb, y + kb, NULL, kn, o->run_noise, &sp) == 0 &&
	    isfinite(w->est)) {
		t.est = t.lo = t.hi = w->est;
		ds_run_floor_var(&t, &sp);
		w->test = DM_T_RUN_MEANS;
		w->lo = t.lo;
		w->hi = t.hi;
		w->p = t.p;
		w->from_spread = sp.estimated;
		w->sd_base = side_sd(y, kb);
		w->sd_new = side_sd(y + kb, kn);
		w->n_base = kb;
		w->n_new = kn;
	}
	free(y);
	return 0;
}

static int run_rows(const struct dl_run *b, const struct dl_run *n, const struct dm_opts *o,
		    struct dm_result *r)
{
	/* Several runs a side: counts are sums, figures one run's mean. */
	double cb = b->period_ns > 0 ? (double)b->samples * b->period_ns / (double)b->nruns : NAN;
	double cn = n->period_ns > 0 ? (double)n->samples * n->period_ns / (double)n->nruns : NAN;
	size_t before = r->nrows;
	int e = 0;

	e = e ?: run_row(r, "duration", "ns", b->duration_ns, n->duration_ns, DM_LOWER, false);
	if (!e && r->nrows > before && r->same_work && several_runs(b, n))
		e = duration_test(&r->rows[r->nrows - 1], b, n, o);
	e = e ?: run_row(r, "CPU time (samples)", "ns", cb, cn, DM_LOWER, false);
	/* The same work both times: the whole run's CPU time is a figure
	 * with a test, Poisson error of the sample counts (a sample stands
	 * for a period of CPU) plus the run-level noise: --run-noise with one
	 * run a side, else the runs' spread beyond Poisson (at least that). */
	if (!e && r->same_work && isfinite(cb) && isfinite(cn)) {
		struct dm_row *w = &r->rows[r->nrows - 1];
		struct ds_count_test t;

		w->n_base = (size_t)b->samples;
		w->n_new = (size_t)n->samples;
		if (several_runs(b, n)) {
			e = runs_row(w, b, n, NULL, false, false, 1, o);
			w->gating = w->test != DM_T_NONE;
		} else if (dm_compare_rate(b->samples, 1 / b->period_ns, n->samples,
					   1 / n->period_ns, 1, o, &t) == 0) {
			w->test = DM_T_RATE;
			w->gating = true;
			w->est = t.est;
			w->lo = t.lo;
			w->hi = t.hi;
			w->p = t.p;
		}
	}
	e = e
		    ?: run_row(r, "on-CPU time (scheduler)", "ns", b->on_cpu_ns, n->on_cpu_ns,
			       DM_LOWER, false);
	e = e ?: run_row(r, "off-CPU time", "ns", b->off_cpu_ns, n->off_cpu_ns, DM_LOWER, false);
	e = e
		    ?: run_row(r, "tokens/s", "tokens/s", b->tokens_per_s, n->tokens_per_s,
			       DM_HIGHER, false);
	e = e ?: run_row(r, "peak RSS", "bytes", b->peak_rss, n->peak_rss, DM_LOWER, false);
	e = e
		    ?: run_row(r, "throttled share", "fraction", b->throttled_share,
			       n->throttled_share, DM_LOWER, true);
	e = e ?: run_row(r, "GPU energy", "J", b->gpu_energy_j, n->gpu_energy_j, DM_LOWER, false);
	e = e
		    ?: run_row(r, "board power (mean)", "mW", b->gpu_power_mw, n->gpu_power_mw,
			       DM_LOWER, false);
	return e;
}

/* ---- functions ---- */

double dm_dispersion(const double *vb, size_t nb, const double *vn, size_t nn)
{
	return fmax(vb ? ds_dispersion(vb, nb) : 1, vn ? ds_dispersion(vn, nn) : 1);
}

int dm_compare_rate(uint64_t a, double ta, uint64_t b, double tb, double phi,
		    const struct dm_opts *o, struct ds_count_test *t)
{
	int e = ds_rate_ratio(a, ta, b, tb, phi, t);

	if (!e)
		ds_run_floor(t, o->run_noise);
	return e;
}

static int func_row(struct dm_result *r, const struct dl_run *b, const struct dl_run *n,
		    const struct dl_func *fb, const struct dl_func *fn, bool self, double phi,
		    const struct dm_opts *o)
{
	const struct dl_func *f = fn ? fn : fb;
	uint64_t a = fb ? (self ? fb->self : fb->total) : 0,
		 c = fn ? (self ? fn->self : fn->total) : 0;
	double sb = b->func_samples ? (double)a / (double)b->func_samples : 0;
	double sn = n->func_samples ? (double)c / (double)n->func_samples : 0;
	struct ds_count_test t;
	int e;

	if (!a && !c)
		return 0;
	struct dm_row *w = add_row(r, DM_S_FUNCTION, f->name, f->module, self ? "self" : "total",
				   r->per_cycle ? "ns" : "ns");
	if (!w)
		return -ENOMEM;
	if (!(w->key = strdup(f->key)))
		return -ENOMEM;
	w->gating = self;
	w->better = DM_LOWER;
	w->base_share = sb;
	w->new_share = sn;
	w->n_base = (size_t)a;
	w->n_new = (size_t)c;
	if (r->per_cycle) {
		double eb = (double)b->ncycles_all, en = (double)n->ncycles_all;

		w->base = (double)a * b->period_ns / eb;
		w->new = (double)c * n->period_ns / en;
		/* A sample stands for a period of CPU time: at equal time per
		 * cycle, the expected count is cycles / period. Several runs a
		 * side: the spread of the runs' rates too (runs_row). */
		if (several_runs(b, n)) {
			e = runs_row(w, b, n, f->key, self, true, phi, o);
			if (e || w->test == DM_T_NONE) {
				w->est = rel(w->base, w->new);
				return e;
			}
			return 0;
		}
		e = dm_compare_rate(a, eb / b->period_ns, c, en / n->period_ns, phi, o, &t);
		w->test = DM_T_RATE;
	} else if (r->same_work && several_runs(b, n)) {
		/* Several runs a side: the mean per run, the noise from their
		 * spread (runs_row). */
		w->base = (double)a * b->period_ns / (double)b->nruns;
		w->new = (double)c * n->period_ns / (double)n->nruns;
		e = runs_row(w, b, n, f->key, self, false, 1, o);
		if (e || w->test == DM_T_NONE) {
			w->est = rel(w->base, w->new);
			return e;
		}
		return 0;
	} else if (r->same_work) {
		/* The same work: CPU time per run, Poisson counts. */
		w->base = (double)a * b->period_ns;
		w->new = (double)c * n->period_ns;
		e = dm_compare_rate(a, 1 / b->period_ns, c, 1 / n->period_ns, 1, o, &t);
		w->test = DM_T_RATE;
	} else {
		w->base = (double)a * b->period_ns / (double)b->nruns;
		w->new = (double)c * n->period_ns / (double)n->nruns;
		e = ds_two_proportions(a, b->func_samples, c, n->func_samples, &t);
		if (!e)
			ds_run_floor(&t, o->run_noise);
		w->test = DM_T_TWO_PROP;
	}
	if (e) {
		w->test = DM_T_NONE;
		w->est = rel(w->base, w->new);
		return 0;
	}
	w->est = t.est;
	w->lo = t.lo;
	w->hi = t.hi;
	w->p = t.p;
	return 0;
}

static int cmp_func_weight(const void *x, const void *y)
{
	const struct dl_func *a = *(const struct dl_func *const *)x,
			     *b = *(const struct dl_func *const *)y;
	return a->self < b->self ? 1 : a->self > b->self ? -1 : strcmp(a->key, b->key);
}

static int function_rows(const struct dl_run *b, const struct dl_run *n, const struct dm_opts *o,
			 struct dm_result *r)
{
	double phi = dm_dispersion(b->ncycles ? b->cyc[DL_C_SAMPLES] : NULL, b->ncycles,
				   n->ncycles ? n->cyc[DL_C_SAMPLES] : NULL, n->ncycles);
	const struct dl_func **order = malloc((n->nfuncs + b->nfuncs + 1) * sizeof(*order));
	size_t no = 0;
	int e = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n->nfuncs; i++)
		order[no++] = &n->funcs[i];
	for (size_t i = 0; i < b->nfuncs; i++)
		if (!dl_find_func(n, b->funcs[i].key))
			order[no++] = &b->funcs[i];
	qsort(order, no, sizeof(*order), cmp_func_weight);
	for (size_t i = 0; i < no && !e; i++) {
		const struct dl_func *fb = dl_find_func(b, order[i]->key),
				     *fn = dl_find_func(n, order[i]->key);
		double tb = fb && b->func_samples ? (double)fb->total / (double)b->func_samples : 0;
		double tn = fn && n->func_samples ? (double)fn->total / (double)n->func_samples : 0;
		double sb = fb && b->func_samples ? (double)fb->self / (double)b->func_samples : 0;
		double sn = fn && n->func_samples ? (double)fn->self / (double)n->func_samples : 0;

		if (fmax(tb, tn) < o->min_share)
			continue;
		if (fmax(sb, sn) >= o->min_share)
			e = func_row(r, b, n, fb, fn, true, phi, o);
		if (!e)
			e = func_row(r, b, n, fb, fn, false, phi, o);
	}
	free(order);
	return e;
}

/* ---- probes and SQL ---- */

static int count_row(struct dm_result *r, enum dm_section sec, const char *name, const char *detail,
		     const char *metric, const char *unit, uint64_t a, uint64_t c, double eb,
		     double en)
{
	struct ds_count_test t;
	struct dm_row *w = add_row(r, sec, name, detail, metric, unit);

	if (!w)
		return -ENOMEM;
	w->better = DM_NEITHER;
	w->base = (double)a / eb;
	w->new = (double)c / en;
	w->n_base = (size_t)a;
	w->n_new = (size_t)c;
	if (ds_rate_ratio(a, eb, c, en, 1, &t) == 0) {
		w->test = DM_T_RATE;
		w->est = t.est;
		w->lo = t.lo;
		w->hi = t.hi;
		w->p = t.p;
	}
	return 0;
}

static int value_row(struct dm_result *r, enum dm_section sec, const char *name, const char *detail,
		     const char *metric, double b, double n)
{
	if (isnan(b) && isnan(n))
		return 0;
	struct dm_row *w = add_row(r, sec, name, detail, metric, "ns");
	if (!w)
		return -ENOMEM;
	w->base = b;
	w->new = n;
	w->est = rel(b, n);
	return 0;
}

static int probe_rows(const struct dl_run *b, const struct dl_run *n, struct dm_result *r)
{
	double eb = r->per_cycle ? (double)b->ncycles_all : (double)b->nruns,
	       en = r->per_cycle ? (double)n->ncycles_all : (double)n->nruns;
	const char *cm = r->per_cycle ? "calls per cycle" : "calls",
		   *tm = r->per_cycle ? "time per cycle" : "total time";
	int e = 0;

	for (size_t pass = 0; pass < 2 && !e; pass++) {
		const struct dl_run *from = pass ? b : n, *other = pass ? n : b;

		for (size_t i = 0; i < from->nprobes && !e; i++) {
			const struct dl_probe *p = &from->probes[i], *q = NULL;

			for (size_t j = 0; j < other->nprobes && !q; j++)
				if (!strcmp(other->probes[j].key, p->key))
					q = &other->probes[j];
			if (pass && q)
				continue; /* already compared */
			const struct dl_probe *pb = pass ? p : q, *pn = pass ? q : p;
			uint64_t cb = pb ? pb->count : 0, cn = pn ? pn->count : 0;

			if (!cb && !cn)
				continue;
			e = count_row(r, DM_S_PROBE, p->label, p->library, cm, "calls", cb, cn, eb,
				      en);
			if (!e)
				e = value_row(r, DM_S_PROBE, p->label, p->library, tm,
					      pb ? pb->total_ns / eb : NAN,
					      pn ? pn->total_ns / en : NAN);
			if (!e)
				e = value_row(r, DM_S_PROBE, p->label, p->library, "p50",
					      pb ? pb->p50_ns : NAN, pn ? pn->p50_ns : NAN);
			if (!e)
				e = value_row(r, DM_S_PROBE, p->label, p->library, "p99",
					      pb ? pb->p99_ns : NAN, pn ? pn->p99_ns : NAN);
		}
	}
	return e;
}

static int sql_rows(const struct dl_run *b, const struct dl_run *n, struct dm_result *r)
{
	double eb = r->per_cycle ? (double)b->ncycles_all : (double)b->nruns,
	       en = r->per_cycle ? (double)n->ncycles_all : (double)n->nruns;
	int e = 0;

	for (size_t pass = 0; pass < 2 && !e; pass++) {
		const struct dl_run *from = pass ? b : n, *other = pass ? n : b;

		for (size_t i = 0; i < from->nstmts && !e; i++) {
			const struct dl_stmt *s = &from->stmts[i], *q = NULL;

			for (size_t j = 0; j < other->nstmts && !q; j++)
				if (!strcmp(other->stmts[j].text, s->text))
					q = &other->stmts[j];
			if (pass && q)
				continue;
			const struct dl_stmt *sb = pass ? s : q, *sn = pass ? q : s;
			uint64_t cb = sb ? sb->count : 0, cn = sn ? sn->count : 0;

			if (!cb && !cn)
				continue;
			e = count_row(r, DM_S_SQL, s->text, NULL,
				      r->per_cycle ? "executions per cycle" : "executions", "calls",
				      cb, cn, eb, en);
			if (!e && ((sb && sb->rows) || (sn && sn->rows)))
				e = count_row(r, DM_S_SQL, s->text, NULL,
					      r->per_cycle ? "rows per cycle" : "rows", "rows",
					      sb ? sb->rows : 0, sn ? sn->rows : 0, eb, en);
			if (!e)
				e = value_row(r, DM_S_SQL, s->text, NULL,
					      r->per_cycle ? "time per cycle" : "total time",
					      sb ? sb->total_ns / eb : NAN,
					      sn ? sn->total_ns / en : NAN);
			if (!e)
				e = value_row(r, DM_S_SQL, s->text, NULL, "p50",
					      sb ? sb->p50_ns : NAN, sn ? sn->p50_ns : NAN);
			if (!e)
				e = value_row(r, DM_S_SQL, s->text, NULL, "p99",
					      sb ? sb->p99_ns : NAN, sn ? sn->p99_ns : NAN);
		}
	}
	return e;
}

/* Bonferroni within a family of tests: the more figures a family tests,
 * the stronger the evidence each one needs, so that two runs of the same
 * program stay quiet however many functions they have. Families: each
 * section, with functions' self and total rows apart (total rows gate
 * only along call paths, diff_paths.c). */
#define DM_FAMILIES (DM_S_SQL + 2)
static size_t family(const struct dm_row *w)
{
	return w->section == DM_S_FUNCTION && !w->gating ? DM_S_SQL + 1 : w->section;
}

static int decide_all(const struct dl_run *b, const struct dl_run *n, struct dm_result *r)
{
	size_t ntested[DM_FAMILIES] = { 0 };

	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].test != DM_T_NONE && !isnan(r->rows[i].p))
			ntested[family(&r->rows[i])]++;
	for (size_t i = 0; i < r->nrows; i++) {
		struct dm_row *w = &r->rows[i];
		size_t m = ntested[family(w)] ? ntested[family(w)] : 1;
		bool path = w->section == DM_S_FUNCTION && !w->gating;

		w->status = dm_decide(w->est, w->p, r->opts.alpha / (double)m, r->opts.threshold,
				      w->better, w->gating || path);
		/* A wall-clock change the CPU share does not confirm is the
		 * machine's load, not the program. */
		if (w->has_eq && dm_decide(w->est_eq, w->p_eq, r->opts.alpha / (double)m,
					   r->opts.threshold, w->better, w->gating) != w->status)
			w->status = DM_SAME;
		/* Wall time from the runs' spread moves with the machine's
		 * load as well as with the program: changed, either way. */
		if (w->test == DM_T_RUN_MEANS && w->status != DM_SAME)
			w->status = DM_CHANGED;
	}
	int e = dm_path_regressions(b, n, r);
	for (size_t i = 0; i < r->nrows; i++) {
		r->regressions += r->rows[i].status == DM_REGRESSION;
		r->improvements += r->rows[i].status == DM_IMPROVEMENT;
	}
	return e;
}

/* Both runs launched the same command line (after the program's name)
 * and it exited 0: the same work, as a fixed-work benchmark. */
static bool same_work(const struct dl_run *b, const struct dl_run *n)
{
	return b->launched && n->launched && b->exit_status == 0 && n->exit_status == 0 &&
	       b->args && n->args && !strcmp(b->args, n->args) && *b->program && *n->program;
}

/* What the launched program's file was on each side, and whether it is
 * another build: by the GNU build-id report.json's modules give (an
 * in-place rebuild keeps the path, not the build-id). */
static int program_note(const struct dl_run *b, const struct dl_run *n, struct dm_result *r)
{
	bool same_path, known = b->build_id && n->build_id;
	int k;

	r->program_changed = -1;
	if (!b->main_as_program)
		return 0;
	same_path = !strcmp(b->main_module, n->main_module);
	if (known)
		r->program_changed = strcmp(b->build_id, n->build_id) != 0;
	if (known && same_path)
		k = asprintf(
			&r->program_note,
			r->program_changed
				? "the program: %s in both runs, rebuilt in place (build-id %s "
				  "in base, %s in new)"
				: "the program: %s in both runs, the same build (build-id %s%s)",
			n->main_module, b->build_id, r->program_changed ? n->build_id : "");
	else if (known)
		k = asprintf(
			&r->program_note,
			r->program_changed
				? "the program: %s in base, %s in new (another file, another "
				  "build: build-id %s in base, %s in new; its functions matched "
				  "by name as \"%s\")"
				: "the program: %s in base, %s in new (another file, the same "
				  "build: build-id %s%s; its functions matched by name as "
				  "\"%s\")",
			b->main_module, n->main_module, b->build_id,
			r->program_changed ? n->build_id : "", DL_MAIN_MODULE);
	else if (same_path)
		k = asprintf(&r->program_note,
			     "the program: %s in both runs (its own functions matched by name; "
			     "report.json names no build-id for it: whether the file was rebuilt "
			     "in place is not known)",
			     n->main_module);
	else
		k = asprintf(&r->program_note,
			     "the program: %s in base, %s in new (another file: its functions "
			     "matched by name as \"%s\")",
			     b->main_module, n->main_module, DL_MAIN_MODULE);
	if (k < 0) {
		r->program_note = NULL;
		return -ENOMEM;
	}
	return 0;
}

int dm_compare(const struct dl_run *b, const struct dl_run *n, const struct dm_opts *o,
	       struct dm_result *r)
{
	int e = 0;

	memset(r, 0, sizeof(*r));
	r->opts = *o;
	r->per_cycle = b->ncycles > 0 && n->ncycles > 0;
	r->same_work = !r->per_cycle && !b->ncycles && !n->ncycles && same_work(b, n);
	r->share_base = r->share_new = r->wall_median = NAN;
	e = program_note(b, n, r);
	if (!e && strcmp(b->program, n->program) && b->main_as_program)
		e = warn(r,
			 "the programs are named differently (%s: \"%s\", %s: \"%s\"); both "
			 "launched one program: its own functions are matched by name",
			 b->dir, b->program, n->dir, n->program);
	else if (!e && strcmp(b->program, n->program))
		e = warn(
			r,
			"the runs are of different programs (%s: \"%s\", %s: \"%s\"); compared anyway",
			b->dir, b->program, n->dir, n->program);
	for (int side = 0; side < 2 && !e; side++) {
		const struct dl_run *x = side ? n : b;

		if (x->side_note)
			e = warn(r, "%s", x->side_note);
	}
	if (!e && !r->per_cycle && !r->same_work && !b->ncycles && !n->ncycles)
		e = warn(r, "no cycles, and the runs did not do the same work (one command line, "
			    "both ran to completion): functions compared by shares of samples, the "
			    "run's CPU time untested");
	if (!e && !r->per_cycle && (b->ncycles || n->ncycles))
		e = warn(r, "only %s has cycles: compared per run", b->ncycles ? b->dir : n->dir);
	if (!e && r->per_cycle && (b->ncycles < DM_MIN_CYCLES || n->ncycles < DM_MIN_CYCLES))
		e = warn(
			r,
			"fewer than %d complete cycles on a side: per-cycle figures are not tested",
			DM_MIN_CYCLES);
	if (!e && b->period_ns > 0 && n->period_ns > 0 && b->period_ns != n->period_ns)
		e = warn(r,
			 "sampling periods differ (%.0f ns vs %.0f ns): CPU times are compared, "
			 "sample counts are not equal weights",
			 b->period_ns, n->period_ns);
	if (!e && (b->keys_without_module || n->keys_without_module))
		e = warn(r, "one report has no modules for its functions (written by an older "
			    "version): functions matched by name only");
	if (!e && b->funcs_from_flame != n->funcs_from_flame)
		e = warn(r, "one report has stacks (flame), the other only top functions: function "
			    "figures are less exact");
	if (!e && r->per_cycle)
		e = cycle_rows(b, n, o, r);
	/* Wall-clock figures are compared at equal share too, but off-CPU
	 * waits also lengthen on a busy machine (a wake-up waits for a CPU)
	 * and have no such check: say when the machines differed that much. */
	if (!e && r->share_base > 0 && r->share_new > 0 &&
	    fmax(r->share_base / r->share_new, r->share_new / r->share_base) > 1.5)
		e = warn(
			r,
			"the machine was much busier in %s (CPU share per cycle %.0f%% vs %.0f%%): "
			"wall-clock figures are judged at equal share, off-CPU waits are not",
			r->share_base < r->share_new ? b->dir : n->dir,
			100 * fmin(r->share_base, r->share_new),
			100 * fmax(r->share_base, r->share_new));
	if (!e)
		e = run_rows(b, n, o, r);
	if (!e)
		e = function_rows(b, n, o, r);
	if (!e)
		e = probe_rows(b, n, r);
	if (!e)
		e = sql_rows(b, n, r);
	if (e) {
		dm_result_free(r);
		return e;
	}
	e = decide_all(b, n, r);
	if (e)
		dm_result_free(r);
	return e;
}

void dm_result_free(struct dm_result *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].name);
		free(r->rows[i].detail);
		free(r->rows[i].key);
		free(r->rows[i].via);
	}
	free(r->program_note);
	free(r->rows);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
}
