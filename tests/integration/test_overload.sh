#!/bin/bash
# Overload (issues 17 and 28): on a kernel that does not throttle the perf
# interrupt (perf_event_max_sample_rate 100000, set here for the run), -F up
# to 100000 cannot take the machine: the sampler runs its perf events at the
# overload guard's limit (user/overload/tick_guard.h) and counts the ticks it
# did not take as lost (rate_limited); the loop's drains are bounded, so -d N
# ends within N + 3 s and a signal within 2 s, with every output written. A
# second signal while the outputs are written does not cost the summary.
# Before the guard, every CPU spent ~60% in the 100 kHz tick (an idle target
# too) and start-up alone took 4-5 s of a -d 1 or -d 2 run on this VM.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
ep_perf_rate_unthrottled

# The guard's loss is counted where the other losses are, and it agrees with
# the samples taken: each tick taken on a target stood for requested/tick
# ticks. A sample read by the collector counted there; one lost in the ring
# or unread at stop counted at the end (unread_at_stop and collector may
# hold other records as well: they widen the upper bound only).
# shellcheck disable=SC2016 # python, not shell
GUARD_PY='
s = R["sampling"]
req, hz = s["requested_hz"], s["frequency_hz"]
bc = R["dropped"]["by_cause"]
check(req == int(os.environ["REQ_HZ"]), "sampling.requested_hz %r, want %s" % (req, os.environ["REQ_HZ"]))
check(hz < req, "frequency_hz %r not below -F %r: the guard did not limit the tick" % (hz, req))
check(s["period_ns"] == 10**9 // hz, "period_ns %r is not the tick rate %r Hz: samples weigh the wrong time" % (s["period_ns"], hz))
tot = R["samples"]["total"]
check(tot > 0, "no samples")
lo = (tot + bc["ringbuf_full"]) * (req - hz) // hz
hi = -(-(tot + bc["ringbuf_full"] + bc["unread_at_stop"] + bc["collector"]) * (req - hz) // hz)
check(lo <= bc["rate_limited"] <= hi,
      "rate_limited %r, want %d..%d for %d samples at %d Hz of %d" % (bc["rate_limited"], lo, hi, tot, hz, req))
check(R["dropped"]["total"] == sum(bc.values()), "dropped.total %r != sum of causes %r" % (R["dropped"]["total"], bc))
info("%d samples at %d Hz (-F %d), dropped %r" % (tot, hz, req, {k: v for k, v in bc.items() if v}))
'
summary_counts_guard()
{
	grep -q '^lost: .*rate_limited=[1-9]' "$PROF_OUT" ||
		ep_fail "$1: the summary does not count rate_limited ($(grep '^lost:' "$PROF_OUT"))"
	grep -q '^duration: .*limited by the overload guard' "$PROF_OUT" ||
		ep_fail "$1: the summary does not say the rate was limited ($(grep '^duration:' "$PROF_OUT"))"
}

# One busy thread at 100 kHz, -d 2: done within 2 + 3 s (start-up, the run,
# stop and outputs). Before the drains were bounded the poll never returned;
# before the guard this took 4.6-5.6 s here, 18-36 s on a loaded VM.
ep_start_target cpu_tree 120
OUT="$EP_WORK/out-d2"
ep_prof_run_nice0 30 --pid "$TARGET_PID" -F 100000 -d 2 -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "-F 100000 -d 2 exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_log "-F 100000 -d 2 took ${PROF_MS} ms (perf events open after ${ATTACH_MS:-?} ms)"
[ "$PROF_MS" -lt 5000 ] || ep_fail "-F 100000 -d 2 took ${PROF_MS} ms, want < 5000"
ep_check_outputs "$OUT"
summary_counts_guard "-d 2"
REQ_HZ=100000 ep_py "$OUT" <<PY
check(R["stop_reason"] == "duration", "stop_reason %r" % R["stop_reason"])
check("unread_at_stop" in R["dropped"]["by_cause"], "no unread_at_stop cause")
$GUARD_PY
PY

# Every tick accounted for at 100 kHz against what the kernel says the
# target ran: frozen while ebpf-prof attaches and again before it stops, so
# the window's edges are exact. The guard samples at its limit, 10000 Hz
# per CPU (documented in --help): 2 s of the target's CPU time is ~20000
# ticks taken, each a sample or a counted loss (check_ticks_taken in
# lib.sh: tick rounding within 2 sqrt(stretches), ~0.5%, and late ticks),
# and rate_limited counts the other nine of every ten (GUARD_PY).
OUT="$EP_WORK/out-acct"
ep_freeze "$TARGET_PID"
renice -n -20 $$ >/dev/null || ep_fail "cannot renice the test shell"
ep_prof_bg -v --pid "$TARGET_PID" -F 100000 --no-gpu -o "$OUT"
ep_wait_line "$PROF_ERR" "sampling " 30 "$PROF_PID" || ep_fail "accounting run: ebpf-prof did not start"
read -r run0 sl0 _ < <(ep_kernel_ran "$TARGET_PID")
st0=$(ep_steal_ns)
ep_thaw "$TARGET_PID"
ep_wait_cpu "$TARGET_PID" 2 60
ep_freeze "$TARGET_PID"
read -r run1 sl1 _ < <(ep_kernel_ran "$TARGET_PID")
st1=$(ep_steal_ns)
kill -INT "$PROF_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "accounting run: ebpf-prof did not stop"
renice -n 0 $$ >/dev/null
ep_thaw "$TARGET_PID"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "accounting run: exited $EP_EXIT_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
RUN=$((run1 - run0)) SLICES=$((sl1 - sl0)) STEAL=$((st1 - st0)) REQ_HZ=100000 ep_py "$OUT" <<PY
e = os.environ
check(R["sampling"]["frequency_hz"] == 10000, "sampled at %r Hz, the guard's limit is 10000" % R["sampling"]["frequency_hz"])
# At a 100 us period a late tick misses a period far more often than at
# 1 ms: 3% allowed (seen: -0.8% to +0.4%); a tenth lost still fails.
# A target preempted hundreds of times in the window (the sanitizer
# build's collector shares the 2 CPUs with it: 322-345 stretches in 2.2 s)
# was seen 8.4% and 10.9% short with nothing lost in the collector: about
# 7 ticks missed per preemption, which nothing here models yet. Then only
# the upper bound is checked (said in the output); the lower one holds
# for the unsanitized suite, where the target runs in a few stretches.
late = 0.03
if int(e["SLICES"]) >= 50:
    info("target preempted %s times in the window: ticks taken not bounded from below" % e["SLICES"])
    late = 1.0
check_ticks_taken(int(e["RUN"]), int(e["SLICES"]), int(e["STEAL"]), 10000, "cpu_tree at -F 100000", late=late)
$GUARD_PY
PY

# SIGTERM (and Ctrl-C) at 100 kHz without -d: exit within 2 s of the signal,
# outputs complete. The shell runs at nice -20 while it times the exit.
for SIG in TERM INT; do
	OUT="$EP_WORK/out-$SIG"
	ep_prof_bg --pid "$TARGET_PID" -F 100000 -o "$OUT"
	ep_wait_attached "$PROF_PID" 30
	ep_wait_cpu "$TARGET_PID" 1 20
	renice -n -20 $$ >/dev/null || ep_fail "cannot renice the test shell"
	t0=$(ep_now_ms)
	kill -"$SIG" "$PROF_PID"
	ep_wait_exit "$PROF_PID" 20 || ep_fail "ebpf-prof at 100 kHz ignored SIG$SIG for 20 s"
	stop_ms=$(($(ep_now_ms) - t0))
	renice -n 0 $$ >/dev/null
	ep_log "SIG$SIG at 100 kHz: exited ${stop_ms} ms after the signal"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "exited $EP_EXIT_RC on SIG$SIG (stderr: $(tail -n 5 "$PROF_ERR"))"
	[ "$stop_ms" -lt 2000 ] || ep_fail "SIG$SIG at 100 kHz took ${stop_ms} ms to stop, want < 2000"
	ep_check_outputs "$OUT"
	summary_counts_guard "SIG$SIG"
	REQ_HZ=100000 ep_py "$OUT" <<PY
check(R["stop_reason"] == "signal", "stop_reason %r" % R["stop_reason"])
$GUARD_PY
PY
done

# Two signals: the second arrives while the run is being finished. Like perf
# record, the run completes: rc 0, files, and the summary on stdout (a file
# here, so it is only flushed at exit: a death by signal would lose it). At
# 999 Hz the guard takes nothing.
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
	ep_py "$OUT" <<'PY'
s = R["sampling"]
check(s["frequency_hz"] == 999 and s["requested_hz"] == 999, "-F 999 sampled as %r" % s)
check(R["dropped"]["by_cause"]["rate_limited"] == 0, "rate_limited %r at 999 Hz" % R["dropped"]["by_cause"]["rate_limited"])
PY
done
ep_stop_pid "$TARGET_PID"

# 256 busy threads at 99 Hz, -d 4: done within 8 s with at most 10% of the
# samples lost (the collector is not starved by its target).
ep_start_target busy_threads 256 60
OUT="$EP_WORK/out-256"
ep_prof_run_nice0 60 --pid "$TARGET_PID" -F 99 -d 4 -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "256 threads: exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_log "256 busy threads at 99 Hz: -d 4 took ${PROF_MS} ms (perf events open after ${ATTACH_MS:-?} ms)"
[ "$PROF_MS" -lt 8000 ] || ep_fail "256 threads: -d 4 took ${PROF_MS} ms, want < 8000"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
check(R["stop_reason"] == "duration", "stop_reason %r" % R["stop_reason"])
tot, lost = R["samples"]["total"], R["dropped"]["total"]
info("256 threads: samples %d, dropped %r" % (tot, {k: v for k, v in R["dropped"]["by_cause"].items() if v}))
check(tot > 0, "no samples from 256 busy threads")
check(lost <= 0.1 * (tot + lost), "%d of %d samples lost (> 10%%)" % (lost, tot + lost))
check(R["dropped"]["by_cause"]["rate_limited"] == 0, "rate_limited at 99 Hz")
PY
ep_stop_pid "$TARGET_PID"
ep_log "ok"
