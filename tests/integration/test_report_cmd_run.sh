#!/usr/bin/env bash
# `ebpf-prof report DIR` on the output of a real recording without cycle
# options: one whole-run cycle rebuilt from the report, the no_cycles
# finding with how to define cycles, cycles.csv with its measured duration,
# and report.html holding the same data. Needs root (recording).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
out="$EP_WORK/out"
ep_prof_run 60 -d 2 -o "$out" -- "$EP_TARGETS_DIR/demo_experiment"
[ "$PROF_RC" -eq 0 ] || ep_fail "recording failed (rc $PROF_RC)"
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
