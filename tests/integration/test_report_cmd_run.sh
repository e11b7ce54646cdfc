#!/usr/bin/env bash
# A real recording without cycle options: the cycles module adds one
# whole-run cycle, the findings (no_cycles says how to define cycles) and
# the flame stacks to report.json, writes report.html and cycles.csv and
# prints the cycle summary; then `ebpf-prof report DIR` rebuilds them from
# report.json. Needs root (recording).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
out="$EP_WORK/out"
ep_prof_run 60 -d 2 -o "$out" -- "$EP_TARGETS_DIR/demo_experiment" 10 --no-marker
[ "$PROF_RC" -eq 0 ] || ep_fail "recording failed (rc $PROF_RC)"
grep -q "^Cycles: 1 (whole run" "$PROF_OUT" || ep_fail "run summary lacks the cycle line: $(cat "$PROF_OUT")"
ep_py "$out" <<'PY'
c = R.get("cycles")
check(isinstance(c, list) and len(c) == 1, "report.json: one whole-run cycle: %r" % c)
if c:
    check(c[0]["wall_ns"] == R["time"]["duration_ns"], "cycle wall = run duration")
    b = c[0]["breakdown"]
    parts = b["gc_ns"] + b["sql_ns"] + b["inference_ns"] + b["probes_ns"] + b["other_ns"] + sum(b["off_cpu_ns"].values())
    check(parts == c[0]["wall_ns"], "breakdown sums to the wall time: %d vs %d" % (parts, c[0]["wall_ns"]))
check(any(f["rule"] == "no_cycles" for f in R.get("findings", [])), "no_cycles finding")
fl = R.get("flame") or {}
check(fl.get("total") == R["samples"]["total"], "flame total = samples")
check(len(fl.get("stacks", [])) > 0 and all(0 <= i < len(fl["frames"]) for s in fl["stacks"] for i in s["f"]),
      "flame stacks index the frame table")
check(sum(s["n"] for s in fl.get("stacks", [])) <= fl.get("total", 0), "flame counts within the total")
check(os.path.getsize(os.path.join(D, "report.html")) > 0, "report.html written by the run")
check(os.path.getsize(os.path.join(D, "cycles.csv")) > 0, "cycles.csv written by the run")
PY
rm -f "$out/report.html" "$out/cycles.csv"
sum=$("$EP_BIN" report "$out") || ep_fail "ebpf-prof report failed: $sum"
ep_log "$sum"
grep -q "^Cycles: 1 (whole run" <<<"$sum" || ep_fail "no whole-run cycle line: $sum"
grep -q "No cycles defined" <<<"$sum" || ep_fail "no no_cycles finding: $sum"
ep_py "$out" <<'PY'
import csv
rows = list(csv.DictReader(open(os.path.join(D, "cycles.csv"))))
check(len(rows) == 1, "one whole-run row, got %d" % len(rows))
t = R["time"]
if rows:
    wall_ms = float(rows[0]["wall_ms"])
    check(abs(wall_ms - t["duration_ns"] / 1e6) < 0.01, "wall %.3f ms = run duration" % wall_ms)
    check(int(rows[0]["samples"]) == R["samples"]["total"], "samples from the run")
html = open(os.path.join(D, "report.html"), encoding="utf-8").read()
check('"rule":"no_cycles"' in html, "findings embedded in report.html")
check('"cycles":[{' in html, "cycles embedded in report.html")
PY
exit 0
