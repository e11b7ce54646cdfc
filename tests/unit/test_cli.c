// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command-line parsing: accepted forms, and every malformed one rejected
 * with exit code 2 and a message. */
#include <stdio.h>

#include "check.h"
#include "cli.h"

static int parse(struct cli_opts *o, char *const *args)
{
	char *argv[32];
	int argc = 0;
	FILE *devnull = fopen("/dev/null", "w");
	int rc;

	argv[argc++] = "ebpf-prof";
	for (; args[argc - 1]; argc++)
		argv[argc] = args[argc - 1];
	argv[argc] = NULL;
	rc = cli_parse(argc, argv, o, devnull);
	fclose(devnull);
	return rc;
}

#define ARGS(...) ((char *const[]){ __VA_ARGS__, NULL })

int main(void)
{
	struct cli_opts o;

	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1234")), 0);
	CHECK_INT_EQ(o.npids, 1);
	CHECK_INT_EQ(o.pids[0], 1234);
	CHECK_INT_EQ(o.freq_hz, 99);
	CHECK(o.kernel_stacks);
	CHECK(o.duration_s == 0);
	CHECK(o.output_dir == NULL);

	CHECK_INT_EQ(parse(&o, ARGS("-p", "1,2,3", "-F", "999", "-d", "2.5", "-o", "out/",
				    "--no-kernel", "-q")),
		     0);
	CHECK_INT_EQ(o.npids, 3);
	CHECK_INT_EQ(o.pids[2], 3);
	CHECK_INT_EQ(o.freq_hz, 999);
	CHECK_NEAR(o.duration_s, 2.5, 1e-9);
	CHECK_STR_EQ(o.output_dir, "out/");
	CHECK(!o.kernel_stacks);
	CHECK_INT_EQ(o.verbosity, -1);
	CHECK(!o.force); /* an -o directory that is not empty is refused */
	CHECK_INT_EQ(parse(&o, ARGS("-o", "out/", "--force", "--pid", "1")), 0);
	CHECK(o.force);
	CHECK_INT_EQ(parse(&o, ARGS("--force=yes", "--pid", "1")), 2);

	CHECK_INT_EQ(parse(&o, ARGS("-d", "5m", "--pid", "7")), 0);
	CHECK_NEAR(o.duration_s, 300, 1e-9);

	/* Only "-- COMMAND" launches: a mistyped subcommand, or a program named
	 * without "--", is a usage error, never a program to run. */
	CHECK_INT_EQ(parse(&o, ARGS("dif", "a", "b")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("diff", "a", "b", "--json")), 2); /* main.c dispatches it */
	CHECK_INT_EQ(parse(&o, ARGS("-F", "99", "./exp")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("top", "./exp")), 2);
	/* "--" taken as the value of -o is not the separator. */
	CHECK_INT_EQ(parse(&o, ARGS("-o", "--", "./exp")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("top", "--", "./exp")), 0);
	CHECK(o.top);
	CHECK_STR_EQ(o.command[0], "./exp");
	CHECK_INT_EQ(parse(&o, ARGS("--", "dif", "a")), 0);
	CHECK_STR_EQ(o.command[0], "dif");

	/* The command keeps its own options. */
	CHECK_INT_EQ(parse(&o, ARGS("-F", "49", "--", "./exp", "-F", "--flag")), 0);
	CHECK_INT_EQ(o.ncommand, 3);
	CHECK_STR_EQ(o.command[0], "./exp");
	CHECK_STR_EQ(o.command[1], "-F");
	CHECK_INT_EQ(o.freq_hz, 49);

	CHECK_INT_EQ(parse(&o, ARGS("-vv", "--pid", "1")), 0);
	CHECK_INT_EQ(o.verbosity, 2);
	CHECK_INT_EQ(parse(&o, ARGS("--help")), 0);
	CHECK(o.show_help);
	CHECK_INT_EQ(parse(&o, ARGS("--version")), 0);
	CHECK(o.show_version);

	CHECK_INT_EQ(o.gpu_interval_ms, 200);
	CHECK_INT_EQ(parse(&o, ARGS("--gpu-interval", "50", "--sysfs-root", "/x", "--pid", "1")),
		     0);
	CHECK_INT_EQ(o.gpu_interval_ms, 50);
	CHECK_STR_EQ(o.sysfs_root, "/x");
	CHECK_INT_EQ(parse(&o, ARGS("--no-gpu", "--pid", "1")), 0);
	CHECK(o.no_gpu);
	CHECK(!o.no_demangle);
	CHECK_INT_EQ(parse(&o, ARGS("--no-demangle", "--pid", "1")), 0);
	CHECK(o.no_demangle);
	CHECK(!o.no_sched && !o.no_offcpu_stacks);
	CHECK_INT_EQ(o.offcpu_min_us, CLI_DEFAULT_OFFCPU_MIN_US);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-min-us", "250", "--no-offcpu-stacks", "--pid", "1")),
		     0);
	CHECK_INT_EQ(o.offcpu_min_us, 250);
	CHECK(o.no_offcpu_stacks);
	CHECK_INT_EQ(parse(&o, ARGS("--no-sched", "--pid", "1")), 0);
	CHECK(o.no_sched);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-min-us", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(o.trace_max_spans, CLI_DEFAULT_TRACE_MAX_SPANS);
	CHECK_INT_EQ(parse(&o, ARGS("--trace-max-spans", "0", "--pid", "1")), 0);
	CHECK_INT_EQ(o.trace_max_spans, 0);
	CHECK_INT_EQ(parse(&o, ARGS("--trace-max-spans", "4000001", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--trace-max-spans", "-1", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-min-us", "60000001", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-min-us", "1ms", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK_INT_EQ(o.offcpu_ustack_every, CLI_DEFAULT_OFFCPU_USTACK_EVERY);
	CHECK_INT_EQ(o.stack_bytes, CLI_DEFAULT_STACK_BYTES);
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "fp", "--pid", "1")), 0);
	CHECK_INT_EQ(o.unwind, CLI_UNWIND_FP);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK_INT_EQ(o.unwind, CLI_UNWIND_KERNEL);
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "cfi-kernel", "--pid", "1")), 0);
	CHECK_INT_EQ(o.unwind, CLI_UNWIND_KERNEL);
