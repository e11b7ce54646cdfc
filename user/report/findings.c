// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bottleneck rules over the per-cycle table (see findings.h). */
#include "report/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB_D (1024.0 * 1024.0)
/* A part at or above this share of every cycle is the cycle itself. */
#define OWN_DEFINITION_SHARE 0.90

void findings_default_cfg(struct findings_cfg *cfg)
{
	*cfg = (struct findings_cfg){
		.inference_share = 0.60,
		.sql_share = 0.15,
		.other_share = 0.10,
		.slow_factor = 1.5,
		.slow_min_cycles = 3,
		.mem_pressure = 0.80,
		.leak_mb_per_cycle = 0.5,
		.leak_min_r2 = 0.6,
		.leak_min_cycles = 5,
		.throttle_share = 0.01,
		.runq_share = 0.05,
		.runq_p99_ns = 10000000,
		.max_listed = 10,
		.overhead_share = 0.02,
		.lost_share = 0.01,
	};
}

const char *finding_severity_name(enum finding_severity s)
{
	switch (s) {
	case FIND_INFO:
		return "info";
	case FIND_WARNING:
		return "warning";
	case FIND_CRITICAL:
		return "critical";
	}
	return "unknown";
}

double findings_fit_slope(const double *x, const double *y, size_t n, double *r2)
{
	*r2 = 0;
	if (n < 2)
		return 0;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	double sxx = 0, sxy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx <= 0)
		return 0;
	double b = sxy / sxx;
	/* A flat series is perfectly explained by a flat line. */
	*r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
	return b;
}

/* ---- growable text ---- */

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap - b->len;
		int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t nc = (b->cap ? b->cap : 128);
		while (nc <= b->len + (size_t)n)
			nc *= 2;
		char *p = realloc(b->s, nc);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = nc;
	}
}

static char *sb_take(struct sbuf *b)
{
	if (b->oom || !b->s) {
		free(b->s);
		return b->oom ? NULL : strdup("");
	}
	return b->s;
}

/* ---- finding list ---- */

struct flist {
	struct findings *out;
	size_t cap;
	int err;
};

/* Adds a finding; takes ownership of cycles (freed on failure). */
static struct finding *add(struct flist *fl, const char *rule, enum finding_severity sev,
			   struct sbuf *title, struct sbuf *evidence, struct sbuf *rec,
			   double value, double threshold, uint32_t *cycles, size_t ncycles)
{
	char *t = sb_take(title), *e = sb_take(evidence), *r = sb_take(rec);
	if (fl->err || !t || !e || !r)
		goto fail;
	if (fl->out->n == fl->cap) {
		size_t nc = fl->cap ? fl->cap * 2 : 8;
		struct finding *p = realloc(fl->out->v, nc * sizeof(*p));
		if (!p)
			goto fail;
		fl->out->v = p;
		fl->cap = nc;
	}
	struct finding *f = &fl->out->v[fl->out->n++];
	*f = (struct finding){ rule, sev, t, e, r, value, threshold, cycles, ncycles };
	return f;
fail:
	free(t);
	free(e);
	free(r);
	free(cycles);
	fl->err = -ENOMEM;
	return NULL;
}

