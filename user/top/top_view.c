// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "top/top_view.h"
#include "util/term_text.h"
#include "util/vec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"

int top_window_init(struct top_window *w, double decay)
{
	memset(w, 0, sizeof(*w));
	if (!(decay >= 0 && decay < 1))
		return -EINVAL;
	w->decay = decay;
	return 0;
}

void top_window_free(struct top_window *w)
{
	free(w->stack_w);
	free(w->stack_seen);
	free(w->thread_w);
	free(w->thread_seen);
	free(w->self);
	free(w->tot);
	free(w->stamp);
	memset(w, 0, sizeof(*w));
}

/* Grows the zero-initialized pair (d, u) from *n to want entries. */
static int grow(double **d, uint64_t **u, size_t *n, size_t want)
{
	size_t cd = *n, cu = *n;

	if (want <= *n)
		return 0;
	if (ep_vec_grow_zeroed((void **)d, &cd, want, sizeof(**d)) ||
	    ep_vec_grow_zeroed((void **)u, &cu, want, sizeof(**u)))
		return -ENOMEM;
	*n = want;
	return 0;
}

int top_window_update(struct top_window *w, const struct profile *p)
{
	uint64_t delta = 0;

	if (grow(&w->stack_w, &w->stack_seen, &w->nstacks, p->nstacks) ||
	    grow(&w->thread_w, &w->thread_seen, &w->nthreads, p->nthreads))
		return -ENOMEM;
	w->total = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		uint64_t c = p->stacks[i].count;
		uint64_t d = c >= w->stack_seen[i] ? c - w->stack_seen[i] : 0;

		w->stack_w[i] = w->stack_w[i] * w->decay + (double)d;
		w->stack_seen[i] = c;
		w->total += w->stack_w[i];
		delta += d;
	}
	for (size_t i = 0; i < p->nthreads; i++) {
		uint64_t c = p->threads[i].samples;
		uint64_t d = c >= w->thread_seen[i] ? c - w->thread_seen[i] : 0;

		w->thread_w[i] = w->thread_w[i] * w->decay + (double)d;
		w->thread_seen[i] = c;
	}
	w->last_delta = delta;
	return 0;
}

struct sort_ctx {
	enum top_sort sort;
};

