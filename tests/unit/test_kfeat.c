// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kernel/kfeat: the missing-features line and the EBPF_PROF_FAULT_KFEAT
 * list (good and bad input). Probing itself needs root and a kernel: the
 * integration test test_old_kernel.sh and the arm64 VM's 5.10 run cover it. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "kernel/kfeat.h"

static void all(struct kfeat *k)
{
	for (int i = 0; i < KFEAT_COUNT; i++)
		k->have[i] = true;
	k->btf = true;
}

int main(void)
{
	struct kfeat k;
	char buf[256], tiny[12];

	all(&k);
	CHECK_STR_EQ(kfeat_missing(&k, ~0u, buf, sizeof(buf)), "");
	CHECK_INT_EQ(kfeat_hide(&k, "bpf_loop,bpf_task_storage_get"), 0);
	CHECK(!k.have[KFEAT_BPF_LOOP] && !k.have[KFEAT_TASK_STORAGE] && k.have[KFEAT_FIND_VMA]);
	CHECK_STR_EQ(kfeat_missing(&k, ~0u, buf, sizeof(buf)),
		     "bpf_task_storage_get (Linux 5.13+), bpf_loop (Linux 5.17+)");
	/* Only the features asked about. */
	CHECK_STR_EQ(kfeat_missing(&k, 1u << KFEAT_BPF_LOOP | 1u << KFEAT_FIND_VMA, buf,
				   sizeof(buf)),
		     "bpf_loop (Linux 5.17+)");
	CHECK_STR_EQ(kfeat_missing(&k, 1u << KFEAT_FIND_VMA, buf, sizeof(buf)), "");
	/* A short buffer is cut, terminated. */
	kfeat_missing(&k, ~0u, tiny, sizeof(tiny));
	CHECK(strlen(tiny) == sizeof(tiny) - 1 && !strncmp(tiny, "bpf_task_st", 11));
	/* A kernel without BTF: what needs it is named so, the rest by release. */
	k.btf = false;
	k.have[KFEAT_CURRENT_TASK_BTF] = false;
	CHECK_STR_EQ(kfeat_missing(&k, ~0u, buf, sizeof(buf)),
		     "bpf_get_current_task_btf (needs the kernel's BTF), bpf_task_storage_get "
		     "(needs the kernel's BTF), bpf_loop (Linux 5.17+)");
	CHECK_STR_EQ(kfeat_prog_kind(&k), "raw_tp");
	k.btf = true;
	CHECK_STR_EQ(kfeat_prog_kind(&k), "tp_btf");
	CHECK_STR_EQ(kfeat_name(KFEAT_ATTACH_COOKIE), "bpf_get_attach_cookie");
	CHECK_STR_EQ(kfeat_since(KFEAT_TASK_PT_REGS), "5.15");

	/* Bad lists: unknown, empty, empty items, a prefix of a name. */
	static const char *const bad[] = { "",
					   ",",
					   "bpf_loop,",
					   ",bpf_loop",
					   "bpf_loo",
					   "bpf_loopx",
					   "bpf_loop,,bpf_find_vma",
					   "BPF_LOOP",
					   "bpf_loop bpf_find_vma" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		all(&k);
		CHECK_INT_EQ(kfeat_hide(&k, bad[i]), -EINVAL);
	}
	return check_report("kfeat");
}
