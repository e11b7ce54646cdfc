#!/bin/bash
# Overhead benchmark (not a test): how much does profiling slow a CPU-bound
# workload, compared with perf, and what does ebpf-prof itself cost?
#
#   sudo tools/bench/overhead.sh                      # uses ./build
#   sudo EP_BIN=/path/ebpf-prof EP_TARGETS_DIR=/path/tests/targets RUNS=7 tools/bench/overhead.sh
#
# Workload: tests/targets/cpu_tree --cycles N, single thread, a fixed amount
# of work (~2.5 s on a 2020s x86 core with the default CYCLES). It measures
# its own wall and CPU time for that work, so profiler start-up and output
# writing are excluded: what is left is the per-sample cost paid by the
# profiled program. Configurations run interleaved (base, ep99, ep999,
# perf99, perf999, base, ...) so drift (thermal, other load) spreads evenly.
# Use a build without sanitizers (ASan slows ebpf-prof's own side a lot).
#
# Unwinding (docs/unwinding.md): "ebpf-prof" is the default (--unwind auto,
# 8 KiB stack window per sample), "ep-fp" is --unwind fp (frame pointers
# only, no window), "perf-dwarf" is perf record --call-graph dwarf (8 KiB, as
# ours). "perf" is perf record -g (frame pointers).
#
# Env: RUNS (default 5), CYCLES (default 10000), CAP_S (capture length for the
# self-cost runs, default 5), CAP_RUNS (default 3), PERF (default perf).

set -u -o pipefail

SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
EP_TARGETS_DIR=${EP_TARGETS_DIR:-$(dirname "$EP_BIN")/tests/targets}
RUNS=${RUNS:-5}
CYCLES=${CYCLES:-10000}
CAP_S=${CAP_S:-5}
CAP_RUNS=${CAP_RUNS:-3}
PERF=${PERF:-perf}
WORKLOAD="$EP_TARGETS_DIR/cpu_tree"

