#!/bin/bash
# Cost of --alloc inside the target (docs/performance.md, "Allocation
# sampling").
#
#   sudo tools/bench/alloc_overhead.sh [BUILD_DIR] [RUNS]
#
# tools/bench/alloc_bench.c runs cycles of 2,000 malloc/free pairs (16..4096
# bytes) and times them, then times 20,000 malloc(64) and 20,000 free in a
# row, then 2,000 mmap/touch/munmap of 64 KiB anonymous mappings. Modes,
# RUNS interleaved rounds each, medians printed:
#   bare     no profiler
#   prof     ebpf-prof without --alloc (the CPU sampler, scheduler, ...)
#   alloc    ebpf-prof --alloc (default rate 512 KiB)
#   nosess   the same as on a kernel without uprobe sessions (before 6.13:
#            a return probe on every call; EBPF_PROF_FAULT_BPF=alloc_session)
#   base     --alloc with another build, BASE_BIN=path/ebpf-prof (optional:
#            a before/after comparison within the same rounds)
# and the same three with 10 ms of arithmetic per cycle after the pairs
# (the ratio depends on what else a cycle does: the pairs alone are the
# worst case). The ratios are against the same script's bare runs on this
# shared machine. The in-kernel cost of one sampled stack (walk, table,
# ring) comes from the BPF counter memory.alloc.cost.sampled_path_ns.
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-5}
BIN=$BUILD/ebpf-prof
[ -x "$BIN" ] || { echo "no $BIN: build first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
WORK=$(mktemp -d /tmp/ep-alloc-bench.XXXXXX)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/alloc_bench" "$(dirname "$0")/alloc_bench.c"

wait_for() # PATTERN FILE SECONDS
{
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt "$end" ]; do
		grep -Eq -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "timed out waiting for /$1/ in $2" >&2
	return 1
}

# one MODE WORK_US CYCLES RUN -> appends "mode work cycle_ns malloc_ns free_ns [sample_ns]"
one()
{
	local mode=$1 work=$2 cycles=$3 run=$4 out="$WORK/$1.$2.$4" pid ppid=
	"$WORK/alloc_bench" "$cycles" 2000 "$work" 20000 >"$out.target" &
	pid=$!
	wait_for '^ready ' "$out.target" 10
	case $mode in
	prof | alloc | nosess | base)
		local extra=() fault= bin=$BIN
		[ "$mode" != prof ] && extra=(--alloc)
		[ "$mode" = nosess ] && fault=alloc_session
		[ "$mode" = base ] && bin=$BASE_BIN
		EBPF_PROF_FAULT_BPF=$fault "$bin" -v --pid "$pid" -o "$out.dir" --no-gpu "${extra[@]}" >"$out.prof" 2>&1 &
		ppid=$!
		wait_for 'sampling 1 process' "$out.prof" 30
		[ "$mode" != prof ] && wait_for 'alloc: pid .* probed' "$out.prof" 5
		;;
	esac
	kill -USR1 "$pid"
	wait "$pid"
	[ -n "$ppid" ] && wait "$ppid"
	local s=""
	[ "$mode" != prof ] && [ "$mode" != bare ] && s=$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["memory"]["alloc"]
print("%.0f" % (a["cost"]["sampled_path_ns"] / max(a["samples"], 1)))' "$out.dir/report.json")
	echo "$mode $work $(awk '$1 != "ready" {print $2}' "$out.target" | paste -sd' ') $s" >>"$WORK/results"
}

MODES="bare prof alloc nosess"
[ -n "${BASE_BIN:-}" ] && MODES="$MODES base"
for run in $(seq "$RUNS"); do
	for mode in $MODES; do
		one $mode 0 50 "$run"
		one $mode 10000 20 "$run"
	done
done
python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(mode, work, col):
    v = [float(r[col]) for r in rows if r[0] == mode and r[1] == work and len(r) > col]
    return statistics.median(v) if v else float("nan")
has_base = any(r[0] == "base" for r in rows)
for work in ("0", "10000"):
    b, p, a, n = (med(m, work, 2) for m in ("bare", "prof", "alloc", "nosess"))
    print("cycle of 2,000 pairs + %s us work: bare %.2f ms, profiled %.2f ms, --alloc %.2f ms "
          "(x%.2f vs bare, x%.2f vs profiled, +%.2f ms); without sessions %.2f ms (x%.2f vs bare)"
          % (work, b / 1e6, p / 1e6, a / 1e6, a / b, a / p, (a - p) / 1e6, n / 1e6, n / b))
    if has_base:
        o = med("base", work, 2)
        print("  base build --alloc %.2f ms (x%.2f vs bare); this build / base x%.3f" % (o / 1e6, o / b, a / o))
for col, name in ((3, "malloc"), (4, "free"), (5, "mmap+munmap 64 KiB")):
    b, p, a, n = (med(m, "0", col) for m in ("bare", "prof", "alloc", "nosess"))
    print("%s: bare %.0f ns, profiled %.0f ns, --alloc %.0f ns per call (+%.0f ns); without "
          "sessions %.0f ns (+%.0f ns)" % (name, b, p, a, a - p, n, n - p))
    if has_base:
        o = med("base", "0", col)
        print("  base build --alloc %.0f ns (+%.0f ns vs profiled); this build - base %+.0f ns" % (o, o - p, a - o))
print("sampled path in BPF (stack walk, live table, ring): %.0f ns per sample (median of runs)"
      % med("alloc", "0", 6))
PY
