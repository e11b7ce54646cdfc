#!/bin/bash
# --pid with a thread id (not a process id) profiles the thread's process
# and says so. Before, the BPF filter (by process) never matched:
# nothing was recorded, silently.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

ep_start_target busy_threads 2 60
TID=
for t in /proc/"$TARGET_PID"/task/*; do
	t=${t##*/}
	[ "$t" != "$TARGET_PID" ] && TID=$t && break
done
[ -n "$TID" ] || ep_fail "busy_threads $TARGET_PID has no second thread"

OUT="$EP_WORK/out"
ep_prof_run 60 --pid "$TID" -F 499 -d 1 -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "--pid $TID exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
grep -q "$TID is a thread of process $TARGET_PID" "$PROF_ERR" ||
	ep_fail "no note that $TID is a thread of $TARGET_PID (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
PID=$TARGET_PID ep_py "$OUT" <<'PY'
pid = int(os.environ["PID"])
check(R["target"]["pids"] == [pid], "target.pids %r, want [%d]" % (R["target"]["pids"], pid))
# Two threads spin for 1 s at 499 Hz on 2 CPUs: hundreds of samples; 50 is
# far below any CPU share they get on a loaded VM.
spin = folded_total(lambda fr: "spin_thread" in fr)
check(spin >= 50, "only %d samples in spin_thread" % spin)
check(R["sched"]["threads_seen"] >= 3, "sched saw %r threads" % R["sched"]["threads_seen"])
PY
ep_stop_pid "$TARGET_PID"
ep_log "ok"
