#!/bin/bash
# Cost of the live view's refresh work (not a test).
#
#   sudo tools/bench/top_refresh.sh            # uses ./build/ebpf-prof
#   sudo EP_BIN=/path/ebpf-prof RUNS=3 SECS=20 FREQ=999 tools/bench/top_refresh.sh
#
# The same recording of tests/targets/cpu_tree runs interleaved in three
# configurations, and the profiler's own CPU time (user+sys of the ebpf-prof
# process, bash `time`) is compared:
#   plain     ebpf-prof --pid P -d SECS                 (no live view)
#   top-1s    ebpf-prof top --pid P -d SECS             (ncurses in a 120x40 tmux pane)
#   top-0.2s  ebpf-prof top --interval 0.2 ...          (5x the refreshes)
# (top-Xs minus plain) / SECS is the live view's cost in cores; the 0.2 s run
# scales it up five-fold so it stands out of the noise of the sampler itself.
# Medians of RUNS runs. The live view also measures itself (thread CPU time
# around each refresh: window update, alerts, drawing, ncurses output; -v
# prints it at the end): that figure is printed per run too, and is the
# precise one; the process CPU difference is the cross-check.
# Use a build without sanitizers.
set -u -o pipefail

SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
TARGETS=${EP_TARGETS_DIR:-$(dirname "$EP_BIN")/tests/targets}
RUNS=${RUNS:-3}
SECS=${SECS:-20}
FREQ=${FREQ:-999}
[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
[ -x "$EP_BIN" ] || { echo "no $EP_BIN (set EP_BIN)" >&2; exit 1; }
[ -x "$TARGETS/cpu_tree" ] || { echo "no $TARGETS/cpu_tree (set EP_TARGETS_DIR)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tmux is needed" >&2; exit 1; }

WORK=$(mktemp -d /tmp/ep-top-bench.XXXXXX)
SOCK="ep-top-bench-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
"$TARGETS/cpu_tree" 100000 > "$WORK/target.out" &
TPID=$!
trap 'T kill-server >/dev/null 2>&1; kill $TPID 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
until grep -q ready "$WORK/target.out"; do sleep 0.05; done

# run NAME EXTRA_ARGS...: prints the profiler's CPU seconds (user+sys).
run()
{
	local name=$1 f="$WORK/$1.$RANDOM"
	shift
	if [ "$name" = plain ]; then
		{ TIMEFORMAT='%U %S'; time "$EP_BIN" --pid "$TPID" -F "$FREQ" -d "$SECS" -q \
			-o "$WORK/out" > /dev/null 2>&1; } 2> "$f"
	else
		T new-session -d -x 120 -y 40 -s bench \
			"TIMEFORMAT='%U %S'; { time $EP_BIN top --pid $TPID -F $FREQ -d $SECS -v -o $WORK/out $* 2>$f.log; } 2> $f.tmp; mv $f.tmp $f"
		until [ -s "$f" ]; do sleep 0.2; done
		T kill-server >/dev/null 2>&1
		grep -o 'live view: .*' "$f.log" >&2
	fi
	rm -rf "$WORK/out"
	awk '{ print $1 + $2 }' "$f"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

: > "$WORK/plain"; : > "$WORK/top1"; : > "$WORK/top02"
for i in $(seq "$RUNS"); do
	run plain >> "$WORK/plain"
	run top1 >> "$WORK/top1"
	run top02 --interval 0.2 >> "$WORK/top02"
	echo "run $i/$RUNS: plain $(tail -n1 "$WORK/plain") s, top-1s $(tail -n1 "$WORK/top1") s, top-0.2s $(tail -n1 "$WORK/top02") s" >&2
done
p=$(median < "$WORK/plain"); t1=$(median < "$WORK/top1"); t02=$(median < "$WORK/top02")
echo "profiler CPU over ${SECS}s at ${FREQ} Hz (median of $RUNS): plain ${p}s, top-1s ${t1}s, top-0.2s ${t02}s"
awk -v p="$p" -v a="$t1" -v b="$t02" -v s="$SECS" 'BEGIN {
	printf "live view cost: %.3f%% of a core at 1 s refresh, %.3f%% at 0.2 s (%.2f ms per refresh)\n",
		100 * (a - p) / s, 100 * (b - p) / s, 1000 * (b - p) / (s / 0.2)
}'
