// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyframes_merge_stack: the Python record of an off-CPU episode comes from
 * another ring than its CPU-sample twin and is parsed on its own. Records
 * whose frame count does not fit their size, or claims more than the walk
 * sends, are refused without touching the stack; a well-formed one of a
 * process with no known interpreter leaves it as it is. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "profile/profile.h"
#include "python/pyframes.h"

int main(void)
{
	struct profile cpu, off;
	struct pyframes *pf = NULL;
	struct pyframes_opts o = {
		.mode = PY_MODE_MIXED,
		.proc_root = "/nonexistent-proc",
		.procs_fd = -1,
		.stats_fd = -1,
		.prof = &cpu,
	};
	static struct ep_pystack ps;
	uint32_t frames[8] = { 1, 2, 3 };
	size_t n = 3;

	CHECK(profile_init(&cpu, 99) == 0);
	CHECK(profile_init(&off, 1000000) == 0);
	CHECK(pyframes_new(&pf, &o) == 0);
	ps.hdr.type = EP_EV_PYSTACK;
	ps.hdr.pid = 4242;
	ps.hdr.tid = 4242;

	/* Shorter than its header. */
	CHECK_INT_EQ(pyframes_merge_stack(pf, &off, &ps, EP_PYSTACK_HDR_SIZE - 1, frames, &n, 8),
		     -EINVAL);
	/* More frames than the walk ever sends. */
	ps.nframes = EP_PY_MAX_FRAMES + 1;
	CHECK_INT_EQ(pyframes_merge_stack(pf, &off, &ps, sizeof(ps), frames, &n, 8), -EINVAL);
	/* Three frames claimed, two sent. */
	ps.nframes = 3;
	CHECK_INT_EQ(pyframes_merge_stack(pf, &off, &ps,
					  EP_PYSTACK_HDR_SIZE + 2 * sizeof(ps.frames[0]), frames,
					  &n, 8),
		     -EINVAL);
	/* A huge count whose byte size would wrap. */
	ps.nframes = UINT32_MAX;
	CHECK_INT_EQ(pyframes_merge_stack(pf, &off, &ps, sizeof(ps), frames, &n, 8), -EINVAL);
	CHECK_INT_EQ(n, 3);
	CHECK(frames[0] == 1 && frames[1] == 2 && frames[2] == 3);

	/* Well-formed, but no interpreter registered for the pid: unchanged. */
	ps.nframes = 1;
	ps.frames[0].code = 0x1000 | EP_PY_F_ENTRY;
	CHECK_INT_EQ(pyframes_merge_stack(pf, &off, &ps, EP_PYSTACK_HDR_SIZE + sizeof(ps.frames[0]),
					  frames, &n, 8),
		     0);
	CHECK_INT_EQ(n, 3);
	CHECK(frames[0] == 1 && frames[1] == 2 && frames[2] == 3);

	pyframes_free(pf);
	profile_free(&off);
	profile_free(&cpu);
	return check_report("test_pyframes_stack");
}
