#!/usr/bin/env bash
# Soak: the collector's memory on a long attach to a real workload.
# The collector's RSS is sampled every SOAK_STEP seconds; after the warm-up
# (SOAK_WARMUP, default a third of the run) it must stay flat:
#   - growth after warm-up (least-squares slope x time) under SOAK_MAX_GROWTH_KB
#     (default 1024: 1 MB over the last 20 minutes of a 30-minute run);
#   - every sample after warm-up within +-10% of their median;
#   - with a run of 15 minutes or more, RSS at 15 min within 2% of RSS at 10 min.
# The outputs must be written in under 2 s after the run ends (the recorder's
# "stop took" line) and be valid (report.json, trace.json, speedscope parse).
#   sudo tools/bench/soak.sh                      30 min on the Python + llama.cpp
#                                                 + SQLite experiment (WORKLOAD=llama)
#   SOAK_SECONDS=600 sudo tools/bench/soak.sh     shorter (say so with the figures)
#   WORKLOAD=demo                                 the demo experiment (C, no npm)
#   SOAK_ARGS="--rotate 10 --keep 5"              continuous mode
#   SOAK_TOP=1                                    `ebpf-prof top` (plain-text snapshots)
# Prints the RSS series, the growth per minute after warm-up and one line per
# criterion; exit 1 when one fails. Not a test (minutes long): docs/performance.md
# has runs; tests/integration/test_bounded_memory.sh is the short version in the suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
secs=${SOAK_SECONDS:-1800}
step=${SOAK_STEP:-30}
warm=${SOAK_WARMUP:-$((secs / 3))}
workload=${WORKLOAD:-llama}
dir=$(realpath "${BUILD_DIR:-build}")
bin=$dir/ebpf-prof
[ "$(id -u)" -eq 0 ] || { echo "soak.sh: needs root" >&2; exit 1; }
[ -x "$bin" ] || { echo "soak.sh: build first ($bin)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ep-soak.XXXXXX")
target_pid=
trap '[ -n "$target_pid" ] && kill $target_pid 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT

case $workload in
llama)
	llama_dir=${EP_LLAMA_LIB_DIR:-$dir/llama-npm/package/bins/linux-x64}
	if [ ! -f "$llama_dir/libllama.v0.5.0.so" ]; then
		mkdir -p "$dir/llama-npm"
		(cd "$dir/llama-npm" && npm pack --silent @node-llama-cpp/linux-x64@3.22.1 >/dev/null &&
			tar xzf node-llama-cpp-linux-x64-3.22.1.tgz)
	fi
	python3 "$src/tests/integration/tiny_llama_gguf.py" "$work/tiny.gguf"
	python3 "$src/tools/bench/py_llama_experiment.py" "$llama_dir" "$work/tiny.gguf" \
		"$work/x.db" $((secs + 60)) >"$work/target.out" 2>&1 &
	target_pid=$!
	cycle=(--cycle-every libllama:llama_tokenize)
	;;
demo)
	[ -x "$dir/tests/targets/demo_experiment" ] || { echo "soak.sh: no demo_experiment" >&2; exit 1; }
	"$dir/tests/targets/demo_experiment" $((secs + 60)) >"$work/target.out" 2>&1 &
	target_pid=$!
	cycle=()
	;;
*) echo "soak.sh: WORKLOAD=llama or demo" >&2; exit 1 ;;
esac
for _ in $(seq 300); do grep -q '^ready' "$work/target.out" && break; sleep 0.1; done
grep -q '^ready' "$work/target.out" || { cat "$work/target.out"; exit 1; }

sub=()
[ "${SOAK_TOP:-0}" = 1 ] && sub=(top)
# shellcheck disable=SC2206
extra=(${SOAK_ARGS:-})
"$bin" "${sub[@]}" -v -F 199 --pid "$target_pid" "${cycle[@]}" "${extra[@]}" -d "$secs" \
	-o "$work/out" >"$work/prof.out" 2>"$work/prof.err" &
prof_pid=$!
t0=$(date +%s)
: >"$work/rss"
echo "soak: $workload, ${secs} s, RSS every ${step} s, warm-up ${warm} s: ${sub[*]} -F 199 ${cycle[*]} ${extra[*]}"
while kill -0 "$prof_pid" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$prof_pid/status" 2>/dev/null || true)
	[ -n "$rss" ] && echo "$(($(date +%s) - t0)) $rss" | tee -a "$work/rss"
	sleep "$step"
