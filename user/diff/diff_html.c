// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* diff.html writer (see diff_html.h). */
#include "diff/diff_html.h"

#include "report/html_page.h"
#include "util/json_write.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Stacks per side on the page: the flame section holds at most 3000. */
#define DH_MAX_STACKS 5000

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* Copies a flame section, checked: frames with their key, stacks with
 * valid frame indexes and positive counts only. */
static cJSON *side(const struct dl_run *r)
{
	const cJSON *fl = get(r->root, "flame"), *frames = get(fl, "frames"),
		    *stacks = get(fl, "stacks"), *x;
	cJSON *o = cJSON_CreateObject(), *fo, *so;
	int nf = cJSON_GetArraySize(frames), ns = 0;

	if (!o || !(fo = cJSON_AddArrayToObject(o, "frames")) ||
	    !(so = cJSON_AddArrayToObject(o, "stacks")))
		goto fail;
	if (!cJSON_IsArray(frames) || !cJSON_IsArray(stacks))
		return o;
	cJSON_ArrayForEach(x, frames)
	{
		const cJSON *nm = get(x, "name"), *mod = get(x, "module");
		/* Names come from the profiled process: any bytes. */
		char *name = utf8_sanitize(cJSON_IsString(nm) ? nm->valuestring : "?");
		/* Matched as the function tables are (dl_align_keys). */
		char *module = cJSON_IsString(mod) ? utf8_sanitize(mod->valuestring) : NULL;
		bool kernel = cJSON_IsTrue(get(x, "kernel"));
		char *key = name ? dl_func_key(name, dl_key_module(r, module), kernel) : NULL;
		cJSON *f = cJSON_CreateObject();

		if (!key || !f || !cJSON_AddItemToArray(fo, f)) {
			free(key);
			free(name);
			free(module);
			cJSON_Delete(f);
			goto fail;
		}
		bool ok = cJSON_AddStringToObject(f, "name", name) &&
			  cJSON_AddStringToObject(f, "k", key) &&
			  cJSON_AddBoolToObject(f, "kernel", kernel);
		free(key);
		free(name);
		free(module);
		if (!ok)
			goto fail;
	}
	cJSON_ArrayForEach(x, stacks)
	{
		const cJSON *fa = get(x, "f"), *n = get(x, "n"), *i;
		cJSON *s, *a;

		if (ns >= DH_MAX_STACKS)
			break;
		if (!cJSON_IsArray(fa) || !cJSON_IsNumber(n) || !(n->valuedouble > 0) ||
		    !(n->valuedouble < 1e18))
			continue;
		if (!(s = cJSON_CreateObject()) || !cJSON_AddItemToArray(so, s)) {
			cJSON_Delete(s);
			goto fail;
		}
		if (!(a = cJSON_AddArrayToObject(s, "f")) ||
		    !cJSON_AddNumberToObject(s, "n", floor(n->valuedouble)))
			goto fail;
		cJSON_ArrayForEach(i, fa)
		{
			cJSON *v;

			if (!cJSON_IsNumber(i) || !(i->valuedouble >= 0) || i->valuedouble >= nf)
				continue;
			if (!(v = cJSON_CreateNumber(floor(i->valuedouble))) ||
			    !cJSON_AddItemToArray(a, v)) {
				cJSON_Delete(v);
				goto fail;
			}
		}
		ns++;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

cJSON *diff_html_flame(const struct dl_run *b, const struct dl_run *n, enum dh_scale how)
{
	double scale = 1;
	cJSON *o = cJSON_CreateObject(), *sb = NULL, *sn = NULL;

	/* A BASE sample in NEW's units: per cycle, and per unit of CPU time
	 * when the sampling periods differ; the same work: CPU time;
	 * otherwise the same share of all samples. */
	if (how == DH_PER_CYCLE && b->ncycles_all && n->ncycles_all)
		scale = ((double)n->ncycles_all / (double)b->ncycles_all) *
			(b->period_ns / n->period_ns);
	else if (how == DH_CPU_TIME)
		/* Several runs a side: per run (the stacks are their sums). */
		scale = (b->period_ns / (double)(b->nruns > 1 ? b->nruns : 1)) /
			(n->period_ns / (double)(n->nruns > 1 ? n->nruns : 1));
	else if (b->func_samples && n->func_samples)
		scale = (double)n->func_samples / (double)b->func_samples;
	if (!isfinite(scale) || scale <= 0)
		scale = 1;
	if (!o || !cJSON_AddNumberToObject(o, "scale", scale) || !(sb = side(b)) ||
	    !cJSON_AddItemToObject(o, "base", sb)) {
		cJSON_Delete(sb);
		cJSON_Delete(o);
		return NULL;
	}
	if (!(sn = side(n)) || !cJSON_AddItemToObject(o, "new", sn)) {
		cJSON_Delete(sn);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int diff_html_write(FILE *f, cJSON *diff, const struct dl_run *b, const struct dl_run *n)
{
	cJSON *data = cJSON_CreateObject(), *fl = NULL;
	const cJSON *norm = get(diff, "normalization");
	int err;

	if (!data || !cJSON_AddItemToObject(data, "diff", diff)) {
		cJSON_Delete(diff);
		cJSON_Delete(data);
		return -ENOMEM;
	}
	fl = diff_html_flame(b, n,
			     cJSON_IsString(norm) && !strcmp(norm->valuestring, "per-cycle")
				     ? DH_PER_CYCLE
			     : cJSON_IsTrue(get(diff, "same_work")) ? DH_CPU_TIME
								    : DH_PER_SAMPLE);
	if (!fl || !cJSON_AddItemToObject(data, "flame", fl)) {
		cJSON_Delete(fl);
		cJSON_Delete(data);
		return -ENOMEM;
	}
	err = html_page_write(f, diff_html_page, data);
	cJSON_Delete(data);
	return err;
}
