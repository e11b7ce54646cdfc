/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `ebpf-prof report DIR`: rebuilds report.html, cycles.csv and the summary
 * from DIR/report.json, without profiling again. */
#ifndef EP_REPORT_CMD_H
#define EP_REPORT_CMD_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "cycles/cycles.h"
#include "report/findings.h"

struct report_data {
	cJSON *root; /* the whole parsed report (findings replaced) */
	struct cycle_table cycles;
	struct findings findings;
};

/* Parses and checks report.json text (outside input: any bytes) with the
 * reader `diff` uses (report_read.h); name is the file shown in messages.
 * Findings are evaluated again from the cycles with the current rules;
 * without a cycles array the saved findings are kept. Returns 0, or
 * -EINVAL with one line "NAME: FIELD: problem" in err, or -ENOMEM. */
int report_load(const char *name, const char *text, size_t len, struct report_data *out, char *err,
		size_t errlen);
void report_data_free(struct report_data *d);

int report_cmd_main(int argc, char **argv);

#endif
