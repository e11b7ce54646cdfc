#!/bin/bash
# Kernel-side cost of the CPU sampler per sample, by unwinding mode (not a
# test): the kernel's own accounting of the perf-event program (run_time_ns /
# run_cnt from the program's fdinfo in the collector), with statistics
# enabled only while this script holds a BPF_ENABLE_STATS fd (the sysctl is
# left alone). Unlike a slowdown ratio this is CPU time inside the program,
# so other load on the machine moves it little.
#
#   sudo tools/bench/unwind_bpf_cost.sh            # uses ./build
#   sudo EP_BIN=/path/ebpf-prof EP_TARGETS_DIR=/path/tests/targets tools/bench/unwind_bpf_cost.sh
#
# Workload: tests/targets/unwind_frameless (frameless, stacks up to 45 frames),
# or $TARGET (e.g. "kwalk_cases deep 60": 64 frames), one busy thread; 999 Hz for 4 s per configuration, RUNS rounds interleaved.
# "per target sample" divides all program time by the target's samples: the
# early return for other tasks' ticks is charged to it too, so it errs high.
set -u -o pipefail
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
EP_TARGETS_DIR=${EP_TARGETS_DIR:-$(dirname "$EP_BIN")/tests/targets}
RUNS=${RUNS:-3}
die() { echo "unwind_bpf_cost.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$EP_BIN" ] || die "no ebpf-prof at $EP_BIN (set EP_BIN)"
W=$(mktemp -d /tmp/ep-ubc.XXXXXX) || die "mktemp failed"
PIDS=()
cleanup()
{
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$W"
}
trap cleanup EXIT

# Hold a BPF_ENABLE_STATS fd (bpf(2) cmd 32, BPF_STATS_RUN_TIME) until killed.
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

# TARGET="kwalk_cases deep 60" walks 64 frames (gcc, no frame pointers).
# shellcheck disable=SC2086 # TARGET holds the target's arguments
"$EP_TARGETS_DIR"/${TARGET:-unwind_frameless 0} >"$W/t.out" 2>&1 &
TP=$!
PIDS+=("$TP")
sleep 0.3

cfg_args()
{
	case $1 in
	fp) echo "--unwind fp" ;;
	kwalk) echo "--unwind cfi-kernel" ;;
	*) echo "--unwind auto --stack-bytes $1" ;;
	esac
}
CFGS=${CFGS:-"kwalk fp 4096 8192 16384"}
for ((r = 1; r <= RUNS; r++)); do
	for c in $CFGS; do
		# shellcheck disable=SC2046 # word-split the options on purpose
		"$EP_BIN" -q --pid "$TP" -F 999 -d 4 --no-sched --probes none --no-gpu $(cfg_args "$c") \
			-o "$W/o" >/dev/null 2>"$W/ep.err" &
		EP=$!
		sleep 3.5
		stats=
		for fd in /proc/$EP/fd/*; do
			[ "$(readlink "$fd")" = "anon_inode:bpf-prog" ] || continue
			f=/proc/$EP/fdinfo/${fd##*/}
			# perf_event programs are type 7; one fd per CPU link points to the same prog.
			grep -q "^prog_type:[[:space:]]*7$" "$f" || continue
			stats=$(awk '/^run_time_ns/ {t=$2} /^run_cnt/ {c=$2} END {print t, c}' "$f")
			break
		done
		wait "$EP" || die "ebpf-prof failed: $(tail -n 3 "$W/ep.err")"
		samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"]["total"])' "$W/o/report.json")
		echo "$c $stats $samples" >>"$W/res"
		rm -rf "$W/o"
	done
	echo "  round $r/$RUNS done" >&2
done
python3 - "$W/res" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    c, t, n, s = line.split()
    rows.setdefault(c, []).append((int(t), int(n), int(s)))
print("%-8s %12s %12s %22s" % ("config", "ns/run", "runs(3.5s)", "ns per target sample"))
for c, rs in rows.items():
    per_run = statistics.median(t / max(n, 1) for t, n, _ in rs)
    per_smp = statistics.median(t / max(s * 3.5 / 4, 1) for t, _, s in rs)
    print("%-8s %12.0f %12d %22.0f" % (c, per_run, statistics.median(n for _, n, _ in rs), per_smp))
PY
