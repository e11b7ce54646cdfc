#!/bin/bash
# Per-sample cost benchmark (not a test): what each sample costs the profiled
# thread, measured as gaps in that thread's own timeline (tools/bench/
# stall_meter.c), for ebpf-prof and perf at the same rate.
#
#   sudo tools/bench/stall.sh                       # uses ./build
#   sudo EP_BIN=/path/ebpf-prof RUNS=7 HZ=999 tools/bench/stall.sh
#
# Why this and not only overhead.sh: wall-time slowdowns of 0.2-2% are far
# inside this VM's run-to-run noise, but every sampling interrupt shows up as
# one gap of a few microseconds in a loop that does nothing but read
# CLOCK_MONOTONIC. Per configuration the script reports, against the
# unprofiled runs of the same series (medians over the rounds):
#   extra/s        gaps of 2-50 us added per second (should be close to HZ)
#   us/sample      time added in those gaps / gaps added
#   stolen%        time added as a share of the run: the slowdown the profiled
#                  thread sees from in-context work
#   extra med      median size of the added gaps (robust to the host's tail)
#   large%         time in gaps >= 200 us (the host preempting the vCPU,
#                  another task on the CPU): mostly noise, but a profiler
#                  whose own process competed for the workload's CPU shows there
# then the spread of the base runs and, for ebpf-prof against its perf
# counterpart, in how many rounds it added less time. The host's hiccups come
# in the same 2-50 us sizes, so single runs spread by about a point: use many
# rounds.
# The workload is pinned to the last CPU; profilers are not.
#
# Env: RUNS (default 5), HZ (default 999), SECONDS_PER_RUN (default 3),
#      CONFIGS (default "base ep ep-fp ep-sampler ep-fp-sampler perf perf-dwarf"),
#      EP_ALT_BIN (a second build, for configs named NAME+alt),
#      PERF, KEEP_RESULTS (a file to keep the raw lines in), ANALYZE (print
#      the tables for such a file instead of running), STACK_KIB (how
#      deep the meter spins, default 0: an 8 KiB window then crosses the end
#      of the stack on every sample, as in most worker threads).
# ep = defaults (every module, --unwind auto); ep-fp = --unwind fp; *-sampler =
# the CPU sampler alone (--no-sched --probes none); ep-fp-nosched and
# ep-fp-noprobes leave out one of the two; perf = perf record -g;
# perf-dwarf = perf record --call-graph dwarf,8192 (the same window as ours).

set -u -o pipefail

SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
EP_BIN=${EP_BIN:-$SRC_DIR/build/ebpf-prof}
RUNS=${RUNS:-5}
HZ=${HZ:-999}
SECS=${SECONDS_PER_RUN:-3}
CONFIGS=${CONFIGS:-base ep ep-fp ep-sampler ep-fp-sampler perf perf-dwarf}
PERF=${PERF:-perf}

die() { echo "stall.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (BPF and perf sampling)"
[ -x "$EP_BIN" ] || die "no ebpf-prof at $EP_BIN (set EP_BIN)"
command -v "$PERF" >/dev/null || die "perf not found (set PERF=)"

W=$(mktemp -d /tmp/ep-stall.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
cc -O2 -o "$W/stall_meter" "$SRC_DIR/tools/bench/stall_meter.c" || die "cannot build stall_meter"
CPU=$(($(nproc) - 1))
METER=(taskset -c "$CPU" "$W/stall_meter" --seconds "$SECS" --stack-kib "${STACK_KIB:-0}")

run_cfg()
{
	local name=$1 out="$W/run.out" EP_BIN=$EP_BIN
	rm -rf "$W/ep-out"
	# NAME+alt: the same configuration with EP_ALT_BIN (A/B of two builds).
	if [[ $name == *+alt ]]; then
		[ -x "${EP_ALT_BIN:-}" ] || die "$name needs EP_ALT_BIN"
		EP_BIN=$EP_ALT_BIN
	fi
	case ${name%+alt} in
	base) "${METER[@]}" ;;
	ep) "$EP_BIN" -q -F "$HZ" -o "$W/ep-out" -- "${METER[@]}" ;;
	ep-fp) "$EP_BIN" -q --unwind fp -F "$HZ" -o "$W/ep-out" -- "${METER[@]}" ;;
	ep-sampler)
		"$EP_BIN" -q --no-sched --probes none -F "$HZ" -o "$W/ep-out" -- "${METER[@]}" ;;
	ep-fp-sampler)
		"$EP_BIN" -q --unwind fp --no-sched --probes none -F "$HZ" -o "$W/ep-out" -- \
			"${METER[@]}" ;;
	ep-fp-nosched)
		"$EP_BIN" -q --unwind fp --no-sched -F "$HZ" -o "$W/ep-out" -- "${METER[@]}" ;;
	ep-fp-noprobes)
		"$EP_BIN" -q --unwind fp --probes none -F "$HZ" -o "$W/ep-out" -- "${METER[@]}" ;;
	perf) "$PERF" record -q -e cpu-clock -g -F "$HZ" -o "$W/perf.data" -- "${METER[@]}" ;;
	perf-dwarf)
		"$PERF" record -q -e cpu-clock --call-graph dwarf,8192 -F "$HZ" -o "$W/perf.data" -- \
			"${METER[@]}" ;;
	*) die "unknown config $name" ;;
	esac >"$out" 2>"$W/run.err" || die "$name run failed: $(tail -n 3 "$W/run.err")"
	local line hist
	line=$(grep -E '^stall ' "$out") || die "$name: meter printed no result line"
	hist=$(grep -E '^hist_us ' "$out") || die "$name: meter printed no histogram"
	echo "$name $line hist=${hist#hist_us }" >>"$W/results"
}

