// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.html writer (see report_html.h). */
#include "report_html.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const sections[] = {
	"schema", "version",  "target",	 "time",    "samples",	  "top_functions",
	"cycles", "findings", "flame",	 "memory",  "throttling", "probes",
	"sql",	  "gpu",      "cpufreq", "thermal",
};

int report_html_write(FILE *f, const cJSON *root)
{
	const char *mark = strstr(report_html_page, "@@DATA@@");
	if (!mark)
		return -EINVAL;
	cJSON *data = cJSON_CreateObject();
	if (!data)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, sections[i]);
		if (!x)
			continue;
		cJSON *d = cJSON_Duplicate(x, true);
		if (!d || !cJSON_AddItemToObject(data, sections[i], d)) {
			cJSON_Delete(d);
			cJSON_Delete(data);
			return -ENOMEM;
		}
	}
	char *js = cJSON_PrintUnformatted(data);
	cJSON_Delete(data);
	if (!js)
		return -ENOMEM;
	fwrite(report_html_page, 1, (size_t)(mark - report_html_page), f);
	/* The JSON sits in a <script> element: a "</script>" inside a string
	 * (SQL text, symbol names come from the profiled process) would end it.
	 * '<', '>' and '&' only occur inside JSON strings, where \u escapes are
	 * equivalent. */
	for (const char *p = js; *p; p++) {
		if (*p == '<')
			fputs("\\u003c", f);
		else if (*p == '>')
			fputs("\\u003e", f);
		else if (*p == '&')
			fputs("\\u0026", f);
		else
			fputc(*p, f);
	}
	free(js);
	fputs(mark + strlen("@@DATA@@"), f);
	return ferror(f) ? -EIO : 0;
}
