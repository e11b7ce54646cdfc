/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Streaming JSON helpers for exporters that write large documents directly
 * to a FILE instead of building a tree. Strings come from hostile processes
 * (comm, symbol names, paths), so they are treated as arbitrary bytes:
 * control characters are escaped and invalid UTF-8 becomes U+FFFD, keeping
 * the output valid JSON whatever the input.
 */
#ifndef EBPF_PROF_JSON_WRITE_H
#define EBPF_PROF_JSON_WRITE_H

#include <stddef.h>
#include <stdio.h>

/* Writes s (len bytes) as a quoted JSON string. NULL writes null. */
void json_write_strn(FILE *f, const char *s, size_t len);
void json_write_str(FILE *f, const char *s);
/* Same as json_write_str; the name other exporters expect. */
static inline void json_write_string(FILE *f, const char *s)
{
	json_write_str(f, s);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes at s do
 * not start one (overlong, surrogate, > U+10FFFF, truncated). */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

/* malloc'ed copy of s with every invalid UTF-8 byte replaced by U+FFFD, for
 * APIs (cJSON) that would copy bytes through unchecked. NULL on ENOMEM or
 * NULL input. */
char *utf8_sanitize(const char *s);

#endif
