// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/diff/diff_load.c user/diff/diff_merge.c user/diff/diff_model.c user/diff/diff_paths.c user/diff/diff_stats.c user/report/report_read.c user/cycles/cycles.c user/cycles/cycle_facts.c user/util/interner.c user/cycles/cycles_json.c user/cycles/cycle_agg.c user/report/findings.c user/util/histogram.c user/util/hashmap.c user/util/json_write.c user/util/log.c
// fuzz-libs: -lcjson -lm
/* report.json as read by `ebpf-prof diff` (the reader `report` shares,
 * then the figures of the comparison): any file a user points it at. Two
 * loads of the same input are compared, as `diff DIR DIR` would, then the
 * input as two runs of one side against one (`diff DIR DIR -- DIR`). */
#include <stdint.h>

#include "diff/diff_load.h"
#include "diff/diff_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dl_run a, b;
	char err[512];

	if (dl_load_text("fuzz", (const char *)data, size, &a, err, sizeof(err)))
		return 0;
	if (!dl_load_text("fuzz", (const char *)data, size, &b, err, sizeof(err))) {
		struct dm_opts o;
		struct dm_result r;

		dm_default_opts(&o);
		if (!dl_align_keys(&a, &b) && !dm_compare(&a, &b, &o, &r))
			dm_result_free(&r);
		dl_free(&b);
	}
	dl_free(&a);

	const char *dirs[2] = { "fuzz1", "fuzz2" },
		   *texts[2] = { (const char *)data, (const char *)data };
	size_t lens[2] = { size, size };
	if (dl_load_side_text(dirs, texts, lens, 2, &a, err, sizeof(err)))
		return 0;
	if (!dl_load_text("fuzz", (const char *)data, size, &b, err, sizeof(err))) {
		struct dm_opts o;
		struct dm_result r;

		dm_default_opts(&o);
		if (!dl_align_keys(&a, &b) && !dm_compare(&a, &b, &o, &r))
			dm_result_free(&r);
		dl_free(&b);
	}
	dl_free(&a);
	return 0;
}
