/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Text for a terminal from strings a profiled program chose (its thread
 * names, paths, symbol names, SQL text): an escape sequence in them must
 * not drive the user's terminal (move the cursor, rewrite what the
 * profiler printed, set the window title). Every control character but
 * newline and tab becomes '?', in place and length for length, so any
 * buffer can be cleaned just before it is written. */
#ifndef EBPF_PROF_UTIL_TERM_TEXT_H
#define EBPF_PROF_UTIL_TERM_TEXT_H

#include <stddef.h>

static inline void term_clean(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			s[i] = '?';
		} else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
			   (unsigned char)s[i + 1] <= 0x9f) {
			/* U+0080..U+009F in UTF-8: the C1 controls (CSI is U+009B). */
			s[i] = '?';
			s[++i] = '?';
		}
	}
}

#endif
