#!/bin/bash
# Per-call cost of ebpf-prof probes and the span rate they sustain.
#
#   sudo tools/bench/probe_overhead.sh [BUILD_DIR] [CALLS] [RUNS]
#
# Runs tools/bench/probe_bench.c (a loop calling a trivial function) bare,
# under a count-only probe (entry uprobe + per-CPU counter: the "bare
# counting uprobe" baseline), and under a latency probe (entry + return +
# one span event per call), RUNS interleaved rounds, and prints the median
# ns per call and the added cost. Then 2 threads under the latency probe for the
# sustained span rate, with the drop counters from report.json.
#
# The same rounds also time reference tools on the same function:
# tools/bench/funclat (libbpf-tools funclatency's per-call work, written for
# this bench: a per-thread start-time hash and a log2 histogram, no event
# sent; libbpf-tools itself is not packaged in Debian 12), a bpftrace
# funclatency equivalent (entry time in a per-tid map, log2
# histogram at return: funclatency's algorithm) and a bpftrace counting
# uprobe (EXTRA_MODES, default "funclat bpftrace bpftrace_count"; "" for
# none). EXTRA_MODES="funclatency ..." adds BCC's funclatency-bpfcc, which
# needs the running kernel's headers
# to compile its program (/lib/modules/$(uname -r)/build or CONFIG_IKHEADERS);
# the tools are installed with apt-get if missing (bench only, never in CI).
# On this machine's kernel (no headers) BCC cannot compile, so it is off.
#
# The target is built with frame pointers so bench_fn starts with
# "push %rbp", which the kernel emulates; a first instruction it cannot
# emulate (e.g. a RIP-relative load) is single-stepped out of line and
# costs several times more (docs/probes.md).
set -euo pipefail
BUILD=${1:-build}
CALLS=${2:-2000000}
RUNS=${3:-5}
BIN=$BUILD/ebpf-prof
[ -x "$BIN" ] || { echo "no $BIN: build first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
WORK=$(mktemp -d /tmp/ep-probe-bench.XXXXXX)
# Targets still waiting for their signal must not outlive a failed run.
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$WORK"' EXIT
cc -O1 -fno-inline -fno-omit-frame-pointer -o "$WORK/probe_bench" "$(dirname "$0")/probe_bench.c" -lpthread
read -r -a EXTRA <<<"${EXTRA_MODES-funclat bpftrace bpftrace_count}"
MODES=(bare count latency "${EXTRA[@]}")
for mode in "${MODES[@]}"; do
	case $mode in
	funclat)
		SRC=$(dirname "$0")
		clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -I"$SRC/../../vmlinux/x86" \
			-idirafter "/usr/include/$(gcc -print-multiarch)" \
			-c "$SRC/funclat/funclat.bpf.c" -o "$WORK/funclat.bpf.o"
		cc -O2 -o "$WORK/funclat" "$SRC/funclat/funclat.c" -lbpf ;;
	funclatency) command -v funclatency-bpfcc >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y bpfcc-tools >/dev/null ;;
	bpftrace*) command -v bpftrace >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y bpftrace >/dev/null ;;
	esac
done

# wait_for PATTERN FILE SECONDS: until a complete line of FILE matches (by
# the clock, not by a count of polls, which a loaded machine stretches). A
# reader can see half of a write, so the file must end in a newline too.
wait_for()
{
	local end=$((SECONDS + $3))
	while :; do
		grep -qs -- "$1" "$2" && [ -z "$(tail -c1 "$2")" ] && return 0
		((SECONDS < end)) || return 1
		sleep 0.02
	done
}

# Starts a reference tool on pid $1 in mode $2 and waits until it says its
# probes are attached; sets TOOL_PID.
start_tool()
{
	local pid=$1 mode=$2 fn="$WORK/probe_bench:bench_fn" t ready i
	case $mode in
	funclat)
		"$WORK/funclat" "$pid" "$WORK/probe_bench" bench_fn "$WORK/funclat.bpf.o" \
			>"$WORK/tool.out" 2>&1 &
		t=$! ready='^Attached' ;;
	funclatency)
		PYTHONUNBUFFERED=1 funclatency-bpfcc -p "$pid" "$fn" >"$WORK/tool.out" 2>&1 &
		t=$! ready='^Tracing' ;;
	bpftrace)
		bpftrace -p "$pid" -e "uprobe:$WORK/probe_bench:bench_fn { @s[tid] = nsecs; }
			uretprobe:$WORK/probe_bench:bench_fn /@s[tid]/ {
				@ns = hist(nsecs - @s[tid]); delete(@s[tid]); }" >"$WORK/tool.out" 2>&1 &
		t=$! ready='^Attaching' ;;
	bpftrace_count)
		bpftrace -p "$pid" -e "uprobe:$WORK/probe_bench:bench_fn { @calls = count(); }" \
			>"$WORK/tool.out" 2>&1 &
		t=$! ready='^Attaching' ;;
	esac
	# BCC compiles its program first: allow a loaded machine a minute.
	# bpftrace parses the kernel's BTF and BCC compiles: minutes when loaded.
	if ! wait_for "$ready" "$WORK/tool.out" 180; then
		echo "$mode did not attach (round skipped):" >&2
		cat "$WORK/tool.out" >&2
		kill "$t" 2>/dev/null || true
		return 1
	fi
	# bpftrace prints "Attaching" before the attach calls return.
	case $mode in bpftrace*) sleep 1 ;; esac
	TOOL_PID=$t
}

