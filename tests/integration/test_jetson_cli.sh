#!/usr/bin/env bash
# `ebpf-prof jetson` end to end: for every fixture tree, the JSON snapshot the
# binary prints must carry exactly the oracle's values (shared/fixtures/jetson/
# expected/*.json), and tegrastats lines must parse. Needs no root: it reads
# fake sysfs trees only.
set -euo pipefail
: "${EP_BIN:?}" "${EP_SHARED_DIR:?}"
fx="$EP_SHARED_DIR/fixtures/jetson"
[ -d "$fx/expected" ] || { echo "FAIL: fixtures missing at $fx"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for exp in "$fx"/expected/*.json; do
  tree=$(basename "$exp" .json)
  "$EP_BIN" jetson --sysfs-root "$fx/$tree" --json >"$tmp/$tree.json" 2>"$tmp/$tree.err" || {
    echo "FAIL: ebpf-prof jetson on $tree exited $?"; cat "$tmp/$tree.err"; fail=1; continue; }
  python3 - "$exp" "$tmp/$tree.json" "$tree" <<'PY' || fail=1
import json, sys
exp = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
tree = sys.argv[3]
# Descriptive strings (rules, sources) are wording, not values; decoys are
# checked by the GPU devfreq chosen instead.
skip = {"rails_source", "total_rule", "devfreq_decoys", "why", "note", "notes",
        "throttle_reasons"}  # prose; the verdict `throttled` is compared
bad = []
def walk(e, g, path):
    if isinstance(e, dict):
        if not isinstance(g, dict):
            bad.append(f"{path}: expected object, got {g!r}"); return
        for k, v in e.items():
            if k in skip or k.startswith("_"):
                continue
            if k not in g:
                bad.append(f"{path}.{k}: missing"); continue
            walk(v, g[k], f"{path}.{k}")
    elif isinstance(e, bool) or e is None or isinstance(e, str):
        if e != g:
            bad.append(f"{path}: expected {e!r}, got {g!r}")
    elif isinstance(e, (int, float)):
        # The oracle is exact to the units' precision (3 decimals for mW/C).
        if not isinstance(g, (int, float)) or isinstance(g, bool) or abs(e - g) > 5e-4:
            bad.append(f"{path}: expected {e!r}, got {g!r}")
    elif isinstance(e, list):
        if sorted(map(json.dumps, e)) != sorted(map(json.dumps, g if isinstance(g, list) else [])):
            bad.append(f"{path}: expected {e!r}, got {g!r}")
walk(exp, got, tree)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
done
# VIC must never be taken for the GPU on the JP6 tree.
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["gpu"]["devfreq"] != "17000000.gpu")' \
  "$tmp/jp6-agx-orin.json" || {
  echo "FAIL: jp6-agx-orin GPU devfreq is not 17000000.gpu"; fail=1; }

# tegrastats: every real line yields a JSON object with at least RAM and CPU.
for f in "$fx"/tegrastats/*.txt; do
  n_in=$(grep -c . "$f")
  "$EP_BIN" jetson --parse-tegrastats "$f" >"$tmp/ts.jsonl" || { echo "FAIL: parse $f"; fail=1; continue; }
  n_out=$(python3 -c '
import json,sys
n=0
for line in open(sys.argv[1]):
    d=json.loads(line); n+=1
print(n)' "$tmp/ts.jsonl")
  [ "$n_out" -eq "$n_in" ] || { echo "FAIL: $f: $n_in lines in, $n_out objects out"; fail=1; }
done
# Garbage in: exit non-zero or print nothing, never crash.
head -c 4096 /dev/urandom >"$tmp/garbage"
set +e
"$EP_BIN" jetson --parse-tegrastats "$tmp/garbage" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -lt 128 ] || { echo "FAIL: garbage tegrastats crashed (rc $rc)"; fail=1; }
# An endless line (getline grew to 3.7 GB in 8 s): refused within the line limit.
set +e
timeout -k 2 10 "$EP_BIN" jetson --parse-tegrastats /dev/zero >/dev/null 2>"$tmp/zero.err"
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "not tegrastats output" "$tmp/zero.err" ||
	{ echo "FAIL: --parse-tegrastats /dev/zero: rc $rc, $(cat "$tmp/zero.err")"; fail=1; }
# Usage errors exit 2.
set +e
"$EP_BIN" jetson --bogus >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "FAIL: bad option exit $rc, want 2"; fail=1; }
[ "$fail" -eq 0 ] && echo "PASS: jetson CLI matches the fixture oracle on $(ls "$fx"/expected | wc -l) trees"
exit "$fail"
