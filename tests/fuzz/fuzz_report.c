// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/report_cmd.c user/log.c user/report_html_page.c user/cycles/cycles.c user/cycles/cycles_json.c user/cycles/cycles_summary.c user/cycles/cycles_fromreport.c user/export/csv.c user/findings.c user/cycles/cycle_agg.c user/histogram.c user/output.c user/report_html.c user/hashmap.c user/json_write.c
// fuzz-libs: -lcjson -lm
/* report.json as read by `ebpf-prof report DIR`: any file a user points it
 * at; report_load rebuilds cycles and findings from it. */
#include <stdint.h>

#include "report_cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_data d;
	char err[256];

	if (report_load((const char *)data, size, &d, err, sizeof(err)) == 0)
		report_data_free(&d);
	return 0;
}
