#!/bin/bash
# Without a terminal, "ebpf-prof top" prints a plain-text snapshot every
# interval; alerts go to stderr, to report.json (with timestamps) and to
# --alert-exec with the alert in the environment; an alert on a metric the
# run does not have is said once, not silently false.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

ep_start_target cpu_tree 120
OUT="$EP_WORK/out"
EXECLOG="$EP_WORK/exec.log"
# disk<100%: any file system with data on it has less than 100% free, so
# this alert must fire exactly once (edge-triggered) in every run.
ep_prof_run 60 top --pid "$TARGET_PID" -F 199 --interval 0.5 -d 3 -o "$OUT" \
	--alert 'disk<100%' --alert 'cycle>1.5x' \
	--alert-exec "echo \"\$EP_ALERT|\$EP_ALERT_PID|\$EP_ALERT_MESSAGE\" >> $EXECLOG"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof top exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
grep -q $'\033' "$PROF_OUT" && ep_fail "terminal escape sequences in piped output"
n=$(grep -c '^----$' "$PROF_OUT")
# 3 s at 0.5 s: 6 snapshots, minus at most one lost at each end to timing.
[ "$n" -ge 4 ] || ep_fail "$n snapshots in 3 s at --interval 0.5, want >= 4"
grep -Eq "^ebpf-prof top  pid $TARGET_PID \(cpu_tree\)" "$PROF_OUT" || ep_fail "no title line in the snapshots"
grep -Eq '^ *[0-9.]+% +[0-9.]+%  burn_a ' "$PROF_OUT" || ep_fail "burn_a not in any snapshot"
# The target's sampled CPU use (one busy thread) and its RSS, from sysmon.
grep -Eq '^cpu [0-9]+%  rss [0-9.]+ [KMG]iB \(' "$PROF_OUT" || ep_fail "no cpu%/rss line in the snapshots"
grep -q 'ALERT disk .* free < 100%' "$PROF_ERR" || ep_fail "disk alert not on stderr: $(cat "$PROF_ERR")"
[ "$(grep -c 'ALERT disk' "$PROF_ERR")" -eq 1 ] || ep_fail "disk alert printed more than once (edge-triggered)"
grep -q 'cycle>1.5x: no data' "$PROF_ERR" || ep_fail "unavailable cycle alert not reported"
# The command runs in the background: give it a moment (bounded poll).
ep_wait_line "$EXECLOG" "^disk<100%\|$TARGET_PID\|disk " 10 || ep_fail "--alert-exec did not run with EP_ALERT* set"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
a = R.get("alerts")
check(a is not None, "no alerts section")
if a:
    check([r["expr"] for r in a["rules"]] == ["disk<100%", "cycle>1.5x"], "rules %r" % a["rules"])
    check(a["rules"][1]["evaluated"] is False, "cycle rule claimed evaluated without cycle data")
    ev = a["events"]
    check(len(ev) == 1 and ev[0]["expr"] == "disk<100%", "events %r" % ev)
    if ev:
        check(0 <= ev[0]["t_s"] <= R["time"]["duration_ns"] / 1e9 + 1, "alert time %r outside the run" % ev[0]["t_s"])
        check(0 <= ev[0]["value"] < 100, "disk free %r" % ev[0]["value"])
    check(a["exec_runs"] == 1, "exec_runs %r" % a["exec_runs"])
PY

# Jetson figures reach the view and the alerts (a recorded throttled board:
# GPU zone above its trip, GPU at full load).
FX="$EP_SHARED_DIR/fixtures/jetson/jp6-agx-orin-throttled"
if [ -d "$FX" ]; then
	OUT3="$EP_WORK/out3"
	ep_prof_run 60 top --interval 0.3 -d 2 --gpu-interval 20 --sysfs-root "$FX" -o "$OUT3" \
		--alert throttled --alert 'gpu_temp>50' -- "$EP_TARGETS_DIR/cpu_tree" 1
	[ "$PROF_RC" -eq 0 ] || ep_fail "Jetson fixture run exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	grep -Eq 'gpu [0-9]+%  [0-9.]+ W  gpu [0-9]+ C  THROTTLED' "$PROF_OUT" ||
		ep_fail "no GPU load/power/temp/THROTTLED line in the snapshots"
	grep -q 'ALERT CPU/GPU throttled (throttled)' "$PROF_ERR" || ep_fail "throttled alert not on stderr"
	ep_py "$OUT3" <<'PY'
ev = [e["expr"] for e in R["alerts"]["events"]]
check(sorted(ev) == ["gpu_temp>50", "throttled"], "events %r" % ev)
PY
fi

# A bad expression is a usage error naming the problem.
ep_prof_run 10 top --pid "$TARGET_PID" --alert 'temp>>5'
[ "$PROF_RC" -eq 2 ] || ep_fail "bad --alert: exit $PROF_RC, want 2"
grep -q "bad --alert 'temp>>5'" "$PROF_ERR" || ep_fail "bad --alert message: $(cat "$PROF_ERR")"
ep_log "ok"
