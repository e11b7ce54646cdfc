#!/bin/bash
# A real third-party library without frame pointers: Debian's libsqlite3
# driven by tests/targets/sqlite_busy (main -> run_query -> sqlite3_step).
# With the default unwinding, stacks through sqlite3_step must reach the
# target's own main; the frame-pointer walk of the same process cannot get
# out of the library (the contrast shows the target still exercises it).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=499
ep_start_target sqlite_busy 0
PID=$TARGET_PID
ep_wait_cpu "$PID" 0.2 10
grep -q libsqlite3 "/proc/$PID/maps" || ep_fail "sqlite_busy has no libsqlite3 mapped"

OUT="$EP_WORK/auto"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 3 --no-sched --probes none -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
tot = R["samples"]["total"]
step = folded_total(lambda fr: "sqlite3_step" in fr)
info("%d of %d samples under sqlite3_step" % (step, tot))
# The target spends its time in queries: most samples are inside the library.
check(step >= 0.8 * tot and step >= 300, "only %d of %d samples under sqlite3_step" % (step, tot))
good = folded_total(lambda fr: has_seq(fr, ["main", "run_query", "sqlite3_step"]))
info("%d of %d sqlite3_step stacks reach main;run_query;sqlite3_step" % (good, step))
# 1% slack: a sample can land in the few instructions where the interrupted
# code's CFI is not exact (epilogues of hand-written libc routines).
check(good >= 0.99 * step, "only %d of %d stacks through sqlite3_step reach main;run_query" % (good, step))
# Frames below sqlite3_step come from the library (named or [unknown] lib+off).
files = {f.get("file") or "" for f in S["shared"]["frames"] if f.get("name") == "sqlite3_step"}
check(any("libsqlite3" in x for x in files), "sqlite3_step not from libsqlite3: %r" % files)
PY

OUT2="$EP_WORK/fp"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 2 --no-sched --probes none --unwind fp -o "$OUT2"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof --unwind fp exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_py "$OUT2" <<'PY'
tot = R["samples"]["total"]
good = folded_total(lambda fr: has_seq(fr, ["main", "run_query"]))
info("fp mode: %d of %d stacks reach main;run_query" % (good, tot))
check(tot > 0 and good <= 0.5 * tot, "fp mode got %d of %d stacks out of libsqlite3: it has frame pointers now?" % (good, tot))
PY
ep_log "ok"
