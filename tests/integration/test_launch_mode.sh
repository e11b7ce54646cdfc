#!/bin/bash
# Launch mode (-- CMD): the command is profiled from its start, the run ends
# when it exits, and its exit status is reported (0 and a non-zero one).
# cpu_tree runs for 2 s of its own CPU time (~1000 samples at 499 Hz
# however loaded the machine is) and prints its own burn_a:burn_b split.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=499
RUN_S=2
OUT="$EP_WORK/out"
ep_prof_run 90 -F "$FREQ" -o "$OUT" -- "$EP_TARGETS_DIR/cpu_tree" --cpu "$RUN_S"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof -- cpu_tree exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
# The child inherits ebpf-prof's stdout: its own lines prove it really ran.
grep -Eq '^done cycles=[1-9]' "$PROF_OUT" || ep_fail "cpu_tree did not run to completion (stdout: $(head -c 300 "$PROF_OUT"))"
ep_check_outputs "$OUT"

CPU_NS=$(sed -n 's/^done .*cpu_ns=\([0-9]*\).*/\1/p' "$PROF_OUT") \
OWN_A=$(sed -n 's/^done .* a_ns=\([0-9]*\).*/\1/p' "$PROF_OUT") OWN_B=$(sed -n 's/^done .* b_ns=\([0-9]*\).*/\1/p' "$PROF_OUT") \
FREQ=$FREQ RUN_S=$RUN_S BIN="$EP_TARGETS_DIR/cpu_tree" ep_py "$OUT" <<'PY'
freq, run_s = int(os.environ["FREQ"]), int(os.environ["RUN_S"])
t = R["target"]
check(R["stop_reason"] == "targets-exited", "stop_reason %r, want 'targets-exited'" % R["stop_reason"])
check(t["exit_status"] == 0, "target.exit_status %r, want 0" % t["exit_status"])
check(len(t["pids"]) == 1, "target.pids %r, want the launched child only" % t["pids"])
procs = t["processes"]
check(procs and procs[0]["comm"] == "cpu_tree", "processes[0].comm %r, want cpu_tree" % (procs and procs[0]["comm"]))
check(procs and procs[0]["exited"] is True, "processes[0].exited must be true after the child exited")
check(procs and os.environ["BIN"] in str(procs[0]["cmdline"]), "processes[0].cmdline %r lacks the command" % (procs and procs[0]["cmdline"]))
check(R["dropped"]["total"] == 0, "dropped.total %r, want 0" % R["dropped"]["total"])
# The child is traced from exec, so every bit of CPU it reports having used
# (its own CLOCK_PROCESS_CPUTIME_ID) is sampled at FREQ; +-25% as in
# test_pid_mode.
expect = int(os.environ["CPU_NS"]) / 1e9 * freq
tot = R["samples"]["total"]
info("cpu_tree: samples %d, expected %.0f" % (tot, expect))
check(abs(tot - expect) <= 0.25 * expect, "samples.total %d, expected %d +-25%%" % (tot, expect))
a = folded_total(lambda fr: "burn_a" in fr)
b = folded_total(lambda fr: "burn_b" in fr)
check_split(a, b, int(os.environ["OWN_A"]), int(os.environ["OWN_B"]), "launched")
chain = folded_total(lambda fr: has_seq(fr, ["main", "work_outer", "burn_a"]))
check(chain >= 0.9 * a, "only %d of %d burn_a samples show main;work_outer;burn_a" % (chain, a))
PY
# A CPU-bound program with no probes and no cycles: its findings are
# information (no cycles defined, nothing probed), none is critical.
grep -q '^  \[info\] No cycles defined' "$PROF_OUT" || ep_fail "no findings in the summary: $(cat "$PROF_OUT")"
if grep -q '^  \[critical\]' "$PROF_OUT"; then
	ep_fail "a critical finding for a CPU-bound program without probes: $(grep -A2 '^  \[critical\]' "$PROF_OUT")"
fi

# A child that exits with 3 on its own: reported as exit_status 3, while
# ebpf-prof itself succeeds (the profile is fine; the child's status is data).
OUT2="$EP_WORK/out-exit"
ep_prof_run 60 -F "$FREQ" -o "$OUT2" -- "$EP_TARGETS_DIR/exit_mid" 500
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof -- exit_mid exited $PROF_RC, want 0 (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT2"
CPU_NS=$(sed -n 's/^done cpu_ns=\([0-9]*\)$/\1/p' "$PROF_OUT")
[ -n "$CPU_NS" ] || ep_fail "exit_mid printed no cpu_ns line (stdout: $(head -c 300 "$PROF_OUT"))"
CPU_NS=$CPU_NS FREQ=$FREQ ep_py "$OUT2" <<'PY'
freq = int(os.environ["FREQ"])
expect = int(os.environ["CPU_NS"]) / 1e9 * freq
check(R["target"]["exit_status"] == 3, "target.exit_status %r, want 3 (exit_mid's status)" % R["target"]["exit_status"])
check(R["stop_reason"] == "targets-exited", "stop_reason %r, want 'targets-exited'" % R["stop_reason"])
# ~0.5 s of CPU at 499 Hz = ~250 samples. +-30%: on a run this short one
# timer period more or less at each edge weighs more; a profiler that
# attaches late or loses the tail at exit still falls outside.
tot = R["samples"]["total"]
info("exit_mid: samples %d, expected %.0f" % (tot, expect))
check(abs(tot - expect) <= 0.3 * expect, "samples.total %d, expected %.0f +-30%%" % (tot, expect))
check(folded_total(lambda fr: "spin_until_exit" in fr) >= 0.8 * tot, "spin_until_exit not in >= 80% of stacks")
PY

# A child killed by a signal: 128+signal (SIGTERM = 15 -> 143). Killing the
# child (not ebpf-prof) from outside while it spins.
OUT3="$EP_WORK/out-killed"
ep_prof_bg -F "$FREQ" -o "$OUT3" -- "$EP_TARGETS_DIR/cpu_tree" 60
ep_wait_line "$PROF_OUT" '^ready [0-9]+$' 30 "$PROF_PID" || ep_fail "launched cpu_tree never printed ready"
CHILD=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$PROF_OUT" | head -n1)
# cpu_tree exits 0 on SIGTERM by design; SIGKILL gives a signal death.
kill -KILL "$CHILD"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop within 30 s after its child was killed"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC after its child was killed, want 0"
ep_check_outputs "$OUT3"
ep_py "$OUT3" <<'PY'
check(R["target"]["exit_status"] == 128 + 9, "target.exit_status %r, want 137 (SIGKILL)" % R["target"]["exit_status"])
check(R["stop_reason"] == "targets-exited", "stop_reason %r, want 'targets-exited'" % R["stop_reason"])
PY
# -d ends the recording, not the command: the summary says it was left
# running, with its pid, and it is.
OUT4="$EP_WORK/out-left"
ep_prof_run 60 -F "$FREQ" -d 1 -o "$OUT4" -- "$EP_TARGETS_DIR/cpu_tree" 60
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof -d 1 -- cpu_tree exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
CHILD=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$PROF_OUT" | head -n1)
[ -n "$CHILD" ] || ep_fail "launched cpu_tree never printed ready (stdout: $(head -c 300 "$PROF_OUT"))"
EP_PIDS+=("$CHILD")
ep_pid_alive "$CHILD" || ep_fail "the launched command did not outlive -d"
grep -q "still running (pid $CHILD).*kill $CHILD" "$PROF_OUT" ||
	ep_fail "summary does not say pid $CHILD was left running: $(head -n 5 "$PROF_OUT")"
ep_stop_pid "$CHILD"
ep_log "ok"
