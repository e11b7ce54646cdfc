#!/bin/bash
# Threads created after ebpf-prof attached must be sampled: late_threads
# spins single-threaded until SIGUSR1, which we send only once ebpf-prof is
# attached and has been sampling for a while.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=499
SPIN_S=3
ep_start_target late_threads "$SPIN_S"
OUT="$EP_WORK/out"
# -d bounds the run even if exit detection were broken; the target itself
# ends after SPIN_S s of threads, so the expected stop is targets-exited.
ep_prof_bg --pid "$TARGET_PID" -F "$FREQ" -d 60 -o "$OUT"
ep_wait_attached "$PROF_PID" 30
# Let main_spin burn 0.5 s under the profiler so samples from before the
# threads exist (first_sample < creation time proves the attach came first).
ep_wait_cpu "$TARGET_PID" 0.5 20
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^threads [0-9]+ [0-9]+ [0-9]+$' 10 "$TARGET_PID" || ep_fail "late_threads did not start its threads"
read -r _ CREATED_NS TID1 TID2 < <(grep -E '^threads ' "$TARGET_OUT")
ep_wait_exit "$TARGET_PID" 30 || ep_fail "late_threads did not exit"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "late_threads exited $EP_EXIT_RC"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop after its target exited"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"

THREAD_CPU=$(grep -E '^thread_cpu ' "$TARGET_OUT" | tr '\n' ';') \
FREQ=$FREQ SPIN_S=$SPIN_S PID=$TARGET_PID CREATED_NS=$CREATED_NS TID1=$TID1 TID2=$TID2 ep_py "$OUT" <<'PY'
freq, spin_s, pid = int(os.environ["FREQ"]), int(os.environ["SPIN_S"]), int(os.environ["PID"])
tids = [int(os.environ["TID1"]), int(os.environ["TID2"])]
created = int(os.environ["CREATED_NS"])
tcpu = {int(l.split()[1]): int(l.split()[2]) / 1e9 for l in os.environ["THREAD_CPU"].split(";") if l}
check(sorted(tcpu) == sorted(tids), "late_threads printed thread_cpu for %r, want %r" % (sorted(tcpu), tids))
check(R["stop_reason"] == "targets-exited", "stop_reason %r, want 'targets-exited'" % R["stop_reason"])
first = (R.get("time") or {}).get("first_sample_monotonic_ns")
if check(isinstance(first, int) and first > 0, "time.first_sample_monotonic_ns missing or 0: %r" % first):
    check(first < created, "first sample at %d is not before thread creation at %d: attach was late, the test proves nothing" % (first, created))
threads = {x["tid"]: x for x in R["threads"]}
for tid in tids:
    th = threads.get(tid)
    if not check(th is not None, "late thread tid %d absent from report.threads %r" % (tid, sorted(threads))):
        continue
    check(th["pid"] == pid, "thread %d reported with pid %r, want %d" % (tid, th["pid"], pid))
    check(th["comm"] == "spinner", "thread %d comm %r, want 'spinner'" % (tid, th["comm"]))
    # The thread lived entirely under the profiler: all of the CPU it got
    # (its own CLOCK_THREAD_CPUTIME_ID) must be sampled at FREQ. +-25% as in
    # test_pid_mode.
    exp = tcpu.get(tid, 0) * freq
    info("tid %d: samples %d, expected %.0f" % (tid, th["samples"], exp))
    check(abs(th["samples"] - exp) <= 0.25 * exp,
          "thread %d has %d samples, expected %.0f +-25%% (%.2f s CPU)" % (tid, th["samples"], exp, tcpu.get(tid, 0)))
    profs = [p for p in S["profiles"] if re.search(r"tid %d\)$" % tid, p["name"])]
    if check(len(profs) == 1, "speedscope has %d profiles for tid %d, want 1" % (len(profs), tid)):
        fnames = S["shared"]["frames"]
        with_ts = sum(w for st, w in zip(profs[0]["samples"], profs[0]["weights"])
                      if any(fnames[i]["name"] == "thread_spin" for i in st))
        tot_w = sum(profs[0]["weights"])
        check(tot_w > 0 and with_ts >= 0.9 * tot_w,
              "tid %d: thread_spin on %r of %r (weighted) stacks, want >= 90%%" % (tid, with_ts, tot_w))
check(threads.get(pid) is not None and threads[pid]["samples"] > 0, "main thread %d has no samples" % pid)
ts = folded_total(lambda fr: "thread_spin" in fr)
check(ts > 0 and folded_total(lambda fr: fr[0] == "spinner" and "thread_spin" in fr) == ts,
      "folded: thread_spin stacks must start with comm 'spinner'")
check(folded_total(lambda fr: has_seq(fr, ["main", "main_spin"])) > 0, "folded: no main;main_spin stack")
PY
ep_log "ok"
