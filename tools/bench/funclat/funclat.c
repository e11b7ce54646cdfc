// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * funclat PID BINARY FUNCTION OBJ: loads funclat.bpf.o (OBJ), attaches its
 * entry/return programs to FUNCTION in BINARY for PID, prints "Attached", and on SIGINT/SIGTERM prints the number of calls
 * timed. Bench-only reference for tools/bench/probe_overhead.sh.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *pe, *pr;
	struct bpf_link *le, *lr;
	struct bpf_map *bss;
	sigset_t set;
	int sig, pid;
	unsigned long long total = 0, hist[64];
	__u32 zero = 0;

	if (argc != 5)
		return 2;
	pid = atoi(argv[1]);
	obj = bpf_object__open_file(argv[4], NULL);
	if (!obj)
		return 1;
	bss = bpf_object__find_map_by_name(obj, ".rodata");
	if (bss) {
		__u32 tgid = (__u32)pid;

		bpf_map__set_initial_value(bss, &tgid, sizeof(tgid));
	}
	if (bpf_object__load(obj))
		return 1;
	pe = bpf_object__find_program_by_name(obj, "fl_entry");
	pr = bpf_object__find_program_by_name(obj, "fl_return");
	{
		LIBBPF_OPTS(bpf_uprobe_opts, oe, .func_name = argv[3]);
		LIBBPF_OPTS(bpf_uprobe_opts, or, .func_name = argv[3], .retprobe = true);

		le = bpf_program__attach_uprobe_opts(pe, pid, argv[2], 0, &oe);
		lr = bpf_program__attach_uprobe_opts(pr, pid, argv[2], 0, & or);
	}
	if (!le || !lr) {
		fprintf(stderr, "attach failed\n");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("Attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	bss = bpf_object__find_map_by_name(obj, ".bss");
	if (bss && !bpf_map_lookup_elem(bpf_map__fd(bss), &zero, hist))
		for (int i = 0; i < 64; i++)
			total += hist[i];
	printf("calls %llu\n", total);
	bpf_link__destroy(le);
	bpf_link__destroy(lr);
	bpf_object__close(obj);
	return 0;
}
