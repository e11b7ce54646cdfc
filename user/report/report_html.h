/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report.html: one self-contained page (inline CSS, JS and SVG; no network)
 * rendered in the browser from the report.json data embedded in it.
 */
#ifndef EP_REPORT_HTML_H
#define EP_REPORT_HTML_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* The page template, report_html_page.html with html_prelude.js, embedded
 * at build time; "@@DATA@@" marks where the JSON goes (html_page.h). */
extern const char report_html_page[];

/* Writes the page with the sections of root it uses (cycles, findings,
 * flame, time, target, samples, memory, throttling, probes, sql, gpu...).
 * Returns 0, -ENOMEM or -EIO. */
int report_html_write(FILE *f, const cJSON *root);

#endif
