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
trap 'rm -rf "$WORK"' EXIT
cc -O1 -fno-inline -fno-omit-frame-pointer -o "$WORK/probe_bench" "$(dirname "$0")/probe_bench.c" -lpthread

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
	for ((i = 0; i < 3000; i++)); do grep -q '^ready' "$WORK/t.out" && break; sleep 0.01; done
	grep -q '^ready' "$WORK/t.out" || { echo "probe_bench did not start" >&2; exit 1; }
	pid=$(sed -n 's/^ready //p' "$WORK/t.out")
	if [ "$mode" != bare ]; then
		local spec="probe_bench:bench_fn"
		[ "$mode" = count ] && spec="$spec,count"
		"$BIN" -v --pid "$pid" --no-gpu --probes none --probe "$spec" -F 1 -o "$WORK/out" \
			>/dev/null 2>"$WORK/p.err" &
		prof=$!
		for ((i = 0; i < 3000; i++)); do grep -q "probes: pid $pid: bench_fn" "$WORK/p.err" && break; sleep 0.01; done
		grep -q "probes: pid $pid: bench_fn" "$WORK/p.err" || { echo "probe not attached" >&2; exit 1; }
	fi
	kill -USR1 "$pid"
	wait "$tpid"
	[ -n "$prof" ] && wait "$prof"
	local ns rate drops=0 spans=0 cpu
	ns=$(sed -n 's/^ns_per_call //p' "$WORK/t.out")
	cpu=$(awk -v n="$CALLS" -v t="$threads" '$1 == "cpu" {printf "%.1f", ($2 + $3) * 1e9 / (n * t)}' "$WORK/cpu.out")
	rate=$(sed -n 's/^calls_per_s //p' "$WORK/t.out")
	if [ "$mode" != bare ]; then
		read -r drops spans < <(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["probes"]
d=r["dropped"]
print(d["total"], sum(p["completed"] for p in r["list"]))
if d["total"]:
    print("drops by cause:", {k: v for k, v in d["by_cause"].items() if v}, file=sys.stderr)' "$WORK/out/report.json")
	fi
	echo "$ns $rate $drops $spans $cpu"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Interleaved rounds (bare, count, latency, bare, ...): on a shared machine
# the load drifts over minutes, and blocks of one mode would measure the
# drift as well as the probe.
declare -A MED MEDC
MODES=(bare count latency)
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
for ((r = 0; r < 3; r++)); do
	read -r ns rate drops spans cpu < <(run latency 2)
	echo "2 threads, latency probe: $rate calls/s sustained, $spans spans received, $drops dropped"
done
