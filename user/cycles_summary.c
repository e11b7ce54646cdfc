// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End-of-run cycle table and top findings on stdout. */
#include "cycles_summary.h"

static double msd(uint64_t ns)
{
	return (double)ns / 1e6;
}

void cycles_print_summary(FILE *out, const struct cycle_table *t, const struct findings *f,
			  size_t max_findings)
{
	if (t && t->n) {
		const struct cycle_row *slow = &t->rows[0];
		uint64_t total = 0;
		for (size_t i = 0; i < t->n; i++) {
			total += t->rows[i].wall_ns;
			if (t->rows[i].wall_ns > slow->wall_ns)
				slow = &t->rows[i];
		}
		fprintf(out,
			"Cycles: %zu%s  median %.1f ms  p95 %.1f ms  mean %.1f ms  slowest "
			"#%u %.1f ms\n",
			t->n, t->whole_run ? " (whole run, no cycles defined)" : "",
			msd(cycles_wall_percentile(t, 50)), msd(cycles_wall_percentile(t, 95)),
			msd(total) / (double)t->n, slow->index, msd(slow->wall_ns));
	}
	if (!f || !f->n)
		return;
	fprintf(out, "Findings (%zu):\n", f->n);
	for (size_t i = 0; i < f->n && i < max_findings; i++)
		fprintf(out, "  [%s] %s\n      %s\n      -> %s\n",
			finding_severity_name(f->v[i].severity), f->v[i].title, f->v[i].evidence,
			f->v[i].recommendation);
	if (f->n > max_findings)
		fprintf(out, "  ... %zu more in report.json / report.html\n", f->n - max_findings);
}
