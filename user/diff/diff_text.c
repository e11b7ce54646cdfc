// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Terminal summary and --json of `ebpf-prof diff` (see diff_text.h). */
#include "diff/diff_text.h"

#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void diff_fmt_value(char *buf, size_t len, double v, const char *unit)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	if (!strcmp(unit, "ns")) {
		double a = fabs(v);

		if (a >= 1e9)
			snprintf(buf, len, "%.2f s", v / 1e9);
		else if (a >= 1e6)
			snprintf(buf, len, "%.2f ms", v / 1e6);
		else if (a >= 1e3)
			snprintf(buf, len, "%.1f us", v / 1e3);
		else
			snprintf(buf, len, "%.0f ns", v);
	} else if (!strcmp(unit, "bytes")) {
		snprintf(buf, len, "%.1f MB", v / 1048576);
	} else if (!strcmp(unit, "fraction")) {
		snprintf(buf, len, "%.1f%%", 100 * v);
	} else if (!strcmp(unit, "calls") || !strcmp(unit, "rows")) {
		snprintf(buf, len, v == floor(v) ? "%.0f" : "%.2f", v);
	} else {
		snprintf(buf, len, "%.1f %s", v, unit);
	}
}

void diff_fmt_change(char *buf, size_t len, const struct dm_row *w)
{
	if (isnan(w->base) && !isnan(w->new))
		snprintf(buf, len, "new");
	else if (!isnan(w->base) && isnan(w->new))
		snprintf(buf, len, "gone");
	else if (isinf(w->est) || (w->base == 0 && w->new != 0))
		snprintf(buf, len, "from 0");
	else if (isnan(w->est))
		snprintf(buf, len, "-");
	else if (w->abs_change)
		snprintf(buf, len, "%+.1f pt", 100 * w->est);
	else if (w->of_cycle && isfinite(w->base) && isfinite(w->new) && w->base != 0)
		/* The part's own change; what it adds to the cycle is in the
		 * interval column (fmt_ci). */
		snprintf(buf, len, "%+.0f%%", 100 * (w->new - w->base) / fabs(w->base));
	else
		snprintf(buf, len, "%+.1f%%", 100 * w->est);
}

static void fmt_ci(char *buf, size_t len, const struct dm_row *w)
{
	if (!isfinite(w->lo) || !isfinite(w->hi))
		snprintf(buf, len, "-");
	else if (w->abs_change)
		snprintf(buf, len, "[%+.1f, %+.1f] pt", 100 * w->lo, 100 * w->hi);
	else if (w->of_cycle)
		/* Relative to DM_SMALL_SHARE of the cycle: in % of the cycle. */
		snprintf(buf, len, "cycle %+.1f%% [%+.1f, %+.1f]", 100 * DM_SMALL_SHARE * w->est,
			 100 * DM_SMALL_SHARE * w->lo, 100 * DM_SMALL_SHARE * w->hi);
	else
		snprintf(buf, len, "[%+.1f%%, %+.1f%%]", 100 * w->lo, 100 * w->hi);
}

static void fmt_p(char *buf, size_t len, double p)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else if (p < 0.001)
		snprintf(buf, len, "<0.001");
	else
		snprintf(buf, len, "%.3f", p);
}

