#!/bin/bash
# What per-cycle attribution costs the profiler, at the highest span rate
# the machine sustains (not a test; docs/performance.md "Cycles").
#
#   sudo tools/bench/cycles_overhead.sh [BUILD_DIR] [SECONDS] [RUNS]
#
# tools/bench/cycle_bench.c streams calls of span_fn() inside cycles of
# run_cycle() (100 ms, then 1 s). ebpf-prof times span_fn with a latency
# probe in three modes, RUNS interleaved rounds each:
#   probes   --probe only: the facts sink still receives every span (the
#            marker may appear at any time) and drops it after the lag
#   c100     --cycle cycle_bench:run_cycle with 100 ms cycles
#   c1000    the same with 1 s cycles (10x the facts held per cycle)
# and prints, as medians: the profiler's CPU time per span (user + system
# of the ebpf-prof process / spans received), its peak RSS (VmHWM), the
# sink's peak of held facts, and the span rate; plus late/dropped facts.
set -euo pipefail
BUILD=${1:-build}
SECONDS_RUN=${2:-10}
RUNS=${3:-3}
BIN=$BUILD/ebpf-prof
[ -x "$BIN" ] || { echo "no $BIN: build first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
WORK=$(mktemp -d /tmp/ep-cycle-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O1 -fno-inline -fno-omit-frame-pointer -o "$WORK/cycle_bench" "$(dirname "$0")/cycle_bench.c"

# run MODE -> "cpu_ns_per_span hwm_kb peak_held spans_per_s late dropped cycles"
run()
{
	local mode=$1 cyc_ms=100 extra=() pid tpid prof i
	case $mode in
	c100) extra=(--cycle cycle_bench:run_cycle) ;;
	c1000) extra=(--cycle cycle_bench:run_cycle); cyc_ms=1000 ;;
	esac
	"$WORK/cycle_bench" "$SECONDS_RUN" "$cyc_ms" >"$WORK/t.out" &
	tpid=$!
	for ((i = 0; i < 6000; i++)); do grep -q '^ready' "$WORK/t.out" && break; sleep 0.01; done
	pid=$(sed -n 's/^ready //p' "$WORK/t.out")
	[ -n "$pid" ] || { echo "cycle_bench did not start" >&2; exit 1; }
	/usr/bin/time -f "cpu %U %S hwm %M" -o "$WORK/cpu.out" "$BIN" -v --pid "$pid" --no-gpu \
		--probes none --probe cycle_bench:span_fn -F 99 -o "$WORK/out" "${extra[@]}" \
		>/dev/null 2>"$WORK/p.err" &
	prof=$!
	for ((i = 0; i < 3000; i++)); do grep -q "probes: pid $pid: span_fn" "$WORK/p.err" && break; sleep 0.01; done
	if [ "$mode" != probes ]; then
		for ((i = 0; i < 3000; i++)); do grep -q "cycles: pid $pid: cycle boundary" "$WORK/p.err" && break; sleep 0.01; done
	fi
	kill -USR1 "$pid"
	wait "$tpid"
	wait "$prof"
	python3 - "$WORK/out/report.json" "$WORK/cpu.out" "$SECONDS_RUN" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = open(sys.argv[2]).read().split()
cpu = (float(f[1]) + float(f[2])) * 1e9
hwm = int(f[4])
spans = sum(p["completed"] for p in r["probes"]["list"])
m = r.get("cycles_meta", {})
d = m.get("dropped", {})
print("%.0f %d %d %.0f %d %d %d" % (cpu / max(spans, 1), hwm, m.get("peak_held_facts", 0),
      spans / float(sys.argv[3]), d.get("late_facts", 0), d.get("over_cap_facts", 0), len(r["cycles"])))
PY
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

MODES=(probes c100 c1000)
for mode in "${MODES[@]}"; do : >"$WORK/$mode.txt"; done
for ((r = 0; r < RUNS; r++)); do
	for mode in "${MODES[@]}"; do
		run "$mode" >>"$WORK/$mode.txt"
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %14s %12s %12s %12s %6s %8s %7s\n' mode "CPU ns/span" "peak RSS MB" "peak facts" "spans/s" late dropped cycles
for mode in "${MODES[@]}"; do
	col() { awk -v c="$1" '{print $c}' "$WORK/$mode.txt" | median; }
	printf '%-7s %14s %12.1f %12s %12s %6s %8s %7s\n' "$mode" "$(col 1)" "$(echo "$(col 2) / 1024" | bc -l)" \
		"$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)" "$(col 7)"
	echo "        runs: $(tr '\n' '|' <"$WORK/$mode.txt")"
done
