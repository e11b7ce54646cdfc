// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Regressions along call paths for `ebpf-prof diff` (diff_paths.h): which
 * grown total rows are named, and through which callee. Apart from the
 * comparison model because it reads the runs' stacks, not their rows'
 * figures. */
#include "diff/diff_paths.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* CPU of one sample of r in the units the function rows compare. */
static double sample_unit(const struct dl_run *r, const struct dm_result *res)
{
	if (res->per_cycle)
		return r->period_ns / (double)(r->ncycles_all ? r->ncycles_all : 1);
	/* Several runs a side: the stacks are their sums, a figure one run's
	 * mean. */
	if (res->same_work)
		return r->period_ns / (double)(r->nruns > 1 ? r->nruns : 1);
	return r->func_samples ? 1 / (double)r->func_samples : 0;
}

struct child {
	const char *key, *name;
	double b, n; /* samples under the caller, in row units */
};

/* Adds the samples of r's stacks through function fi (first occurrence)
 * to the callee below it: kids grows by key. */
static int children_of(const struct dl_run *r, int64_t fi, const int64_t *fm, size_t nfm,
		       double unit, bool is_new, struct child **kids, size_t *nk, size_t *cap)
{
	const cJSON *stacks = cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetObjectItemCaseSensitive(r->root, "flame"), "stacks"),
		    *st;

	cJSON_ArrayForEach(st, stacks)
	{
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(st, "f"),
			    *cn = cJSON_GetObjectItemCaseSensitive(st, "n"), *x;
		bool found = false;
		int64_t child = -1;

		if (!cJSON_IsArray(f) || !cJSON_IsNumber(cn) || !(cn->valuedouble > 0))
			continue;
		cJSON_ArrayForEach(x, f)
		{
			int64_t g = cJSON_IsNumber(x) && x->valuedouble >= 0 &&
						    x->valuedouble < (double)nfm
					    ? fm[(size_t)x->valuedouble]
					    : -1;
			if (found) {
				child = g;
				break;
			}
			found = g == fi;
		}
		if (!found || child < 0 || child == fi)
			continue;
		const char *key = r->funcs[child].key;
		size_t k = 0;

		while (k < *nk && strcmp((*kids)[k].key, key))
			k++;
		if (k == *nk) {
			if (*nk == *cap) {
				size_t nc = *cap ? *cap * 2 : 16;
				struct child *nw = realloc(*kids, nc * sizeof(*nw));

				if (!nw)
					return -ENOMEM;
				*kids = nw;
				*cap = nc;
			}
			(*kids)[k] = (struct child){ key, r->funcs[child].name, 0, 0 };
			(*nk)++;
		}
		if (is_new)
			(*kids)[k].n += cn->valuedouble * unit;
		else
			(*kids)[k].b += cn->valuedouble * unit;
	}
	return 0;
}

/* The callee of the function with this key where its growth concentrates
 * (at least DM_VIA_SHARE of the growth of its total), or NULL. */
static int dominant_callee(const struct dl_run *b, const struct dl_run *n, const int64_t *fmb,
			   size_t nfb, const int64_t *fmn, size_t nfn, const struct dm_result *r,
			   const struct dm_row *w, const char **key, const char **name,
			   bool *shared)
{
	const struct dl_func *fb = dl_find_func(b, w->key), *fn = dl_find_func(n, w->key);
	double ub = sample_unit(b, r), un = sample_unit(n, r);
	double grow = (fn ? (double)fn->total * un : 0) - (fb ? (double)fb->total * ub : 0);
	struct child *kids = NULL;
	size_t nk = 0, cap = 0;
	int e = 0;

	*key = *name = NULL;
	*shared = false;
	if (fb && fmb)
		e = children_of(b, fb - b->funcs, fmb, nfb, ub, false, &kids, &nk, &cap);
	if (!e && fn && fmn)
		e = children_of(n, fn - n->funcs, fmn, nfn, un, true, &kids, &nk, &cap);
	if (!e && grow > 0) {
		double best = 0;
		const struct child *c = NULL;

		for (size_t k = 0; k < nk; k++)
			if (kids[k].n - kids[k].b > best) {
				best = kids[k].n - kids[k].b;
				c = &kids[k];
			}
		if (c && best >= DM_VIA_SHARE * grow) {
			*key = c->key;
			*name = c->name;
			/* The callee is shared (other callers hold at least
			 * DM_SHARED_SHARE of its time) and its time under this
			 * caller grew at least twice as fast as its whole time:
			 * this caller calls it more, the callee is not slower
			 * for everyone. */
			const struct dl_func *cb = dl_find_func(b, c->key),
					     *cn = dl_find_func(n, c->key);
			double tb = cb ? (double)cb->total * ub : 0,
			       tn = cn ? (double)cn->total * un : 0;

			if (tb > 0 && tb - c->b >= DM_SHARED_SHARE * tb)
				/* A caller that did not call it before: new. */
				*shared = c->b == 0 || c->n / c->b - 1 >= 2 * (tn / tb - 1);
		}
	}
	free(kids);
	return e;
}

