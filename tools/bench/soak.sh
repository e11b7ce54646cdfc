#!/usr/bin/env bash
# Soak: ebpf-prof against the demo experiment for 10 minutes.
# The collector's RSS is sampled every 10 s and must end flat: every sample of
# the last half within +-10% of that half's median. The outputs must be
# written in under 2 s after the run ends (the recorder's "stop took" line)
# and be valid (report.json, trace.json, speedscope parse; cycles present).
#   sudo tools/bench/soak.sh                  10 min, build/ (BUILD_DIR)
#   SOAK_SECONDS=180 sudo tools/bench/soak.sh a shorter run (say so with the figures)
# Prints the RSS series and one line per criterion; exit 1 when one fails.
# Not a test (minutes long, timing-dependent): docs/performance.md has runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${SOAK_SECONDS:-600}
step=${SOAK_STEP:-10}
dir=${BUILD_DIR:-build}
bin=$dir/ebpf-prof
demo=$dir/tests/targets/demo_experiment
[ "$(id -u)" -eq 0 ] || { echo "soak.sh: needs root" >&2; exit 1; }
[ -x "$bin" ] && [ -x "$demo" ] || { echo "soak.sh: build first ($bin, $demo)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ep-soak.XXXXXX")
trap 'kill $demo_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

"$demo" $((secs + 60)) >"$work/demo.out" 2>&1 &
demo_pid=$!
for _ in $(seq 100); do grep -q ready "$work/demo.out" && break; sleep 0.1; done
"$bin" -v --pid "$demo_pid" -F 199 -d "$secs" -o "$work/out" >"$work/prof.out" 2>"$work/prof.err" &
prof_pid=$!
t0=$(date +%s)
: >"$work/rss"
while kill -0 "$prof_pid" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$prof_pid/status" 2>/dev/null || true)
	[ -n "$rss" ] && echo "$(($(date +%s) - t0)) $rss" | tee -a "$work/rss"
	sleep "$step"
done
rc=0
wait "$prof_pid" || rc=$?
echo "ebpf-prof exited $rc after $(($(date +%s) - t0)) s (-d $secs)"
[ "$rc" -eq 0 ] || { tail -n 20 "$work/prof.err"; exit 1; }

SECS=$secs python3 - "$work" <<'PY'
import json, os, re, statistics, sys
w = sys.argv[1]
secs = float(os.environ["SECS"])
fails = []
rows = [tuple(map(int, l.split())) for l in open(os.path.join(w, "rss")) if l.strip()]
# The last half of the run, the final sample (taken while the outputs are
# written) left out.
half = [kb for t, kb in rows if t >= secs / 2 and t <= secs]
if len(half) < 3:
    fails.append("only %d RSS samples in the last half" % len(half))
else:
    med = statistics.median(half)
    lo, hi = min(half), max(half)
    print("RSS last half: %d samples, median %.1f MiB, min %.1f, max %.1f (%+.1f%% / %+.1f%%)"
          % (len(half), med / 1024, lo / 1024, hi / 1024, (lo / med - 1) * 100, (hi / med - 1) * 100))
    if lo < 0.9 * med or hi > 1.1 * med:
        fails.append("RSS not flat within +-10% over the last half")
    first = [kb for t, kb in rows if t < secs / 2]
    if first:
        print("RSS first half: median %.1f MiB, max %.1f MiB" % (statistics.median(first) / 1024, max(first) / 1024))
err = open(os.path.join(w, "prof.err")).read()
m = re.search(r"stop took (\d+) ms: sampler drain (\d+), modules (\d+), outputs (\d+)", err)
if not m:
    fails.append("no 'stop took' line (needs -v)")
else:
    stop, drain, mods, outs = map(int, m.groups())
    print("stop %d ms (drain %d, modules %d, outputs %d)" % (stop, drain, mods, outs))
    if stop >= 2000:
        fails.append("outputs written %d ms after the end, want < 2000" % stop)
out = os.path.join(w, "out")
R = json.load(open(os.path.join(out, "report.json")))
json.load(open(os.path.join(out, "trace.json")))
json.load(open(os.path.join(out, "profile.speedscope.json")))
cm = R.get("cycles_meta", {})
print("samples %d, dropped %d; cycles %d (rows kept %s, not kept %s); findings %d; duration %.1f s"
      % (R["samples"]["total"], R["dropped"]["total"],
         cm.get("all_cycles", {}).get("count", len(R.get("cycles", []))), cm.get("rows_kept"),
         cm.get("rows_not_kept"), len(R.get("findings", [])), R["time"]["duration_ns"] / 1e9))
if not R.get("cycles"):
    fails.append("no cycles in report.json")
for f in fails:
    print("FAIL: " + f)
print("soak: " + ("FAIL" if fails else "ok"))
sys.exit(1 if fails else 0)
PY
