// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Our own cost (overhead.h): the estimate from program runs x trap + run
 * time, the share from the samples in the kernel's uprobe code (or the
 * estimate when there are too few), and report.json "overhead". */
#include <string.h>

#include "check.h"
#include "overhead/overhead.h"
#include "profile/profile.h"

static void add(struct profile *p, uint32_t th, const char *const *names, int n, int kernel_from,
		int count)
{
	uint32_t f[8];

	for (int i = 0; i < n; i++)
		f[i] = (uint32_t)profile_intern_frame(p, names[i], "m", i >= kernel_from);
	for (int i = 0; i < count; i++)
		profile_add_sample(p, th, (uint64_t)i, f, (uint32_t)n, (uint32_t)(n - kernel_from),
				   true);
}

int main(void)
{
	struct overhead_prog progs[] = {
		{ "cycle_usdt", OVH_PROBE, 1000, 300000 },
		{ "probe_entry", OVH_PROBE, 500, 100000 },
		{ "on_cpu_sample", OVH_SAMPLE, 40, 80000 },
		{ "sched_switch", OVH_OTHER, 9999, 999999 },
	};
	struct overhead o = {
		.stats = true, .trap_ns = 1000, .progs = progs, .n = 4, .target_cpu_ns = 10000000
	};
	uint64_t hits, runs;
	struct profile p;

	/* 1500 traps x 1000 ns + 400000 ns of BPF. */
	CHECK(overhead_probe_ns(&o, &hits) == 1900000.0);
	CHECK_INT_EQ(hits, 1500);
	CHECK(overhead_sample_ns(&o, &runs) == 80000.0);
	CHECK_INT_EQ(runs, 40);
	/* Too few samples: the estimate over the on-CPU time, 19%. */
	CHECK(overhead_probe_share(&o) > 0.1899 && overhead_probe_share(&o) < 0.1901);
	o.target_cpu_ns = 1000000; /* an estimate above the CPU time is capped */
	CHECK(overhead_probe_share(&o) == 1.0);
	o.target_cpu_ns = 0;
	CHECK(overhead_probe_share(&o) == -1);

	/* Samples: 150 in user code, 50 through uprobe_notify_resume, 30 in a
	 * handle_swbp trap, 25 on the trap's way back (no uprobe function on
	 * the stack), 20 in other kernel code: 105 of 280. */
	CHECK_INT_EQ(profile_init(&p, 999), 0);
	int64_t th = profile_thread(&p, 1, 1, "py");
	const char *user[] = { "main", "_PyEval_EvalFrameDefault" };
	const char *ret[] = { "main", "irqentry_exit_to_user_mode", "uprobe_notify_resume",
			      "bpf_prog_x_cycle_usdt" };
	const char *trap[] = { "main", "exc_int3", "handle_swbp" };
	const char *back[] = { "main", "asm_exc_int3", "irqentry_exit_to_user_mode" };
	const char *kern[] = { "main", "do_syscall_64", "ksys_write" };
	/* A user frame named like a uprobe is not the kernel's code. */
	const char *fake[] = { "main", "my_uprobe_helper" };
	add(&p, (uint32_t)th, user, 2, 2, 150);
	add(&p, (uint32_t)th, ret, 4, 1, 50);
	add(&p, (uint32_t)th, trap, 3, 1, 30);
	add(&p, (uint32_t)th, back, 3, 1, 25);
	add(&p, (uint32_t)th, kern, 3, 1, 20);
	add(&p, (uint32_t)th, fake, 2, 2, 5);
	overhead_count_samples(&o, &p);
	CHECK_INT_EQ(o.samples_total, 280);
	CHECK_INT_EQ(o.samples_in_probes, 105);
	CHECK(overhead_probe_share(&o) > 105.0 / 280 - 1e-9 &&
	      overhead_probe_share(&o) < 105.0 / 280 + 1e-9);
	profile_free(&p);
	overhead_count_samples(&o, NULL);
	CHECK_INT_EQ(o.samples_total, 0);

	o.target_cpu_ns = 10000000;
	cJSON *root = cJSON_CreateObject();
	CHECK_INT_EQ(overhead_report_json(&o, root), 0);
	const cJSON *ov = cJSON_GetObjectItem(root, "overhead");
	CHECK(cJSON_GetObjectItem(ov, "probe_hits")->valuedouble == 1500);
	CHECK(cJSON_GetObjectItem(ov, "trap_ns")->valuedouble == 1000);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(ov, "programs")) == 4);
	CHECK(cJSON_IsNumber(cJSON_GetObjectItem(ov, "probe_share")));
	cJSON_Delete(root);
	/* Unknown trap: null, the estimate is the BPF time alone. */
	o.trap_ns = -1;
	CHECK(overhead_probe_ns(&o, NULL) == 400000.0);
	root = cJSON_CreateObject();
	CHECK_INT_EQ(overhead_report_json(&o, root), 0);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "overhead"), "trap_ns")));
	cJSON_Delete(root);
	return check_report("test_overhead");
}
