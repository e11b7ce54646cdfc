/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one reader of report.json for `ebpf-prof report` and `ebpf-prof
 * diff`. The file is outside input (a baseline kept by a CI job, a
 * directory from another machine or user), so both commands take the same
 * verdict from here: the same file accepted or refused, with the same one
 * line naming the file and the field.
 *
 * Reading: DIR may be a symlink (the user named it); DIR/report.json may
 * not (refused, not followed), nor anything but a regular file of at most
 * RR_MAX_BYTES; a FIFO never blocks the open.
 *
 * Checking: the schema; sampling.period_ns and samples.total present;
 * every field either command reads, where present, of its type and in its
 * range (counts and nanoseconds finite, 0 to 2^64; shares 0 to 1; stack
 * frame indexes inside the frame table; the cycle rows and findings as
 * cycles_json.h reads them).
 *
 * Cleaning: every string of the tree is made valid UTF-8 without control
 * characters (C0, DEL, C1: '?'; tab and line breaks: a space), so that no
 * name or command line from the file can drive the terminal it is printed
 * on.
 */
#ifndef EP_REPORT_READ_H
#define EP_REPORT_READ_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* A report.json of a long run with many cycles is a few MB; far beyond
 * this it is not one of ours. */
#define RR_MAX_BYTES (256u << 20)

/* Reads, parses, checks and cleans DIR/report.json into *root (the
 * caller's, cJSON_Delete). On error returns -errno, *root is NULL and err
 * holds one line: "DIR/report.json: FIELD: problem" (or "DIR: ..."). */
int report_read(const char *dir, cJSON **root, char *err, size_t errlen);

/* The same from text in memory (tests, fuzzing); name is the file name
 * shown in messages. */
int report_parse(const char *name, const char *text, size_t len, cJSON **root, char *err,
		 size_t errlen);

/* A copy of s for a terminal: valid UTF-8, no control characters (see
 * above). NULL on ENOMEM. */
char *report_clean_text(const char *s);

#endif
