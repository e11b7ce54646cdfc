#!/bin/bash
# What --alloc costs an allocation-heavy program in launch mode, by
# mechanism (docs/alloc.md, "Two mechanisms"):
#
#   sudo tools/bench/alloc_cost.sh [BUILD_DIR] [RUNS] [CYCLES]
#
# tests/targets/alloc_cycles runs CYCLES cycles (default 300) without sleep,
# each leaking 256 KiB in 16 KiB blocks, ~4,000 malloc/free and an 8 MiB
# transient, and prints its own loop time (CLOCK_MONOTONIC) and its CPU
# time in the loop (CLOCK_THREAD_CPUTIME_ID: on a busy machine the wall time
# also holds the waits for a CPU, the profiler's start-up among them, which
# runs at a higher priority while the 80 ms loop runs). Modes, RUNS
# interleaved rounds each (default 7), medians printed:
#   bare     no profiler
#   prof     ebpf-prof --cycle alloc_cycles:cycle_step, no --alloc
#   preload  the same with --alloc (sampled inside the process: the default)
#   uprobe   the same with --alloc --alloc-mode uprobe (every call traps)
# Ratios are against the same script's bare runs on this machine.
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-7}
CYCLES=${3:-300}
BIN=$BUILD/ebpf-prof
TARGET=$BUILD/tests/targets/alloc_cycles
[ -x "$BIN" ] && [ -x "$TARGET" ] || { echo "no $BIN or $TARGET: build with the tests first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
WORK=$(mktemp -d /tmp/ep-alloc-cost.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# one MODE RUN -> appends the loop time in ns to $WORK/MODE
one()
{
	local mode=$1 out="$WORK/$1.$2"
	case $mode in
	bare) "$TARGET" "$CYCLES" 0 >"$out" ;;
	prof) "$BIN" -o "$out.dir" --no-gpu --cycle alloc_cycles:cycle_step -- "$TARGET" "$CYCLES" 0 >"$out" 2>"$out.err" ;;
	preload) "$BIN" -o "$out.dir" --no-gpu --alloc --cycle alloc_cycles:cycle_step -- "$TARGET" "$CYCLES" 0 >"$out" 2>"$out.err" ;;
	uprobe) "$BIN" -o "$out.dir" --no-gpu --alloc --alloc-mode uprobe --cycle alloc_cycles:cycle_step -- "$TARGET" "$CYCLES" 0 >"$out" 2>"$out.err" ;;
	esac
	echo "$(grep -m1 '^loop_ns ' "$out" | cut -d' ' -f2) $(grep -m1 '^loop_cpu_ns ' "$out" | cut -d' ' -f2)" >>"$WORK/$mode"
	if [ "$mode" = preload ] || [ "$mode" = uprobe ]; then
		python3 - "$out.dir/report.json" >>"$WORK/$mode.traps" <<'PY'
import json, sys
A = json.load(open(sys.argv[1]))["memory"]["alloc"]
print(A["mechanism"], A["cost"]["probe_hits"], A["calls"] + A["frees"], A["samples"])
PY
	fi
	rm -rf "$out.dir"
}

MODES="bare prof preload uprobe"
for r in $(seq "$RUNS"); do
	for m in $MODES; do
		one "$m" "$r"
	done
done

python3 - "$WORK" "$MODES" "$CYCLES" <<'PY'
import os, statistics, sys
w, modes, cycles = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
rows = {m: [l.split() for l in open(os.path.join(w, m))] for m in modes}
med = {m: statistics.median(int(r[0]) for r in rows[m]) for m in modes}
cpu = {m: statistics.median(int(r[1]) for r in rows[m]) for m in modes}
print("alloc_cycles %d cycles, %d runs each, medians: the loop's wall time, and its thread's CPU time" % (cycles, len(rows["bare"])))
for m in modes:
    extra = ""
    p = os.path.join(w, m + ".traps")
    if os.path.exists(p):
        rows = [l.split() for l in open(p)]
        mech = rows[0][0]
        hits = statistics.median(int(r[1]) for r in rows)
        calls = statistics.median(int(r[2]) for r in rows)
        samples = statistics.median(int(r[3]) for r in rows)
        extra = "  (%s: %d traps for %d calls+frees, %d samples)" % (mech, hits, calls, samples)
    print("  %-8s wall %8.1f ms x%-6.2f cpu %8.1f ms x%-6.2f%s" % (m, med[m] / 1e6, med[m] / med["bare"], cpu[m] / 1e6, cpu[m] / cpu["bare"], extra))
PY
