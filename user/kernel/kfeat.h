/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * BPF features of the running kernel that ebpf-prof's programs use and that
 * the kernels of JetPack 5 (Linux 5.10) and 6 (5.15) lack. The verifier
 * refuses a program that calls a helper the kernel does not have, so each
 * user either removes the call at load (a const volatile) or does not load
 * the program, and says so in one line (kfeat_missing_line). Probed once per
 * run by loading a trivial program per helper (libbpf_probe_bpf_helper).
 */
#ifndef EBPF_PROF_KFEAT_H
#define EBPF_PROF_KFEAT_H

#include <stdbool.h>
#include <stddef.h>

enum kfeat_id {
	KFEAT_CURRENT_TASK_BTF, /* bpf_get_current_task_btf, 5.11 */
	KFEAT_TASK_STORAGE,	/* bpf_task_storage_get from tracing programs, 5.13 */
	KFEAT_TASK_PT_REGS,	/* bpf_task_pt_regs, 5.15 */
	KFEAT_ATTACH_COOKIE,	/* bpf_get_attach_cookie (uprobes, USDT), 5.15 */
	KFEAT_BPF_LOOP,		/* bpf_loop, 5.17 */
	KFEAT_FIND_VMA,		/* bpf_find_vma, 5.17 */
	KFEAT_COUNT,
};

struct kfeat {
	bool have[KFEAT_COUNT];
	/* The kernel has its own BTF (/sys/kernel/btf/vmlinux: every kernel
	 * built with CONFIG_DEBUG_INFO_BTF since 5.5). Without it the kernel
	 * refuses tp_btf and iterator programs, task storage and the helpers
	 * taking or returning BTF-typed task pointers, whatever BTF userspace
	 * hands libbpf (--btf): the sched tracepoints are then raw_tp programs
	 * (kfeat_prog_kind), and those features are marked missing. */
	bool btf;
};

/* Fills k; a helper whose probe fails for another reason than "unknown
 * helper" (no permission, ...) counts as present, so that the load reports
 * the real error. */
void kfeat_probe(struct kfeat *k);

/* Whether the kernel has its own BTF (see struct kfeat). */
bool kfeat_kernel_btf(void);

/* "tp_btf" or "raw_tp": the kind of the tracepoint programs loaded. */
const char *kfeat_prog_kind(const struct kfeat *k);

/* Marks the features named in names (comma-separated helper names, as
 * kfeat_name gives them) missing: the test hook EBPF_PROF_FAULT_KFEAT runs a
 * recent kernel as an older one. -EINVAL for an unknown or empty name. */
int kfeat_hide(struct kfeat *k, const char *names);

/* The helper's name and the Linux release that added it ("bpf_loop",
 * "5.17"). */
const char *kfeat_name(enum kfeat_id id);
const char *kfeat_since(enum kfeat_id id);

/* "bpf_loop (Linux 5.17+), bpf_find_vma (Linux 5.17+)": the features of
 * mask (bits 1 << kfeat_id) that k lacks, in buf; "" when none. On a
 * kernel without BTF the ones that need it are named so instead
 * ("bpf_get_current_task_btf (needs the kernel's BTF)"). */
const char *kfeat_missing(const struct kfeat *k, unsigned mask, char *buf, size_t len);

#endif
