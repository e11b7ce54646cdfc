#!/bin/bash
# Python frames in samples whose native stack is deeper than 2 x 127 frames
# (tests/integration/py_deep.py: a 125-deep Python recursion (126 rec frames and the module's: within the 128 Python frames a walk takes) spinning at its
# bottom, on a pyenv CPython <= 3.10 where each Python call adds its own
# evaluator frames: ~270 native frames). The merge of Python frames into
# such stacks was skipped (its buffers held 262 native frames), leaving the
# interpreter's C frames only. Every sample must carry all 126 rec frames
# and reach _start. Without a pyenv 3.8-3.10: skipped (77), a failure under
# CI=true.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}
py=$(ls -d "$PYENV_ROOT"/versions/3.10.*/bin/python3.10 "$PYENV_ROOT"/versions/3.9.*/bin/python3.9 \
	"$PYENV_ROOT"/versions/3.8.*/bin/python3.8 2>/dev/null | head -n 1)
if [ -z "$py" ]; then
	ep_skip_part "no pyenv CPython 3.8-3.10 under $PYENV_ROOT/versions"
	exit 0
fi
DEPTH=125
"$py" "$(dirname "$0")/py_deep.py" "$DEPTH" >"$EP_WORK/target.out" 2>&1 &
TARGET_PID=$!
ep_wait_line "$EP_WORK/target.out" '^ready' 20 "$TARGET_PID" || ep_fail "py_deep did not start"
ep_wait_cpu "$TARGET_PID" 0.2 10
ep_prof_run 60 --pid "$TARGET_PID" -F 499 -d 2 --no-sched --probes none --no-gpu -o "$EP_WORK/deep"
kill "$TARGET_PID" 2>/dev/null || true
wait "$TARGET_PID" 2>/dev/null || true
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
DEPTH=$DEPTH ep_py "$EP_WORK/deep" <<'PY'
depth = int(os.environ["DEPTH"])
tot = folded_total()
deep = max((len(fr) for fr, _ in F), default=0)
good = folded_total(lambda fr: sum(1 for f in fr if f.startswith("rec (py_deep.py:")) == depth + 1
                    and "_start" in fr)
info("%d samples, %d with all %d rec frames down to _start; deepest stack %d frames"
     % (tot, good, depth + 1, deep))
check(tot >= 20, "only %d samples" % tot)
check(good >= 0.98 * tot, "only %d of %d samples carry the %d Python frames" % (good, tot, depth + 1))
PY
echo "PASS: test_python_deep"
