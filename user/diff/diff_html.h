/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * diff.html: one self-contained page (inline CSS, JS and SVG; no network)
 * rendered in the browser from the comparison and both runs' flame stacks
 * embedded in it, with a differential flame graph.
 */
#ifndef EP_DIFF_HTML_H
#define EP_DIFF_HTML_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "diff/diff_load.h"

/* The page template, diff_html_page.html with report/html_prelude.js,
 * embedded at build time; "@@DATA@@" marks where the JSON goes
 * (report/html_page.h). */
extern const char diff_html_page[];

/* How the flame graph scales BASE: per cycle, in CPU time (runs of the
 * same work), or to the same sample count. */
enum dh_scale { DH_PER_SAMPLE, DH_PER_CYCLE, DH_CPU_TIME };

/* The flame data of the page: { "scale", "base": {frames, stacks}, "new":
 * {...} } with each frame's matching key "k" (dl_func_key). scale turns a
 * BASE count into NEW's units (enum dh_scale). NULL on ENOMEM. */
cJSON *diff_html_flame(const struct dl_run *b, const struct dl_run *n, enum dh_scale how);

/* Writes the page: diff is the --json document (taken over, freed here).
 * Returns 0, -ENOMEM, -EINVAL or -EIO. */
int diff_html_write(FILE *f, cJSON *diff, const struct dl_run *b, const struct dl_run *n);

#endif
