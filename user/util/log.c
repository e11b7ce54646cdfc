// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/term_text.h"

/* The one piece of process-wide mutable state outside main: written once
 * from option parsing before any thread starts. */
static enum log_level g_level = LOG_WARN;

void log_set_level(enum log_level lvl)
{
	g_level = lvl;
}
enum log_level log_get_level(void)
{
	return g_level;
}

void log_vprint(enum log_level lvl, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "", "error: ", "warning: ", "", "debug: " };

	if (lvl > g_level)
		return;
	char buf[2048], *msg = buf;
	va_list ap2;
	int n;

	/* Formatted first: the arguments are often a profiled program's
	 * strings, cleaned of terminal controls before they are written. */
	va_copy(ap2, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf) && !(msg = malloc((size_t)n + 1)))
		msg = buf; /* cut, still cleaned */
	else if (msg != buf)
		vsnprintf(msg, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		n = 0;
	if (msg == buf && n >= (int)sizeof(buf))
		n = (int)sizeof(buf) - 1;
	term_clean(msg, (size_t)n);
	fprintf(stderr, "ebpf-prof: %s%.*s\n", prefix[lvl], n, msg);
	if (msg != buf)
		free(msg);
}

#define DEFINE_LOG(fn, lvl)               \
	void fn(const char *fmt, ...)     \
	{                                 \
		va_list ap;               \
		va_start(ap, fmt);        \
		log_vprint(lvl, fmt, ap); \
		va_end(ap);               \
	}

DEFINE_LOG(log_error, LOG_ERROR)
DEFINE_LOG(log_warn, LOG_WARN)
DEFINE_LOG(log_info, LOG_INFO)
DEFINE_LOG(log_debug, LOG_DEBUG)
