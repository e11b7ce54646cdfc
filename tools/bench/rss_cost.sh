#!/bin/bash
# What RSS tracking (kmem/rss_stat) costs a page fault (not a test):
#
#   sudo tools/bench/rss_cost.sh [BUILD_DIR] [RUNS]
#
# The tracepoint fires on every page fault of every process on the machine,
# traced or not. tools/bench/fault_bench.c touches 64 MiB page by page (15
# rounds, median ns per fault). Modes, RUNS interleaved rounds (default 7),
# medians printed with the extra ns per fault against bare:
#   bare            no profiler
#   target-raw      ebpf-prof -F 1 -- fault_bench: the default program, the
#                   raw tracepoint (tp_btf) where the kernel has BTF
#   target-classic  the same with the classic tracepoint (the raw one refused
#                   through EBPF_PROF_FAULT_BPF, as on a kernel without BTF)
#   target-none     neither: RSS from /proc sampling (the rest of ebpf-prof
#                   as in the two above)
#   other-raw       fault_bench untraced while ebpf-prof -F 1 --pid profiles
#                   another process (a sleep): what every other process pays
#   other-classic   the same with the classic tracepoint
# -F 1: the CPU sampler's own cost out of the way. Compare modes within one
# run of the script only (this VM's timings move 10-20% from run to run).
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-7}
BIN=$BUILD/ebpf-prof
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$BIN" ] || { echo "no $BIN: build first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
WORK=$(mktemp -d /tmp/ep-rss-cost.XXXXXX)
SLEEPER=
trap '[ -n "$SLEEPER" ] && kill "$SLEEPER" 2>/dev/null; rm -rf "$WORK"' EXIT
FB=$WORK/fault_bench
cc -O2 -o "$FB" "$SRC/tools/bench/fault_bench.c"
NO_RAW=sm_:sm_rss_btf
NO_RSS=sm_:sm_rss_btf,sm_rss

# other FAULT OUT: fault_bench beside a profiled sleep, its output in OUT
other()
{
	local fault=$1 out=$2 pid
	sleep 600 &
	SLEEPER=$!
	EBPF_PROF_FAULT_BPF=$fault "$BIN" -v -F 1 --no-gpu --pid "$SLEEPER" -o "$out.dir" >"$out.log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		grep -q "sampling 1 process" "$out.log" && break
		sleep 0.1
	done
	grep -q "sampling 1 process" "$out.log" || { cat "$out.log" >&2; exit 1; }
	"$FB" >"$out"
	kill -INT "$pid"
	wait "$pid" || true
	kill "$SLEEPER"
	wait "$SLEEPER" 2>/dev/null || true
	SLEEPER=
}

one()
{
	local mode=$1 out=$WORK/$1.$2
	case $mode in
	bare) "$FB" >"$out" ;;
	target-raw) "$BIN" -q -F 1 --no-gpu -o "$out.dir" -- "$FB" >"$out" ;;
	target-classic) EBPF_PROF_FAULT_BPF=$NO_RAW "$BIN" -q -F 1 --no-gpu -o "$out.dir" -- "$FB" >"$out" 2>/dev/null ;;
	target-none) EBPF_PROF_FAULT_BPF=$NO_RSS "$BIN" -q -F 1 --no-gpu -o "$out.dir" -- "$FB" >"$out" 2>/dev/null ;;
	other-raw) other "" "$out" ;;
	other-classic) other "$NO_RAW" "$out" ;;
	esac
	if [ -d "$out.dir" ]; then
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"]["sources"].get("rss_program", "none"))' \
			"$out.dir/report.json" >>"$WORK/$mode.prog"
		rm -rf "$out.dir"
	fi
	grep -m1 '^ns_per_fault ' "$out" | cut -d' ' -f2 >>"$WORK/$mode"
}

MODES="bare target-raw target-classic target-none other-raw other-classic"
for r in $(seq "$RUNS"); do
	for m in $MODES; do
		one "$m" "$r"
	done
done

python3 - "$WORK" "$MODES" <<'PY'
import os, statistics, sys
w, modes = sys.argv[1], sys.argv[2].split()
med = {m: statistics.median(float(x) for x in open(os.path.join(w, m))) for m in modes}
print("ns per page fault, medians of %d rounds (each the median of 15 x 64 MiB)" % len(open(os.path.join(w, "bare")).readlines()))
for m in modes:
    p = os.path.join(w, m + ".prog")
    prog = " (%s)" % ",".join(sorted(set(open(p).read().split()))) if os.path.exists(p) else ""
    print("  %-15s %7.1f ns  %+7.1f ns vs bare  x%.3f%s" % (m, med[m], med[m] - med["bare"], med[m] / med["bare"], prog))
PY