# ANALYZE=FILE: only the tables, for the raw lines kept by an earlier run.
if [ -n "${ANALYZE:-}" ]; then
	cp "$ANALYZE" "$W/results" || die "cannot read $ANALYZE"
	RUNS=0
else
	echo "stall.sh: $RUNS runs x {$CONFIGS} at $HZ Hz, ${SECS}s each, meter on CPU $CPU" >&2
fi
for ((r = 1; r <= RUNS; r++)); do
	for c in $CONFIGS; do
		run_cfg "$c"
	done
	echo "  round $r/$RUNS done" >&2
done
[ -z "${KEEP_RESULTS:-}" ] || [ -n "${ANALYZE:-}" ] || cp "$W/results" "$KEEP_RESULTS"

# Gaps of 2-50 us only: the sampling gaps are 5-20 us here, longer ones are
# the host's and would only add noise. Per config: gaps added per second and
# their mean size (= cost per sample) against the median base histogram.
python3 - "$W/results" "$HZ" <<'EOF'
import sys, statistics as st
res, hz = sys.argv[1], int(sys.argv[2])
LIMIT = 50
runs = {}
for line in open(res):
    name, _, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    el = int(d["elapsed_ns"]) / 1e9
    h = [int(x) / el for x in d["hist"].split(",")][:LIMIT]
    runs.setdefault(name, []).append({
        "hist": h,  # gaps per second in each 1 us step
        "n": sum(h),
        "ns": sum(c * (i + 0.5) * 1e3 for i, c in enumerate(h)),
        "large": int(d["large_ns"]) / el,
    })
if "base" not in runs:
    sys.exit("stall.sh: no base runs")
def med_hist(name):
    return [st.median(r["hist"][i] for r in runs[name]) for i in range(LIMIT)]
base_h = med_hist("base")
# Totals of the base runs, not the sum of per-step medians (which is lower
# than any run's total and would inflate every "extra").
base_n = st.median(r["n"] for r in runs["base"])
base_ns = st.median(r["ns"] for r in runs["base"])
print(f"gaps of 2-{LIMIT} us per second; extra = above the median of the base runs")
print(f"{'config':<12} {'extra/s':>8} {'us/sample':>10} {'range':>13} {'stolen%':>8} "
      f"{'extra med':>9} {'large%':>7}")
for name in runs:
    rs = runs[name]
    extra = st.median(r["n"] - base_n for r in rs)
    per = [(r["ns"] - base_ns) / (r["n"] - base_n) / 1e3 if r["n"] - base_n > 0.1 * hz
           else float("nan") for r in rs]
    stolen = st.median((r["ns"] - base_ns) / 1e7 for r in rs)
    # Median size of the added gaps: the per-step excess of the median
    # histogram over base, walked to its half.
    eh = [max(0.0, a - b) for a, b in zip(med_hist(name), base_h)]
    tot, acc, emed = sum(eh), 0.0, float("nan")
    for i, c in enumerate(eh):
        acc += c
        if tot > 0.1 * hz and acc * 2 >= tot:
            emed = i + 0.5
            break
    cost = st.median(per) if name != "base" else float("nan")
    print(f"{name:<12} {extra:8.0f} {cost:10.2f} {min(per):6.2f}..{max(per):<5.2f} "
          f"{stolen:8.3f} {emed:8.1f}u {st.median(r['large'] for r in rs) / 1e7:7.3f}")
bs = sorted(r["ns"] / 1e7 for r in runs["base"])
# The host's own hiccups come in the same sizes as samples: single runs
# spread by about a point; compare medians, and round by round (runs of one
# round are back to back, so a slow spell of the host hits all of them).
print(f"base runs: {bs[0]:.2f}-{bs[-1]:.2f}% of the time in 2-{LIMIT} us gaps "
      f"(spread {bs[-1] - bs[0]:.2f} points between single runs)")
pairs = [("ep", "perf-dwarf"), ("ep-sampler", "perf-dwarf"), ("ep-fp", "perf"),
         ("ep-fp-sampler", "perf")] + [(n[:-4], n) for n in runs if n.endswith("+alt")]
for a, b in pairs:
    if a in runs and b in runs and len(runs[a]) == len(runs[b]):
        below = sum(x["ns"] < y["ns"] for x, y in zip(runs[a], runs[b]))
        print(f"  {a} below {b} in {below} of {len(runs[a])} rounds")
EOF
