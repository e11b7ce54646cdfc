// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/ksym_part.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "kernel/skel_types.h"
#include "util/log.h"
#include "modules.skel.h"

static int setup(void *state, struct modules_bpf *skel)
{
	struct ksym_part *k = state;

	(void)skel;
	return k->want ? 1 : 0;
}

static int loaded(void *state, struct modules_bpf *skel, int err)
{
	struct ksym_part *k = state;

	if (!skel) {
		log_debug("kallsyms iterator not loaded (%s): kallsyms is read whole",
			  strerror(-err));
		return 0;
	}
	k->link = bpf_program__attach_iter(skel->progs.ksym_tail, NULL);
	if (!k->link)
		log_debug("kallsyms iterator not attached (%s): kallsyms is read whole",
			  strerror(errno));
	return 0;
}

struct bpf_part ksym_part_def(struct ksym_part *k)
{
	return (struct bpf_part){ .prefix = "ksym_", .setup = setup, .loaded = loaded, .state = k };
}

int ksym_part_link_fd(const struct ksym_part *k)
{
	return k->link ? bpf_link__fd(k->link) : -1;
}

void ksym_part_free(struct ksym_part *k)
{
	bpf_link__destroy(k->link);
	k->link = NULL;
}