done
rc=0
wait "$prof_pid" || rc=$?
echo "ebpf-prof exited $rc after $(($(date +%s) - t0)) s (-d $secs)"
[ "$rc" -eq 0 ] || { tail -n 20 "$work/prof.err"; exit 1; }

SECS=$secs WARM=$warm MAXG=${SOAK_MAX_GROWTH_KB:-1024} TOP=${SOAK_TOP:-0} python3 - "$work" <<'PY'
import json, os, re, statistics, sys
w = sys.argv[1]
secs, warm, maxg = float(os.environ["SECS"]), float(os.environ["WARM"]), float(os.environ["MAXG"])
fails = []
rows = [tuple(map(int, l.split())) for l in open(os.path.join(w, "rss")) if l.strip()]
# After warm-up, the final sample (taken while the outputs are written) left out.
late = [(t, kb) for t, kb in rows if warm <= t <= secs]
if len(late) < 3:
    fails.append("only %d RSS samples after warm-up" % len(late))
else:
    n = len(late)
    mt = sum(t for t, _ in late) / n
    mk = sum(k for _, k in late) / n
    slope = sum((t - mt) * (k - mk) for t, k in late) / sum((t - mt) ** 2 for t, _ in late)
    span = late[-1][0] - late[0][0]
    growth = slope * span
    med = statistics.median(k for _, k in late)
    lo, hi = min(k for _, k in late), max(k for _, k in late)
    print("RSS after warm-up: %d samples over %d s, median %.1f MiB, min %.1f, max %.1f"
          % (n, span, med / 1024, lo / 1024, hi / 1024))
    print("growth after warm-up: %.1f KiB/min, %.0f KiB in total (limit %.0f KiB)"
          % (slope * 60, growth, maxg))
    if growth > maxg:
        fails.append("RSS grew %.0f KiB after warm-up, limit %.0f" % (growth, maxg))
    if lo < 0.9 * med or hi > 1.1 * med:
        fails.append("RSS not flat within +-10% after warm-up")
    def at(sec):
        c = [k for t, k in rows if abs(t - sec) <= 30]
        return statistics.median(c) if c else None
    r10, r15 = at(600), at(900)
    if secs >= 900 and r10 and r15:
        print("RSS at 10 min %.1f MiB, at 15 min %.1f MiB (%+.2f%%)" % (r10 / 1024, r15 / 1024, (r15 / r10 - 1) * 100))
        if abs(r15 / r10 - 1) > 0.02:
            fails.append("RSS at 15 min not within 2% of RSS at 10 min")
err = open(os.path.join(w, "prof.err")).read()
m = re.search(r"stop took (\d+) ms: sampler drain (\d+), modules (\d+), outputs (\d+)", err)
if not m:
    fails.append("no 'stop took' line (needs -v)")
else:
    stop, drain, mods, outs = map(int, m.groups())
    print("stop %d ms (drain %d, modules %d, outputs %d)" % (stop, drain, mods, outs))
    if stop >= 2000:
        fails.append("outputs written %d ms after the end, want < 2000" % stop)
m = re.search(r"timeline: samples merged per (\d+) ms", open(os.path.join(w, "prof.out")).read() + err)
if m:
    print("timeline merged per %s ms" % m.group(1))
out = os.path.join(w, "out")
R = json.load(open(os.path.join(out, "report.json")))
if os.path.exists(os.path.join(out, "trace.json")):
    json.load(open(os.path.join(out, "trace.json")))
if os.path.exists(os.path.join(out, "profile.speedscope.json")):
    json.load(open(os.path.join(out, "profile.speedscope.json")))
cm = R.get("cycles_meta") or {}
print("samples %d, dropped %d; cycles %s (rows kept %s, not kept %s); findings %d; timeline bucket %s ns"
      % (R["samples"]["total"], R["dropped"]["total"],
         (cm.get("all_cycles") or {}).get("count", len(R.get("cycles") or [])), cm.get("rows_kept"),
         cm.get("rows_not_kept"), len(R.get("findings") or []),
         R.get("sampling", {}).get("timeline_bucket_ns")))
for f in fails:
    print("FAIL: " + f)
print("soak: " + ("FAIL" if fails else "ok"))
sys.exit(1 if fails else 0)
PY
