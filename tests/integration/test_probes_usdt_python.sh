#!/bin/bash
# A real USDT pair in a real program: CPython's python:gc__start /
# python:gc__done (Debian's python3 has the notes; the points sit behind
# semaphores, which the attach must raise or they never fire), paired with
# --probe usdt:python3:python:gc__start,pair. Automatic collection is off,
# and the recording stops before interpreter shutdown collects again, so
# exactly N_GC explicit gc.collect() calls make N_GC spans; each lies
# inside the interval Python timed around its gc.collect() call and carries
# the end point's argument (objects collected, as gc.collect() returned).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

# Debian's python3 (the one with the notes), not whatever python3 PATH finds.
PY=$(readlink -f /usr/bin/python3)
# Not "readelf | grep -q": grep quitting early fails the pipe under pipefail.
if ! readelf -n "$PY" 2>/dev/null | grep -c "Name: gc__start" >/dev/null; then
	ep_log "SKIP: no gc__start USDT note in $PY"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
N_GC=40
cat >"$EP_WORK/gc_target.py" <<PYEOF
import gc, os, signal, sys, time
gc.disable()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready", os.getpid(), flush=True)
signal.sigwait({signal.SIGUSR1})
own, garbage = [], []
for i in range($N_GC):
    # i reference cycles for collection i to find
    for k in range(i):
        a = []; a.append(a)
    t0 = time.monotonic_ns()
    n = gc.collect()
    own.append((t0, time.monotonic_ns()))
    garbage.append(n)
print("own", " ".join("%d:%d" % o for o in own), flush=True)
print("collected", " ".join(map(str, garbage)), flush=True)
print("done", flush=True)
# Interpreter shutdown collects again: the recording ends before that.
signal.sigwait({signal.SIGUSR1})
PYEOF
"$PY" "$EP_WORK/gc_target.py" >"$EP_WORK/gc.out" 2>"$EP_WORK/gc.err" </dev/null &
TARGET_PID=$!
EP_PIDS+=("$TARGET_PID")
ep_wait_line "$EP_WORK/gc.out" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "python target did not start"
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu --probes none \
	--probe "usdt:python3:python:gc__start,pair,label=gc"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: gc in .*python3" 30 "$PROF_PID" || ep_fail "gc pair not attached: $(tail -n 3 "$PROF_ERR")"
kill -USR1 "$TARGET_PID"
ep_wait_line "$EP_WORK/gc.out" '^done$' 60 "$TARGET_PID" || ep_fail "target did not finish: $(cat "$EP_WORK/gc.out" "$EP_WORK/gc.err")"
kill -INT "$PROF_PID"
ep_wait_exit "$PROF_PID" 60 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
kill -USR1 "$TARGET_PID"
ep_check_outputs "$EP_WORK/out"
GC_OUT="$EP_WORK/gc.out" N_GC=$N_GC ep_py "$EP_WORK/out" <<'PY'
import os
n = int(os.environ["N_GC"])
lines = dict(l.split(" ", 1) for l in open(os.environ["GC_OUT"]).read().splitlines() if " " in l)
own = [tuple(map(int, x.split(":"))) for x in lines["own"].split()]
collected = list(map(int, lines["collected"].split()))
P = {p["label"]: p for p in R["probes"]["list"]}
g = P.get("gc")
check(g is not None, "no gc probe: %r" % sorted(P))
if g:
    check(g["count"] == n and g["completed"] == n, "gc count %r completed %r, want %d" % (g["count"], g["completed"], n))
    check(g.get("usdt_end") == "gc__done", "end point %r" % g.get("usdt_end"))
    check(g["library"].startswith("/usr/bin/python3"), "library %r" % g["library"])
check(R["probes"]["dropped"]["total"] == 0, "drops %r" % R["probes"]["dropped"])
T = load_json("trace.json")["traceEvents"]
E = sorted((e for e in T if e.get("ph") == "X" and e["name"] == "gc"), key=lambda e: e["ts"])
check(len(E) == n, "%d gc spans in trace.json, want %d" % (len(E), n))
# trace.json timestamps are microseconds from the run's start; compare the
# spans with Python's own intervals by their lengths and order instead:
# each span fits inside the matching call as Python timed it (1 us slack).
for i, (e, (t0, t1)) in enumerate(zip(E, own)):
    check(e["dur"] <= (t1 - t0) / 1000 + 1, "gc %d: span %.1f us longer than the call (%.1f us)" % (i, e["dur"], (t1 - t0) / 1000))
    check(e["args"].get("ret") == collected[i], "gc %d: end argument %r, Python collected %d" % (i, e["args"].get("ret"), collected[i]))
total_own = sum(t1 - t0 for t0, t1 in own)
check(0 < g["total_ns"] <= total_own, "gc total %r vs Python's %d" % (g["total_ns"], total_own))
PY
echo "PASS: test_probes_usdt_python"
