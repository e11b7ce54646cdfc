#!/bin/bash
# Overload (issue 17): when samples arrive faster than the collector handles
# them, the loop still gets back to its deadline and signal checks (bounded
# work per poll), drops what it cannot take and counts it; -d and Ctrl-C stop
# it promptly. A second signal while the outputs are written does not cost
# the printed summary.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

# One busy thread at 100 kHz (the kernel's default maximum rate): more
# records than the collector unwinds and symbolizes on this machine. Before
# the fix the poll never returned and -d 1 ran until the target exited.
ep_start_target cpu_tree 60
OUT="$EP_WORK/out-d1"
ep_prof_run 30 --pid "$TARGET_PID" -F 100000 -d 1 -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "-F 100000 -d 1 exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_log "-F 100000 -d 1 took ${PROF_MS} ms"
# Start-up (BPF loads, ~0.5 s) + 1 s + stop (< 1 s): 6 s is a wide margin on
# a loaded 2-vCPU VM, and far below "until the target exits" (60 s).
[ "$PROF_MS" -lt 6000 ] || ep_fail "-d 1 at 100 kHz took ${PROF_MS} ms, want < 6000"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
check(R["stop_reason"] == "duration", "stop_reason %r" % R["stop_reason"])
check(R["samples"]["total"] > 1000, "only %d samples at 100 kHz" % R["samples"]["total"])
bc = R["dropped"]["by_cause"]
check("unread_at_stop" in bc, "no unread_at_stop cause: %r" % bc)
info("samples %d, dropped %r" % (R["samples"]["total"], R["dropped"]))
PY

# Ctrl-C at 100 kHz without -d: stop well within a second or two.
OUT="$EP_WORK/out-int"
ep_prof_bg --pid "$TARGET_PID" -F 100000 -o "$OUT"
ep_wait_attached "$PROF_PID" 30
ep_wait_cpu "$TARGET_PID" 1 20
t0=$(ep_now_ms)
kill -INT "$PROF_PID"
ep_wait_exit "$PROF_PID" 20 || ep_fail "ebpf-prof at 100 kHz ignored SIGINT for 20 s"
stop_ms=$(($(ep_now_ms) - t0))
ep_log "SIGINT at 100 kHz: exited ${stop_ms} ms after the signal"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "exited $EP_EXIT_RC on SIGINT (stderr: $(tail -n 5 "$PROF_ERR"))"
[ "$stop_ms" -lt 3000 ] || ep_fail "SIGINT at 100 kHz took ${stop_ms} ms to stop, want < 3000"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
check(R["stop_reason"] == "signal", "stop_reason %r" % R["stop_reason"])
PY

# Two signals: the second arrives while the run is being finished. Like perf
# record, the run completes: rc 0, files, and the summary on stdout (a file
# here, so it is only flushed at exit: a death by signal would lose it).
for SIG in INT TERM; do
	OUT="$EP_WORK/out-2$SIG"
	ep_prof_bg --pid "$TARGET_PID" -F 999 -o "$OUT"
	ep_wait_attached "$PROF_PID" 30
	ep_wait_cpu "$TARGET_PID" 0.3 20
	kill -"$SIG" "$PROF_PID"
	sleep 0.05 # the second signal, as a user pressing Ctrl-C twice
	kill -"$SIG" "$PROF_PID" 2>/dev/null
	ep_wait_exit "$PROF_PID" 20 || ep_fail "no exit within 20 s of two SIG$SIG"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "two SIG$SIG: exited $EP_EXIT_RC, want 0"
	grep -q '^output: ' "$PROF_OUT" || ep_fail "two SIG$SIG: summary lost (stdout: $(head -c 300 "$PROF_OUT"))"
	grep -q '^samples: ' "$PROF_OUT" || ep_fail "two SIG$SIG: no samples line in the summary"
	ep_check_outputs "$OUT"
done
ep_stop_pid "$TARGET_PID"
ep_log "ok"
