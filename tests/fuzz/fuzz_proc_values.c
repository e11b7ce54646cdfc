// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/proc/proc_info.c user/jetson/jetson_fs.c user/util/log.c
/* Small values read from /proc and sysfs: /proc/PID/status (Tgid),
 * /proc/PID/stat (state),
 * /proc/PID/task/TID/schedstat (run time), sysfs integers, --pid lists. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jetson/jetson_fs.h"
#include "proc/proc_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t tgid, pids[8];
	long long v;
	uint64_t rt;
	char *s;

	proc_parse_status_tgid((const char *)data, size, &tgid);
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
