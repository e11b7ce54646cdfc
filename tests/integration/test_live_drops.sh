#!/bin/bash
# Drop counts reach the live metrics during the run, not only at stop: a
# probe run whose target nests a probed call 41 deep (25 calls beyond the
# 16-frame per-thread stack, counted as nesting_too_deep) fires
# --alert drops>0 on stderr while the target is still alive and the
# recorder still running, and report.json lists the alert with the live
# drop count as its value and a time before the run ended.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

ep_start_target nested_calls linger
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu --probes none \
	--probe "nested_calls:rec" --alert 'drops>0'
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: rec in " 20 "$PROF_PID" || ep_fail "rec not attached"
# Nothing lost yet: the alert must not have fired before the work.
grep -q 'ALERT.*drops' "$PROF_ERR" && ep_fail "drops alert before any drop: $(grep ALERT "$PROF_ERR")"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^done$' 20 "$TARGET_PID" || ep_fail "target did not finish its work"
# The target lingers and the recorder keeps running: the alert has to come
# from the running totals (read every 250 ms, evaluated every interval).
ep_wait_line "$PROF_ERR" 'ALERT.*drops' 10 "$PROF_PID" || ep_fail "no live drops alert: $(tail -n 5 "$PROF_ERR")"
ep_pid_alive "$PROF_PID" || ep_fail "ebpf-prof stopped before the alert was checked"
ep_pid_alive "$TARGET_PID" || ep_fail "target exited: the alert could have come from the final read"
ALERT_MS=$(ep_now_ms)
sleep 0.5 # let the run go on past the alert, so "before the end" is measurable
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
ep_check_outputs "$EP_WORK/out"
ep_py "$EP_WORK/out" <<'PY'
dr = R["probes"]["dropped"]
check(dr["by_cause"]["nesting_too_deep"] == 41 - 16, "nesting_too_deep %r" % dr)
ev = R["alerts"]["events"]
check(len(ev) == 1 and ev[0]["expr"] == "drops>0", "alert events %r" % ev)
if ev:
    # The live total when it fired: the 25 probe drops (other sources add
    # their own losses, if any, on top).
    check(ev[0]["value"] >= 25, "alert value %r, want >= 25" % ev[0]["value"])
    dur = R["time"]["duration_ns"] / 1e9
    check(0 <= ev[0]["t_s"] < dur - 0.3, "alert at %r s of a %.2f s run: not before the end" % (ev[0]["t_s"], dur))
PY
echo "PASS: test_live_drops"