/* Name with its module or library file name, cut to width for a column. */
static void fmt_name(char *buf, size_t len, const struct dm_row *w, int width)
{
	const char *d = w->detail ? strrchr(w->detail, '/') : NULL;
	char tmp[512];

	d = d ? d + 1 : w->detail;
	if (w->section == DM_S_FUNCTION && w->via)
		snprintf(tmp, sizeof(tmp), "%s (via %s)", w->name, w->via);
	else if (d && *d && w->section == DM_S_FUNCTION)
		snprintf(tmp, sizeof(tmp), "%s (%s)", w->name, d);
	else
		snprintf(tmp, sizeof(tmp), "%s", w->name);
	for (char *c = tmp; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	if ((int)strlen(tmp) > width && width > 3)
		snprintf(buf, len, "%.*s...", width - 3, tmp);
	else
		snprintf(buf, len, "%s", tmp);
}

/* A small part of the cycle in words: "SQL 1.16 -> 7.64 ms (+559%), +6.5 ms
 * per cycle = +5.3% of the cycle [+4.1%, +6.0%], p <0.001, regression". */
static void print_of_cycle(FILE *f, const struct dm_row *w, double wall_median)
{
	char b[32], n[32], d[32], p[16];

	diff_fmt_value(b, sizeof(b), w->base, w->unit);
	diff_fmt_value(n, sizeof(n), w->new, w->unit);
	diff_fmt_value(d, sizeof(d), w->new - w->base, w->unit);
	fmt_p(p, sizeof(p), w->p);
	fprintf(f, "  %-8s %s %s -> %s (%+.0f%%), %s%s per cycle", dm_section_name(w->section),
		w->name, b, n, 100 * (w->new - w->base) / fabs(w->base),
		w->new >= w->base ? "+" : "", d);
	if (isfinite(wall_median) && wall_median > 0)
		fprintf(f, " = %+.1f%% of the cycle (%s)", 100 * (w->new - w->base) / wall_median,
			w->unit && !strcmp(w->unit, "ns") ? "median wall time" : "median");
	if (isfinite(w->lo) && isfinite(w->hi))
		fprintf(f, ", 95%% interval [%+.1f%%, %+.1f%%] of the cycle",
			100 * DM_SMALL_SHARE * w->lo, 100 * DM_SMALL_SHARE * w->hi);
	fprintf(f, ", p %s\n", p);
}

static void print_row(FILE *f, const struct dm_row *w, bool with_section)
{
	char name[128], b[32], n[32], ch[32], ci[48], p[16];

	fmt_name(name, sizeof(name), w, with_section ? 34 : 42);
	diff_fmt_value(b, sizeof(b), w->base, w->unit);
	diff_fmt_value(n, sizeof(n), w->new, w->unit);
	diff_fmt_change(ch, sizeof(ch), w);
	fmt_ci(ci, sizeof(ci), w);
	fmt_p(p, sizeof(p), w->p);
	if (with_section)
		fprintf(f, "  %-8s %-34s %-18s %10s -> %-10s %8s %-20s p %s\n",
			dm_section_name(w->section), name, w->metric, b, n, ch, ci, p);
	else
		fprintf(f, "  %-42s %10s %10s %9s %-22s %7s %s\n", name, b, n, ch, ci, p,
			w->status == DM_SAME ? "" : dm_status_name(w->status));
}

static int cmp_effect_desc(const void *x, const void *y)
{
	const struct dm_row *a = *(const struct dm_row *const *)x,
			    *b = *(const struct dm_row *const *)y;
	double ea = isfinite(a->est) ? fabs(a->est) : 1e300,
	       eb = isfinite(b->est) ? fabs(b->est) : 1e300;

	return ea < eb ? 1 : ea > eb ? -1 : 0;
}

static void print_list(FILE *f, const char *title, const struct dm_result *r, enum dm_status want,
		       size_t max_lines)
{
	const struct dm_row **v = malloc((r->nrows + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].status == want)
			v[n++] = &r->rows[i];
	if (n) {
		qsort(v, n, sizeof(*v), cmp_effect_desc);
		fprintf(f, "\n%s (%zu):\n", title, n);
		for (size_t i = 0; i < n && i < max_lines; i++)
			if (v[i]->of_cycle && isfinite(v[i]->base) && isfinite(v[i]->new) &&
			    v[i]->base != 0)
				print_of_cycle(f, v[i], r->wall_median);
			else
				print_row(f, v[i], true);
		if (n > max_lines)
			fprintf(f, "  ... and %zu more (--json or diff.html for all)\n",
				n - max_lines);
	}
	free(v);
}

/* A side's CPU time per run (samples x period): mean and relative sd
 * over its runs (NAN with one run). */
static void side_cpu(const struct dl_run *r, double *mean, double *rsd)
{
	size_t k = r->nruns > 1 && r->runs ? r->nruns : 1;
	double s = 0, ss = 0;

	for (size_t j = 0; j < k; j++) {
		const struct dl_run *x = k > 1 ? &r->runs[j] : r;

		s += (double)x->samples * x->period_ns;
	}
	*mean = s / (double)k;
	*rsd = NAN;
	if (k < 2 || !(*mean > 0))
		return;
	for (size_t j = 0; j < k; j++) {
		const struct dl_run *x = &r->runs[j];
		double d = (double)x->samples * x->period_ns - *mean;

		ss += d * d;
	}
	*rsd = sqrt(ss / (double)(k - 1)) / *mean;
}

static void print_run_line(FILE *f, const char *what, const struct dl_run *r)
{
	fprintf(f, "%s %s: %s, ", what, r->dir, *r->program ? r->program : "(unknown program)");
	if (r->ncycles)
		fprintf(f, "%zu cycles, ", r->ncycles);
	else
		fprintf(f, "no cycles, ");
	fprintf(f, "%llu samples", (unsigned long long)r->samples);
	if (r->nruns > 1) {
		double mean, rsd;
		char v[32];

		side_cpu(r, &mean, &rsd);
		diff_fmt_value(v, sizeof(v), mean, "ns");
		fprintf(f, " in all; CPU time %s \u00b1 %.1f%% (%zu runs: mean, sd)", v, 100 * rsd,
			r->nruns);
	}
	fputc('\n', f);
}

void diff_print_summary(FILE *f, const struct dl_run *b, const struct dl_run *n,
			const struct dm_result *r, size_t max_lines)
{
	if (!max_lines)
		max_lines = 10;
	print_run_line(f, "Base:", b);
	print_run_line(f, "New: ", n);
	if (b->nruns > 1 || n->nruns > 1)
		fprintf(f,
			"Several runs: figures are one run's mean; the run-to-run noise of whole-run "
			"figures comes from the runs' spread (at least %.1f%%).\n",
			100 * r->opts.run_noise);
	fprintf(f,
		"Compared %s; a regression is worse by more than %.1f%% and significant (95%% "
		"intervals, alpha %.2f per section, run-to-run noise %.1f%%).\n",
		r->per_cycle   ? "per cycle"
		: r->same_work ? "per run (the same command ran to completion in both: CPU times)"
			       : "per run (CPU time and shares of samples)",
		100 * r->opts.threshold, r->opts.alpha, 100 * r->opts.run_noise);
	if (isfinite(r->share_base) && isfinite(r->share_new))
		fprintf(f,
			"CPU share of the runnable time per cycle (median): base %.0f%%, new %.0f%%; "
			"a wall-clock change counts only if it holds at equal share too.\n",
			100 * r->share_base, 100 * r->share_new);
	if (r->program_note)
		fprintf(f, "Note: %s.\n", r->program_note);
	for (size_t i = 0; i < r->nwarnings; i++)
		fprintf(f, "warning: %s\n", r->warnings[i]);
	print_list(f, "Regressions", r, DM_REGRESSION, max_lines);
	print_list(f, "Improvements", r, DM_IMPROVEMENT, max_lines);
	print_list(f, "Other significant changes (not gating)", r, DM_CHANGED, max_lines);
	size_t untested = 0;
	for (size_t i = 0; i < r->nrows; i++)
		untested += r->rows[i].status == DM_UNTESTED;
	/* One figure per run has no spread to test against: listed in the
	 * JSON and the page, counted here, never a verdict. */
	if (untested)
		fprintf(f,
			"\n%zu figure%s without a test (probe and SQL times, whole-run totals) "
			"changed by more than %.1f%%: see --json or diff.html.\n",
			untested, untested == 1 ? "" : "s", 100 * r->opts.threshold);
	if (r->per_cycle) {
		fprintf(f,
			"\nPer cycle (median)                                base        new    change 95%% interval                 p\n");
		for (size_t i = 0; i < r->nrows; i++)
			if (r->rows[i].section == DM_S_CYCLE)
				print_row(f, &r->rows[i], false);
		for (size_t i = 0; i < r->nrows; i++)
			if (r->rows[i].section == DM_S_CYCLE && r->rows[i].of_cycle) {
				fprintf(f,
					"  \"cycle\": a part under %.0f%% of the cycle is judged by what "
					"it adds to the cycle, in %% of the median wall time\n",
					100 * DM_SMALL_SHARE);
				break;
			}
	}
	fprintf(f,
		"\nFunctions, self CPU %s                     base        new    change 95%% interval                 p\n",
		r->per_cycle ? "per cycle" : "per run  ");
	size_t shown = 0;
	for (size_t i = 0; i < r->nrows && shown < max_lines; i++) {
		const struct dm_row *w = &r->rows[i];

		if (w->section == DM_S_FUNCTION && w->gating) {
			print_row(f, w, false);
			shown++;
		}
	}
	if (!shown)
		fprintf(f, "  (no function above %.1f%% of the samples)\n",
			100 * r->opts.min_share);
	/* Totals that gate: a function that calls something more. */
	bool head = false;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct dm_row *w = &r->rows[i];

		if (w->section == DM_S_FUNCTION && !w->gating && w->status == DM_REGRESSION) {
			if (!head)
				fprintf(f, "\nAlong call paths, total CPU %s\n",
					r->per_cycle ? "per cycle" : "per run");
			head = true;
			print_row(f, w, false);
		}
	}
	if (r->regressions)
		fprintf(f, "\nResult: %zu regression%s.\n", r->regressions,
			r->regressions == 1 ? "" : "s");
	else
		fprintf(f, "\nResult: no regression.\n");
}

