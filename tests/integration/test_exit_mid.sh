#!/bin/bash
# --pid mode on a process that exits mid-run: ebpf-prof notices, stops long
# before -d, and still writes complete outputs.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=499
LIFE_MS=3000
ep_start_target exit_mid "$LIFE_MS"
T0=$(ep_now_ms)
OUT="$EP_WORK/out"
ep_prof_run 60 --pid "$TARGET_PID" -F "$FREQ" -d 10 -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ELAPSED=$(($(ep_now_ms) - T0))
ep_pid_alive "$TARGET_PID" && ep_fail "ebpf-prof returned while exit_mid is still running"
# The target lives 3 s from its ready line; exit must be noticed within
# ~2 s of that (poll intervals + output writing), far below -d 10.
[ "$ELAPSED" -lt 7000 ] || ep_fail "ebpf-prof ran ${ELAPSED} ms; the target exited after ${LIFE_MS} ms and -d was 10 s"
ep_check_outputs "$OUT"
CPU_NS=$(sed -n 's/^done cpu_ns=\([0-9]*\)$/\1/p' "$TARGET_OUT")
[ -n "$CPU_NS" ] || ep_fail "exit_mid printed no cpu_ns line"
CPU_NS=$CPU_NS FREQ=$FREQ PID=$TARGET_PID ep_py "$OUT" <<'PY'
freq, pid = int(os.environ["FREQ"]), int(os.environ["PID"])
cpu_s = int(os.environ["CPU_NS"]) / 1e9
check(R["stop_reason"] == "targets-exited", "stop_reason %r, want 'targets-exited'" % R["stop_reason"])
procs = [p for p in R["target"]["processes"] if p["pid"] == pid]
check(procs and procs[0]["exited"] is True, "processes entry for %d must say exited=true: %r" % (pid, procs))
tot = R["samples"]["total"]
# Attach takes part of the 3 s life (BPF load, symbol setup); a third of the
# CPU the target used shows the sampler ran until the exit instead of
# stopping early; more than all of it (+25%) would be invented samples.
info("samples %d for %.2f s CPU" % (tot, cpu_s))
check(tot >= cpu_s * freq / 3, "samples.total %d, want >= %.0f (a third of %.2f s CPU)" % (tot, cpu_s * freq / 3, cpu_s))
check(tot <= 1.25 * cpu_s * freq, "samples.total %d > 1.25 x %.2f s CPU x %d Hz" % (tot, cpu_s, freq))
check(folded_total(lambda fr: "spin_until_exit" in fr) >= 0.8 * tot, "spin_until_exit not in >= 80% of stacks")
PY
ep_log "ok (ran ${ELAPSED} ms)"