static struct dm_row *find_row(struct dm_result *r, const char *key, const char *metric)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].key && !strcmp(r->rows[i].key, key) &&
		    !strcmp(r->rows[i].metric, metric))
			return &r->rows[i];
	return NULL;
}

/* A function whose total time grew beyond the threshold, significantly
 * (its own family of tests), while its self time did not regress, calls
 * something more: a regression along the call path, named at the deepest
 * such function, i.e. unless the callee where its growth concentrates is
 * one too (main -> beta -> spin: beta, "via spin"). */
int dm_path_regressions(const struct dl_run *b, const struct dl_run *n, struct dm_result *r)
{
	int64_t *fmb = NULL, *fmn = NULL;
	size_t nfb = 0, nfn = 0;
	bool *cand = calloc(r->nrows + 1, sizeof(*cand));
	const char **via_key = calloc(r->nrows + 1, sizeof(*via_key));
	bool *shared = calloc(r->nrows + 1, sizeof(*shared));
	int e = 0;

	if (!cand || !via_key || !shared) {
		e = -ENOMEM;
		goto out;
	}
	e = dl_frame_funcs(b, &fmb, &nfb);
	if (!e)
		e = dl_frame_funcs(n, &fmn, &nfn);
	if (e == -ENOENT)
		e = 0;
	if (e)
		goto out;
	for (size_t i = 0; i < r->nrows; i++) {
		struct dm_row *w = &r->rows[i];

		if (w->section != DM_S_FUNCTION || w->gating || w->status != DM_REGRESSION)
			continue;
		/* A kernel entry path (a timer interrupt, the return to user
		 * mode) grows with the machine's load and the run's length, not
		 * with the program's code: never named along a path. */
		if (w->detail && !strncmp(w->detail, "[kernel", 7)) {
			w->status = DM_CHANGED;
			continue;
		}
		const struct dm_row *self = find_row(r, w->key, "self");
		if (self && self->status == DM_REGRESSION)
			continue;
		cand[i] = true;
	}
	for (size_t i = 0; i < r->nrows && !e; i++) {
		const char *name = NULL;

		if (cand[i])
			e = dominant_callee(b, n, fmb, nfb, fmn, nfn, r, &r->rows[i], &via_key[i],
					    &name, &shared[i]);
		if (!e && via_key[i] && !(r->rows[i].via = strdup(name)))
			e = -ENOMEM;
	}
	for (size_t i = 0; i < r->nrows && !e; i++) {
		struct dm_row *w = &r->rows[i];

		if (w->section != DM_S_FUNCTION || w->gating || w->status != DM_REGRESSION)
			continue;
		/* Named where the growth concentrates in a shared callee; a
		 * caller whose growth is a candidate callee's, or a callee's
		 * own (it is slower wherever called: its self row says so),
		 * or spread over several callees, is not. */
		bool named = cand[i] && via_key[i] && shared[i];
		if (named) {
			const struct dm_row *c = find_row(r, via_key[i], "total");

			if (c && cand[c - r->rows])
				named = false;
		}
		if (!named)
			w->status = DM_CHANGED;
	}
out:
	free(fmb);
	free(fmn);
	free(cand);
	free(via_key);
	free(shared);
	return e;
}
