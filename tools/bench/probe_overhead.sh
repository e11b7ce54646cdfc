#!/bin/bash
# Per-call cost of ebpf-prof probes and the span rate they sustain.
#
#   sudo tools/bench/probe_overhead.sh [BUILD_DIR] [CALLS] [RUNS]
#
# Runs tools/bench/probe_bench.c (a loop calling a trivial function) bare,
# under a count-only probe (entry uprobe + per-CPU counter: the "bare
# counting uprobe" baseline), and under a latency probe (entry + return +
# one span event per call), RUNS times each, and prints the median ns per
# call and the added cost. Then 2 threads under the latency probe for the
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

# run MODE THREADS -> prints "ns_per_call calls_per_s drops spans"
run()
{
	local mode=$1 threads=$2 pid prof="" i
	"$WORK/probe_bench" "$CALLS" "$threads" >"$WORK/t.out" &
	pid=$!
	for ((i = 0; i < 200; i++)); do grep -q '^ready' "$WORK/t.out" && break; sleep 0.01; done
	if [ "$mode" != bare ]; then
		local spec="probe_bench:bench_fn"
		[ "$mode" = count ] && spec="$spec,count"
		"$BIN" -v --pid "$pid" --no-gpu --probes none --probe "$spec" -F 1 -o "$WORK/out" \
			>/dev/null 2>"$WORK/p.err" &
		prof=$!
		for ((i = 0; i < 500; i++)); do grep -q "probes: pid $pid: bench_fn" "$WORK/p.err" && break; sleep 0.01; done
	fi
	kill -USR1 "$pid"
	wait "$pid"
	[ -n "$prof" ] && wait "$prof"
	local ns rate drops=0 spans=0
	ns=$(sed -n 's/^ns_per_call //p' "$WORK/t.out")
	rate=$(sed -n 's/^calls_per_s //p' "$WORK/t.out")
	if [ "$mode" != bare ]; then
		read -r drops spans < <(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["probes"]
print(r["dropped"]["total"], sum(p["completed"] for p in r["list"]))' "$WORK/out/report.json")
	fi
	echo "$ns $rate $drops $spans"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A MED
for mode in bare count latency; do
	: >"$WORK/$mode.txt"
	for ((r = 0; r < RUNS; r++)); do
		run "$mode" 1 | awk '{print $1}' >>"$WORK/$mode.txt"
	done
	MED[$mode]=$(median <"$WORK/$mode.txt")
	printf '%-8s median %8.1f ns/call  (runs: %s)\n' "$mode" "${MED[$mode]}" "$(tr '\n' ' ' <"$WORK/$mode.txt")"
done
awk -v b="${MED[bare]}" -v c="${MED[count]}" -v l="${MED[latency]}" 'BEGIN {
	printf "count-only probe adds   %7.0f ns/call (entry uprobe)\n", c - b
	printf "latency probe adds      %7.0f ns/call (entry + return + span)\n", l - b
	printf "span over counting      %7.0f ns/call\n", l - c }'
read -r ns rate drops spans < <(run latency 2)
echo "2 threads, latency probe: $rate calls/s sustained, $spans spans received, $drops dropped"
