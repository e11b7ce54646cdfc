#!/bin/bash
# Continuous mode on a Python program: a rotation frees the CPU profile and
# sets up a new one (at the same address), and the Python frame merge's
# cache of frame classes (interpreter loop, interpreter, other), kept by
# frame index, must start over with it. Kept, it put every Python frame of
# the later intervals at the root, above _start. py_tree.py (Debian's
# python3.11) under --rotate 1 for 4.5 s: the end-of-run bundle (the last
# half second, after four rotations) has its Python frames under the
# interpreter's native frames, and outer -> middle -> leaf_hot in order.
# The program runs on and is stopped once the run ends. Launched, so that
# the first interval interns the start-up's frames first: later intervals
# number the frames differently, and a stale class is seen.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

PY=/usr/bin/python3.11
[ -x "$PY" ] || ep_fail "$PY missing (python3.11, Debian 12)"
ep_prof_run 60 -F 999 --rotate 1 -d 4.5 -o "$EP_WORK/out" -- "$PY" "$EP_SOURCE_DIR/tests/integration/py_tree.py" 30 tree
left=$(sed -n 's/.*still running (pid \([0-9]*\)).*/\1/p' "$PROF_OUT")
[ -n "$left" ] && kill "$left" 2>/dev/null
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
[ -n "$left" ] || ep_fail "the summary names no command left running: $(head -c 400 "$PROF_OUT")"
ep_check_outputs "$EP_WORK/out"
grep -q "after [3-9] rotation(s)" "$PROF_OUT" || ep_fail "fewer than 3 rotations: $(grep '^samples' "$PROF_OUT")"

ep_py "$EP_WORK/out" <<'PY'
tot = merged = chain = 0
for fr, n in load_folded():
    py = [i for i, f in enumerate(fr) if "(py_tree.py:" in f]
    if not fr or not fr[0].startswith("python3") or not py:
        continue
    tot += n
    # Under the interpreter's entry: _start ... PyEval_EvalCode, then Python.
    if "_start" in fr and fr.index("_start") < py[0]:
        merged += n
    names = [fr[i].split(" (")[0] for i in py]
    if "outer" in names and "middle" in names and "leaf_hot" in names and \
            names.index("outer") < names.index("middle") < names.index("leaf_hot"):
        chain += n
check(tot >= 40, "only %d samples with Python frames in the last interval" % tot)
check(merged == tot, "%d of %d samples with Python frames above _start (merge cache kept across the rotation)" % (tot - merged, tot))
check(chain >= 0.3 * tot, "outer -> middle -> leaf_hot in %d of %d samples, want >= 30%% (about 50%% of the work)" % (chain, tot))
PY
