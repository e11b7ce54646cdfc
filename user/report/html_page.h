/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The self-contained HTML pages (report.html, diff.html): a template
 * embedded in the binary (cmake/embed_page.cmake) with "@@DATA@@" where
 * the page's JSON data goes, rendered in the browser from it.
 */
#ifndef EBPF_PROF_HTML_PAGE_H
#define EBPF_PROF_HTML_PAGE_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Writes page with data, printed unformatted, in place of its "@@DATA@@":
 * '<', '>' and '&' as \u escapes (the data sits in a <script> element; a
 * "</script>" in a symbol name or SQL text from the profiled process would
 * end it, and inside JSON strings the escapes mean the same). Returns 0,
 * -EINVAL (no "@@DATA@@" in page), -ENOMEM or -EIO. */
int html_page_write(FILE *f, const char *page, const cJSON *data);

#endif
