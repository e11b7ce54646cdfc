// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "top/alerts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	enum alert_metric m;
} metric_names[] = {
	/* Longer names first: "gpu_temp" must not match as "temp". */
	{ "gpu_temp", ALERT_GPU_TEMP },	  { "gpu_load", ALERT_GPU_LOAD },
	{ "throttled", ALERT_THROTTLED }, { "cycle", ALERT_CYCLE },
	{ "drops", ALERT_DROPS },	  { "temp", ALERT_TEMP },
	{ "disk", ALERT_DISK },		  { "rss", ALERT_RSS },
};

static int fail(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
	return -EINVAL;
}

int alert_parse(const char *expr, struct alert_rule *r, char *why, size_t whylen)
{
	char buf[48], *p, *end;
	size_t n = 0;
	double v, mult = 1;

	if (!expr)
		return fail(why, whylen, "empty expression");
	for (const char *s = expr; *s; s++) {
		if (isspace((unsigned char)*s))
			continue;
		if (n + 1 >= sizeof(buf))
			return fail(why, whylen, "expression too long");
		buf[n++] = (char)tolower((unsigned char)*s);
	}
	buf[n] = '\0';
	if (!n)
		return fail(why, whylen, "empty expression");
	memset(r, 0, sizeof(*r));
	memcpy(r->text, buf, n + 1);
	p = NULL;
	for (size_t i = 0; i < sizeof(metric_names) / sizeof(metric_names[0]); i++) {
		size_t l = strlen(metric_names[i].name);

		if (!strncmp(buf, metric_names[i].name, l)) {
			r->metric = metric_names[i].m;
			p = buf + l;
			break;
		}
	}
	if (!p)
		return fail(why, whylen,
			    "unknown metric (rss, temp, gpu_temp, gpu_load, cycle, drops, "
			    "throttled, disk)");
	if (r->metric == ALERT_THROTTLED) {
		if (*p)
			return fail(why, whylen, "'throttled' takes no comparison");
		r->op = ALERT_OP_SET;
		return 0;
	}
	if (*p == '>')
		r->op = ALERT_OP_GT;
	else if (*p == '<')
		r->op = ALERT_OP_LT;
	else
		return fail(why, whylen, "expected > or < after the metric");
	p++;
	if (!*p || *p == '+' || *p == '-')
		return fail(why, whylen, "expected a non-negative number");
	v = strtod(p, &end);
	if (end == p || !isfinite(v) || v < 0)
		return fail(why, whylen, "expected a non-negative number");
	switch (r->metric) {
	case ALERT_RSS:
		if (*end == '%') {
			r->percent = true;
			end++;
		} else if (*end) {
			const char *u = "kmgt";
			const char *q = strchr(u, *end);

			if (!q)
				return fail(why, whylen,
					    "rss takes % of RAM or bytes with K/M/G/T");
			for (const char *k = u; k <= q; k++)
				mult *= 1024;
			end++;
			if (*end == 'i')
				end++;
			if (*end == 'b')
				end++;
		}
		break;
	case ALERT_DISK:
	case ALERT_GPU_LOAD:
		if (*end != '%')
			return fail(why, whylen, "this metric is a percentage: add %");
		end++;
		break;
	case ALERT_CYCLE:
		if (*end != 'x')
			return fail(why, whylen,
				    "cycle compares to the running median: e.g. cycle>1.5x");
		end++;
		break;
	default:
		if (*end == 'c')
			end++; /* temp>85C */
		break;
	}
	if (*end)
		return fail(why, whylen, "unexpected text after the number");
	if ((r->percent || r->metric == ALERT_DISK || r->metric == ALERT_GPU_LOAD) && v > 100)
		return fail(why, whylen, "a percentage is at most 100");
	r->threshold = v * mult;
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Cycle k of the strip over the median of the ones before it. */
static double cycle_ratio_at(const struct live_metrics *m, size_t k)
{
	double tmp[LIVE_MAX_CYCLES], med;

	if (k < 1 || k >= LIVE_MAX_CYCLES)
		return NAN;
	memcpy(tmp, m->cycle_ms, k * sizeof(double));
	qsort(tmp, k, sizeof(double), cmp_dbl);
	med = k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
	if (!(med > 0))
		return NAN;
	return m->cycle_ms[k] / med;
}

/* Last cycle over the median of the ones before it. */
static double cycle_ratio(const struct live_metrics *m)
{
	size_t n = m->ncycles > LIVE_MAX_CYCLES ? LIVE_MAX_CYCLES : m->ncycles;

	return n < 2 ? NAN : cycle_ratio_at(m, n - 1);
}

enum alert_state alert_eval(const struct alert_rule *r, const struct live_metrics *m,
			    const struct alert_env *env, double *value)
{
	double v = NAN;

	switch (r->metric) {
	case ALERT_RSS:
		v = r->percent ? m->rss_pct : m->rss_bytes;
		break;
	case ALERT_TEMP:
		v = m->temp_c;
		break;
	case ALERT_GPU_TEMP:
		v = m->gpu_temp_c;
		break;
	case ALERT_GPU_LOAD:
		v = m->gpu_load_pct;
		break;
	case ALERT_CYCLE:
		v = cycle_ratio(m);
		break;
	case ALERT_DROPS: {
		int64_t d = live_drops_total(m);

		v = d < 0 ? NAN : (double)d;
		break;
	}
	case ALERT_THROTTLED:
		v = m->throttled < 0 ? NAN : m->throttled;
		break;
	case ALERT_DISK:
		v = env ? env->disk_free_pct : NAN;
		break;
	}
	if (value)
		*value = v;
	if (isnan(v))
		return ALERT_UNKNOWN;
	switch (r->op) {
	case ALERT_OP_GT:
		return v > r->threshold ? ALERT_ON : ALERT_OFF;
	case ALERT_OP_LT:
		return v < r->threshold ? ALERT_ON : ALERT_OFF;
	default:
		return v != 0 ? ALERT_ON : ALERT_OFF;
	}
}

int alert_set_init(struct alert_set *s, const char *const *exprs, size_t n, char *why,
		   size_t whylen)
{
	memset(s, 0, sizeof(*s));
	if (n > sizeof(s->rules) / sizeof(s->rules[0]))
		return fail(why, whylen, "too many alerts");
	for (size_t i = 0; i < n; i++) {
		char w[128];

		if (alert_parse(exprs[i], &s->rules[i], w, sizeof(w))) {
			if (why && whylen)
				snprintf(why, whylen, "'%s': %s", exprs[i], w);
			return -EINVAL;
		}
	}
	s->nrules = n;
	for (size_t i = 0; i < n; i++)
		s->cycle_seen[i] = -1;
	return 0;
}

void alert_set_free(struct alert_set *s)
{
	free(s->events);
	s->events = NULL;
	s->nevents = s->cap = 0;
}

static void remember(struct alert_set *s, uint64_t now, int rule, double v)
{
	if (s->nevents == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		struct alert_event *ne;

		if (s->cap >= ALERT_MAX_EVENTS) {
			s->dropped++;
			return;
		}
		if (nc > ALERT_MAX_EVENTS)
			nc = ALERT_MAX_EVENTS;
		ne = realloc(s->events, nc * sizeof(*ne));
		if (!ne) {
			s->dropped++;
			return;
		}
		s->events = ne;
		s->cap = nc;
	}
	s->events[s->nevents++] = (struct alert_event){ .ts_ns = now, .rule = rule, .value = v };
}

size_t alert_set_step(struct alert_set *s, uint64_t now_ns, const struct live_metrics *m,
		      const struct alert_env *env, struct alert_fire *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nrules; i++) {
		double v;
		enum alert_state st = alert_eval(&s->rules[i], m, env, &v);

		/* Cycles close faster than the view refreshes: judge each cycle
		 * closed since the last step in order, as if it had been
		 * evaluated alone; with none, the state holds. */
		if (s->rules[i].metric == ALERT_CYCLE && st != ALERT_UNKNOWN) {
			size_t nc = m->ncycles > LIVE_MAX_CYCLES ? LIVE_MAX_CYCLES : m->ncycles;

			s->evaluated[i] = true;
			for (size_t k = 1; k < nc; k++) {
				int64_t no = m->cycle_no - (int64_t)(nc - 1 - k);
				double r = no > s->cycle_seen[i] ? cycle_ratio_at(m, k) : NAN;
				bool on = r > s->rules[i].threshold;

				if (isnan(r))
					continue;
				if (on && !s->active[i]) {
					remember(s, now_ns, (int)i, r);
					if (n < max)
						out[n++] = (struct alert_fire){ (int)i, r, false };
				}
				s->active[i] = on;
			}
			s->cycle_seen[i] = m->cycle_no;
			continue;
		}
		if (st == ALERT_UNKNOWN) {
			if (!s->unknown_said[i] && n < max)
				out[n++] = (struct alert_fire){ (int)i, v, true };
			s->unknown_said[i] = true;
			continue;
		}
		s->evaluated[i] = true;
		if (st == ALERT_ON && !s->active[i]) {
			remember(s, now_ns, (int)i, v);
			if (n < max)
				out[n++] = (struct alert_fire){ (int)i, v, false };
		}
		s->active[i] = st == ALERT_ON;
	}
	return n;
}

