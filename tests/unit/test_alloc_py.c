// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Python-frame records of sampled allocations (alloc/alloc_py.h):
 * pairing with the sample right after them, and records from the ring that
 * are malformed (too short, more frames than they carry, a CPU number not
 * believed) counted and not kept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc_py.h"
#include "check.h"

static struct ep_pystack *rec(uint32_t cpu, uint32_t tid, uint64_t ts, uint32_t nframes)
{
	static struct ep_pystack ps;

	memset(&ps, 0, sizeof(ps));
	ps.hdr.type = EP_EV_PYSTACK;
	ps.hdr.cpu = cpu;
	ps.hdr.pid = 100;
	ps.hdr.tid = tid;
	ps.hdr.ts_ns = ts;
	ps.nframes = nframes;
	for (uint32_t i = 0; i < nframes && i < EP_PY_MAX_FRAMES; i++)
		ps.frames[i].code = 0x1000 + 16 * i;
	return &ps;
}

static size_t size_of(uint32_t n)
{
	return EP_PYSTACK_HDR_SIZE + n * sizeof(struct ep_py_frame);
}

static void test_pairing(void)
{
	struct alloc_py ap;
	struct ep_event_hdr h = { .cpu = 3, .pid = 100, .tid = 7, .ts_ns = 55 };
	const struct ep_pystack *got;
	size_t size = 0;

	alloc_py_init(&ap, NULL);
	CHECK(alloc_py_take(&ap, &h, &size) == NULL); /* nothing yet, no slots */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(3, 7, 55, 4), size_of(4)), 0);
	got = alloc_py_take(&ap, &h, &size);
	CHECK(got != NULL);
	CHECK(got && got->nframes == 4 && got->frames[3].code == 0x1030);
	CHECK_INT_EQ((long long)size, (long long)size_of(4));
	/* Taken once: the slot is empty after. */
	CHECK(alloc_py_take(&ap, &h, &size) == NULL);
	/* Another thread's, or an older record of the same thread: not this
	 * sample's, and gone once a sample of its CPU came. */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(3, 8, 55, 2), size_of(2)), 0);
	CHECK(alloc_py_take(&ap, &h, &size) == NULL);
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(3, 7, 54, 2), size_of(2)), 0);
	CHECK(alloc_py_take(&ap, &h, &size) == NULL);
	h.ts_ns = 54;
	CHECK(alloc_py_take(&ap, &h, &size) == NULL);
	/* Another CPU's slot is its own. */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(0, 7, 54, 1), size_of(1)), 0);
	h.cpu = 1;
	CHECK(alloc_py_take(&ap, &h, &size) == NULL);
	h.cpu = 0;
	CHECK(alloc_py_take(&ap, &h, &size) != NULL);
	/* Without pyframes (--python native) a paired sample keeps its frames. */
	uint32_t frames[4] = { 1, 2, 3, 0 };
	size_t n = 3;

	h.cpu = 2;
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(2, 7, 54, 3), size_of(3)), 0);
	CHECK_INT_EQ(alloc_py_merge(&ap, NULL, &h, frames, &n, 4), 0);
	CHECK_INT_EQ((long long)n, 3);
	CHECK_INT_EQ((long long)ap.paired, 1);
	CHECK_INT_EQ((long long)ap.with_python, 0);
	CHECK_INT_EQ((long long)ap.records, 5);
	CHECK_INT_EQ((long long)ap.bad, 0);
	alloc_py_free(&ap);
}

static void test_bad_records(void)
{
	struct alloc_py ap;
	struct ep_pystack *ps;
	cJSON *root, *py;

	alloc_py_init(&ap, NULL);
	/* Shorter than its header. */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(0, 1, 1, 0), EP_PYSTACK_HDR_SIZE - 1), -EINVAL);
	/* More frames than it carries. */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(0, 1, 1, 5), size_of(4)), -EINVAL);
	/* More frames than a walk sends. */
	ps = rec(0, 1, 1, 0);
	ps->nframes = EP_PY_MAX_FRAMES + 1;
	CHECK_INT_EQ(alloc_py_on_record(&ap, ps, sizeof(*ps)), -EINVAL);
	/* Larger than a record can be. */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(0, 1, 1, 1), sizeof(*ps) + 8), -EINVAL);
	/* A CPU number not believed: no slot array of that size. */
	CHECK_INT_EQ(alloc_py_on_record(&ap, rec(1u << 30, 1, 1, 1), size_of(1)), -EINVAL);
	CHECK(ap.nslot == 0);
	/* Not a Python record. */
	ps = rec(0, 1, 1, 1);
	ps->hdr.type = EP_EV_PYSTACK + 1;
	CHECK_INT_EQ(alloc_py_on_record(&ap, ps, size_of(1)), -EINVAL);
	CHECK_INT_EQ((long long)ap.records, 6);
	CHECK_INT_EQ((long long)ap.bad, 6);
	/* The counts in report.json. */
	root = cJSON_CreateObject();
	CHECK_INT_EQ(alloc_py_report(&ap, root), 0);
	py = cJSON_GetObjectItemCaseSensitive(root, "python");
	CHECK(py && cJSON_GetObjectItemCaseSensitive(py, "walks_bad") &&
	      cJSON_GetObjectItemCaseSensitive(py, "walks_bad")->valuedouble == 6);
	cJSON_Delete(root);
	alloc_py_free(&ap);
}

int main(void)
{
	test_pairing();
	test_bad_records();
	return check_report("test_alloc_py");
}
