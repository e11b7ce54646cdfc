// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.html writer (see report_html.h). */
#include "report/report_html.h"

#include "report/html_page.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const sections[] = {
	"schema", "version",  "target",	 "time",    "samples",	    "top_functions",
	"cycles", "findings", "flame",	 "memory",  "throttling",   "probes",
	"sql",	  "gpu",      "cpufreq", "thermal", "offcpu_flame", "cycles_whole_run",
	"llm",
};

/* A page with more cycles would be tens of MB of JSON and tens of
 * thousands of SVG bars: beyond this many, the page gets a subset. */
#define HTML_MAX_CYCLES 5000
/* Of which always the slowest (and every cycle a finding names). */
#define HTML_SLOWEST 500

static double wall_of(const cJSON *c)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(c, "wall_ns");

	return cJSON_IsNumber(w) ? w->valuedouble : 0;
}

static int cmp_wall_desc(const void *a, const void *b)
{
	double x = wall_of(*(const cJSON *const *)a), y = wall_of(*(const cJSON *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* { count, median_ns, p95_ns, mean_ns, slowest_index, slowest_ns,
 * shown, partial } over every complete cycle (nearest rank, as the page
 * computes them), so the page's summary does not depend on which cycles it
 * shows; partial ones (open at the end of the run) are only counted. */
static cJSON *cycles_summary(const cJSON *cycles, size_t shown)
{
	size_t all = (size_t)cJSON_GetArraySize(cycles), n = 0, slow = 0, k = 0, npartial = 0;
	double *w = malloc((all ? all : 1) * sizeof(*w)), sum = 0, slow_w = -1;
	const cJSON *c;
	cJSON *o;

	if (!w)
		return NULL;
	cJSON_ArrayForEach(c, cycles)
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "partial"))) {
			npartial++;
			k++;
			continue;
		}
		w[n] = wall_of(c);
		sum += w[n];
		if (w[n] > slow_w) {
			slow_w = w[n];
			slow = k;
		}
		n++;
		k++;
	}
	qsort(w, n, sizeof(*w), cmp_dbl);
	o = cJSON_CreateObject();
	if (o) {
		size_t r50 = (size_t)((n * 50 + 99) / 100), r95 = (size_t)((n * 95 + 99) / 100);
		const cJSON *sc = cJSON_GetArrayItem(cycles, (int)slow);
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(sc, "index");

		if (!cJSON_AddNumberToObject(o, "count", (double)n) ||
		    !cJSON_AddNumberToObject(o, "median_ns", n ? w[(r50 ? r50 : 1) - 1] : 0) ||
		    !cJSON_AddNumberToObject(o, "p95_ns", n ? w[(r95 ? r95 : 1) - 1] : 0) ||
		    !cJSON_AddNumberToObject(o, "mean_ns", n ? sum / (double)n : 0) ||
		    !cJSON_AddNumberToObject(o, "slowest_index",
					     cJSON_IsNumber(idx) ? idx->valuedouble : 0) ||
		    !cJSON_AddNumberToObject(o, "slowest_ns", n ? wall_of(sc) : 0) ||
		    !cJSON_AddNumberToObject(o, "shown", (double)shown) ||
		    !cJSON_AddNumberToObject(o, "partial", (double)npartial)) {
			cJSON_Delete(o);
			o = NULL;
		}
	}
	free(w);
	return o;
}

/* The cycles the page shows when there are too many: the slowest, those a
 * finding names, and evenly spaced ones for the rest, in index order. */
static cJSON *cycles_subset(const cJSON *cycles, const cJSON *findings)
{
	size_t n = (size_t)cJSON_GetArraySize(cycles), k = 0, nkeep = 0;
	const cJSON **v = malloc(n * sizeof(*v)), *c, *fnd, *id;
	bool *keep = calloc(n, sizeof(*keep));
	cJSON *out = NULL;

	if (!v || !keep)
		goto done;
	cJSON_ArrayForEach(c, cycles) v[k++] = c;
	/* Findings name cycles by index, which is the position. */
	cJSON_ArrayForEach(fnd, findings) cJSON_ArrayForEach(
		id,
		cJSON_GetObjectItemCaseSensitive(fnd, "cycles")) if (cJSON_IsNumber(id) &&
								     id->valuedouble >= 0 &&
								     id->valuedouble < (double)n &&
								     nkeep < HTML_MAX_CYCLES / 2 &&
								     !keep[(size_t)id->valuedouble])
	{
		keep[(size_t)id->valuedouble] = true;
		nkeep++;
	}
	{
		const cJSON **byw = malloc(n * sizeof(*byw));

		if (!byw)
			goto done;
		memcpy(byw, v, n * sizeof(*byw));
		qsort(byw, n, sizeof(*byw), cmp_wall_desc);
		for (size_t i = 0, got = 0; i < n && got < HTML_SLOWEST; i++) {
			const cJSON *ix = cJSON_GetObjectItemCaseSensitive(byw[i], "index");
			size_t p = cJSON_IsNumber(ix) && ix->valuedouble >= 0 &&
						   ix->valuedouble < (double)n
					   ? (size_t)ix->valuedouble
					   : n;

			if (p < n && !keep[p]) {
				keep[p] = true;
				nkeep++;
				got++;
			}
		}
		free(byw);
	}
	{
		/* The rest evenly among the cycles not kept yet. */
		size_t nfree = n - nkeep, want = HTML_MAX_CYCLES - nkeep, *fr;

		fr = malloc((nfree ? nfree : 1) * sizeof(*fr));
		if (!fr)
			goto done;
		for (size_t i = 0, j = 0; i < n; i++)
			if (!keep[i])
				fr[j++] = i;
		for (size_t j = 0; j < want && j < nfree; j++)
			keep[fr[j * nfree / want]] = true;
		free(fr);
	}
	out = cJSON_CreateArray();
	for (size_t i = 0; out && i < n; i++) {
		cJSON *d;

		if (!keep[i])
			continue;
		d = cJSON_Duplicate(v[i], true);
		if (!d || !cJSON_AddItemToArray(out, d)) {
			cJSON_Delete(d);
			cJSON_Delete(out);
			out = NULL;
		}
	}
done:
	free(v);
	free(keep);
	return out;
}

int report_html_write(FILE *f, const cJSON *root)
{
	cJSON *data = cJSON_CreateObject();
	if (!data)
		return -ENOMEM;
	const cJSON *cyc = cJSON_GetObjectItemCaseSensitive(root, "cycles");
	if (cJSON_IsArray(cyc)) {
		size_t n = (size_t)cJSON_GetArraySize(cyc);
		cJSON *sum = cycles_summary(cyc, n > HTML_MAX_CYCLES ? HTML_MAX_CYCLES : n);
		if (!sum || !cJSON_AddItemToObject(data, "cycles_summary", sum)) {
			cJSON_Delete(sum);
			cJSON_Delete(data);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, sections[i]);
		if (!x)
			continue;
		cJSON *d =
			x == cyc && cJSON_GetArraySize(cyc) > HTML_MAX_CYCLES
				? cycles_subset(cyc,
						cJSON_GetObjectItemCaseSensitive(root, "findings"))
				: cJSON_Duplicate(x, true);
		if (!d || !cJSON_AddItemToObject(data, sections[i], d)) {
			cJSON_Delete(d);
			cJSON_Delete(data);
			return -ENOMEM;
		}
	}
	int err = html_page_write(f, report_html_page, data);
	cJSON_Delete(data);
	return err;
}
