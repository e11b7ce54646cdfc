// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "top/alerts.h"
#include "export/metrics.h"
#include "cycles/cycle_spec.h"
#include "probes/probes.h"
#include "proc/proc_info.h"

void cli_usage(FILE *out)
{
	fputs("Usage: ebpf-prof [OPTIONS] --pid PID[,PID...]\n"
	      "       ebpf-prof [OPTIONS] -- COMMAND [ARGS...]\n"
	      "       ebpf-prof check [--json]   what this kernel's verifier takes, per program (run first)\n"
	      "       ebpf-prof jetson [--help]   what the Jetson module sees on this board\n"
	      "       ebpf-prof top [OPTIONS] --pid PID | -- COMMAND   live view (records too)\n"
	      "       ebpf-prof report DIR   rebuild DIR/report.html and cycles.csv from report.json\n"
	      "       ebpf-prof diff BASE_DIR NEW_DIR   regressions of NEW against BASE (--help)\n"
	      "\n"
	      "Samples CPU stacks (user and kernel) of a running process, or of a command it\n"
	      "launches, with an eBPF perf-event program, and writes a result bundle:\n"
	      "  profile.speedscope.json   open at https://www.speedscope.app (File > Open)\n"
	      "  trace.json                timeline for ui.perfetto.dev / chrome://tracing: probe\n"
	      "                            spans, RSS, CPU MHz, temperatures, Jetson GPU/power\n"
	      "  stacks.folded             flamegraph.pl / speedscope / inferno input\n"
	      "  offcpu.folded             where threads blocked, in microseconds (folded format)\n"
	      "  report.json               machine-readable summary (docs/report-schema.md)\n"
	      "  report.html               one-file report: findings, cycles, flame graph, tables\n"
	      "  cycles.csv                one row per cycle (docs/cycles.md)\n"
	      "\n"
	      "Target (one of):\n"
	      "  -p, --pid PID[,PID...]   attach to running processes (all threads, including\n"
	      "                           threads and child processes created later)\n"
	      "  -- COMMAND [ARGS...]     launch COMMAND and profile it from its first instruction,\n"
	      "                           with every process it starts (sh -c, env, launchers):\n"
	      "                           each is held at its fork, exec and dlopen until probed\n"
	      "                           (only after --: a first word that is not a subcommand\n"
	      "                           is a usage error)\n"
	      "\n"
	      "Options:\n"
	      "  -F, --freq HZ            sampling frequency per CPU (default 99; 1..100000;\n"
	      "                           above 10000 sampled at 10000, the rest counted as\n"
	      "                           lost: rate_limited)\n"
	      "  -d, --duration SECONDS   stop after SECONDS (default: until Ctrl-C, SIGTERM or\n"
	      "                           until every traced process has exited); a launched\n"
	      "                           COMMAND still running then is left running\n"
	      "  -o, --output DIR         result directory, created by the run or empty (default\n"
	      "                           ./ebpf-prof-PID-YYYYmmdd-HHMMSS, a fresh name if that\n"
	      "                           exists); it must be yours and not writable by others\n"
	      "      --force              write into an -o DIR that is not empty: files of the\n"
	      "                           same names are replaced, no other file is touched\n"
	      "      --no-kernel          drop kernel frames (user stacks only)\n"
	      "      --no-demangle        keep C++/Rust function names mangled (_ZN...) in\n"
	      "                           every output (default: demangled)\n"
	      "      --unwind MODE        user stack unwinding: cfi-kernel (default: walked in the\n"
	      "                           kernel from tables compiled from .eh_frame/.debug_frame,\n"
	      "                           frame pointers where a library has none; any depth, any\n"
	      "                           frame size, no stack copy), auto (copy --stack-bytes of\n"
	      "                           stack, CFI unwinding in the collector), dwarf (as auto,\n"
	      "                           no frame-pointer fallback), fp (frame pointers only:\n"
	      "                           wrong callers for -fomit-frame-pointer code);\n"
	      "                           docs/unwinding.md\n"
	      "      --stack-bytes N      user stack copied per sample for auto/dwarf (default 8192;\n"
	      "                           64..16384, multiple of 64); deeper stacks are cut and\n"
	      "                           marked [truncated]\n"
	      "      --python MODE        CPython processes: mixed (default: Python functions with\n"
	      "                           file:line in place of the interpreter's evaluator frame),\n"
	      "                           only (also without the interpreter's C frames between\n"
	      "                           Python frames), native (the interpreter's C frames only);\n"
	      "                           CPython 3.8-3.13, docs/python.md\n"
	      "      --gpu-interval MS    Jetson GPU/power/thermal sampling period (default 200;\n"
	      "                           10..60000); off by itself on machines that are not Jetsons\n"
	      "      --no-gpu             do not sample Jetson sysfs\n"
	      "      --sysfs-root DIR     read sysfs/procfs files under DIR (testing, chroots)\n"
	      "      --probes LIST        function-call probes: llama, sqlite, all or none\n"
	      "                           (default llama,sqlite: whatever the process has mapped,\n"
	      "                           including libraries loaded later; docs/probes.md)\n"
	      "      --probe LIB:SYMBOL[,label=NAME][,count]\n"
	      "                           time every call of SYMBOL in the mapped library LIB\n"
	      "                           (path or name prefix); ,count counts calls only\n"
	      "      --probe usdt:PATH:PROVIDER:NAME[,label=NAME][,count]\n"
	      "                           count a USDT point (repeatable, up to 32 --probe)\n"
	      "      --probe usdt:PATH:PROVIDER:BEGIN,end=END   or   ...:BEGIN,pair\n"
	      "                           time the span from point BEGIN to point END per thread\n"
	      "                           (nesting-safe); pair takes END from BEGIN's suffix:\n"
	      "                           _entry/_return, _start/_done, _begin/_end\n"
	      "      --probe-count-only SYM[,SYM...]\n"
	      "                           count these probed functions without timing them\n"
	      "                           (for calls made millions of times per second)\n"
	      "      --cycle PROBE        each call of PROBE is one experiment cycle (per-cycle\n"
	      "                           table, findings, report.html; docs/cycles.md). PROBE:\n"
	      "                           LIB:SYMBOL, SYMBOL (in any mapped file), py:NAME (a\n"
	      "                           Python function as Python names it: func,\n"
	      "                           Class.method, module.func, module:Class.method; a\n"
	      "                           hardware watchpoint on its code object, found once it\n"
	      "                           or its module is on a stack; CPython's USDT points\n"
	      "                           with --python native) or\n"
	      "                           marker (ebpf_prof_cycle_begin/end, tools/cycle_marker);\n"
	      "                           default: the marker when the target has it, else the\n"
	      "                           whole run is one cycle\n"
	      "      --cycle-every PROBE  a new cycle at each entry of PROBE (LIB:SYMBOL,\n"
	      "                           SYMBOL, py:NAME or usdt:PATH:PROVIDER:NAME)\n"
	      "      --trace-max-spans N  probe calls drawn in trace.json: the first N (default\n"
	      "                           50000, about 7 MB; 0..4000000); the rest are counted,\n"
	      "                           and marked in the file; statistics count every call\n"
	      "      --offcpu-min-us US   report off-CPU episodes (blocked at least US us) with their\n"
	      "                           stacks in offcpu.folded and the speedscope file\n"
	      "                           (default 1000)\n"
	      "      --offcpu-ustack-every N\n"
	      "                           user stacks of off-CPU episodes are walked where a long\n"
	      "                           wait is predicted (after a long wait, or at a call whose\n"
	      "                           last wait was long); N > 0 adds 1 in N other blocking\n"
	      "                           switches (default 0: none); 1: at every one (all user\n"
	      "                           stacks, ~1 us more per switch)\n"
	      "      --no-offcpu-stacks   scheduler times and counts only, no off-CPU stacks\n"
	      "      --no-sched           no scheduler accounting (on/off-CPU time, run-queue latency)\n"
	      "      --alloc              sample memory allocations (malloc, calloc, realloc, free,\n"
	      "                           memalign family in libc and jemalloc/tcmalloc/mimalloc):\n"
	      "                           alloc.folded (bytes allocated by stack), inuse.folded\n"
	      "                           (still live at the end), pprof alloc/inuse, per-cycle\n"
	      "                           bytes and leaking stacks in report.json; docs/alloc.md\n"
	      "      --alloc-rate BYTES   one allocation stack per BYTES allocated on average\n"
	      "                           (default 512K; 1..1G, suffix K, M or G)\n"
	      "      --alloc-max-live N   sampled blocks tracked until freed (default 65536;\n"
	      "                           16..4194304); more are counted as dropped\n"
	      "      --top                show the live view while recording (docs/top.md); without\n"
	      "                           a terminal, a plain-text snapshot every interval\n"
	      "      --interval SECONDS   live view refresh period (default 1; 0.1..3600)\n"
	      "      --alert EXPR         alert on rss>80%, temp>85, gpu_temp>75, cycle>1.5x,\n"
	      "                           drops>0, throttled, disk<5% (repeatable, up to 16)\n"
	      "      --alert-exec CMD     run CMD (sh -c) per alert, EP_ALERT_* in its environment\n"
	      "      --btf FILE           the kernel's BTF, for kernels built without\n"
	      "                           /sys/kernel/btf/vmlinux (docs/jetson.md: BTFHub's file\n"
	      "                           for the kernel, or pahole -J on its vmlinux)\n"
	      "      --rotate SECONDS     continuous mode: every SECONDS write interval-N.pb.gz and\n"
	      "                           interval-N.json and start a fresh profile (docs/pprof.md)\n"
	      "      --keep N             with --rotate, keep the last N intervals (default 10)\n"
	      "      --metrics ADDR:PORT  serve Prometheus/OpenMetrics text at http://ADDR:PORT/metrics\n"
	      "                           while recording, on that address only (e.g. 127.0.0.1:9464;\n"
	      "                           docs/metrics.md)\n"
	      "  -q, --quiet              print nothing but errors\n"
	      "  -v, --verbose            more detail, libbpf warnings and the verifier log on a\n"
	      "                           load failure; -vv adds debug messages\n"
	      "  -V, --version            print the version\n"
	      "  -h, --help               this text\n"
	      "\n"
	      "Examples:\n"
	      "  sudo ebpf-prof --pid 1234 -F 99 -d 30 -o out/\n"
	      "  sudo ebpf-prof -F 999 -o out/ -- ./my-experiment --flag\n"
	      "  sudo ebpf-prof --pid $(pgrep -d, -f llama-server) -d 60\n"
	      "\n"
	      "Exit status: 0 ok, 1 runtime error, 2 usage error. In launch mode the command's\n"
	      "own exit status is in the summary and in report.json (target.exit_status).\n"
	      "Needs root (or CAP_BPF + CAP_PERFMON) and a kernel >= 5.8 with BTF.\n",
	      out);
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* A byte count with an optional binary suffix (K, M, G), 1..max. */
static int parse_bytes(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30;
	if (mul > 1)
		end++;
	if (*end || !v || v > max / mul)
		return -EINVAL;
	*out = (uint32_t)(v * mul);
	return 0;
}

static int parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v <= 0 || v > 31 * 24 * 3600.0)
		return -EINVAL;
	if (*end == 's' && end[1] == '\0')
		end++;
	else if (*end == 'm' && end[1] == '\0') {
		v *= 60;
		end++;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse(int argc, char **argv, struct cli_opts *o, FILE *err)
{
	enum {
		OPT_NO_KERNEL = 256,
		OPT_PROC_ROOT,
		OPT_GPU_INTERVAL,
		OPT_NO_GPU,
		OPT_BTF,
		OPT_SYSFS_ROOT,
		OPT_NO_SCHED,
		OPT_NO_OFFCPU_STACKS,
		OPT_OFFCPU_MIN_US,
		OPT_OFFCPU_USTACK_EVERY,
		OPT_PROBES,
		OPT_PROBE,
		OPT_PROBE_COUNT_ONLY,
		OPT_TOP,
		OPT_INTERVAL,
		OPT_ALERT,
		OPT_ALERT_EXEC,
		OPT_UNWIND,
		OPT_STACK_BYTES,
		OPT_PYTHON,
		OPT_CYCLE,
		OPT_CYCLE_EVERY,
		OPT_METRICS,
		OPT_ROTATE,
		OPT_KEEP,
		OPT_NO_DEMANGLE,
		OPT_ALLOC,
		OPT_ALLOC_RATE,
		OPT_ALLOC_MAX_LIVE,
		OPT_TRACE_MAX_SPANS,
		OPT_FORCE
	};
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },
		{ "gpu-interval", required_argument, NULL, OPT_GPU_INTERVAL },
		{ "no-gpu", no_argument, NULL, OPT_NO_GPU },
		{ "btf", required_argument, NULL, OPT_BTF },
		{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
		{ "no-sched", no_argument, NULL, OPT_NO_SCHED },
		{ "no-offcpu-stacks", no_argument, NULL, OPT_NO_OFFCPU_STACKS },
		{ "offcpu-min-us", required_argument, NULL, OPT_OFFCPU_MIN_US },
		{ "offcpu-ustack-every", required_argument, NULL, OPT_OFFCPU_USTACK_EVERY },
		{ "probes", required_argument, NULL, OPT_PROBES },
		{ "probe", required_argument, NULL, OPT_PROBE },
		{ "probe-count-only", required_argument, NULL, OPT_PROBE_COUNT_ONLY },
		{ "top", no_argument, NULL, OPT_TOP },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "alert", required_argument, NULL, OPT_ALERT },
		{ "alert-exec", required_argument, NULL, OPT_ALERT_EXEC },
		{ "cycle", required_argument, NULL, OPT_CYCLE },
		{ "cycle-every", required_argument, NULL, OPT_CYCLE_EVERY },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "rotate", required_argument, NULL, OPT_ROTATE },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "alloc", no_argument, NULL, OPT_ALLOC },
		{ "alloc-rate", required_argument, NULL, OPT_ALLOC_RATE },
		{ "alloc-max-live", required_argument, NULL, OPT_ALLOC_MAX_LIVE },
		{ "trace-max-spans", required_argument, NULL, OPT_TRACE_MAX_SPANS },
		{ NULL, 0, NULL, 0 },
	};
	int c, n, prev_optind = 1;
	bool subcommand = false;

	memset(o, 0, sizeof(*o));
	o->freq_hz = CLI_DEFAULT_FREQ;
	o->kernel_stacks = true;
	o->unwind = CLI_UNWIND_KERNEL;
	o->stack_bytes = CLI_DEFAULT_STACK_BYTES;
	o->alloc_rate = CLI_DEFAULT_ALLOC_RATE;
	o->alloc_max_live = CLI_DEFAULT_ALLOC_MAX_LIVE;
	o->python = CLI_PYTHON_MIXED;
	o->proc_root = "/proc";
	o->sysfs_root = "/";
	o->gpu_interval_ms = CLI_DEFAULT_GPU_INTERVAL_MS;
	o->offcpu_min_us = CLI_DEFAULT_OFFCPU_MIN_US;
	o->trace_max_spans = CLI_DEFAULT_TRACE_MAX_SPANS;
	o->offcpu_ustack_every = CLI_DEFAULT_OFFCPU_USTACK_EVERY;
	o->interval_s = 1.0;
	/* "ebpf-prof top ARGS" is "ebpf-prof --top ARGS". */
	if (argc > 1 && !strcmp(argv[1], "top")) {
		o->top = true;
		subcommand = true;
		argc--;
		argv++;
	}
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, so that a stray word is caught
	 * below instead of its following options being parsed as ours. */
	while ((c = getopt_long(argc, argv, "+:p:F:d:o:qvVh", longopts, NULL)) != -1) {
		prev_optind = optind;
		switch (c) {
		case 'p':
			if (o->npids) {
				fprintf(err, "ebpf-prof: --pid given twice; use --pid A,B\n");
				return 2;
			}
			n = proc_parse_pid_list(optarg, o->pids, CLI_MAX_PIDS);
			if (n < 0) {
				fprintf(err,
					"ebpf-prof: invalid --pid '%s': expected PID[,PID...] "
					"(decimal, no duplicates, at most %d)\n",
					optarg, CLI_MAX_PIDS);
				return 2;
			}
			o->npids = n;
			break;
		case 'F':
			if (parse_u32(optarg, 1, CLI_MAX_FREQ, &o->freq_hz)) {
				fprintf(err, "ebpf-prof: invalid -F '%s': expected 1..%d Hz\n",
					optarg, CLI_MAX_FREQ);
				return 2;
			}
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration_s)) {
				fprintf(err,
					"ebpf-prof: invalid -d '%s': expected seconds > 0 "
					"(e.g. 30, 2.5, 10s, 5m)\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			if (!*optarg) {
				fprintf(err, "ebpf-prof: -o needs a directory\n");
				return 2;
			}
			o->output_dir = optarg;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_NO_KERNEL:
			o->kernel_stacks = false;
			break;
		case OPT_UNWIND:
			o->unwind_given = true;
			if (!strcmp(optarg, "auto")) {
				o->unwind = CLI_UNWIND_AUTO;
			} else if (!strcmp(optarg, "dwarf")) {
				o->unwind = CLI_UNWIND_DWARF;
			} else if (!strcmp(optarg, "fp")) {
				o->unwind = CLI_UNWIND_FP;
			} else if (!strcmp(optarg, "cfi-kernel")) {
				o->unwind = CLI_UNWIND_KERNEL;
			} else {
				fprintf(err,
					"ebpf-prof: invalid --unwind '%s': expected cfi-kernel, auto, "
					"dwarf or fp\n",
					optarg);
				return 2;
			}
#if !defined(__x86_64__)
			/* The copied window is unwound by libdw from x86_64's
			 * registers; the in-kernel walker knows arm64's. */
			if (o->unwind == CLI_UNWIND_AUTO || o->unwind == CLI_UNWIND_DWARF) {
				fprintf(err,
					"ebpf-prof: --unwind %s: the copied-window unwinder is "
					"x86_64-only; use --unwind cfi-kernel (the default) or fp\n",
					optarg);
				return 2;
			}
#endif
			break;
		case OPT_PYTHON:
			o->python_given = true;
			if (!strcmp(optarg, "mixed")) {
				o->python = CLI_PYTHON_MIXED;
			} else if (!strcmp(optarg, "only")) {
				o->python = CLI_PYTHON_ONLY;
			} else if (!strcmp(optarg, "native")) {
				o->python = CLI_PYTHON_NATIVE;
			} else {
				fprintf(err,
					"ebpf-prof: invalid --python '%s': expected mixed, only or "
					"native\n",
					optarg);
				return 2;
			}
			break;
		case OPT_ALLOC:
			o->alloc = true;
			break;
		case OPT_ALLOC_RATE:
			if (parse_bytes(optarg, CLI_MAX_ALLOC_RATE, &o->alloc_rate)) {
				fprintf(err,
					"ebpf-prof: invalid --alloc-rate '%s': expected 1..1G bytes "
					"(suffix K, M or G)\n",
					optarg);
				return 2;
			}
			o->alloc = true;
			break;
		case OPT_ALLOC_MAX_LIVE:
			if (parse_u32(optarg, 16, 4u << 20, &o->alloc_max_live)) {
				fprintf(err,
					"ebpf-prof: invalid --alloc-max-live '%s': expected "
					"16..4194304\n",
					optarg);
				return 2;
			}
			break;
		case OPT_STACK_BYTES:
			if (parse_u32(optarg, 64, CLI_MAX_STACK_BYTES, &o->stack_bytes) ||
			    o->stack_bytes % 64) {
				fprintf(err,
					"ebpf-prof: invalid --stack-bytes '%s': expected 64..%d, a "
					"multiple of 64\n",
					optarg, CLI_MAX_STACK_BYTES);
				return 2;
			}
			break;
		case 'q':
			o->verbosity = -1;
			break;
		case 'v':
			if (o->verbosity >= 0)
				o->verbosity++;
			break;
		case 'V':
			o->show_version = true;
			break;
		case 'h':
			o->show_help = true;
			break;
		case OPT_PROC_ROOT:
			o->proc_root = optarg;
			break;
		case OPT_GPU_INTERVAL:
			if (parse_u32(optarg, 10, 60000, &o->gpu_interval_ms)) {
				fprintf(err,
					"ebpf-prof: invalid --gpu-interval '%s': expected 10..60000 ms\n",
					optarg);
				return 2;
			}
			break;
		case OPT_NO_GPU:
			o->no_gpu = true;
			break;
		case OPT_BTF:
			if (access(optarg, R_OK)) {
				fprintf(err, "ebpf-prof: --btf %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			o->btf_path = optarg;
			break;
		case OPT_NO_DEMANGLE:
			o->no_demangle = true;
			break;
		case OPT_NO_SCHED:
			o->no_sched = true;
			break;
		case OPT_NO_OFFCPU_STACKS:
			o->no_offcpu_stacks = true;
			break;
		case OPT_TRACE_MAX_SPANS:
			if (parse_u32(optarg, 0, CLI_MAX_TRACE_MAX_SPANS, &o->trace_max_spans)) {
				fprintf(err,
					"ebpf-prof: invalid --trace-max-spans '%s': expected 0..%d\n",
					optarg, CLI_MAX_TRACE_MAX_SPANS);
				return 2;
			}
			break;
		case OPT_OFFCPU_MIN_US:
			if (parse_u32(optarg, 1, CLI_MAX_OFFCPU_MIN_US, &o->offcpu_min_us)) {
				fprintf(err,
					"ebpf-prof: invalid --offcpu-min-us '%s': expected 1..%d us\n",
					optarg, CLI_MAX_OFFCPU_MIN_US);
				return 2;
			}
			break;
		case OPT_OFFCPU_USTACK_EVERY:
			if (parse_u32(optarg, 0, 255, &o->offcpu_ustack_every)) {
				fprintf(err,
					"ebpf-prof: invalid --offcpu-ustack-every '%s': expected 0..255\n",
					optarg);
				return 2;
			}
			break;
		case OPT_PROBES: {
			uint32_t mask;

			if (probe_parse_presets(optarg, &mask)) {
				fprintf(err,
					"ebpf-prof: invalid --probes '%s': expected none, all, or a "
					"list of llama,sqlite\n",
					optarg);
				return 2;
			}
			o->probe_presets = optarg;
			break;
		}
		case OPT_PROBE: {
			struct probe_def def;
			char why[256];

			if (o->nprobe_specs == CLI_MAX_PROBES) {
				fprintf(err, "ebpf-prof: at most %d --probe options\n",
					CLI_MAX_PROBES);
				return 2;
			}
			if (probe_parse_spec(optarg, &def, why, sizeof(why))) {
				fprintf(err, "ebpf-prof: invalid --probe %s\n", why);
				return 2;
			}
			free(def.owned);
			o->probe_specs[o->nprobe_specs++] = optarg;
			break;
		}
		case OPT_PROBE_COUNT_ONLY:
			if (!*optarg) {
				fprintf(err,
					"ebpf-prof: --probe-count-only needs SYMBOL[,SYMBOL...]\n");
				return 2;
			}
			o->probe_count_only = optarg;
			break;
		case OPT_SYSFS_ROOT:
			if (!*optarg) {
				fprintf(err, "ebpf-prof: --sysfs-root needs a directory\n");
				return 2;
			}
			o->sysfs_root = optarg;
			break;
		case OPT_TOP:
			o->top = true;
			break;
		case OPT_INTERVAL:
			if (parse_duration(optarg, &o->interval_s) || o->interval_s < 0.1 ||
			    o->interval_s > 3600) {
				fprintf(err, "ebpf-prof: bad --interval '%s' (0.1..3600 seconds)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_ALERT: {
			struct alert_rule ar;
			char why[128];

			if (o->nalerts >= CLI_MAX_ALERTS) {
				fprintf(err, "ebpf-prof: too many --alert (at most %d)\n",
					CLI_MAX_ALERTS);
				return 2;
			}
			if (alert_parse(optarg, &ar, why, sizeof(why))) {
				fprintf(err, "ebpf-prof: bad --alert '%s': %s\n", optarg, why);
				return 2;
			}
			o->alerts[o->nalerts++] = optarg;
			break;
		}
		case OPT_ROTATE:
			if (parse_duration(optarg, &o->rotate_s) || o->rotate_s < 1 ||
			    o->rotate_s > 86400) {
				fprintf(err, "ebpf-prof: bad --rotate '%s' (1..86400 seconds)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_KEEP: {
			char *end;
			long k;

			errno = 0;
			k = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || k < 1 || k > 100000) {
				fprintf(err, "ebpf-prof: bad --keep '%s' (1..100000)\n", optarg);
				return 2;
			}
			o->keep = (int)k;
			break;
		}
		case OPT_METRICS: {
			struct sockaddr_storage ss;
			socklen_t sl;
			bool lo;
			char why[128];

			if (metrics_parse_addr(optarg, &ss, &sl, &lo, why, sizeof(why))) {
				fprintf(err, "ebpf-prof: bad --metrics '%s': %s\n", optarg, why);
				return 2;
			}
			o->metrics_addr = optarg;
			break;
		}
		case OPT_ALERT_EXEC:
			if (!*optarg) {
				fprintf(err, "ebpf-prof: --alert-exec needs a command\n");
				return 2;
			}
			o->alert_exec = optarg;
			break;
		case OPT_CYCLE:
		case OPT_CYCLE_EVERY: {
			struct cycle_spec cs;
			char why[256];

			if (o->cycle) {
				fprintf(err, "ebpf-prof: give one --cycle or --cycle-every\n");
				return 2;
			}
			if (cycle_spec_parse(optarg, c == OPT_CYCLE_EVERY, &cs, why, sizeof(why))) {
				fprintf(err, "ebpf-prof: invalid %s\n", why);
				return 2;
			}
			cycle_spec_free(&cs);
			o->cycle = optarg;
			o->cycle_every = c == OPT_CYCLE_EVERY;
			break;
		}
		case ':':
			fprintf(err, "ebpf-prof: option '%s' needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(err, "ebpf-prof: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (o->show_help || o->show_version)
		return 0;
	/* Only "-- COMMAND" launches: a word where a subcommand or an option
	 * is expected (a mistyped "ebpf-prof dif A B") must not run a program
	 * of that name as root. getopt stepped over a "--" iff optind moved
	 * past its last stop without an option. */
	if (optind < argc && !(optind == prev_optind + 1 && !strcmp(argv[optind - 1], "--"))) {
		if (optind == 1 && !subcommand)
			fprintf(err,
				"ebpf-prof: '%s' is not a command (commands: top, report, diff, "
				"jetson); to profile a program: ebpf-prof [OPTIONS] -- %s ...\n",
				argv[optind], argv[optind]);
		else
			fprintf(err,
				"ebpf-prof: unexpected '%s': the command to launch goes after --, "
				"e.g. ebpf-prof [OPTIONS] -- %s ...\n",
				argv[optind], argv[optind]);
		return 2;
	}
	if (optind < argc) {
		o->command = &argv[optind];
		o->ncommand = argc - optind;
	}
	if (o->npids && o->ncommand) {
		fprintf(err, "ebpf-prof: give either --pid or a command after --, not both\n");
		return 2;
	}
	if (!o->npids && !o->ncommand) {
		fprintf(err, "ebpf-prof: nothing to profile: give --pid PID or -- COMMAND "
			     "(see --help)\n");
		return 2;
	}
	if (o->keep && !o->rotate_s) {
		fprintf(err, "ebpf-prof: --keep goes with --rotate\n");
		return 2;
	}
	/* The live view keeps per-stack state of the one growing profile;
	 * rotation starts a fresh one. */
	if (o->rotate_s && o->top) {
		fprintf(err,
			"ebpf-prof: --rotate and the live view (--top) do not go together yet\n");
		return 2;
	}
	if (o->rotate_s && !o->keep)
		o->keep = 10;
	return 0;
}
