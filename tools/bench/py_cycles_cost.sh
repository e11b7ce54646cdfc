#!/bin/bash
# What --cycle py:FUNCTION costs the target (not a test; docs/cycles.md,
# docs/performance.md "py: cycles"): tests/integration/py_calls.py runs
# CYC cycles, one call of generate() each, which makes 2 x CALLS Python
# calls inside. Its own CPU time in the loop (time.thread_time_ns) under:
#   base     no profiler
#   frames   ebpf-prof --pid, no cycles (sampling with Python frames)
#   watch    --cycle py:generate (watchpoint on generate's code object)
#   usdt     --python native --cycle py:generate (CPython's USDT points;
#            only interpreters built with them, e.g. Debian's python3)
# RUNS interleaved rounds, medians; the ratio to base is the cost.
#
#   sudo tools/bench/py_cycles_cost.sh [BUILD_DIR] [RUNS]
#   PYS="/usr/bin/python3.11 ..." CYC=6 CALLS=30000 FREQ=999
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$SRC/build}
RUNS=${2:-5}
BIN=$BUILD/ebpf-prof
CYC=${CYC:-6}
CALLS=${CALLS:-30000}
FREQ=${FREQ:-999}
PYS=${PYS:-/usr/bin/python3.11 $(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n 1)}
[ -x "$BIN" ] || { echo "no $BIN: build first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
WORK=$(mktemp -d /tmp/ep-pycyc.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# run PY MODE -> "cpu_ns cycles watch_hits"
run()
{
	local py=$1 mode=$2 tpid ppid i opts=()
	case $mode in
	frames) opts=() ;;
	watch) opts=(--cycle py:generate) ;;
	usdt) opts=(--python native --cycle py:generate) ;;
	esac
	"$py" "$SRC/tests/integration/py_calls.py" "$CYC" "$CALLS" >"$WORK/t.out" 2>&1 </dev/null &
	tpid=$!
	for ((i = 0; i < 2000; i++)); do grep -q '^ready' "$WORK/t.out" && break; sleep 0.01; done
	if [ "$mode" != base ]; then
		"$BIN" -v --no-gpu -F "$FREQ" --pid "$tpid" -o "$WORK/o" "${opts[@]}" >/dev/null 2>"$WORK/e" &
		ppid=$!
		for ((i = 0; i < 2000; i++)); do
			if [ "$mode" = frames ]; then grep -q "sampling" "$WORK/e" && break
			else grep -q "cycle boundary" "$WORK/e" && break; fi
			sleep 0.01
		done
	fi
	kill -USR1 "$tpid"
	wait "$tpid"
	[ "$mode" = base ] || wait "$ppid"
	local cpu hits=0 cyc=0
	cpu=$(awk '$1 == "cycles" { print $6 }' "$WORK/t.out")
	if [ "$mode" != base ]; then
		read -r cyc hits < <(python3 -c '
import json, sys
R = json.load(open(sys.argv[1]))
C = [c for c in R.get("cycles", []) if not c["partial"]]
w = [p["runs"] for p in R["overhead"]["programs"] if p["name"] == "cycle_watch"]
print(len(C) if not R.get("cycles_whole_run") else 0, w[0] if w else 0)' "$WORK/o/report.json")
	fi
	echo "$cpu $cyc $hits"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# py_cycles_cost $(date -u +%FT%TZ) cyc=$CYC calls=$CALLS freq=$FREQ runs=$RUNS load=$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-12s %-7s %12s %8s %7s %10s\n" python mode "cpu ms" "x base" cycles "wp hits"
for py in $PYS; do
	[ -x "$py" ] || continue
	modes="base frames watch"
	readelf -n "$py" $(ldd "$py" | awk '/libpython/ { print $3 }') 2>/dev/null | grep -q stapsdt && modes="$modes usdt"
	for m in $modes; do : >"$WORK/r.$m"; done
	for ((r = 0; r < RUNS; r++)); do
		for m in $modes; do run "$py" "$m" >>"$WORK/r.$m"; done
	done
	base=$(awk '{ print $1 }' "$WORK/r.base" | median)
	for m in $modes; do
		cpu=$(awk '{ print $1 }' "$WORK/r.$m" | median)
		printf "%-12s %-7s %12.2f %8.2f %7s %10s\n" "$(basename "$py")" "$m" "$(echo "$cpu / 1000000" | bc -l)" \
			"$(echo "$cpu / $base" | bc -l)" "$(awk '{ print $2 }' "$WORK/r.$m" | median)" "$(awk '{ print $3 }' "$WORK/r.$m" | median)"
	done
done
