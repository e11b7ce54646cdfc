/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers shared between the jetson_*.c files; not for other modules. */
#ifndef EBPF_PROF_JETSON_INTERNAL_H
#define EBPF_PROF_JETSON_INTERNAL_H

#include <stddef.h>
#include <string.h>

#include "jetson/jetson.h"
#include "jetson/jetson_fs.h"

int jetson_detect_fs(const struct jfs *fs, struct jetson_board *b);
int jetson_parse_l4t(const char *line, char *out, size_t outlen);

#define JETSON_MAX_MODES 32
struct jetson_mode_name {
	int id;
	char name[JETSON_NAME_LEN];
};
/* Parses "< POWER_MODEL ID=n NAME=X >" headers of an nvpmodel.conf text. */
size_t jetson_parse_nvpmodel_conf(const char *text, struct jetson_mode_name *out, size_t max);
/* "pmode:0002 fmode:quiet" -> 2 */
int jetson_parse_pmode(const char *text, long long *id);

/* Exact decimal conversions (one IEEE division, so 614400000/1e6 == 614.4). */
double jetson_mhz(long long hz);
double jetson_mw(long long uw);
double jetson_c(long long mc);
double jetson_fan_pct(long long pwm);
double jetson_emc_util_pct(long long mc_all, long long emc_hz);

/* Truncating string copy (always NUL-terminates). */
static inline void jstrcpy(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* jstrcpy for names read from the device tree or sysfs that are shown on
 * the terminal and written to JSON: every byte outside printable ASCII
 * becomes '?', so an escape sequence cannot reach the terminal and the
 * JSON stays valid UTF-8. */
static inline void jstrcpy_printable(char *dst, size_t n, const char *src)
{
	jstrcpy(dst, n, src);
	for (char *p = dst; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

#endif
