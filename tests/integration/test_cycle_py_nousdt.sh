#!/bin/bash
# --cycle py:FUNCTION with --python native (no Python frames: CPython's USDT
# points, not the watchpoint of test_cycle_py_watch.sh) on a CPython without
# the USDT probes (pyenv builds: no --with-dtrace) can give no cycle: the
# run says so in one warning line as soon as the interpreter is found,
# naming it, the way without --python native and the cycle marker, keeps
# profiling, and report.json's cycles_meta.problem says it too. Without a
# pyenv interpreter without probes: skipped (77), a failure under CI=true.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

PY_TREE="$(cd "$(dirname "$0")" && pwd)/py_tree.py"
PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}
py="" lib=""
for v in 3.12 3.13 3.11 3.10 3.9 3.8; do
	cand=$(ls -d "$PYENV_ROOT"/versions/$v.*/bin/python$v 2>/dev/null | tail -n 1)
	[ -n "$cand" ] && [ -x "$cand" ] || continue
	l=$(ls "$(dirname "$cand")"/../lib/libpython$v*.so.1.0 2>/dev/null | head -n 1)
	[ -n "$l" ] || continue
	# Only an interpreter that really has no probes (stapsdt notes).
	readelf -n "$l" 2>/dev/null | grep -q stapsdt && continue
	py=$cand lib=$(readlink -f "$l")
	break
done
if [ -z "$py" ]; then
	ep_skip_part "no pyenv CPython with a shared libpython and without USDT probes under $PYENV_ROOT/versions"
	exit 0
fi

out="$EP_WORK/out"
ep_prof_run 60 -F 199 --no-sched --probes none --python native --cycle py:nap_long -o "$out" -- "$py" "$PY_TREE" 1 sleep
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
n=$(grep -c "cycles: --cycle py:nap_long" "$PROF_ERR")
[ "$n" -eq 1 ] || ep_fail "$n lines about py:nap_long, want 1: $(grep cycles: "$PROF_ERR")"
line=$(grep "cycles: --cycle py:nap_long" "$PROF_ERR")
grep -Fq "runs $lib, a CPython without the USDT probes" <<<"$line" ||
	ep_fail "the line does not name $lib: $line"
grep -Fq "cycle marker" <<<"$line" || ep_fail "the line does not name the cycle marker: $line"
grep -Fq "tools/cycle_marker" <<<"$line" || ep_fail "the line does not say where the marker is: $line"
grep -Fq "without --python native" <<<"$line" || ep_fail "the line does not name the watchpoint way: $line"
ep_check_outputs "$out"
LIB=$lib ep_py "$out" <<'PY' || exit 1
m = R.get("cycles_meta", {})
check(os.environ["LIB"] in (m.get("problem") or "") and "cycle marker" in (m.get("problem") or ""),
      "cycles_meta.problem %r" % m.get("problem"))
check(R.get("cycles_whole_run") is True, "cycles_whole_run %r" % R.get("cycles_whole_run"))
# The profile is there all the same (native: the interpreter's frames).
check(folded_total(lambda fr: any(f.startswith("_PyEval_EvalFrameDefault") for f in fr)) > 0, "no interpreter samples")
PY
ep_log "ok ($py)"
