#!/usr/bin/env python3
"""Regenerates the C files that embed the HTML pages:
user/report/report_html_page.c from user/report/report_html_page.html (report.html) and
user/diff/diff_html_page.c from user/diff/diff_html_page.html (diff.html).

The pages are edited as HTML and embedded in the binary as C strings;
unit.test_cycles_json and unit.test_diff_html fail when they differ, so run
this after an edit:
    python3 tools/cycle_marker/embed_html.py
"""
import pathlib

root = pathlib.Path(__file__).resolve().parents[2]
PAGES = [
    ("user/report/report_html_page.html", "user/report/report_html_page.c", "report/report_html.h", "report_html_page"),
    ("user/diff/diff_html_page.html", "user/diff/diff_html_page.c", "diff/diff_html.h",
     "diff_html_page"),
]
for html, c, header, var in PAGES:
    src = (root / html).read_text(encoding="utf-8")
    name = pathlib.Path(html).name
    out = ["// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)",
           "/* Generated from %s by tools/cycle_marker/embed_html.py: do not edit. */" % name,
           '#include "%s"' % header, "", "const char %s[] =" % var]
    for line in src.splitlines(keepends=True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
        out.append('\t"' + esc + '"')
    out[-1] += ";"
    (root / c).write_text("\n".join(out) + "\n", encoding="utf-8")
