/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The HTML pages as the build embeds them, assembled here from their
 * sources apart from the build's script (cmake/embed_page.cmake): the
 * page's one PRELUDE marker line replaced by user/report/html_prelude.js
 * and its one STYLE marker line by user/report/html_prelude.css, byte for
 * byte. */
#ifndef EP_TEST_HTML_SRC_H
#define EP_TEST_HTML_SRC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* File src/rel, whole, NUL-terminated; NULL (a failed check) when unreadable. */
static inline char *ep_read_src(const char *src, const char *rel)
{
	char path[4096];
	char *buf = NULL;
	size_t len = 0;
	FILE *f, *m;
	int c;

	snprintf(path, sizeof(path), "%s/%s", src, rel);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	m = open_memstream(&buf, &len);
	while (m && (c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	if (m)
		fclose(m);
	CHECK(buf != NULL);
	return buf;
}

/* text with the one marker line replaced by part (both freed); NULL (a
 * failed check) when either is missing or the marker is not there exactly
 * once. */
static inline char *ep_put_part(char *text, const char *mark, char *part)
{
	char *at = text ? strstr(text, mark) : NULL, *out = NULL;
	size_t ml = strlen(mark);

	CHECK(at != NULL && !strstr(at + 1, mark));
	if (at && part && !strstr(at + 1, mark)) {
		size_t head = (size_t)(at - text), np = strlen(part), tail = strlen(at + ml);

		out = malloc(head + np + tail + 1);
		if (out) {
			memcpy(out, text, head);
			memcpy(out + head, part, np);
			memcpy(out + head + np, at + ml, tail + 1);
		}
	}
	free(text);
	free(part);
	return out;
}

/* The page user/PAGE_REL with the prelude and the shared styles in place
 * of their marker lines; NULL (a failed check) when a file is unreadable
 * or a marker is not there exactly once. */
static inline char *ep_page_from_sources(const char *src, const char *page_rel)
{
	char *page = ep_read_src(src, page_rel);

	page = ep_put_part(page, "/*@@PRELUDE@@*/\n",
			   ep_read_src(src, "user/report/html_prelude.js"));
	return ep_put_part(page, "/*@@STYLE@@*/\n",
			   ep_read_src(src, "user/report/html_prelude.css"));
}

#endif
