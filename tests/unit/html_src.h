/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The HTML pages as the build embeds them, assembled here from their
 * sources apart from the build's script (cmake/embed_page.cmake): the
 * page's one PRELUDE marker line replaced by user/report/html_prelude.js,
 * byte for byte. */
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

/* The page user/PAGE_REL with the prelude in place of its marker line;
 * NULL (a failed check) when a file is unreadable or the marker is not
 * there exactly once. */
static inline char *ep_page_from_sources(const char *src, const char *page_rel)
{
	static const char mark[] = "/*@@PRELUDE@@*/\n";
	char *page = ep_read_src(src, page_rel),
	     *pre = ep_read_src(src, "user/report/html_prelude.js");
	char *at = page ? strstr(page, mark) : NULL, *out = NULL;

	CHECK(at != NULL && !strstr(at + 1, mark));
	if (at && pre && !strstr(at + 1, mark)) {
		size_t head = (size_t)(at - page), np = strlen(pre),
		       tail = strlen(at + sizeof(mark) - 1);

		out = malloc(head + np + tail + 1);
		if (out) {
			memcpy(out, page, head);
			memcpy(out + head, pre, np);
			memcpy(out + head + np, at + sizeof(mark) - 1, tail + 1);
		}
	}
	free(page);
	free(pre);
	return out;
}

#endif
