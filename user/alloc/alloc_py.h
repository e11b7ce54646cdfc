/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames of sampled allocations: the BPF side walks the CPython
 * frames where a sample's stack is taken (bpf/alloc.bpf.c, with
 * bpf/pyframes.bpf.h) and sends them as an EP_EV_PYSTACK record right
 * before the sample, in the same ring. This keeps each CPU's last record
 * until its sample comes and merges it into the sample's native stack
 * (python/pyframes.h), as for CPU samples. docs/alloc.md.
 */
#ifndef EBPF_PROF_ALLOC_PY_H
#define EBPF_PROF_ALLOC_PY_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "events/python.h"

struct profile;
struct pyframes;

struct alloc_py_slot {
	size_t size; /* 0: empty */
	struct ep_pystack ps;
};

struct alloc_py {
	struct pyframes *py;	    /* NULL: no Python frames (--python native) */
	struct alloc_py_slot *slot; /* per CPU, grown as CPUs are seen */
	size_t nslot;
	uint64_t records;     /* EP_EV_PYSTACK records received */
	uint64_t bad;	      /* ... malformed, not kept */
	uint64_t paired;      /* samples that came right after their record */
	uint64_t with_python; /* ... and got Python frames */
	uint64_t frames;      /* Python frames merged into samples */
};

void alloc_py_init(struct alloc_py *ap, struct pyframes *py);
void alloc_py_free(struct alloc_py *ap);

/* An EP_EV_PYSTACK record of size bytes: kept for its sample, the next
 * record of its CPU. 0, or -EINVAL for a malformed one (counted). */
int alloc_py_on_record(struct alloc_py *ap, const void *data, size_t size);

/* The record paired with the sample hdr (same CPU, process, thread and
 * time), or NULL; *size its bytes. The CPU's slot is emptied either way:
 * only the record right before a sample is its own. */
const struct ep_pystack *alloc_py_take(struct alloc_py *ap, const struct ep_event_hdr *hdr,
				       size_t *size);

/* Merges the Python frames of the sample hdr into its native frames
 * frames[0..*n) (root first, ids in prof), within cap entries. 0 or a
 * negative errno (*n unchanged). */
int alloc_py_merge(struct alloc_py *ap, struct profile *prof, const struct ep_event_hdr *hdr,
		   uint32_t *frames, size_t *n, size_t cap);

/* report.json memory.alloc.python: the counts above. 0 or -ENOMEM. */
int alloc_py_report(const struct alloc_py *ap, cJSON *alloc);

#endif
