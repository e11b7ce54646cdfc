// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kfeat.h"

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
	enum bpf_func_id fn;
	const char *name;
	const char *since;
} feats[KFEAT_COUNT] = {
	[KFEAT_CURRENT_TASK_BTF] = { BPF_FUNC_get_current_task_btf, "bpf_get_current_task_btf",
				     "5.11" },
	[KFEAT_TASK_STORAGE] = { BPF_FUNC_task_storage_get, "bpf_task_storage_get", "5.13" },
	[KFEAT_TASK_PT_REGS] = { BPF_FUNC_task_pt_regs, "bpf_task_pt_regs", "5.15" },
	[KFEAT_ATTACH_COOKIE] = { BPF_FUNC_get_attach_cookie, "bpf_get_attach_cookie", "5.15" },
	[KFEAT_BPF_LOOP] = { BPF_FUNC_loop, "bpf_loop", "5.17" },
	[KFEAT_FIND_VMA] = { BPF_FUNC_find_vma, "bpf_find_vma", "5.17" },
};

/* Features the kernel refuses without its own BTF: task storage maps and
 * helpers whose task argument or result is a BTF-typed pointer. */
#define KFEAT_NEED_BTF                                                 \
	((1u << KFEAT_CURRENT_TASK_BTF) | (1u << KFEAT_TASK_STORAGE) | \
	 (1u << KFEAT_TASK_PT_REGS) | (1u << KFEAT_FIND_VMA))

bool kfeat_kernel_btf(void)
{
	/* Not libbpf's other places (/boot/vmlinux-RELEASE, ...): a file there
	 * serves libbpf's relocations, as --btf does, but a kernel that does
	 * not export its BTF here was built without it (5.5+ always exports
	 * it), and the kernel's own BTF is what tp_btf programs need. */
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

const char *kfeat_prog_kind(const struct kfeat *k)
{
	return k->btf ? "tp_btf" : "raw_tp";
}

void kfeat_probe(struct kfeat *k)
{
	k->btf = kfeat_kernel_btf();
	/* Kprobe programs get the tracing helpers the tracepoint, perf_event
	 * and raw/BTF tracepoint programs get (bpf_tracing_func_proto). */
	for (int i = 0; i < KFEAT_COUNT; i++)
		k->have[i] = (k->btf || !(KFEAT_NEED_BTF & (1u << i))) &&
			     libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, feats[i].fn, NULL) != 0;
}

int kfeat_hide(struct kfeat *k, const char *names)
{
	const char *p = names;

	for (;;) {
		size_t len = strcspn(p, ",");
		int i;

		for (i = 0; i < KFEAT_COUNT; i++)
			if (len == strlen(feats[i].name) && !strncmp(p, feats[i].name, len))
				break;
		if (i == KFEAT_COUNT)
			return -EINVAL;
		k->have[i] = false;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

const char *kfeat_name(enum kfeat_id id)
{
	return feats[id].name;
}

const char *kfeat_since(enum kfeat_id id)
{
	return feats[id].since;
}

const char *kfeat_missing(const struct kfeat *k, unsigned mask, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < KFEAT_COUNT; i++) {
		int w;

		if (!(mask & (1u << i)) || k->have[i] || n >= len)
			continue;
		if (!k->btf && (KFEAT_NEED_BTF & (1u << i)))
			w = snprintf(buf + n, len - n, "%s%s (needs the kernel's BTF)",
				     n ? ", " : "", feats[i].name);
		else
			w = snprintf(buf + n, len - n, "%s%s (Linux %s+)", n ? ", " : "",
				     feats[i].name, feats[i].since);
		n = w < 0 ? len : n + (size_t)w;
	}
	return buf;
}
