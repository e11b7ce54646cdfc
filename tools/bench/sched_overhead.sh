#!/bin/bash
# Cost of the scheduler view on a context-switch-heavy workload (not a test).
#
#   sudo tools/bench/sched_overhead.sh          # uses ./build/ebpf-prof
#   sudo EP_BIN=/path/ebpf-prof RUNS=5 HOPS=1000000 tools/bench/sched_overhead.sh
#
# Workload: tools/bench/ctxswitch.c, a pair of threads bouncing a byte over
# pipes (every hop is a blocking read: a switch out and a switch in). Two
# modes: as fast as possible (fixed work: the wall-time increase divided by
# the switches the run made is the cost per switch on the critical path), and
# paced at RATE switches/s (fixed time: the CPU-time increase is the
# slowdown the workload feels). Configurations run interleaved:
#   base        no profiler
#   cpu-only    ebpf-prof --no-sched (the CPU sampler alone, for reference)
#   sched-acct  ebpf-prof --no-offcpu-stacks (accounting only)
#   sched-full  ebpf-prof (accounting + off-CPU stacks, default threshold)
# Use a build without sanitizers.
set -u -o pipefail

SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
RUNS=${RUNS:-5}
HOPS=${HOPS:-1000000}
RATE=${RATE:-100000}
CC=${CC:-cc}

die() { echo "sched_overhead.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (BPF)"
[ -x "$EP_BIN" ] || die "no ebpf-prof at $EP_BIN (set EP_BIN)"

W=$(mktemp -d /tmp/ep-sched-bench.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
"$CC" -O2 -o "$W/ctxswitch" "$SRC_DIR/tools/bench/ctxswitch.c" -lpthread || die "cannot build the workload"

# run CFG MODE: appends "CFG MODE wall_ns cpu_ns switches" to results.
run()
{
	local cfg=$1 mode=$2 args=(--hops "$HOPS") out="$W/out" sw=0
	[ "$mode" = paced ] && args+=(--rate "$RATE")
	rm -rf "$W/o"
	case $cfg in
	base) "$W/ctxswitch" "${args[@]}" >"$out" ;;
	cpu-only) "$EP_BIN" -q --no-sched -o "$W/o" -- "$W/ctxswitch" "${args[@]}" >"$out" ;;
	sched-acct) "$EP_BIN" -q --no-offcpu-stacks -o "$W/o" -- "$W/ctxswitch" "${args[@]}" >"$out" ;;
	sched-full) "$EP_BIN" -q -o "$W/o" -- "$W/ctxswitch" "${args[@]}" >"$out" ;;
	esac 2>"$W/err" || die "$cfg run failed: $(tail -n 3 "$W/err")"
	if [ -f "$W/o/report.json" ]; then
		sw=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r.get("sched") or {}
print(s.get("context_switches", 0)); d=(s.get("dropped") or {}).get("total", 0)
d and print("drops", d, file=sys.stderr)' "$W/o/report.json")
	fi
	local line
	line=$(grep '^done ' "$out") || die "$cfg: no result line"
	local wall=${line#*wall_ns=} cpu=${line#*cpu_ns=}
	echo "$cfg $mode ${wall%% *} ${cpu%% *} $sw" >>"$W/results"
}

echo "workload: ctxswitch --hops $HOPS (max rate, and paced at $RATE/s); $RUNS runs each; $(nproc) CPUs; $(uname -r)" >&2
for ((r = 1; r <= RUNS; r++)); do
	for mode in max paced; do
		for cfg in base cpu-only sched-acct sched-full; do
			run "$cfg" "$mode"
		done
	done
done

python3 - "$W/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(cfg, mode, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == cfg and r[1] == mode)
sw = {m: statistics.median(float(r[4]) for r in rows if r[0] == "sched-acct" and r[1] == m) for m in ("max", "paced")}
for mode in ("max", "paced"):
    bw, bc = med("base", mode, 2), med("base", mode, 3)
    print("%s: base wall %.3f s, cpu %.3f s; %d target switches per run (sched-acct median)" % (mode, bw / 1e9, bc / 1e9, sw[mode]))
    for cfg in ("cpu-only", "sched-acct", "sched-full"):
        w, c = med(cfg, mode, 2), med(cfg, mode, 3)
        per = (w - bw) / sw[mode] if sw[mode] else float("nan")
        print("  %-10s wall %+6.2f%%  cpu %+6.2f%%  wall/switch %+7.0f ns" % (cfg, 100 * (w - bw) / bw, 100 * (c - bc) / bc, per))
PY
