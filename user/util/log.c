// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/log.h"

#include <stdio.h>

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
	fprintf(stderr, "ebpf-prof: %s", prefix[lvl]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
