#!/bin/bash
# False alarms of `ebpf-prof diff` on real recordings of one build (not a
# test; docs/performance.md "diff: two runs of the same build").
#
#   sudo tools/bench/diff_null.sh [BUILD_DIR] [PAIRS] [CYCLES] [MODE] [KEEP_DIR]
#
# Records PAIRS pairs of tests/targets/diff_experiment (CYCLES cycles, the
# arguments of tests/integration/test_diff.sh), both runs of a pair the same
# build, then runs `ebpf-prof diff --json` on each pair at the default
# threshold and prints, per pair, the exit status and the flagged rows, then
# the count of pairs with a regression (exit 3) and with any flag at all.
# MODE: "together" records both runs of a pair at the same time (as the
# integration test does), "apart" one after the other (a baseline kept from
# earlier). It also prints the spread of the run-to-run change of the
# per-cycle medians, of the same at equal CPU share and of the CPU share
# itself (what the run-level noise floor of the rule stands for).
# With KEEP_DIR the recordings stay there, and an existing KEEP_DIR is
# compared again without recording (to compare two rules on the same data:
# DIFF_BIN=other/ebpf-prof runs that binary's diff).
set -euo pipefail
BUILD=${1:-build}
PAIRS=${2:-10}
CYCLES=${3:-30}
MODE=${4:-together}
KEEP=${5:-}
BIN=$BUILD/ebpf-prof
T=$BUILD/tests/targets/diff_experiment
[ -x "$BIN" ] && [ -x "$T" ] || { echo "no $BIN or $T: build first" >&2; exit 1; }
if [ -n "$KEEP" ]; then
	WORK=$KEEP
	mkdir -p "$WORK"
else
	WORK=$(mktemp -d /tmp/ep-diff-null.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
fi

record() # DIR: one recording in the background, its pid in REC_PID
{
	"$BIN" -q -F 999 -o "$1" -- "$T" "$CYCLES" 1 20 >"$1.out" 2>"$1.err" </dev/null &
	REC_PID=$!
}

for ((i = 1; i <= PAIRS; i++)); do
	d=$WORK/pair$i
	[ -s "$d/b/report.json" ] && continue
	[ "$(id -u)" -eq 0 ] || { echo "needs root to record" >&2; exit 1; }
	mkdir -p "$d"
	if [ "$MODE" = together ]; then
		record "$d/a"; pa=$REC_PID
		record "$d/b"; pb=$REC_PID
		wait "$pa" && wait "$pb" || { echo "recording pair $i failed" >&2; exit 1; }
	else
		record "$d/a"; wait "$REC_PID" || { echo "recording $d/a failed" >&2; exit 1; }
		record "$d/b"; wait "$REC_PID" || { echo "recording $d/b failed" >&2; exit 1; }
	fi
done

regress=0 flagged=0
for ((i = 1; i <= PAIRS; i++)); do
	d=$WORK/pair$i rc=0
	"${DIFF_BIN:-$BIN}" diff --no-html --json "$d/a" "$d/b" >"$d/diff.json" 2>"$d/diff.err" || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "diff of pair $i: exit $rc: $(cat "$d/diff.err")" >&2; exit 1; }
	n=$(python3 - "$d/diff.json" <<'PY'
import json, sys
D = json.load(open(sys.argv[1]))
f = [r for r in D["rows"] if r["status"] in ("regression", "improvement", "changed")]
pct = lambda v: "?" if v is None else "%+.1f%%" % (100 * v)
for r in f:
    print("    %s %s %s %s %s [%s, %s] p %s" % (r["status"], r["section"], r["name"], r["metric"],
          pct(r["change"]), pct(r["ci95"][0]), pct(r["ci95"][1]), r["p"]), file=sys.stderr)
print(len(f))
PY
)
	echo "pair $i: exit $rc, $n flagged" >&2
	regress=$((regress + (rc == 3)))
	flagged=$((flagged + (n > 0)))
done
echo "pairs $PAIRS mode $MODE cycles $CYCLES: regression (exit 3) in $regress, any flag in $flagged"

# Run-to-run change of the per-cycle medians: sd over the pairs, per figure.
python3 - "$WORK" "$PAIRS" <<'PY'
import json, math, statistics, sys
w, n = sys.argv[1], int(sys.argv[2])
ch = {}
for i in range(1, n + 1):
    D = json.load(open("%s/pair%d/diff.json" % (w, i)))
    for r in D["rows"]:
        if r["section"] == "cycle" and r["unit"] == "ns" and r["base"] and r["new"]:
            ch.setdefault(r["name"], []).append(math.log(r["new"] / r["base"]))
        e = r.get("change_at_equal_cpu_share")
        if r["section"] == "cycle" and e is not None and e > -1:
            ch.setdefault(r["name"] + " at equal share", []).append(math.log1p(e))
    s = D.get("cpu_share") or {}
    if s.get("base") and s.get("new"):
        ch.setdefault("CPU share", []).append(math.log(s["new"] / s["base"]))
for k, v in sorted(ch.items()):
    if len(v) >= 3:
        print("  %-34s log-change: sd %.3f, max |%.3f| (per run ~ sd/sqrt2 = %.3f)"
              % (k, statistics.stdev(v), max(abs(x) for x in v), statistics.stdev(v) / math.sqrt(2)))
PY
