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
# Then, the primary figure: the kernel's own accounting of the programs'
# run time (sysctl kernel.bpf_stats_enabled=1, run_time_ns/run_cnt in
# `bpftool prog show`), read twice during paced sched-acct and sched-full
# runs: ns per program run, and all of the sched programs' time divided by
# the target switches of that window (RATE x seconds; non-target switches
# on the machine are charged too, so this errs high). Far less noisy than
# the workload's CPU time. Set STATS=0 to skip it (needs bpftool).
# Use a build without sanitizers.
set -u -o pipefail

SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
RUNS=${RUNS:-5}
HOPS=${HOPS:-1000000}
RATE=${RATE:-100000}
STATS=${STATS:-1}
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

[ "$STATS" = 1 ] || exit 0
command -v bpftool >/dev/null || die "bpftool not found (STATS=0 to skip the bpf_stats part)"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$W"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
# stats CFG: one paced run, bpftool snapshots 1 s in and 1 s before the end,
# of the sched programs this run's ebpf-prof holds (prog ids from its
# /proc/PID/fdinfo: other ebpf-prof runs on a shared machine load programs
# of the same names).
stats()
{
	local cfg=$1 args=(-q -o "$W/o") secs=$((HOPS / RATE))
	[ "$cfg" = sched-acct ] && args+=(--no-offcpu-stacks)
	[ "$secs" -ge 4 ] || die "HOPS/RATE must be >= 4 s for the bpf_stats window"
	rm -rf "$W/o"
	"$EP_BIN" "${args[@]}" -- "$W/ctxswitch" --hops "$HOPS" --rate "$RATE" >"$W/out" 2>"$W/err" &
	local pid=$!
	sleep 1
	bpftool prog show -j >"$W/a"
	cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' >"$W/ids"
	sleep $((secs - 2))
	bpftool prog show -j >"$W/b"
	wait "$pid" || die "$cfg stats run failed: $(tail -n 3 "$W/err")"
	python3 - "$W/a" "$W/b" "$W/ids" "$cfg" "$RATE" "$((secs - 2))" >>"$W/stats" <<'PY'
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
ids = set(int(x) for x in open(sys.argv[3]).read().split())
cfg, rate, secs = sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
names = ("sched_switch", "sched_wake", "sched_wake_new", "sched_exit")
pick = lambda l: {p["name"]: p for p in l if p["id"] in ids and p.get("name") in names}
A, B = pick(a), pick(b)
total = 0
for n in names:
    if n in A and n in B:
        dc = B[n].get("run_cnt", 0) - A[n].get("run_cnt", 0)
        dt = B[n].get("run_time_ns", 0) - A[n].get("run_time_ns", 0)
        total += dt
        if dc > 0 and n in ("sched_switch", "sched_wake"):
            print(cfg, n, dt / dc, dc / secs)
print(cfg, "per_target_switch", total / (rate * secs), 0)
PY
}
for ((r = 1; r <= RUNS; r++)); do
	for cfg in sched-acct sched-full; do
		stats "$cfg"
	done
done
python3 - "$W/stats" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("bpf_stats (paced, median of %d runs):" % (len(rows) // 6 or 1))
for cfg in ("sched-acct", "sched-full"):
    for n in ("sched_switch", "sched_wake", "per_target_switch"):
        v = [float(r[2]) for r in rows if r[0] == cfg and r[1] == n]
        rate = [float(r[3]) for r in rows if r[0] == cfg and r[1] == n]
        if v:
            extra = "  (%.0f runs/s)" % statistics.median(rate) if n != "per_target_switch" else ""
            print("  %-10s %-18s %7.0f ns  [%s]%s" % (cfg, n, statistics.median(v), " ".join("%.0f" % x for x in v), extra))
PY