/* "rss 1.3 MiB > 1 MiB": as many decimals as it takes for the value and
 * the threshold to read differently ("rss 1 MiB > 1 MiB" said nothing). */
static void describe_bytes(char *buf, size_t len, double v, const char *op, double thr)
{
	char x[48], y[48];

	for (int d = 0; d <= 3; d++) {
		snprintf(x, sizeof(x), "%.*f", d, v / 1048576);
		snprintf(y, sizeof(y), "%.*f", d, thr / 1048576);
		if (strcmp(x, y)) {
			snprintf(buf, len, "rss %s MiB %s %s MiB", x, op, y);
			return;
		}
	}
	snprintf(buf, len, "rss %.0f B %s %.0f B", v, op, thr);
}

void alert_describe(const struct alert_rule *r, double v, char *buf, size_t len)
{
	const char *op = r->op == ALERT_OP_GT ? ">" : "<";

	switch (r->metric) {
	case ALERT_RSS:
		if (r->percent)
			snprintf(buf, len, "rss %.1f%% of RAM %s %g%%", v, op, r->threshold);
		else
			describe_bytes(buf, len, v, op, r->threshold);
		break;
	case ALERT_TEMP:
		snprintf(buf, len, "temperature %.1f C %s %g C", v, op, r->threshold);
		break;
	case ALERT_GPU_TEMP:
		snprintf(buf, len, "GPU temperature %.1f C %s %g C", v, op, r->threshold);
		break;
	case ALERT_GPU_LOAD:
		snprintf(buf, len, "GPU load %.0f%% %s %g%%", v, op, r->threshold);
		break;
	case ALERT_CYCLE:
		snprintf(buf, len, "cycle %.2fx the median %s %gx", v, op, r->threshold);
		break;
	case ALERT_DROPS:
		snprintf(buf, len, "%.0f events lost %s %g", v, op, r->threshold);
		break;
	case ALERT_THROTTLED:
		snprintf(buf, len, "CPU/GPU throttled");
		break;
	case ALERT_DISK:
		snprintf(buf, len, "disk %.1f%% free %s %g%%", v, op, r->threshold);
		break;
	}
}
