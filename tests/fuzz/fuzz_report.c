// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/report/report_cmd.c user/report/report_read.c user/util/log.c gen/report/report_html_page.c user/cycles/cycles.c user/cycles/cycle_facts.c user/util/interner.c user/cycles/cycles_json.c user/cycles/cycles_summary.c user/cycles/cycles_fromreport.c user/export/csv.c user/report/findings.c user/cycles/cycle_agg.c user/util/histogram.c user/report/output.c user/report/report_html.c user/report/html_page.c user/util/hashmap.c user/util/json_write.c
// fuzz-libs: -lcjson -lm
/* report.json as read by `ebpf-prof report DIR`: any file a user points it
 * at; report_load rebuilds cycles and findings from it. */
#include <stdint.h>

#include "report/report_cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_data d;
	char err[256];

	if (report_load("fuzz/report.json", (const char *)data, size, &d, err, sizeof(err)) == 0)
		report_data_free(&d);
	return 0;
}
