#!/bin/bash
# The live view's cycle pane in a real terminal (tmux): `c` switches to it,
# the strip fills as cycles close, bars get their breakdown letters once the
# cycle is attributed (a second later), the line with count/median/p95/
# slowest is there, and q ends the run with the cycles in report.json.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
ep_need_cmd tmux tmux || exit 0

SOCK="ep-ctop-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'rc=$?; T kill-server >/dev/null 2>&1; (exit $rc); ep_cleanup' EXIT

# 400 cycles of ~50 ms: the run outlasts the checks; q ends it.
ep_start_target cycle_experiment 400 5
OUT="$EP_WORK/out"
ERR="$EP_WORK/top.err"
RC="$EP_WORK/top.rc"
T new-session -d -x 120 -y 40 -s top \
	"TERM=xterm-256color $EP_BIN top -v --pid $TARGET_PID --no-gpu --interval 0.3 --cycle cycle_experiment:run_cycle -o $OUT 2> $ERR; echo \$? > $RC; exec sleep 600" ||
	ep_fail "cannot start tmux"

screen() { T capture-pane -p -t top; }
wait_screen()
{
	local deadline=$(($(ep_now_ms) + $2 * 1000))
	while [ "$(ep_now_ms)" -lt "$deadline" ]; do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	echo "--- screen:" >&2
	screen >&2
	echo "--- stderr:" >&2
	tail -n 20 "$ERR" >&2
	ep_fail "$3: /$1/ not on screen within $2 s"
}

ep_wait_line "$ERR" "cycles: pid $TARGET_PID: cycle boundary" 30 || ep_fail "cycle boundary not attached"
kill -USR1 "$TARGET_PID"
wait_screen '^cycle [0-9]+  last [0-9]+ ms  median [0-9]+ ms' 10 "cycle header line"
T send-keys -t top c
wait_screen '^[0-9]+ cycles  median [0-9.]+ ms  p95 [0-9.]+ ms  slowest #[0-9]+ [0-9.]+ ms' 10 "cycle figures"
wait_screen '^cycle +ms  I inference  S SQL  O off-CPU' 5 "cycle strip legend"
# Attributed bars: inference (30 of ~50 ms) then off-CPU (the 20 ms sleep).
wait_screen '^[0-9]+ +[0-9.]+  I+S*O+' 10 "a bar with its breakdown"
# Not yet attributed (the last second): '#'.
wait_screen '^[0-9]+ +[0-9.]+  #+$' 5 "a bar not attributed yet"
T send-keys -t top f
wait_screen '^ +SELF% +total% +function' 5 "back to the functions pane"
T send-keys -t top q
ep_wait_line "$RC" '^[0-9]+$' 30 || ep_fail "ebpf-prof top did not exit after q"
[ "$(cat "$RC")" = 0 ] || ep_fail "ebpf-prof top exited $(cat "$RC")"
ep_py "$OUT" <<'PY'
C = R["cycles"]
check(not R["cycles_whole_run"] and len(C) >= 3, "%d cycles after q" % len(C))
check(all(c["inference_calls"] == 1 for c in C if not c["truncated"]), "inference calls per cycle %r" % [c["inference_calls"] for c in C])
# The target runs on after q: nothing past the end of the run.
end = R["time"]["end_monotonic_ns"]
check(all(c["end_ns"] <= end for c in C), "cycles past the run's end %d: %r" % (end, [c["end_ns"] for c in C if c["end_ns"] > end]))
info("boundaries after the end, ignored: %d" % R["cycles_meta"]["boundaries_after_end"])
PY
kill "$TARGET_PID" 2>/dev/null || true
echo "PASS: test_cycles_top_tmux"