static int cmp_self(const void *a, const void *b)
{
	const struct top_func_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int cmp_total(const void *a, const void *b)
{
	const struct top_func_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int top_window_funcs(struct top_window *w, const struct profile *p, bool kernel, enum top_sort sort,
		     struct top_func_row **rows, size_t *n)
{
	struct top_func_row *out;
	size_t k = 0;

	*rows = NULL;
	*n = 0;
	if (w->nframes < p->nframes) {
		double *s = realloc(w->self, p->nframes * sizeof(*s));
		double *t;
		uint32_t *st;

		if (!s)
			return -ENOMEM;
		w->self = s;
		t = realloc(w->tot, p->nframes * sizeof(*t));
		if (!t)
			return -ENOMEM;
		w->tot = t;
		st = realloc(w->stamp, p->nframes * sizeof(*st));
		if (!st)
			return -ENOMEM;
		memset(st + w->nframes, 0, (p->nframes - w->nframes) * sizeof(*st));
		w->stamp = st;
		w->nframes = p->nframes;
	}
	if (p->nframes) {
		memset(w->self, 0, p->nframes * sizeof(double));
		memset(w->tot, 0, p->nframes * sizeof(double));
	}
	for (size_t i = 0; i < w->nstacks && i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[i];
		double wt = w->stack_w[i];
		uint32_t depth = s->depth;

		if (!(wt > 0))
			continue;
		if (!kernel)
			depth = s->nkernel < depth ? depth - s->nkernel : 0;
		if (!depth)
			continue;
		/* A new generation per stack counts recursion once in total. */
		if (++w->gen == 0) {
			memset(w->stamp, 0, w->nframes * sizeof(*w->stamp));
			w->gen = 1;
		}
		for (uint32_t d = 0; d < depth; d++) {
			uint32_t f = s->frames[d];

			if (f >= p->nframes || w->stamp[f] == w->gen)
				continue;
			w->stamp[f] = w->gen;
			w->tot[f] += wt;
		}
		if (s->frames[depth - 1] < p->nframes)
			w->self[s->frames[depth - 1]] += wt;
	}
	for (size_t f = 0; f < p->nframes; f++)
		if (w->tot[f] > 0)
			k++;
	if (!k)
		return 0;
	out = malloc(k * sizeof(*out));
	if (!out)
		return -ENOMEM;
	k = 0;
	for (size_t f = 0; f < p->nframes; f++)
		if (w->tot[f] > 0)
			out[k++] = (struct top_func_row){ (uint32_t)f, w->self[f], w->tot[f] };
	qsort(out, k, sizeof(*out), sort == TOP_SORT_TOTAL ? cmp_total : cmp_self);
	*rows = out;
	*n = k;
	return 0;
}

int64_t top_window_hot_stack(const struct top_window *w, const struct profile *p, uint32_t frame)
{
	int64_t best = -1;
	double bw = 0;

	for (size_t i = 0; i < w->nstacks && i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[i];

		if (!(w->stack_w[i] > bw))
			continue;
		for (uint32_t d = 0; d < s->depth; d++)
			if (s->frames[d] == frame) {
				best = (int64_t)i;
				bw = w->stack_w[i];
				break;
			}
	}
	return best;
}

/* ---- rendering ---- */

int top_frame_init(struct top_frame *f, int rows, int cols)
{
	memset(f, 0, sizeof(*f));
	if (rows < 0 || cols < 0 || rows > 10000 || cols > 10000)
		return -EINVAL;
	f->rows = rows;
	f->cols = cols;
	f->sel_row = -1;
	f->text = calloc((size_t)rows * (size_t)(cols + 1) + 1, 1);
	return f->text ? 0 : -ENOMEM;
}

void top_frame_free(struct top_frame *f)
{
	free(f->text);
	f->text = NULL;
}

const char *top_frame_line(const struct top_frame *f, int row)
{
	if (row < 0 || row >= f->rows)
		return "";
	return f->text + (size_t)row * (size_t)(f->cols + 1);
}

static void put(struct top_frame *f, int row, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes one row, cut at the width; trailing blanks dropped. */
static void put(struct top_frame *f, int row, const char *fmt, ...)
{
	char buf[1024];
	char *dst;
	size_t n;
	va_list ap;

	if (row < 0 || row >= f->rows)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = strlen(buf);
	term_clean(buf, n);
	if (n > (size_t)f->cols)
		n = (size_t)f->cols;
	while (n && buf[n - 1] == ' ')
		n--;
	dst = f->text + (size_t)row * (size_t)(f->cols + 1);
	memcpy(dst, buf, n);
	dst[n] = '\0';
}

/* Appends to a line buffer, bounded. */
static void cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t u = strlen(buf);
	va_list ap;

	if (u + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + u, len - u, fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *path)
{
	const char *s;

	if (!path)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void fmt_bytes(char *buf, size_t len, double b)
{
	if (b >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
	else
		snprintf(buf, len, "%.0f KiB", b / 1024.0);
}

static void fmt_ns(char *buf, size_t len, double ns)
{
	if (isnan(ns))
		snprintf(buf, len, "-");
	else if (ns >= 1e9)
		snprintf(buf, len, "%.2fs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%.0fns", ns);
}

bool top_has_cycles(const struct top_model *m)
{
	return m->live && m->live->ncycles > 0;
}

static double median(const double *v, size_t n)
{
	double tmp[LIVE_MAX_CYCLES];

	if (!n)
		return NAN;
	if (n > LIVE_MAX_CYCLES)
		n = LIVE_MAX_CYCLES;
	memcpy(tmp, v, n * sizeof(*v));
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j && tmp[j - 1] > tmp[j]; j--) {
			double t = tmp[j];

			tmp[j] = tmp[j - 1];
			tmp[j - 1] = t;
		}
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* The header: the first line always, the others when they have content. */
static int render_header(const struct top_model *m, struct top_frame *f, int row, int max)
{
	const struct live_metrics *l = m->live;
	char buf[512] = "";
	unsigned el = m->elapsed_s > 0 ? (unsigned)m->elapsed_s : 0;

	cat(buf, sizeof(buf), "ebpf-prof top  %s  %02u:%02u:%02u  %.0f samples/s",
	    m->target ? m->target : "-", el / 3600, el / 60 % 60, el % 60, m->samples_per_s);
	if (m->lost >= 0)
		cat(buf, sizeof(buf), "  lost %lld", (long long)m->lost);
	if (!m->show_kernel)
		cat(buf, sizeof(buf), "  [user frames]");
	if (m->paused)
		cat(buf, sizeof(buf), "  [paused]");
	put(f, row++, "%s", buf);
	if (!l || row >= max)
		return row;
	buf[0] = '\0';
	if (!isnan(l->proc_cpu_pct))
		cat(buf, sizeof(buf), "cpu %.0f%%  ", l->proc_cpu_pct);
	if (!isnan(l->rss_bytes)) {
		char b[32];

		fmt_bytes(b, sizeof(b), l->rss_bytes);
		cat(buf, sizeof(buf), "rss %s", b);
		if (!isnan(l->rss_pct))
			cat(buf, sizeof(buf), " (%.1f%%)", l->rss_pct);
		cat(buf, sizeof(buf), "  ");
	}
	if (!isnan(l->cpu_mhz))
		cat(buf, sizeof(buf), "%.0f MHz  ", l->cpu_mhz);
	if (!isnan(l->temp_c))
		cat(buf, sizeof(buf), "%.0f C  ", l->temp_c);
	if (!isnan(l->gpu_load_pct))
		cat(buf, sizeof(buf), "gpu %.0f%%  ", l->gpu_load_pct);
	if (!isnan(l->gpu_power_w))
		cat(buf, sizeof(buf), "%.1f W  ", l->gpu_power_w);
	if (!isnan(l->gpu_temp_c))
		cat(buf, sizeof(buf), "gpu %.0f C  ", l->gpu_temp_c);
	if (l->throttled == 1)
		cat(buf, sizeof(buf), "THROTTLED  ");
	if (buf[0])
		put(f, row++, "%s", buf);
	if (row >= max)
		return row;
	buf[0] = '\0';
	if (l->ncycles) {
		size_t n = l->ncycles > LIVE_MAX_CYCLES ? LIVE_MAX_CYCLES : l->ncycles;

		/* The median over every cycle so far when known, else over
		 * the strip. */
		cat(buf, sizeof(buf), "cycle %lld  last %.0f ms  median %.0f ms  ",
		    (long long)l->cycle_no, l->cycle_ms[n - 1],
		    isnan(l->cycle_p50_ms) ? median(l->cycle_ms, n) : l->cycle_p50_ms);
	}
	if (!isnan(l->tokens_per_s) && !l->llm_on)
		cat(buf, sizeof(buf), "%.1f tokens/s", l->tokens_per_s);
	if (buf[0])
		put(f, row++, "%s", buf);
	if (l->llm_on && row < max) {
		/* From llama_decode's batches: prompt vs generation. */
		buf[0] = '\0';
		cat(buf, sizeof(buf), "LLM  %llu prompts", (unsigned long long)l->llm_prompts);
		if (!isnan(l->llm_prompt_tps))
			cat(buf, sizeof(buf), "  prefill %.0f tok/s", l->llm_prompt_tps);
		if (!isnan(l->llm_gen_tps))
			cat(buf, sizeof(buf), "  gen %.1f tok/s", l->llm_gen_tps);
		if (!isnan(l->llm_ttft_p50_ms))
			cat(buf, sizeof(buf), "  TTFT p50 %.1f ms", l->llm_ttft_p50_ms);
		if (!isnan(l->llm_itl_p50_ms))
			cat(buf, sizeof(buf), "  ITL p50 %.2f ms", l->llm_itl_p50_ms);
		if (!isnan(l->llm_kv_used))
			cat(buf, sizeof(buf), "  KV %.0f", l->llm_kv_used);
		if (!isnan(l->llm_kv_used) && !isnan(l->llm_kv_size))
			cat(buf, sizeof(buf), "/%.0f", l->llm_kv_size);
		put(f, row++, "%s", buf);
	}
	return row;
}

static int probe_rows(const struct top_model *m)
{
	const struct live_metrics *l = m->live;
	size_t n;

	if (!l || !l->nprobes)
		return 0;
	n = l->nprobes > LIVE_MAX_PROBES ? LIVE_MAX_PROBES : l->nprobes;
	if (n > 5)
		n = 5;
	return (int)n + 1 + (l->slowest_sql[0] ? 1 : 0);
}

static void render_probes(const struct top_model *m, struct top_frame *f, int row, int nrows)
{
	const struct live_metrics *l = m->live;

	put(f, row++, "%-28s %10s %10s %10s", "probe", "calls/s", "p50", "p99");
	for (size_t i = 0; i < l->nprobes && i < LIVE_MAX_PROBES && nrows > 1; i++, nrows--) {
		char a[24], b[24];

		if (l->slowest_sql[0] && nrows == 2)
			break;
		fmt_ns(a, sizeof(a), l->probes[i].p50_ns);
		fmt_ns(b, sizeof(b), l->probes[i].p99_ns);
		put(f, row++, "%-28.28s %10.1f %10s %10s", l->probes[i].name, l->probes[i].rate_hz,
		    a, b);
	}
	if (l->slowest_sql[0]) {
		char a[24];

		fmt_ns(a, sizeof(a), l->slowest_sql_ns);
		put(f, row, "slowest SQL (%s): %s", a, l->slowest_sql);
	}
}

static int alloc_rows(const struct top_model *m)
{
	const struct live_metrics *l = m->live;

	if (!l || !l->alloc_on)
		return 0;
	return 2 + (int)(l->nalloc < LIVE_MAX_ALLOC ? l->nalloc : LIVE_MAX_ALLOC);
}

/* --alloc: the allocation rate, live bytes and their growth, then the
 * stacks holding the most live bytes, by allocating function. */
static void render_alloc(const struct top_model *m, struct top_frame *f, int row, int nrows)
{
	const struct live_metrics *l = m->live;
	char a[24], b[24], c[24];

	fmt_bytes(a, sizeof(a), l->alloc_rate_bps);
	fmt_bytes(b, sizeof(b), l->alloc_live_bytes);
	fmt_bytes(c, sizeof(c), fabs(l->alloc_growth_bps));
	put(f, row++, "alloc: %s/s allocated, %s live (%s%s/s)", a, b,
	    l->alloc_growth_bps < 0 ? "-" : "+", c);
	if (nrows < 2)
		return;
	put(f, row++, "%-36s %12s %12s", "allocated by", "live", "allocated");
	for (size_t i = 0; i < l->nalloc && i < LIVE_MAX_ALLOC && (int)i + 2 < nrows; i++) {
		fmt_bytes(a, sizeof(a), l->alloc[i].live_bytes);
		fmt_bytes(b, sizeof(b), l->alloc[i].alloc_bytes);
		put(f, row++, "%-36.36s %12s %12s", l->alloc[i].name, a, b);
	}
}

static void render_funcs(const struct top_model *m, struct top_frame *f, int row, int nrows)
{
	int list = nrows - 1, first;
	int name_w = f->cols - 18 - (f->cols >= 60 ? 22 : 0);

	if (nrows <= 0)
		return;
	if (name_w < 8)
		name_w = 8;
	/* Keep the module near the name on wide terminals. */
	if (name_w > 60)
		name_w = 60;
	if (m->expanded && m->nstack && nrows >= 6) {
		/* The stack takes the lower half, the list keeps the rest. */
		int sr = nrows / 2;

		list = nrows - 1 - sr;
		put(f, row + 1 + list,
		    "stack (leaf first)%s:", m->show_kernel ? "" : ", user frames");
		for (int i = 0; i < sr - 1 && (size_t)i < m->nstack; i++)
			put(f, row + 2 + list + i, "  %s", m->stack[i]);
	}
	put(f, row, "%7s %7s  %-*s %s", m->sort == TOP_SORT_SELF ? "SELF%" : "self%",
	    m->sort == TOP_SORT_TOTAL ? "TOTAL%" : "total%", name_w, "function",
	    f->cols >= 60 ? "module" : "");
	row++;
	if (!m->nfuncs) {
		put(f, row, "  (no samples yet)");
		return;
	}
	first = m->selected >= (size_t)list && list > 0 ? (int)m->selected - list + 1 : 0;
	for (int i = 0; i < list && (size_t)(first + i) < m->nfuncs; i++) {
		const struct top_view_func *fn = &m->funcs[first + i];
		char nb[1024]; /* room to collapse before the cut */

		/* name_w <= 60: template lists collapse to "<...>" to fit. */
		put(f, row + i, "%6.2f%% %6.2f%%  %-*.*s %.20s", fn->self_pct, fn->total_pct,
		    name_w, name_w, demangle_shorten(fn->name, (size_t)name_w, nb, sizeof(nb)),
		    f->cols >= 60 ? base_name(fn->module) : "");
		if ((size_t)(first + i) == m->selected)
			f->sel_row = row + i;
	}
}

static void render_threads(const struct top_model *m, struct top_frame *f, int row, int nrows)
{
	put(f, row++, "%7s %8s %8s  %s", "cpu%", "pid", "tid", "comm");
	for (int i = 0; i < nrows - 1 && (size_t)i < m->nthreads; i++)
		put(f, row + i, "%6.1f%% %8u %8u  %s", m->threads[i].pct, m->threads[i].pid,
		    m->threads[i].tid, m->threads[i].comm ? m->threads[i].comm : "");
}

void top_cycle_summary(const struct live_metrics *l, char *buf, size_t len, size_t nlast)
{
	size_t n = l->ncycles > LIVE_MAX_CYCLES ? LIVE_MAX_CYCLES : l->ncycles;

	buf[0] = '\0';
	if (!n || isnan(l->cycle_p50_ms))
		return;
	snprintf(buf, len, "%lld cycles  median %.1f ms  p95 %.1f ms  slowest #%lld %.1f ms",
		 (long long)l->cycle_no + 1, l->cycle_p50_ms, l->cycle_p95_ms,
		 (long long)l->cycle_max_no, l->cycle_max_ms);
	if (nlast) {
		cat(buf, len, "  last");
		for (size_t i = n > nlast ? n - nlast : 0; i < n; i++)
			cat(buf, len, " %.1f", l->cycle_ms[i]);
		cat(buf, len, " ms");
	}
}

/* Letters of the cycle strip, in the order the parts are drawn. */
static const char cyc_part_char[LIVE_CYC_PARTS] = { 'I', 'S', 'O', 'P', '.' };

static void render_cycles(const struct top_model *m, struct top_frame *f, int row, int nrows)
{
	const struct live_metrics *l = m->live;
	size_t n = l->ncycles > LIVE_MAX_CYCLES ? LIVE_MAX_CYCLES : l->ncycles;
	double max = 0;
	int bar_w = f->cols - 24;
	size_t first;

	for (size_t i = 0; i < n; i++)
		if (l->cycle_ms[i] > max)
			max = l->cycle_ms[i];
	if (!isnan(l->cycle_p50_ms) && nrows > 2) {
		char line[160];

		top_cycle_summary(l, line, sizeof(line), 0);
		put(f, row++, "%s", line);
		nrows--;
	}
	put(f, row++, "%-8s %10s  %s", "cycle", "ms",
	    "I inference  S SQL  O off-CPU  P probes/GC  . other  # not yet attributed");
	nrows--;
	first = n > (size_t)(nrows > 0 ? nrows : 0) ? n - (size_t)nrows : 0;
	for (size_t i = first; i < n; i++) {
		char bar[256];
		int w = bar_w > 0 && max > 0 ? (int)(l->cycle_ms[i] / max * bar_w + 0.5) : 0;

		if (w > (int)sizeof(bar) - 1)
			w = sizeof(bar) - 1;
		memset(bar, '#', (size_t)w);
		bar[w] = '\0';
		/* Once attributed, the bar shows its breakdown: each part gets
		 * its share of the bar, rounded so the parts fill it exactly. */
		if (!isnan(l->cycle_part[i][LIVE_CYC_OTHER])) {
			double acc = 0;
			int at = 0;

			for (int p = 0; p < LIVE_CYC_PARTS; p++) {
				int to;

				acc += l->cycle_part[i][p];
				to = p == LIVE_CYC_PARTS - 1 ? w : (int)(acc * w + 0.5);
				to = to > w ? w : to;
				for (; at < to; at++)
					bar[at] = cyc_part_char[p];
			}
		}
		put(f, row++, "%-8lld %10.1f  %s", (long long)(l->cycle_no - (int64_t)(n - 1 - i)),
		    l->cycle_ms[i], bar);
	}
}

static const char *const help_text[] = {
	"keys:",
	"  q / Ctrl-C   quit (a recording run still writes all its outputs)",
	"  p            pause / resume the display",
	"  k            kernel frames on / off",
	"  s            sort by self / total",
	"  up/down j     select (k is the kernel toggle: use the up arrow)",
	"  Enter        show / hide the selected function's stack",
	"  f t c        functions / threads / cycles pane",
	"  ?            this help",
};

void top_render(const struct top_model *m, struct top_frame *f)
{
	int row, bottom, pr;

	for (int r = 0; r < f->rows; r++)
		f->text[(size_t)r * (size_t)(f->cols + 1)] = '\0';
	f->sel_row = -1;
	if (f->rows <= 0 || f->cols <= 0)
		return;
	bottom = f->rows; /* first row below the main pane */
	/* Bottom up: the key line, the alert, then the probes when room. */
	if (f->rows >= 4) {
		bottom--;
		if (m->notice)
			put(f, bottom, "%s", m->notice);
		else
			put(f, bottom,
			    "q quit  p pause  k kernel  s sort  Enter stack  f/t/c panes  ? help");
	}
	if (m->alert && f->rows >= 3) {
		bottom--;
		put(f, bottom, "ALERT %s", m->alert);
	}
	row = render_header(m, f, 0, bottom);
	pr = probe_rows(m);
	if (pr && bottom - row - pr >= 5) {
		bottom -= pr;
		render_probes(m, f, bottom, pr);
	}
	pr = alloc_rows(m);
	if (pr && bottom - row - pr >= 5) {
		bottom -= pr;
		render_alloc(m, f, bottom, pr);
	}
	if (row >= bottom)
		return;
	if (m->help) {
		for (size_t i = 0; i < sizeof(help_text) / sizeof(help_text[0]) && row < bottom;
		     i++)
			put(f, row++, "%s", help_text[i]);
		return;
	}
	if (m->pane == TOP_PANE_THREADS)
		render_threads(m, f, row, bottom - row);
	else if (m->pane == TOP_PANE_CYCLES && top_has_cycles(m))
		render_cycles(m, f, row, bottom - row);
	else
		render_funcs(m, f, row, bottom - row);
}
