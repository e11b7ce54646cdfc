// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/proc/proc_info.c user/jetson/jetson_fs.c user/util/log.c user/proc/target_open.c
/* Small values read from /proc and sysfs: /proc/PID/status (Tgid; the
 * filesystem uid, gid and groups files of the process are opened with),
 * /proc/PID/stat (state),
 * /proc/PID/task/TID/schedstat (run time), sysfs integers, --pid lists. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jetson/jetson_fs.h"
#include "proc/proc_info.h"
#include "proc/target_open.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t tgid, pids[8];
	long long v;
	uint64_t rt;
	struct target_cred c;
	char *s;

	proc_parse_status_tgid((const char *)data, size, &tgid);
	if (target_cred_parse((const char *)data, size, &c) == 0 &&
	    (!c.known || c.ngroups > TARGET_CRED_MAX_GROUPS))
		__builtin_trap();
	proc_parse_stat_state((const char *)data, size);
	proc_parse_schedstat_runtime((const char *)data, size, &rt);
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	jfs_parse_ll(s, &v);
	proc_parse_pid_list(s, pids, 8);
	free(s);
	return 0;
}