static cJSON *num_or_null(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static bool add(cJSON *o, const char *k, cJSON *v)
{
	if (!v)
		return false;
	if (!cJSON_AddItemToObject(o, k, v)) {
		cJSON_Delete(v);
		return false;
	}
	return true;
}

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* One recording: its directory and whole-run figures. */
static cJSON *one_run_json(const struct dl_run *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !add(o, "dir", cJSON_CreateString(r->dir)) ||
	    !add(o, "samples", cJSON_CreateNumber((double)r->samples)) ||
	    !add(o, "cpu_ns", num_or_null((double)r->samples * r->period_ns)) ||
	    !add(o, "duration_ns", num_or_null(r->duration_ns)) ||
	    !add(o, "cycles", cJSON_CreateNumber((double)r->ncycles)) ||
	    !add(o, "exit_status",
		 r->exit_status >= 0 ? cJSON_CreateNumber(r->exit_status) : cJSON_CreateNull()) ||
	    !add(o, "build_id", str_or_null(r->build_id))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *run_json(const struct dl_run *r)
{
	cJSON *o = cJSON_CreateObject(), *runs = NULL;
	double mean, rsd;

	side_cpu(r, &mean, &rsd);
	if (!o || !add(o, "dir", cJSON_CreateString(r->dir)) ||
	    !add(o, "program", cJSON_CreateString(r->program)) ||
	    !add(o, "command", r->command ? cJSON_CreateString(r->command) : cJSON_CreateNull()) ||
	    !add(o, "cycles", cJSON_CreateNumber((double)r->ncycles)) ||
	    !add(o, "samples", cJSON_CreateNumber((double)r->samples)) ||
	    !add(o, "period_ns", num_or_null(r->period_ns)) ||
	    !add(o, "program_file", str_or_null(r->main_module)) ||
	    !add(o, "build_id", str_or_null(r->build_id)) ||
	    !add(o, "nruns", cJSON_CreateNumber((double)(r->nruns > 1 ? r->nruns : 1))) ||
	    !add(o, "cpu_ns_mean", num_or_null(mean)) || !add(o, "cpu_ns_rsd", num_or_null(rsd)) ||
	    !(runs = cJSON_AddArrayToObject(o, "runs")))
		goto fail;
	for (size_t j = 0; j < (r->nruns > 1 && r->runs ? r->nruns : 1); j++) {
		cJSON *x = one_run_json(r->nruns > 1 && r->runs ? &r->runs[j] : r);

		if (!x || !cJSON_AddItemToArray(runs, x)) {
			cJSON_Delete(x);
			goto fail;
		}
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static const char *better_name(enum dm_better b)
{
	return b == DM_LOWER ? "lower" : b == DM_HIGHER ? "higher" : "neither";
}

static cJSON *row_json(const struct dm_row *w)
{
	cJSON *o = cJSON_CreateObject(), *ci = NULL;
	/* From a zero base a relative change means little: counts say so
	 * (their change is still the Haldane-corrected estimate that gates). */
	const char *kind = isinf(w->est) || (!w->abs_change && w->base == 0 && w->new != 0)
				   ? "from-zero"
			   : w->abs_change ? "absolute"
			   : w->of_cycle   ? "of-cycle"
					   : "relative";

	if (!o || !add(o, "section", cJSON_CreateString(dm_section_name(w->section))) ||
	    !add(o, "name", cJSON_CreateString(w->name)) ||
	    !add(o, "detail", w->detail ? cJSON_CreateString(w->detail) : cJSON_CreateNull()) ||
	    !add(o, "metric", cJSON_CreateString(w->metric)) ||
	    !add(o, "unit", cJSON_CreateString(w->unit)) || !add(o, "base", num_or_null(w->base)) ||
	    !add(o, "new", num_or_null(w->new)))
		goto fail;
	if (w->section == DM_S_FUNCTION &&
	    (!add(o, "base_share", num_or_null(w->base_share)) ||
	     !add(o, "new_share", num_or_null(w->new_share)) ||
	     !add(o, "via", w->via ? cJSON_CreateString(w->via) : cJSON_CreateNull())))
		goto fail;
	if (!add(o, "change", num_or_null(w->est)) ||
	    !add(o, "change_kind", cJSON_CreateString(kind)) || !(ci = cJSON_CreateArray()) ||
	    !cJSON_AddItemToArray(ci, num_or_null(w->lo)) ||
	    !cJSON_AddItemToArray(ci, num_or_null(w->hi)) || !add(o, "ci95", ci))
		goto fail_ci;
	ci = NULL;
	if (w->section == DM_S_CYCLE &&
	    (!add(o, "change_at_equal_cpu_share",
		  w->has_eq ? num_or_null(w->est_eq) : cJSON_CreateNull()) ||
	     !add(o, "p_at_equal_cpu_share",
		  w->has_eq ? num_or_null(w->p_eq) : cJSON_CreateNull())))
		goto fail;
	if (!add(o, "p", num_or_null(w->p)) ||
	    !add(o, "test", cJSON_CreateString(dm_test_name(w->test))) ||
	    !add(o, "better", cJSON_CreateString(better_name(w->better))) ||
	    !add(o, "gating", cJSON_CreateBool(w->gating)) ||
	    !add(o, "status", cJSON_CreateString(dm_status_name(w->status))) ||
	    !add(o, "n_base", cJSON_CreateNumber((double)w->n_base)) ||
	    !add(o, "n_new", cJSON_CreateNumber((double)w->n_new)) ||
	    !add(o, "runs_sd", (ci = cJSON_CreateArray())))
		goto fail;
	if (!cJSON_AddItemToArray(ci, num_or_null(w->sd_base)) ||
	    !cJSON_AddItemToArray(ci, num_or_null(w->sd_new)) ||
	    !add(o, "run_noise_from",
		 cJSON_CreateString(w->test == DM_T_NONE ? "none"
				    : w->from_spread	 ? "spread"
							 : "floor")))
		goto fail;
	return o;
fail_ci:
	cJSON_Delete(ci);
fail:
	cJSON_Delete(o);
	return NULL;
}

cJSON *diff_to_json(const struct dl_run *b, const struct dl_run *n, const struct dm_result *r)
{
	cJSON *o = cJSON_CreateObject(), *rows, *warn, *boot, *share;

	if (!o || !add(o, "schema", cJSON_CreateString("ebpf-prof-diff/1")) ||
	    !add(o, "version", cJSON_CreateString(EBPF_PROF_VERSION)) ||
	    !add(o, "base", run_json(b)) || !add(o, "new", run_json(n)) ||
	    !add(o, "normalization", cJSON_CreateString(r->per_cycle ? "per-cycle" : "per-run")) ||
	    !add(o, "same_work", cJSON_CreateBool(r->same_work)) ||
	    !add(o, "program_note",
		 r->program_note ? cJSON_CreateString(r->program_note) : cJSON_CreateNull()) ||
	    !add(o, "program_changed",
		 r->program_changed < 0 ? cJSON_CreateNull()
					: cJSON_CreateBool(r->program_changed)) ||
	    !add(o, "wall_median_ns", num_or_null(r->wall_median)) ||
	    !add(o, "threshold", cJSON_CreateNumber(r->opts.threshold)) ||
	    !add(o, "alpha", cJSON_CreateNumber(r->opts.alpha)) ||
	    !add(o, "min_share", cJSON_CreateNumber(r->opts.min_share)) ||
	    !add(o, "run_noise", cJSON_CreateNumber(r->opts.run_noise)) ||
	    !(share = cJSON_AddObjectToObject(o, "cpu_share")) ||
	    !add(share, "base", num_or_null(r->share_base)) ||
	    !add(share, "new", num_or_null(r->share_new)) ||
	    !(boot = cJSON_AddObjectToObject(o, "bootstrap")) ||
	    !add(boot, "iterations", cJSON_CreateNumber(r->opts.boot_iters)) ||
	    !add(boot, "seed", cJSON_CreateNumber((double)r->opts.seed)) ||
	    !(warn = cJSON_AddArrayToObject(o, "warnings")))
		goto fail;
	for (size_t i = 0; i < r->nwarnings; i++) {
		cJSON *s = cJSON_CreateString(r->warnings[i]);

		if (!s || !cJSON_AddItemToArray(warn, s)) {
			cJSON_Delete(s);
			goto fail;
		}
	}
	if (!add(o, "regressions", cJSON_CreateNumber((double)r->regressions)) ||
	    !add(o, "improvements", cJSON_CreateNumber((double)r->improvements)) ||
	    !add(o, "verdict",
		 cJSON_CreateString(r->regressions ? "regression" : "no-regression")) ||
	    !(rows = cJSON_AddArrayToObject(o, "rows")))
		goto fail;
	for (size_t i = 0; i < r->nrows; i++) {
		cJSON *x = row_json(&r->rows[i]);

		if (!x || !cJSON_AddItemToArray(rows, x)) {
			cJSON_Delete(x);
			goto fail;
		}
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
