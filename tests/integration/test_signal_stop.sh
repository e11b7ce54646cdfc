#!/bin/bash
# SIGINT (Ctrl-C) and SIGTERM stop a capture that has no -d: exit 0,
# stop_reason "signal", complete outputs, and the attached target survives.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=499
for SIG in INT TERM; do
	ep_start_target cpu_tree 120
	OUT="$EP_WORK/out-$SIG"
	ep_prof_bg --pid "$TARGET_PID" -F "$FREQ" -o "$OUT"
	ep_wait_attached "$PROF_PID" 30
	# 0.5 s of target CPU under the profiler, so the profile cannot be empty.
	ep_wait_cpu "$TARGET_PID" 0.5 20
	kill -"$SIG" "$PROF_PID"
	# Writing the outputs of a 1 s profile takes far less than 30 s.
	ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not exit within 30 s of SIG$SIG"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC on SIG$SIG, want 0 (stderr: $(tail -n 5 "$PROF_ERR"))"
	ep_pid_alive "$TARGET_PID" || ep_fail "the profiled process died when ebpf-prof got SIG$SIG"
	ep_check_outputs "$OUT"
	FREQ=$FREQ SIG=$SIG ep_py "$OUT" <<'PY'
freq = int(os.environ["FREQ"])
check(R["stop_reason"] == "signal", "SIG%s: stop_reason %r, want 'signal'" % (os.environ["SIG"], R["stop_reason"]))
# We waited for >= 0.5 s of target CPU after attach: at least half of that
# (0.25 s worth) must be there, allowing for the attach-readiness check
# running slightly ahead of the BPF program.
check(R["samples"]["total"] >= 0.25 * freq, "samples.total %d < %d after 0.5 s of CPU" % (R["samples"]["total"], 0.25 * freq))
check(any(p["exited"] is False for p in R["target"]["processes"]), "target reported as exited but is alive")
check(folded_total(lambda fr: "burn_a" in fr) > 0, "no burn_a in folded stacks")
PY
	ep_stop_pid "$TARGET_PID"
done
ep_log "ok"
