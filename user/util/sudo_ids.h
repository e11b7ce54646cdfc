/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The user behind sudo (SUDO_UID, SUDO_GID): who gets the result files,
 * and whom the request parser runs as. One parser, so both agree. */
#ifndef EBPF_PROF_UTIL_SUDO_IDS_H
#define EBPF_PROF_UTIL_SUDO_IDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A decimal id below UINT32_MAX: (uid_t)-1 means "no change" to chown,
 * never a real id. */
static inline bool sudo_id_parse(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (uint64_t)(*c - '0');
		if (v >= UINT32_MAX)
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

/* Both ids, or false (and nothing set) when either is missing or bad. */
static inline bool sudo_ids_parse(const char *sudo_uid, const char *sudo_gid, uid_t *uid,
				  gid_t *gid)
{
	uint32_t u, g;

	if (!sudo_id_parse(sudo_uid, &u) || !sudo_id_parse(sudo_gid, &g))
		return false;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return true;
}

#endif
