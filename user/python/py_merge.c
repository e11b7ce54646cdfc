// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_merge.h"

size_t py_merge(const uint32_t *nat, const uint8_t *cls, size_t nnat, const uint32_t *py,
		const bool *entry, size_t npy, bool only, uint32_t *out)
{
	size_t ngroups = 0, nevals = 0, n = 0, first = 0, last = 0;
	size_t skip_groups, skip_evals, ev = 0, pi = 0;
	bool first_run = true;

	for (size_t i = 0; i < npy; i++)
		if (i == 0 || entry[i])
			ngroups++;
	for (size_t i = 0; i < nnat; i++)
		if (cls[i] == PY_N_EVAL)
			nevals++;
	if (!npy || !nevals) {
		/* No evaluator frame to anchor the Python frames (the native
		 * walk stopped short of it): they go first, as the callers. */
		for (size_t i = 0; i < npy; i++)
			out[n++] = py[i];
		for (size_t i = 0; i < nnat; i++)
			out[n++] = nat[i];
		return n;
	}
	skip_groups = ngroups > nevals ? ngroups - nevals : 0;
	skip_evals = nevals > ngroups ? nevals - ngroups : 0;
	/* The native span the Python frames cover: from the first paired
	 * evaluator frame to the last one. */
	for (size_t i = 0, k = 0; i < nnat; i++) {
		if (cls[i] != PY_N_EVAL)
			continue;
		if (k == skip_evals)
			first = i;
		last = i;
		k++;
	}
	for (size_t i = 0; i < nnat; i++) {
		if (cls[i] != PY_N_EVAL || ev++ < skip_evals) {
			if (!(only && i > first && i < last && cls[i] != PY_N_OTHER))
				out[n++] = nat[i];
			continue;
		}
		/* This evaluator frame runs one run of Python frames; the first
		 * also takes the runs left over at the root. */
		size_t runs = first_run ? skip_groups + 1 : 1;

		first_run = false;
		for (size_t k = 0; k < runs && pi < npy; k++) {
			do
				out[n++] = py[pi++];
			while (pi < npy && !entry[pi]);
		}
	}
	return n;
}
