#!/usr/bin/env python3
"""Regenerates user/report_html_page.c from user/report_html_page.html.

The report page is edited as HTML and embedded in the binary as a C string;
unit.test_report_html fails when the two differ, so run this after an edit:
    python3 tools/cycle_marker/embed_html.py
"""
import pathlib

root = pathlib.Path(__file__).resolve().parents[2]
src = (root / "user/report_html_page.html").read_text(encoding="utf-8")
out = ["// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)",
       "/* Generated from report_html_page.html by tools/cycle_marker/embed_html.py: do not edit. */",
       '#include "report_html.h"', "", "const char report_html_page[] ="]
for line in src.splitlines(keepends=True):
    esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
    out.append('\t"' + esc + '"')
out[-1] += ";"
(root / "user/report_html_page.c").write_text("\n".join(out) + "\n", encoding="utf-8")
