#!/bin/bash
# Cost of the Python frame walk per sample (not a test), two builds side by
# side: EP_BASE (a build before a change) and EP_BIN, interleaved, RUNS
# rounds, medians. Two figures per configuration:
#  - "walk": the walk's own time (bpf/pyframes.bpf.h times itself; -v says
#    "python: walk cost N ns per sample");
#  - "prog": the kernel's run-time statistics of the whole perf-event
#    program (run_time_ns / run_cnt from its fdinfo, statistics enabled
#    while this script holds a BPF_ENABLE_STATS fd), over the target's
#    samples: walk + native stack + the rest, and --python native beside
#    it for the walk's share.
# Workload: tools/bench/py_rec.py at depth 28 (30 Python frames) and 1
# (3 frames), one busy thread, 999 Hz for 3 s, --pid.
#
#   sudo EP_BASE=/tmp/base/build/ebpf-prof tools/bench/python_walk_cost.sh
#   PYS="/usr/bin/python3.11 /root/.pyenv/versions/3.12.1/bin/python3.12" DEPTHS="28 1" RUNS=5
set -u -o pipefail
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
EP_BASE=${EP_BASE:-}
RUNS=${RUNS:-3}
PYS=${PYS:-/usr/bin/python3.11}
DEPTHS=${DEPTHS:-28 1}
die() { echo "python_walk_cost.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$EP_BIN" ] || die "no ebpf-prof at $EP_BIN (set EP_BIN)"
W=$(mktemp -d /tmp/ep-pwc.XXXXXX) || die "mktemp failed"
PIDS=()
cleanup()
{
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$W"
}
trap cleanup EXIT

python3 -c '
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(16)
fd = libc.syscall(321, 32, attr, 16)
if fd < 0:
    sys.exit("BPF_ENABLE_STATS failed: " + os.strerror(ctypes.get_errno()))
print("stats on", flush=True)
signal.pause()' >"$W/stats.out" 2>&1 &
PIDS+=($!)
for ((i = 0; i < 100; i++)); do grep -qs "stats on" "$W/stats.out" && break; sleep 0.05; done
grep -q "stats on" "$W/stats.out" || die "$(cat "$W/stats.out")"

# one BIN_LABEL BIN PY DEPTH MODE: appends "label py depth mode walk_ns prog_ns_per_sample".
one()
{
	local label=$1 bin=$2 py=$3 depth=$4 mode=$5 tp ep stats samples walk
	"$py" "$SRC_DIR/tools/bench/py_rec.py" 6 "$depth" >/dev/null 2>&1 &
	tp=$!
	sleep 0.5
	"$bin" -v --pid "$tp" -F 999 -d 3 --no-sched --probes none --no-gpu --python "$mode" \
		-o "$W/o" >/dev/null 2>"$W/ep.err" &
	ep=$!
	sleep 2.8
	stats=
	for fd in /proc/"$ep"/fd/*; do
		[ "$(readlink "$fd")" = "anon_inode:bpf-prog" ] || continue
		f=/proc/$ep/fdinfo/${fd##*/}
		grep -q "^prog_type:[[:space:]]*7$" "$f" || continue
		stats=$(awk '/^run_time_ns/ {t=$2} END {print t}' "$f")
		break
	done
	wait "$ep" || die "ebpf-prof failed: $(tail -n 3 "$W/ep.err")"
	kill "$tp" 2>/dev/null
	wait "$tp" 2>/dev/null
	samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"]["total"])' "$W/o/report.json")
	walk=$(sed -n 's/.*walk cost \([0-9]*\) ns per sample.*/\1/p' "$W/ep.err")
	# The statistics were read at 2.8 s of a 3 s run: scale the samples.
	echo "$label $(basename "$py") $depth $mode ${walk:-0} $((${stats:-0} * 30 / 28 / (samples > 0 ? samples : 1)))" >>"$W/res"
	rm -rf "$W/o"
}

for ((r = 1; r <= RUNS; r++)); do
	for py in $PYS; do
		for d in $DEPTHS; do
			[ -n "$EP_BASE" ] && one base "$EP_BASE" "$py" "$d" mixed
			one new "$EP_BIN" "$py" "$d" mixed
			one new "$EP_BIN" "$py" "$d" native
		done
	done
	echo "  round $r/$RUNS done" >&2
done
python3 - "$W/res" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, py, d, mode, walk, prog = line.split()
    rows.setdefault((py, int(d), label, mode), []).append((int(walk), int(prog)))
print("%-12s %5s %-5s %-7s %10s %14s" % ("python", "depth", "build", "mode", "walk ns", "prog ns/sample"))
for k in sorted(rows, key=lambda k: (k[0], -k[1], k[2], k[3])):
    rs = rows[k]
    print("%-12s %5d %-5s %-7s %10.0f %14.0f" % (k[0], k[1], k[2], k[3], statistics.median(w for w, _ in rs),
                                              statistics.median(p for _, p in rs)))
PY
