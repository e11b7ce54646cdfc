// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace.json: Chrome Trace Event / Perfetto timeline. For now it carries the
 * Jetson counter tracks; spans (probes, cycles) join it as they land.
 */
#include <errno.h>
#include <string.h>

#include "jetson.h"
#include "json_write.h"
#include "report.h"

int export_trace_json(const struct run_info *ri, const struct jetson_sampler *gpu, FILE *out)
{
	uint32_t pid = ri->ntargets ? ri->targets[0].pid : 0;
	bool first = true;
	int err;

	/* Timestamps are CLOCK_MONOTONIC in microseconds, the same clock as
	 * the BPF events, so tracks from every source line up. */
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
	for (size_t i = 0; i < ri->ntargets; i++) {
		if (!first)
			fputc(',', out);
		first = false;
		fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":",
			ri->targets[i].pid);
		json_write_strn(out, ri->targets[i].comm, strnlen(ri->targets[i].comm, sizeof(ri->targets[i].comm)));
		fputs("}}\n", out);
	}
	if (gpu) {
		err = jetson_trace_counters(gpu, out, pid, &first);
		if (err)
			return err;
	}
	fputs("],\"otherData\":{\"exporter\":\"ebpf-prof@" EBPF_PROF_VERSION "\"}}\n", out);
	return ferror(out) ? -EIO : 0;
}