# run MODE THREADS -> prints "ns_per_call calls_per_s drops spans cpu_ns_per_call"
run()
{
	local mode=$1 threads=$2 pid tpid prof="" i
	# CPU time as well as wall time: on a loaded machine the wall time of
	# a call includes waiting for a CPU, its CPU time (user + system, the
	# traps are system time) much less so.
	/usr/bin/time -f "cpu %U %S" -o "$WORK/cpu.out" "$WORK/probe_bench" "$CALLS" "$threads" >"$WORK/t.out" &
	tpid=$!
	# A SIGUSR1 before the target blocked it would kill it: wait for
	# "ready" however long a loaded machine takes.
	wait_for '^ready' "$WORK/t.out" 60 || { echo "probe_bench did not start: $(cat "$WORK/t.out")" >&2; exit 1; }
	pid=$(sed -n 's/^ready //p' "$WORK/t.out")
	case $mode in funclat* | bpftrace*)
		if ! start_tool "$pid" "$mode"; then
			kill "$pid"
			wait "$tpid" || true
			echo "NA NA 0 0 NA"
			return
		fi
		prof=$TOOL_PID ;;
	esac
	if [ "$mode" = count ] || [ "$mode" = latency ]; then
		local spec="probe_bench:bench_fn"
		[ "$mode" = count ] && spec="$spec,count"
		"$BIN" -v --pid "$pid" --no-gpu --probes none --probe "$spec" -F 1 -o "$WORK/out" \
			>/dev/null 2>"$WORK/p.err" &
		prof=$!
		wait_for "probes: pid $pid: bench_fn" "$WORK/p.err" 120 || { echo "probe not attached:" >&2; tail -n 5 "$WORK/p.err" >&2; exit 1; }
	fi
	kill -USR1 "$pid"
	wait "$tpid"
	case $mode in funclat* | bpftrace*) kill -INT "$prof" 2>/dev/null || true ;; esac
	[ -n "$prof" ] && { wait "$prof" || true; }
	local ns rate drops=0 spans=0 cpu
	ns=$(sed -n 's/^ns_per_call //p' "$WORK/t.out")
	cpu=$(awk -v n="$CALLS" -v t="$threads" '$1 == "cpu" {printf "%.1f", ($2 + $3) * 1e9 / (n * t)}' "$WORK/cpu.out")
	rate=$(sed -n 's/^calls_per_s //p' "$WORK/t.out")
	if [ "$mode" = count ] || [ "$mode" = latency ]; then
		read -r drops spans < <(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["probes"]
d=r["dropped"]
print(d["total"], sum(p["completed"] for p in r["list"]))
if d["total"]:
    print("drops by cause:", {k: v for k, v in d["by_cause"].items() if v}, file=sys.stderr)' "$WORK/out/report.json")
	fi
	echo "$ns $rate $drops $spans $cpu"
}

median() { grep -v NA | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Interleaved rounds (bare, count, latency, bare, ...): on a shared machine
# the load drifts over minutes, and blocks of one mode would measure the
# drift as well as the probe.
declare -A MED MEDC
for mode in "${MODES[@]}"; do : >"$WORK/$mode.txt"; : >"$WORK/$mode.cpu"; done
for ((r = 0; r < RUNS; r++)); do
	for mode in "${MODES[@]}"; do
		run "$mode" 1 >"$WORK/last.txt"
		awk '{print $1}' "$WORK/last.txt" >>"$WORK/$mode.txt"
		awk '{print $5}' "$WORK/last.txt" >>"$WORK/$mode.cpu"
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in "${MODES[@]}"; do
	MED[$mode]=$(median <"$WORK/$mode.txt")
	printf '%-8s median %8.1f ns/call  (runs: %s)\n' "$mode" "${MED[$mode]}" "$(tr '\n' ' ' <"$WORK/$mode.txt")"
	MEDC[$mode]=$(median <"$WORK/$mode.cpu")
	printf '%-8s median %8.1f CPU ns/call (runs: %s)\n' "$mode" "${MEDC[$mode]}" "$(tr '\n' ' ' <"$WORK/$mode.cpu")"
done
awk -v b="${MEDC[bare]}" -v c="${MEDC[count]}" -v l="${MEDC[latency]}" 'BEGIN {
	printf "CPU time: count-only adds %7.0f ns/call, latency adds %7.0f, span over counting %7.0f\n", c - b, l - b, l - c }'

awk -v b="${MED[bare]}" -v c="${MED[count]}" -v l="${MED[latency]}" 'BEGIN {
	printf "count-only probe adds   %7.0f ns/call (entry uprobe)\n", c - b
	printf "latency probe adds      %7.0f ns/call (entry + return + span)\n", l - b
	printf "span over counting      %7.0f ns/call\n", l - c }'
for mode in funclat funclatency bpftrace bpftrace_count; do
	[ -n "${MEDC[$mode]:-}" ] || continue
	awk -v m="$mode" -v b="${MEDC[bare]}" -v c="${MEDC[count]}" -v l="${MEDC[latency]}" \
		-v t="${MEDC[$mode]}" 'BEGIN {
		printf "%-15s adds %7.0f CPU ns/call; ebpf-prof latency is %+.1f%% of it", m, t - b, (l - t) * 100 / (t - b)
		printf "; over count-only %+7.0f ns\n", t - c }'
done
for ((r = 0; r < 3; r++)); do
	read -r ns rate drops spans cpu < <(run latency 2)
	echo "2 threads, latency probe: $rate calls/s sustained, $spans spans received, $drops dropped"
done