die() { echo "overhead.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (BPF and perf sampling)"
[ -x "$EP_BIN" ] || die "no ebpf-prof at $EP_BIN (set EP_BIN)"
[ -x "$WORKLOAD" ] || die "no workload at $WORKLOAD (set EP_TARGETS_DIR)"
command -v "$PERF" >/dev/null || die "perf not found (set PERF=)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"

W=$(mktemp -d /tmp/ep-overhead.XXXXXX) || die "mktemp failed"
BG_PIDS=()
cleanup()
{
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# run_cfg NAME HZ: one fixed-work run; appends "NAME wall_ns cpu_ns" to results.
run_cfg()
{
	local name=$1 hz=$2 out="$W/run.out" line
	case $name in
	base) "$WORKLOAD" --cycles "$CYCLES" >"$out" 2>"$W/run.err" ;;
	ebpf-prof*)
		rm -rf "$W/ep-out"
		"$EP_BIN" -q -F "$hz" -o "$W/ep-out" -- "$WORKLOAD" --cycles "$CYCLES" >"$out" 2>"$W/run.err" ;;
	ep-fp*)
		rm -rf "$W/ep-out"
		"$EP_BIN" -q --unwind fp -F "$hz" -o "$W/ep-out" -- "$WORKLOAD" --cycles "$CYCLES" \
			>"$out" 2>"$W/run.err" ;;
	perf-dwarf*)
		"$PERF" record -q -e cpu-clock --call-graph dwarf,8192 -F "$hz" -o "$W/perf.data" -- \
			"$WORKLOAD" --cycles "$CYCLES" >"$out" 2>"$W/run.err" ;;
	perf*)
		"$PERF" record -q -e cpu-clock -g -F "$hz" -o "$W/perf.data" -- \
			"$WORKLOAD" --cycles "$CYCLES" >"$out" 2>"$W/run.err" ;;
	esac || die "$name run failed: $(tail -n 3 "$W/run.err")"
	line=$(grep -E '^done cycles=' "$out") || die "$name: workload printed no result line"
	line=${line#done cycles=* }
	local cpu=${line#cpu_ns=} wall
	cpu=${cpu%% *}
	wall=${line##*wall_ns=}
	echo "$name $wall $cpu" >>"$W/results"
}

echo "workload: $WORKLOAD --cycles $CYCLES; $RUNS runs per configuration; $(nproc) CPUs; $(uname -r)" >&2
"$WORKLOAD" --cycles 200 >/dev/null # warm the page cache
CFGS=("base 0" "ebpf-prof@99 99" "ebpf-prof@999 999" "ep-fp@99 99" "ep-fp@999 999" "perf@99 99"
	"perf@999 999" "perf-dwarf@99 99" "perf-dwarf@999 999")
for ((r = 1; r <= RUNS; r++)); do
	for c in "${CFGS[@]}"; do
		# shellcheck disable=SC2086 # "name hz" pair
		set -- $c
		run_cfg "$1" "$2"
	done
	echo "  round $r/$RUNS done" >&2
done

# Self cost: ebpf-prof attached to the running workload for CAP_S s at 999 Hz.
# /usr/bin/time measures ebpf-prof alone (the target is not its child). Also
# start-to-first-sample latency: first_sample_monotonic_ns from report.json
# minus CLOCK_MONOTONIC just before launch (includes process start, BPF load
# and attach).
"$WORKLOAD" 0 >"$W/bg.out" 2>&1 </dev/null &
BG=$!
BG_PIDS+=("$BG")
for ((i = 0; i < 250; i++)); do grep -q '^ready' "$W/bg.out" && break; sleep 0.02; done
grep -q '^ready' "$W/bg.out" || die "background workload not ready"
for ((r = 1; r <= CAP_RUNS; r++)); do
	rm -rf "$W/cap"
	t0=$(mono_ns)
	/usr/bin/time -o "$W/time.out" -f '%U %S %M %e' "$EP_BIN" -q --pid "$BG" -F 999 -d "$CAP_S" -o "$W/cap" \
		>/dev/null 2>"$W/cap.err" || die "capture failed: $(tail -n 3 "$W/cap.err")"
	first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["time"]["first_sample_monotonic_ns"])' "$W/cap/report.json")
	samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"]["total"])' "$W/cap/report.json")
	read -r u s rss e <"$W/time.out"
	echo "ebpf-prof $u $s $rss $e $((first - t0)) $samples" >>"$W/self"
	/usr/bin/time -o "$W/time.out" -f '%U %S %M %e' "$PERF" record -q -e cpu-clock -g -F 999 -p "$BG" \
		-o "$W/perf-cap.data" -- sleep "$CAP_S" >/dev/null 2>"$W/cap.err" || die "perf capture failed: $(tail -n 3 "$W/cap.err")"
	read -r u s rss e <"$W/time.out"
	echo "perf-record $u $s $rss $e - -" >>"$W/self"
	rm -rf "$W/cap"
	/usr/bin/time -o "$W/time.out" -f '%U %S %M %e' "$EP_BIN" -q --unwind fp --pid "$BG" -F 999 -d "$CAP_S" \
		-o "$W/cap" >/dev/null 2>"$W/cap.err" || die "fp capture failed: $(tail -n 3 "$W/cap.err")"
	read -r u s rss e <"$W/time.out"
	echo "ep-fp $u $s $rss $e - -" >>"$W/self"
	/usr/bin/time -o "$W/time.out" -f '%U %S %M %e' "$PERF" record -q -e cpu-clock --call-graph dwarf,8192 \
		-F 999 -p "$BG" -o "$W/perf-cap.data" -- sleep "$CAP_S" >/dev/null 2>"$W/cap.err" ||
		die "perf dwarf capture failed: $(tail -n 3 "$W/cap.err")"
	read -r u s rss e <"$W/time.out"
	echo "perf-dwarf $u $s $rss $e - -" >>"$W/self"
done

python3 - "$W/results" "$W/self" "$CAP_S" <<'PY'
import statistics, sys
res = {}
order = []
for line in open(sys.argv[1]):
    name, wall, cpu = line.split()
    if name not in res:
        order.append(name)
    res.setdefault(name, []).append((int(wall), int(cpu)))
bw = statistics.median(w for w, _ in res["base"])
bc = statistics.median(c for _, c in res["base"])
print("\nFixed work (cpu_tree), median of %d runs; slowdown vs unprofiled" % len(res["base"]))
print("%-15s %10s %10s %9s %9s %12s" % ("config", "wall_ms", "cpu_ms", "wall_x", "cpu_x", "wall_spread"))
for n in order:
    ws = [w for w, _ in res[n]]
    cs = [c for _, c in res[n]]
    mw, mc = statistics.median(ws), statistics.median(cs)
    print("%-15s %10.1f %10.1f %9.4f %9.4f %11.1f%%" % (n, mw / 1e6, mc / 1e6, mw / bw, mc / bc,
          100.0 * (max(ws) - min(ws)) / mw))
cap = float(sys.argv[3])
rows = {}
for line in open(sys.argv[2]):
    f = line.split()
    rows.setdefault(f[0], []).append(f[1:])
print("\nProfiler's own cost, %g s capture at 999 Hz of one busy thread (median of %d)" % (cap, len(rows["ebpf-prof"])))
print("%-12s %9s %9s %11s %10s %9s %15s %8s" % ("tool", "user_s", "sys_s", "cpu_%_of_1", "peak_RSS", "wall_s", "first_sample_ms", "samples"))
for tool, rs in rows.items():
    med = lambda i: statistics.median(float(r[i]) for r in rs)
    u, s, rss, e = med(0), med(1), med(2), med(3)
    lat = "%.1f" % (med(4) / 1e6) if rs[0][4] != "-" else "-"
    smp = "%d" % med(5) if rs[0][5] != "-" else "-"
    print("%-12s %9.3f %9.3f %10.2f%% %8.1fMB %9.2f %15s %8s" % (tool, u, s, 100 * (u + s) / cap, rss / 1024, e, lat, smp))
print("\nnotes: perf-record writes raw samples only (symbolization happens later in perf report);")
print("ebpf-prof's numbers include symbolization and writing all three outputs. first_sample_ms")
print("counts from just before exec of ebpf-prof (process start + BPF load + attach).")
PY
