// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Python frames of sampled allocations (alloc_py.h). */
#include "alloc/alloc_py.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "python/pyframes.h"

/* Records keep their CPU's slot; a CPU number past this is not believed. */
#define ALLOC_PY_MAX_CPUS 4096

void alloc_py_init(struct alloc_py *ap, struct pyframes *py)
{
	memset(ap, 0, sizeof(*ap));
	ap->py = py;
}

void alloc_py_free(struct alloc_py *ap)
{
	free(ap->slot);
	ap->slot = NULL;
	ap->nslot = 0;
}

int alloc_py_on_record(struct alloc_py *ap, const void *data, size_t size)
{
	const struct ep_pystack *ps = data;
	struct alloc_py_slot *s;

	ap->records++;
	if (size < EP_PYSTACK_HDR_SIZE || size > sizeof(*ps) || ps->hdr.type != EP_EV_PYSTACK ||
	    ps->nframes > EP_PY_MAX_FRAMES ||
	    EP_PYSTACK_HDR_SIZE + ps->nframes * sizeof(ps->frames[0]) > size ||
	    ps->hdr.cpu >= ALLOC_PY_MAX_CPUS) {
		ap->bad++;
		return -EINVAL;
	}
	if (ps->hdr.cpu >= ap->nslot) {
		size_t want = (size_t)ps->hdr.cpu + 1;
		void *p = realloc(ap->slot, want * sizeof(*ap->slot));

		if (!p)
			return -ENOMEM;
		ap->slot = p;
		memset(ap->slot + ap->nslot, 0, (want - ap->nslot) * sizeof(*ap->slot));
		ap->nslot = want;
	}
	s = &ap->slot[ps->hdr.cpu];
	memcpy(&s->ps, ps, size);
	s->size = size;
	return 0;
}

const struct ep_pystack *alloc_py_take(struct alloc_py *ap, const struct ep_event_hdr *hdr,
				       size_t *size)
{
	struct alloc_py_slot *s;

	if (hdr->cpu >= ap->nslot || !ap->slot[hdr->cpu].size)
		return NULL;
	s = &ap->slot[hdr->cpu];
	*size = s->size;
	s->size = 0;
	if (s->ps.hdr.tid != hdr->tid || s->ps.hdr.pid != hdr->pid || s->ps.hdr.ts_ns != hdr->ts_ns)
		return NULL;
	return &s->ps;
}

int alloc_py_merge(struct alloc_py *ap, struct profile *prof, const struct ep_event_hdr *hdr,
		   uint32_t *frames, size_t *n, size_t cap)
{
	const struct ep_pystack *ps;
	size_t size = 0;
	int got;

	ps = alloc_py_take(ap, hdr, &size);
	if (!ps)
		return 0;
	ap->paired++;
	if (!ap->py)
		return 0;
	got = pyframes_merge_walk(ap->py, prof, ps, size, frames, n, cap);
	if (got <= 0)
		return got;
	ap->with_python++;
	ap->frames += (uint64_t)got;
	return 0;
}

int alloc_py_report(const struct alloc_py *ap, cJSON *alloc)
{
	cJSON *o = cJSON_AddObjectToObject(alloc, "python");

	if (!o || !cJSON_AddNumberToObject(o, "walks", (double)ap->records) ||
	    !cJSON_AddNumberToObject(o, "walks_bad", (double)ap->bad) ||
	    !cJSON_AddNumberToObject(o, "samples_walked", (double)ap->paired) ||
	    !cJSON_AddNumberToObject(o, "samples_with_python", (double)ap->with_python) ||
	    !cJSON_AddNumberToObject(o, "frames", (double)ap->frames))
		return -ENOMEM;
	return 0;
}
