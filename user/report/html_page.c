// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* report.html and diff.html: a page template with its data (see html_page.h). */
#include "report/html_page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HTML_DATA_MARK "@@DATA@@"

int html_page_write(FILE *f, const char *page, const cJSON *data)
{
	const char *mark = strstr(page, HTML_DATA_MARK);
	char *js;

	if (!mark)
		return -EINVAL;
	js = cJSON_PrintUnformatted(data);
	if (!js)
		return -ENOMEM;
	fwrite(page, 1, (size_t)(mark - page), f);
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
	fputs(mark + strlen(HTML_DATA_MARK), f);
	return ferror(f) ? -EIO : 0;
}