static void list_cycles(struct sbuf *b, const uint32_t *c, size_t n, uint32_t max)
{
	for (size_t i = 0; i < n && i < max; i++)
		sb_printf(b, "%s#%u", i ? ", " : "", c[i]);
	if (n > max)
		sb_printf(b, " and %zu more", n - max);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* ---- helpers over the table ---- */

typedef uint64_t (*row_get)(const struct cycle_row *r);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t g_throttled(const struct cycle_row *r)
{
	return cycle_agg_part(r, CA_THROTTLED);
}

/* A copy of a list's kept ids (NULL with *n 0 when empty). */
static uint32_t *ids_copy(struct flist *fl, const struct cycle_agg_ids *l, size_t *n)
{
	uint32_t *c = malloc((l->kept ? l->kept : 1) * sizeof(*c));

	*n = 0;
	if (!c) {
		fl->err = -ENOMEM;
		return NULL;
	}
	memcpy(c, l->v, l->kept * sizeof(*c));
	*n = l->kept;
	return c;
}

/* "#1, #2 and N more": N counts the ids not kept too. */
static void list_ids(struct sbuf *b, const uint32_t *c, size_t kept, uint64_t n, uint32_t max)
{
	for (size_t i = 0; i < kept && i < max; i++)
		sb_printf(b, "%s#%u", i ? ", " : "", c[i]);
	if (n > max)
		sb_printf(b, " and %llu more", (unsigned long long)(n - max));
}

/* A "share of wall time" rule over every cycle. */
static void share_rule(struct flist *fl, const struct cycle_agg *ag, enum cyc_agg_part p,
		       double thr, const char *rule, const char *what, const char *rec,
		       const struct findings_cfg *cfg, struct sbuf *extra,
		       enum finding_severity sev)
{
	uint64_t part = ag->sum[p], wall = ag->sum[CA_WALL];
	double share = wall ? (double)part / (double)wall : 0;
	if (!(share > thr) || !part) {
		free(extra->s);
		return;
	}
	size_t n;
	uint64_t nover = ag->over[p].n;
	uint32_t *c = ids_copy(fl, &ag->over[p], &n);
	if (!c) {
		free(extra->s);
		return;
	}
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	sb_printf(&ti, "%s takes %.0f%% of cycle time", what, share * 100);
	sb_printf(&ev,
		  "%s: %.1f ms of %.1f ms wall over %llu cycle(s) (%.1f%%, threshold %.0f%%); "
		  "above the threshold in %llu cycle(s)",
		  what, ms(part), ms(wall), (unsigned long long)ag->n, share * 100, thr * 100,
		  (unsigned long long)nover);
	if (nover) {
		sb_printf(&ev, ": ");
		list_ids(&ev, c, n, nover, cfg->max_listed);
	}
	if (extra->s)
		sb_printf(&ev, "%s", extra->s);
	free(extra->s);
	sb_printf(&re, "%s", rec);
	add(fl, rule, sev, &ti, &ev, &re, share, thr, c, n);
}

/* Something was measured inside the cycles: a probed call (inference, SQL,
 * other probes) or a GC pass. Without, every cycle is unattributed by
 * construction and saying so is information, not a problem. */
static bool probed(const struct cycle_agg *ag)
{
	return ag->sum[CA_INF] || ag->sum[CA_SQL] || ag->sum[CA_PROBE] || ag->sum[CA_GC];
}

/* The function a --cycle / --cycle-every spec names (after "py:", a
 * "LIB:" or "usdt:PATH:PROVIDER:"); NULL without a spec. */
static const char *spec_function(const struct findings_ctx *ctx)
{
	if (!ctx || !ctx->cycle_spec || !ctx->cycle_spec[0])
		return NULL;
	const char *s = ctx->cycle_spec, *c = strrchr(s, ':');
	return c ? c + 1 : s;
}

/* The part is what the cycle is defined by, so its share restates the
 * definition: the cycle spec names a function of that part's class
 * (llama_* / ggml_* for inference, sqlite3_* for SQL), or the cycle is one
 * call of a function (a spec was given) and the part fills nearly all of
 * every cycle (py:generate around the model's generation). */
static bool own_definition(const struct cycle_table *t, const struct cycle_agg *ag,
			   enum cyc_agg_part p, const struct findings_ctx *ctx)
{
	const char *fn = spec_function(ctx);

	if (!fn || t->whole_run)
		return false;
	if (p == CA_INF && (!strncmp(fn, "llama_", 6) || !strncmp(fn, "ggml_", 5)))
		return true;
	if (p == CA_SQL && !strncmp(fn, "sqlite3_", 8))
		return true;
	return ag->nmin && ag->min_share[p] >= OWN_DEFINITION_SHARE;
}

/* ---- rules ---- */

static void rule_inference(struct flist *fl, const struct cycle_table *t,
			   const struct cycle_agg *ag, const struct findings_cfg *cfg,
			   const struct findings_ctx *ctx)
{
	struct sbuf x = { 0 };

	if (own_definition(t, ag, CA_INF, ctx))
		return;
	uint64_t tok = ag->tokens, inf = ag->inference_ns;
	if (tok && inf)
		sb_printf(&x, "; %llu tokens, %.1f per second of inference",
			  (unsigned long long)tok, (double)tok * 1e9 / (double)inf);
	share_rule(fl, ag, CA_INF, cfg->inference_share, "inference_dominates", "Inference",
		   "Inference dominates the cycle: use a smaller context (n_ctx), a more "
		   "aggressive quantization (e.g. Q4_K_M), offload more layers to the GPU "
		   "(n_gpu_layers), or lower the maximum number of generated tokens.",
		   cfg, &x, FIND_WARNING);
}

static int cmp_stmt(const void *a, const void *b)
{
	const struct cycle_agg_stmt *x = a, *y = b;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static void rule_sql(struct flist *fl, const struct cycle_table *t, const struct cycle_agg *ag,
		     const struct findings_cfg *cfg, const struct findings_ctx *ctx)
{
	struct sbuf x = { 0 };

	if (own_definition(t, ag, CA_SQL, ctx))
		return;
	size_t ns = ag->nstmts;
	uint64_t count = ag->sql_count;
	struct cycle_agg_stmt *s = malloc((ns ? ns : 1) * sizeof(*s));
	if (!s) {
		fl->err = -ENOMEM;
		return;
	}
	memcpy(s, ag->stmts, ns * sizeof(*s));
	qsort(s, ns, sizeof(*s), cmp_stmt);
	sb_printf(&x, "; %llu statements", (unsigned long long)count);
	for (size_t k = 0; k < ns && k < 3; k++)
		sb_printf(&x, "%s\"%.120s\" took %.1f ms (cycle %u)",
			  k ? "; " : "; slowest: ", s[k].text, ms(s[k].ns), s[k].cycle);
	free(s);
	share_rule(fl, ag, CA_SQL, cfg->sql_share, "database_overhead", "Database (SQL)",
		   "Batch the writes (executemany / one multi-row INSERT), wrap each cycle's "
		   "writes in one transaction, add indexes for the slow queries named in the "
		   "evidence, and consider PRAGMA journal_mode=WAL with synchronous=NORMAL.",
		   cfg, &x, FIND_WARNING);
}

/* The allocator probes' cost has its own finding above its threshold. */
static bool alloc_cost_fires(const struct findings_ctx *ctx)
{
	return ctx->alloc_probe_share > 0 && ctx->alloc_probe_threshold > 0 &&
	       ctx->alloc_probe_share > ctx->alloc_probe_threshold;
}

/* The probes' share without the allocator probes' when those have their
 * own finding: one cost, one finding. */
static double other_probe_share(const struct findings_ctx *ctx)
{
	double s = ctx->probe_share;

	if (alloc_cost_fires(ctx))
		s -= ctx->alloc_probe_share;
	return s > 0 ? s : 0;
}

static void rule_other(struct flist *fl, const struct cycle_agg *ag, const struct findings_cfg *cfg,
		       const struct findings_ctx *ctx)
{
	struct sbuf x = { 0 };
	/* Time in our own probes is in no probed call: say so rather than
	 * ask for more probes only. */
	if (ctx && ctx->probe_share > cfg->overhead_share)
		sb_printf(&x,
			  "; %.0f%% of the target's CPU went into the profiler's own probes "
			  "(%s)",
			  ctx->probe_share * 100,
			  other_probe_share(ctx) > cfg->overhead_share ? "probe_overhead"
			  : alloc_cost_fires(ctx)		       ? "alloc_probe_cost"
								       : "probe_overhead");
	bool pr = probed(ag);

	if (!pr)
		sb_printf(&x, "; nothing was probed inside the cycles (no llama.cpp, SQLite, "
			      "--probe or GC call), so no time could be attributed to a step");
	share_rule(fl, ag, CA_OTHER, cfg->other_share, "unattributed_time", "Unattributed time",
		   "Part of the cycle is not covered by any probe or off-CPU wait: time the "
		   "remaining native steps with --probe LIB:SYMBOL (or --probe "
		   "usdt:PATH:PROVIDER:NAME), and look at the top functions of the slow cycles "
		   "(Python code shows there by its interpreter frames).",
		   cfg, &x, pr ? FIND_WARNING : FIND_INFO);
}

struct comp {
	const char *name;
	enum cyc_agg_part p;
	const char *advice;
};

static const struct comp comps[] = {
	{ "SQL", CA_SQL, "batch writes and add indexes" },
	{ "GC", CA_GC, "reduce allocations or tune gc thresholds (gc.freeze / gc.set_threshold)" },
	{ "off-CPU I/O", CA_IO, "move I/O off the cycle path or make it asynchronous" },
	{ "throttling", CA_THROTTLED, "improve cooling or cap the power mode" },
	{ "run-queue wait", CA_RUNQ, "reduce the number of busy threads" },
	{ "inference", CA_INF, "check the prompt length and generated tokens of that cycle" },
	{ "other probes", CA_PROBE, "look at the probe table for that cycle" },
	{ "sleep", CA_SLEEP, "check timers, locks and waits on other threads" },
	{ "unattributed", CA_OTHER, "add probes around the remaining steps" },
};
#define NCOMP (sizeof(comps) / sizeof(comps[0]))

static int by_wall_desc(const void *a, const void *b)
{
	const struct cycle_agg_slow *x = a, *y = b;

	if (x->part[CA_WALL] != y->part[CA_WALL])
		return x->part[CA_WALL] > y->part[CA_WALL] ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Median of a part over the table's rows (exact). */
static int median_part(const struct cycle_table *t, enum cyc_agg_part p, uint64_t *med)
{
	size_t n = 0;

	*med = 0;
	if (!t->n)
		return 0;
	uint64_t *v = malloc(t->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (!t->rows[i].truncated)
			v[n++] = cycle_agg_part(&t->rows[i], p);
	if (!n)
		for (size_t i = 0; i < t->n; i++)
			v[n++] = cycle_agg_part(&t->rows[i], p);
	qsort(v, n, sizeof(*v), cmp_u64);
	*med = v[(n - 1) / 2];
	free(v);
	return 0;
}

/* Slow cycles: over slow_factor x the median wall time. With every cycle
 * in t (exact) the medians and the slow cycles come from its rows; else
 * the medians come from the aggregate's histograms, the count of slow
 * cycles too, and the listing and explanations from its slowest cycles. */
static void rule_slow(struct flist *fl, const struct cycle_table *t, const struct cycle_agg *ag,
		      bool exact, const struct findings_cfg *cfg)
{
	if (ag->n < cfg->slow_min_cycles || ag->n < 2)
		return;
	uint64_t med, cmed[NCOMP], nslow = 0;
	if (exact) {
		if (median_part(t, CA_WALL, &med)) {
			fl->err = -ENOMEM;
			return;
		}
		for (size_t k = 0; k < NCOMP; k++)
			if (median_part(t, comps[k].p, &cmed[k])) {
				fl->err = -ENOMEM;
				return;
			}
	} else {
		med = cycle_agg_median(ag, CA_WALL);
		for (size_t k = 0; k < NCOMP; k++)
			cmed[k] = cycle_agg_median(ag, comps[k].p);
	}
	if (!med)
		return;
	double lim = cfg->slow_factor * (double)med;
	size_t m = 0, cap = exact ? t->n : ag->nslowest;
	struct cycle_agg_slow *sr = malloc((cap ? cap : 1) * sizeof(*sr));
	if (!sr) {
		fl->err = -ENOMEM;
		return;
	}
	/* A truncated cycle's end is the run's end or a missed return: its
	 * wall time is not a cycle time. */
	if (exact) {
		for (size_t i = 0; i < t->n; i++)
			if (!t->rows[i].truncated && (double)t->rows[i].wall_ns > lim) {
				sr[m].index = t->rows[i].index;
				for (int p = 0; p < CA__COUNT; p++)
					sr[m].part[p] =
						cycle_agg_part(&t->rows[i], (enum cyc_agg_part)p);
				m++;
			}
		nslow = m;
	} else {
		for (size_t i = 0; i < ag->nslowest; i++)
			if ((double)ag->slowest[i].part[CA_WALL] > lim)
				sr[m++] = ag->slowest[i];
		nslow = cycle_agg_count_over(ag, (uint64_t)lim);
		if (nslow < m)
			nslow = m;
	}
	if (!m) {
		free(sr);
		return;
	}
	uint32_t *c = malloc(m * sizeof(*c));
	if (!c) {
		free(sr);
		fl->err = -ENOMEM;
		return;
	}
	/* The ids in table order; the listing worst first. */
	for (size_t j = 0; j < m; j++)
		c[j] = sr[j].index;
	qsort(sr, m, sizeof(*sr), by_wall_desc);
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	sb_printf(&ti, "%llu slow cycle(s) (over %.0f%% of the median %.1f ms)",
		  (unsigned long long)nslow, cfg->slow_factor * 100, ms(med));
	/* The component that grew the most over its own median explains a
	 * cycle; how many each explains comes first, over the slow cycles
	 * (the slowest CYC_AGG_SLOWEST when not every row is kept). */
	size_t best_of[NCOMP + 1] = { 0 }, *expl = calloc(m, sizeof(*expl));
	int64_t *grew = calloc(m, sizeof(*grew));
	if (!expl || !grew) {
		free(expl);
		free(grew);
		free(sr);
		free(c);
		fl->err = -ENOMEM;
		return;
	}
	for (size_t j = 0; j < m; j++) {
		expl[j] = NCOMP;
		for (size_t k = 0; k < NCOMP; k++) {
			int64_t d = (int64_t)sr[j].part[comps[k].p] - (int64_t)cmed[k];
			if (d > grew[j]) {
				grew[j] = d;
				expl[j] = k;
			}
		}
		best_of[expl[j]]++;
	}
	if (m < nslow)
		sb_printf(&ev,
			  "of the %zu slowest (medians and count from all %llu cycles within "
			  "%.0f%%), ",
			  m, (unsigned long long)ag->n, HIST_MAX_REL_ERROR * 100);
	sb_printf(&ev, "explained by");
	bool done[NCOMP + 1] = { false };
	for (size_t r = 0; r <= NCOMP; r++) {
		size_t k = NCOMP + 1; /* most cycles first, then comps[] order */

		for (size_t q = 0; q <= NCOMP; q++)
			if (!done[q] && best_of[q] && (k > NCOMP || best_of[q] > best_of[k]))
				k = q;
		if (k > NCOMP)
			break;
		done[k] = true;
		sb_printf(&ev, "%s %s in %zu", r ? "," : "",
			  k < NCOMP ? comps[k].name : "no single component", best_of[k]);
	}
	sb_printf(&ev, "; worst first: ");
	for (size_t j = 0; j < m && j < cfg->max_listed; j++) {
		const struct cycle_agg_slow *r = &sr[j];

		sb_printf(&ev, "%scycle %u: %.1f ms (%.1fx median)", j ? "; " : "", r->index,
			  ms(r->part[CA_WALL]), (double)r->part[CA_WALL] / (double)med);
		if (expl[j] < NCOMP)
			sb_printf(&ev, ", %s +%.1f ms over its median (%.1f -> %.1f ms)",
				  comps[expl[j]].name, ms((uint64_t)grew[j]), ms(cmed[expl[j]]),
				  ms(r->part[comps[expl[j]].p]));
	}
	if (nslow > cfg->max_listed)
		sb_printf(&ev, "; and %llu more", (unsigned long long)(nslow - cfg->max_listed));
	uint64_t worst = sr[0].part[CA_WALL];
	/* Critical only with a cause: the worst cycle grew by a measured
	 * component, not by unattributed time. */
	bool cause = expl[0] < NCOMP && comps[expl[0]].p != CA_OTHER;
	sb_printf(&re, "Slow cycles are explained by the component that grew:");
	for (size_t k = 0; k < NCOMP; k++)
		if (best_of[k])
			sb_printf(&re, " %s: %s;", comps[k].name, comps[k].advice);
	if (best_of[NCOMP])
		sb_printf(&re, " where none stood out, compare the slow cycles' top functions "
			       "with a median cycle's.");
	free(grew);
	free(expl);
	free(sr);
	add(fl, "slow_cycles",
	    cause && (double)worst > 2 * cfg->slow_factor * (double)med ? FIND_CRITICAL
									: FIND_WARNING,
	    &ti, &ev, &re, (double)worst / (double)med, cfg->slow_factor, c, m);
}

static void rule_memory(struct flist *fl, const struct cycle_agg *ag,
			const struct findings_cfg *cfg, const struct findings_ctx *ctx)
{
	uint64_t nr = ag->nrss, peak = ag->rss_peak;
	uint32_t peak_cycle = ag->rss_peak_cycle;
	if (!nr)
		return;
	if (ctx && ctx->mem_total_bytes &&
	    (double)peak > cfg->mem_pressure * (double)ctx->mem_total_bytes) {
		struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
		double share = (double)peak / (double)ctx->mem_total_bytes;
		uint32_t *c = malloc(sizeof(*c));
		if (c)
			*c = peak_cycle;
		else
			fl->err = -ENOMEM; /* add() then frees the texts */
		sb_printf(&ti, "Memory pressure: RSS reaches %.0f%% of RAM", share * 100);
		sb_printf(&ev,
			  "RSS %.1f MB at the end of cycle %u, RAM %.1f MB (%.1f%%, threshold "
			  "%.0f%%)",
			  (double)peak / MB_D, peak_cycle, (double)ctx->mem_total_bytes / MB_D,
			  share * 100, cfg->mem_pressure * 100);
		sb_printf(&re, "Use a smaller model or stronger quantization, reduce the context "
			       "size or batch size, memory-map the model (mmap) and free per-cycle "
			       "buffers; swapping or the OOM killer are next.");
		add(fl, "memory_pressure", FIND_CRITICAL, &ti, &ev, &re, share, cfg->mem_pressure,
		    c, c ? 1 : 0);
	}
	if (nr < cfg->leak_min_cycles || nr < 2)
		return;
	uint32_t first = ag->rss_first, last = ag->rss_last;
	double r2, slope = cycle_agg_rss_slope(ag, &r2);
	double y0 = ag->rss_y0, y1 = ag->rss_y1;
	if (!(slope >= cfg->leak_mb_per_cycle) || !(r2 >= cfg->leak_min_r2))
		return;
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	sb_printf(&ti, "Memory grows %.2f MB per cycle", slope);
	sb_printf(&ev,
		  "least-squares fit of RSS at cycle end over %llu cycles (%u..%u): %.2f "
		  "MB/cycle, r^2 %.2f (threshold %.2f MB/cycle, r^2 >= %.2f); RSS %.1f -> %.1f "
		  "MB",
		  (unsigned long long)nr, first, last, slope, r2, cfg->leak_mb_per_cycle,
		  cfg->leak_min_r2, y0, y1);
	if (ctx && ctx->mem_total_bytes && slope > 0) {
		double left = ((double)ctx->mem_total_bytes / MB_D - y1) / slope;
		if (left > 0)
			sb_printf(&ev, "; RAM full in about %.0f more cycles", left);
	}
	sb_printf(&re, "Memory grows every cycle: look for caches or lists that keep per-cycle "
		       "objects (prompt history, KV cache not cleared, unclosed cursors or "
		       "connections); free or reuse them at the end of each cycle.");
	add(fl, "memory_growth", FIND_WARNING, &ti, &ev, &re, slope, cfg->leak_mb_per_cycle, NULL,
	    0);
}

static void rule_throttle(struct flist *fl, const struct cycle_table *t,
			  const struct findings_cfg *cfg)
{
	size_t n = 0;
	uint32_t *c = malloc((t->n ? t->n : 1) * sizeof(*c));
	if (!c) {
		fl->err = -ENOMEM;
		return;
	}
	double wall_t = 0, wall_u = 0, mhz_t = 0, mhz_u = 0;
	size_t nt = 0, nu = 0, nmt = 0, nmu = 0;
	uint64_t thr_ns = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct cycle_row *r = &t->rows[i];
		thr_ns += g_throttled(r);
		if (r->throttled_share > cfg->throttle_share) {
			c[n++] = r->index;
			wall_t += (double)r->wall_ns;
			nt++;
			if (r->has_freq) {
				mhz_t += r->mhz_mean;
				nmt++;
			}
		} else {
			wall_u += (double)r->wall_ns;
			nu++;
			if (r->has_freq) {
				mhz_u += r->mhz_mean;
				nmu++;
			}
		}
	}
	if (!n) {
		free(c);
		return;
	}
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	sb_printf(&ti, "CPU throttling in %zu of %zu cycles", n, t->n);
	sb_printf(&ev, "throttled %.1f ms in total; cycles with more than %.0f%% throttled: ",
		  ms(thr_ns), cfg->throttle_share * 100);
	list_cycles(&ev, c, n, cfg->max_listed);
	double cost = 0;
	if (nu) {
		cost = wall_t / (double)nt - wall_u / (double)nu;
		sb_printf(&ev,
			  "; mean cycle %.1f ms throttled vs %.1f ms not (cost %+.1f ms/cycle)",
			  wall_t / (double)nt / 1e6, wall_u / (double)nu / 1e6, cost / 1e6);
	}
	if (nmt && nmu)
		sb_printf(&ev, "; mean CPU clock %.0f MHz throttled vs %.0f MHz not", mhz_t / nmt,
			  mhz_u / nmu);
	sb_printf(&re, "The board is throttling: improve cooling (fan mode, heatsink), choose a "
		       "power mode the supply and cooling can sustain, or reduce the load "
		       "(fewer GPU layers, lower clocks) to stay under the thermal limit.");
	add(fl, "throttling",
	    cost > 0.1 * (wall_u / (nu ? (double)nu : 1)) ? FIND_CRITICAL : FIND_WARNING, &ti, &ev,
	    &re, (double)thr_ns / 1e6, cfg->throttle_share, c, n);
}

static void rule_oversub(struct flist *fl, const struct cycle_agg *ag,
			 const struct findings_cfg *cfg, const struct findings_ctx *ctx)
{
	uint64_t rq = ag->sum[CA_RUNQ_ALL], wall = ag->sum[CA_WALL];
	double share = wall ? (double)rq / (double)wall : 0;
	bool by_share = share > cfg->runq_share;
	bool by_p99 = ctx && ctx->runq_p99_ns && ctx->runq_p99_ns > cfg->runq_p99_ns;
	bool by_threads = ctx && ctx->ncpus && ctx->max_runnable > ctx->ncpus;
	if (!by_share && !by_p99 && !by_threads)
		return;
	size_t n = 0;
	uint32_t *c = ids_copy(fl, &ag->over[CA_RUNQ_ALL], &n);
	if (!c)
		return;
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	sb_printf(&ti, "CPU oversubscription: threads wait for a CPU");
	sb_printf(&ev,
		  "run-queue wait (runnable, not running) %.1f ms = %.1f%% of wall "
		  "(threshold %.0f%%)",
		  ms(rq), share * 100, cfg->runq_share * 100);
	if (ctx && ctx->runq_p99_ns)
		sb_printf(&ev, "; run-queue latency p99 %.2f ms (threshold %.2f ms)",
			  ms(ctx->runq_p99_ns), ms(cfg->runq_p99_ns));
	if (by_threads)
		sb_printf(&ev, "; up to %u runnable threads on %u CPUs", ctx->max_runnable,
			  ctx->ncpus);
	if (ag->over[CA_RUNQ_ALL].n) {
		sb_printf(&ev, "; cycles above the threshold: ");
		list_ids(&ev, c, n, ag->over[CA_RUNQ_ALL].n, cfg->max_listed);
	}
	sb_printf(&re, "More threads want to run than there are CPUs: set the inference thread "
		       "count to the number of performance cores (e.g. llama.cpp -t), limit "
		       "OMP/BLAS threads (OMP_NUM_THREADS), and stop competing processes.");
	add(fl, "cpu_oversubscription", FIND_WARNING, &ti, &ev, &re, share, cfg->runq_share, c, n);
}

/* Our own probes cost the target more than the threshold of its CPU: the
 * figures are skewed by the measurement (the cycles look longer, their
 * unattributed time is partly ours). */
static void rule_overhead(struct flist *fl, const struct findings_cfg *cfg,
			  const struct findings_ctx *ctx)
{
	if (!ctx || !(other_probe_share(ctx) > cfg->overhead_share))
		return;
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	bool py = ctx->cycle_spec && !strncmp(ctx->cycle_spec, "py:", 3);
	bool alloc = alloc_cost_fires(ctx);
	double share = other_probe_share(ctx), pns = ctx->probe_ns;
	uint64_t hits = ctx->probe_hits;

	if (alloc) {
		hits = hits > ctx->alloc_probe_hits ? hits - ctx->alloc_probe_hits : 0;
		pns = pns > ctx->alloc_probe_ns ? pns - ctx->alloc_probe_ns : 0;
	}
	sb_printf(&ti, "The profiler's probes take %.0f%% of the target's CPU", share * 100);
	sb_printf(&ev,
		  "%.1f%% of the target's CPU time is in the kernel's probe code (threshold "
		  "%.0f%%)",
		  share * 100, cfg->overhead_share * 100);
	if (alloc)
		sb_printf(&ev, ", besides the allocator probes' %.1f%% (alloc_probe_cost)",
			  ctx->alloc_probe_share * 100);
	if (hits)
		sb_printf(&ev, "; %" PRIu64 " probe hits, estimated %.1f ms", hits, pns / 1e6);
	if (ctx->target_cpu_ns)
		sb_printf(&ev, " of %.1f ms on CPU", ms(ctx->target_cpu_ns));
	if (py && ctx->py_watch)
		sb_printf(&ev,
			  "; %s traps at each call and return of that function (a hardware "
			  "watchpoint)",
			  ctx->cycle_spec);
	else if (py)
		sb_printf(&ev,
			  "; %s traps at every Python function return (CPython's USDT "
			  "points cannot be enabled for one function)",
			  ctx->cycle_spec);
	sb_printf(&re, "The cycle times and the unattributed time include this cost. ");
	if (py && ctx->py_watch)
		sb_printf(&re, "The function is called more often than a cycle should last: give "
			       "an outer one (the loop's body), or mark the cycle with the cycle "
			       "marker (tools/cycle_marker: one ctypes call per cycle edge).");
	else if (py)
		sb_printf(&re, "Mark the cycle with the cycle marker instead (tools/cycle_marker: "
			       "one ctypes call per cycle edge), or --cycle-every on a native "
			       "function the loop calls once (e.g. --cycle-every llama_tokenize).");
	else
		sb_printf(&re, "Count the hottest probed functions without timing them "
			       "(--probe-count-only SYMBOL), drop a preset (--probes llama or "
			       "--probes sqlite), or probe an outer function instead.");
	add(fl, "probe_overhead", share > 0.10 ? FIND_CRITICAL : FIND_WARNING, &ti, &ev, &re, share,
	    cfg->overhead_share, NULL, 0);
}

/* Samples lost whole: the profile, the cycles' on-CPU time and their top
 * functions miss that share of the run. */
static void rule_lost(struct flist *fl, const struct findings_cfg *cfg,
		      const struct findings_ctx *ctx)
{
	if (!ctx || !ctx->samples_lost)
		return;
	uint64_t all = ctx->samples_total + ctx->samples_lost;
	double share = (double)ctx->samples_lost / (double)all;
	if (!(share > cfg->lost_share))
		return;
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	sb_printf(&ti, "%.0f%% of the CPU samples were lost", share * 100);
	sb_printf(&ev,
		  "%" PRIu64 " of %" PRIu64 " samples lost (%.1f%%, threshold %.0f%%; causes on "
		  "the summary's lost: line, report.json dropped.by_cause)",
		  ctx->samples_lost, all, share * 100, cfg->lost_share * 100);
	sb_printf(&re, "The profile and the cycles' on-CPU figures miss these samples: lower the "
		       "sampling rate (-F), profile fewer processes, or give the machine spare CPU "
		       "for the collector.");
	add(fl, "samples_lost", share > 5 * cfg->lost_share ? FIND_CRITICAL : FIND_WARNING, &ti,
	    &ev, &re, share, cfg->lost_share, NULL, 0);
}

static void rule_no_cycles(struct flist *fl, const struct cycle_table *t,
			   const struct findings_ctx *ctx)
{
	if (!t->whole_run)
		return;
	struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
	if (ctx && ctx->cycle_spec) {
		sb_printf(&ti, "No cycles: %s gave none, the whole run is one cycle",
			  ctx->cycle_spec);
		sb_printf(&ev, "the cycle spec %s %s", ctx->cycle_spec,
			  ctx->cycle_problem ? ctx->cycle_problem : "produced no cycle");
	} else {
		sb_printf(&ti, "No cycles defined: the whole run is one cycle");
		sb_printf(&ev, "no --cycle, --cycle-every or marker was given");
	}
	sb_printf(&re, "Define cycles to get per-cycle numbers: --cycle FUNCTION (one call = one "
		       "cycle; LIB:SYMBOL, usdt:... or py:FUNCTION), --cycle-every FUNCTION (a "
		       "cycle starts at each call), or call ebpf_prof_cycle_begin()/end() from "
		       "tools/cycle_marker.");
	add(fl, "no_cycles", FIND_INFO, &ti, &ev, &re, 1, 0, NULL, 0);
}

void findings_free(struct findings *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].title);
		free(f->v[i].evidence);
		free(f->v[i].recommendation);
		free(f->v[i].cycles);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

void findings_over_shares(const struct findings_cfg *cfg, double over[CA__COUNT])
{
	for (int p = 0; p < CA__COUNT; p++)
		over[p] = 0;
	over[CA_INF] = cfg->inference_share;
	over[CA_SQL] = cfg->sql_share;
	over[CA_OTHER] = cfg->other_share;
	over[CA_RUNQ_ALL] = cfg->runq_share;
}

void findings_agg_init(struct cycle_agg *ag, const struct findings_cfg *cfg)
{
	double over[CA__COUNT];

	findings_over_shares(cfg, over);
	cycle_agg_init(ag, over);
}

int findings_evaluate(const struct cycle_table *all, const struct findings_cfg *cfg,
		      const struct findings_ctx *ctx, struct findings *out)
{
	return findings_evaluate_agg(all, NULL, cfg, ctx, out);
}

int findings_evaluate_agg(const struct cycle_table *all, const struct cycle_agg *run,
			  const struct findings_cfg *cfg, const struct findings_ctx *ctx,
			  struct findings *out)
{
	out->v = NULL;
	out->n = 0;
	if (!all || !cfg)
		return -EINVAL;
	/* A cycle still open at the end of the run was cut there: its wall
	 * time says when the run stopped, not how long a cycle takes. */
	struct cycle_table view, *t = &view;
	if (cycles_complete_view(all, &view) < 0)
		return -ENOMEM;
	/* The table's own aggregate when it holds every cycle (then the slow
	 * cycles are exact), else the run's. */
	struct cycle_agg *own = NULL;
	const struct cycle_agg *ag = run;
	bool exact = !run || run->n == t->n;
	if (exact) {
		own = malloc(sizeof(*own));
		if (!own) {
			cycles_view_free(&view);
			return -ENOMEM;
		}
		findings_agg_init(own, cfg);
		for (size_t i = 0; i < t->n; i++)
			cycle_agg_add(own, &t->rows[i]);
		ag = own;
	}
	struct flist fl = { .out = out };
	/* Numbers that cannot be are not a basis for advice: the check says
	 * what failed, the share rules stay silent. */
	char why[200];
	uint64_t bad = cycle_agg_bad(ag, ctx ? ctx->nthreads : 0, why, sizeof(why));
	if (bad) {
		struct sbuf ti = { 0 }, ev = { 0 }, re = { 0 };
		sb_printf(&ti, "Self-check failed: the per-cycle figures are not consistent");
		sb_printf(&ev, "%llu cycle(s) fail; first: %s", (unsigned long long)bad, why);
		sb_printf(&re, "Do not trust the breakdown of this run; please report it with "
			       "report.json (the time-share findings are withheld).");
		add(&fl, "self_check", FIND_CRITICAL, &ti, &ev, &re, (double)bad, 0, NULL, 0);
	}
	rule_no_cycles(&fl, t, ctx);
	rule_overhead(&fl, cfg, ctx);
	rule_lost(&fl, cfg, ctx);
	if (!bad) {
		rule_inference(&fl, t, ag, cfg, ctx);
		rule_sql(&fl, t, ag, cfg, ctx);
		rule_other(&fl, ag, cfg, ctx);
	}
	rule_slow(&fl, t, ag, exact, cfg);
	rule_memory(&fl, ag, cfg, ctx);
	/* Per-cycle throttling is known only at the end of the run, for the
	 * rows kept. */
	rule_throttle(&fl, t, cfg);
	rule_oversub(&fl, ag, cfg, ctx);
	cycles_view_free(&view);
	if (own) {
		cycle_agg_free(own);
		free(own);
	}
	if (fl.err) {
		findings_free(out);
		return fl.err;
	}
	findings_sort(out);
	return 0;
}

void findings_sort(struct findings *out)
{
	/* Stable insertion sort: critical first, rule order within a level. */
	for (size_t i = 1; i < out->n; i++) {
		struct finding f = out->v[i];
		size_t j = i;
		while (j > 0 && out->v[j - 1].severity < f.severity) {
			out->v[j] = out->v[j - 1];
			j--;
		}
		out->v[j] = f;
	}
}