#if defined(__x86_64__)
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "dwarf", "--pid", "1")), 0);
	CHECK_INT_EQ(o.unwind, CLI_UNWIND_DWARF);
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "auto", "--pid", "1")), 0);
	CHECK_INT_EQ(o.unwind, CLI_UNWIND_AUTO);
#else
	/* The copied window is unwound by libdw from x86_64 registers: asked
	 * for elsewhere it is a usage error, not a silent fallback. */
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "dwarf", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "auto", "--pid", "1")), 2);
#endif
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "lbr", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--unwind", "", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK_INT_EQ(o.python, CLI_PYTHON_MIXED);
	CHECK_INT_EQ(parse(&o, ARGS("--python", "only", "--pid", "1")), 0);
	CHECK_INT_EQ(o.python, CLI_PYTHON_ONLY);
	CHECK_INT_EQ(parse(&o, ARGS("--python", "native", "--pid", "1")), 0);
	CHECK_INT_EQ(o.python, CLI_PYTHON_NATIVE);
	CHECK_INT_EQ(parse(&o, ARGS("--python", "mixed", "--pid", "1")), 0);
	CHECK_INT_EQ(o.python, CLI_PYTHON_MIXED);
	CHECK_INT_EQ(parse(&o, ARGS("--python", "py-spy", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--python", "", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "4096", "--pid", "1")), 0);
	CHECK_INT_EQ(o.stack_bytes, 4096);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "16384", "--pid", "1")), 0);
	CHECK_INT_EQ(o.stack_bytes, 16384);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "64", "--pid", "1")), 0);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "100", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "16448", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "-64", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--stack-bytes", "8k", "--pid", "1")), 2);
	/* --alloc, --alloc-rate (implies --alloc), --alloc-max-live. */
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK(!o.alloc);
	CHECK_INT_EQ(o.alloc_rate, 512 * 1024);
	CHECK_INT_EQ(o.alloc_max_live, 65536);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc", "--pid", "1")), 0);
	CHECK(o.alloc);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "64K", "--pid", "1")), 0);
	CHECK(o.alloc);
	CHECK_INT_EQ(o.alloc_rate, 65536);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "1", "--pid", "1")), 0);
	CHECK_INT_EQ(o.alloc_rate, 1);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "2m", "--pid", "1")), 0);
	CHECK_INT_EQ(o.alloc_rate, 2 << 20);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "1G", "--pid", "1")), 0);
	CHECK_INT_EQ(o.alloc_rate, 1 << 30);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "2G", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "1073741825", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "-1", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "K", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "5X", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "5KB", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-rate", "99999999999999999999K", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc", "--alloc-max-live", "16", "--pid", "1")), 0);
	CHECK_INT_EQ(o.alloc_max_live, 16);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-max-live", "15", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alloc-max-live", "4194305", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-ustack-every", "1", "--pid", "1")), 0);
	CHECK_INT_EQ(o.offcpu_ustack_every, 1);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-ustack-every", "0", "--pid", "1")), 0);
	CHECK_INT_EQ(o.offcpu_ustack_every, 0);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-ustack-every", "-1", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--offcpu-ustack-every", "256", "--pid", "1")), 2);

	/* Usage errors. */
	CHECK_INT_EQ(parse(&o, ARGS("--gpu-interval", "5", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--gpu-interval", "x", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--sysfs-root", "", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-F", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-F", "100001", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-F", "-5", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-F", "9x", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-d", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-d", "nan", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-d", "-3", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-d", "3h", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "abc")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1,,2")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1,")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "0")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "5,5")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "99999999999999999999")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1", "--pid", "2")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1", "--", "ls")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("-F", "99")), 2); /* no target */
	CHECK_INT_EQ(parse(&o, ARGS("--bogus", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--pid")), 2); /* missing value */
	CHECK_INT_EQ(parse(&o, ARGS("-o", "", "--pid", "1")), 2);

	/* Probes: defaults, presets, repeated --probe, and bad values. */
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK(o.probe_presets == NULL && o.nprobe_specs == 0 && o.probe_count_only == NULL);
	CHECK_INT_EQ(parse(&o, ARGS("--probes", "sqlite", "--probe", "libfoo:bar,label=B",
				    "--probe", "usdt:/bin/x:p:n", "--probe-count-only",
				    "sqlite3_step", "--pid", "1")),
		     0);
	CHECK_STR_EQ(o.probe_presets, "sqlite");
	CHECK_INT_EQ(o.nprobe_specs, 2);
	CHECK_STR_EQ(o.probe_specs[1], "usdt:/bin/x:p:n");
	CHECK_STR_EQ(o.probe_count_only, "sqlite3_step");
	CHECK_INT_EQ(parse(&o, ARGS("--probes", "mysql", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--probes", "", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--probe", "nosymbol", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--probe", "lib:f,weird", "--pid", "1")), 2);
	/* USDT pairs: end=NAME, or pair with a known suffix; pair without one
	 * and end= on a uprobe are errors at parse time. */
	CHECK_INT_EQ(parse(&o, ARGS("--probe", "usdt:/bin/x:p:a_start,pair", "--probe",
				    "usdt:/bin/x:p:a,end=b", "--pid", "1")),
		     0);
	CHECK_INT_EQ(o.nprobe_specs, 2);
	CHECK_INT_EQ(parse(&o, ARGS("--probe", "usdt:/bin/x:p:tick,pair", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--probe", "lib:f,end=g", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--probe-count-only", "", "--pid", "1")), 2);

	/* Live view: "top" subcommand = --top; interval; alerts validated. */
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK(!o.top && o.nalerts == 0 && o.interval_s == 1.0);
	CHECK_INT_EQ(parse(&o, ARGS("--top", "--interval", "0.5", "--alert", "rss>80%", "--alert",
				    "throttled", "--alert-exec", "true", "--pid", "1")),
		     0);
	CHECK(o.top && o.nalerts == 2 && o.interval_s == 0.5);
	CHECK_STR_EQ(o.alerts[1], "throttled");
	CHECK_STR_EQ(o.alert_exec, "true");
	{
		char *argv[] = { "ebpf-prof", "top", "-F", "49", "--pid", "7", NULL };

		CHECK_INT_EQ(cli_parse(6, argv, &o, stderr), 0);
		CHECK(o.top && o.freq_hz == 49 && o.npids == 1 && o.pids[0] == 7);
	}
	CHECK_INT_EQ(parse(&o, ARGS("--alert", "rss>>1", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alert", "cpu>1", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--interval", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--alert-exec", "", "--pid", "1")), 2);

	/* --metrics: no endpoint unless asked; an address literal and port. */
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK(o.metrics_addr == NULL && !cli_live_wanted(&o));
	CHECK_INT_EQ(parse(&o, ARGS("--metrics", "127.0.0.1:9464", "--pid", "1")), 0);
	CHECK_STR_EQ(o.metrics_addr, "127.0.0.1:9464");
	CHECK(cli_live_wanted(&o));
	CHECK_INT_EQ(parse(&o, ARGS("--metrics", "localhost:9464", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--metrics", "9464", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--metrics", "127.0.0.1:0", "--pid", "1")), 2);

	/* --rotate / --keep. */
	CHECK_INT_EQ(parse(&o, ARGS("--rotate", "10", "--pid", "1")), 0);
	CHECK(o.rotate_s == 10 && o.keep == 10);
	CHECK_INT_EQ(parse(&o, ARGS("--rotate", "2", "--keep", "3", "--pid", "1")), 0);
	CHECK(o.rotate_s == 2 && o.keep == 3);
	CHECK_INT_EQ(parse(&o, ARGS("--keep", "3", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--rotate", "0.5", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--rotate", "10", "--keep", "0", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--rotate", "10", "--keep", "3x", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--rotate", "10", "--top", "--pid", "1")), 2);

	/* Cycle boundaries: one of --cycle / --cycle-every, validated. */
	CHECK_INT_EQ(parse(&o, ARGS("--pid", "1")), 0);
	CHECK(o.cycle == NULL && !o.cycle_every);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "py:run_cycle", "--pid", "1")), 0);
	CHECK_STR_EQ(o.cycle, "py:run_cycle");
	CHECK(!o.cycle_every);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle-every", "libllama:llama_tokenize", "--pid", "1")), 0);
	CHECK_STR_EQ(o.cycle, "libllama:llama_tokenize");
	CHECK(o.cycle_every);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "marker", "--pid", "1")), 0);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle-every", "usdt:/bin/x:p:n", "--pid", "1")), 0);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "usdt:/bin/x:p:n", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle-every", "marker", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "a:f", "--cycle-every", "a:g", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "a:f", "--cycle", "a:g", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "py:", "--pid", "1")), 2);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "no symbol", "--pid", "1")), 2);
	/* A bare symbol is one: looked up in every mapped file. */
	CHECK_INT_EQ(parse(&o, ARGS("--cycle-every", "llama_tokenize", "--pid", "1")), 0);
	CHECK_INT_EQ(parse(&o, ARGS("--cycle", "lib:f,count", "--pid", "1")), 2);

	return check_report("test_cli");
}
