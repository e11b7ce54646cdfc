// SPDX-License-Identifier: Dual BSD/GPL
/*
 * The part of /proc/kallsyms that changes within a boot: module, ftrace
 * trampoline and BPF program symbols, printed as the file prints them,
 * plus the first KSYM_SAMPLE text symbols of the core kernel ("C " lines)
 * for the collector to check its copy of the core against
 * (user/symbolize/ksym_cache.h). The core kernel's ~120k lines are not
 * printed: formatting them was most of the collector's kallsyms cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] __weak SEC("license") = "Dual BSD/GPL";

#define KSYM_SAMPLE 64

__u32 ksym_sampled;

static __always_inline bool ksym_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

SEC("iter/ksym")
int ksym_tail(struct bpf_iter__ksym *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct kallsym_iter *it = ctx->ksym;
	__u64 v;
	char t;

	if (!it)
		return 0;
	if (ctx->meta->seq_num == 0)
		ksym_sampled = 0;
	/* What /proc/kallsyms shows this reader (kernel/kallsyms.c s_show). */
	v = it->show_value ? it->value : 0;
	t = it->type;
	if (it->module_name[0]) {
		if (it->exported && t >= 'a' && t <= 'z')
			t -= 'a' - 'A';
		else if (!it->exported && t >= 'A' && t <= 'Z')
			t += 'a' - 'A';
		BPF_SEQ_PRINTF(seq, "%llx %c %s\t[%s]\n", v, t, it->name, it->module_name);
		return 0;
	}
	if (ksym_sampled < KSYM_SAMPLE && ksym_text(t)) {
		ksym_sampled++;
		BPF_SEQ_PRINTF(seq, "C %llx %c %s\n", v, t, it->name);
	}
	return 0;
}
