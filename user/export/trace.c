// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace.json: Chrome Trace Event / Perfetto timeline. The recorder's modules
 * supply the events (counter tracks, spans); this file frames them.
 */
#include <errno.h>
#include <string.h>

#include "util/json_write.h"
#include "report/report.h"

int export_trace_json(const struct run_info *ri, trace_events_fn events_fn, void *ctx, FILE *out)
{
	bool first = true;
	int err;

	/* Timestamps are CLOCK_MONOTONIC in microseconds, the same clock as
	 * the BPF events, so tracks from every source line up. */
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
	size_t nexited = 0;

	for (size_t i = 0; i < ri->ntargets; i++) {
		/* Named as in report.json: not each child of a fork storm. */
		if (!report_target_listed(&ri->targets[i], &nexited))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		fprintf(out,
			"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":",
			ri->targets[i].pid);
		json_write_strn(out, ri->targets[i].comm,
				strnlen(ri->targets[i].comm, sizeof(ri->targets[i].comm)));
		fputs("}}\n", out);
	}
	if (events_fn) {
		err = events_fn(ctx, out, &first);
		if (err)
			return err;
	}
	fputs("],\"otherData\":{\"exporter\":\"ebpf-prof@" EBPF_PROF_VERSION "\"}}\n", out);
	return ferror(out) ? -EIO : 0;
}
