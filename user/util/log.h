/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Diagnostics to stderr. The level is set once by the CLI entry point; all
 * other modules only read it.
 */
#ifndef EBPF_PROF_LOG_H
#define EBPF_PROF_LOG_H

#include <stdarg.h>

enum log_level { LOG_QUIET = 0, LOG_ERROR = 1, LOG_WARN = 2, LOG_INFO = 3, LOG_DEBUG = 4 };

void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);

__attribute__((format(printf, 1, 2))) void log_error(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_info(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_debug(const char *fmt, ...);
void log_vprint(enum log_level lvl, const char *fmt, va_list ap);

#endif
