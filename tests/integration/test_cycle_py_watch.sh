#!/bin/bash
# --cycle py:FUNCTION by hardware watchpoint (docs/cycles.md, "py:FUNCTION"):
# on Debian's python3.11 and every pyenv CPython 3.8-3.13 present, attached
# with --pid to a process that waits before its first call (the function is
# found in the frames its threads are in), every outermost call of the
# function is one cycle, on the main thread and on a thread started later
# (inherited watchpoints), with the target's own times inside each cycle;
# the 5000 calls of another function between cycles do not trap (watchpoint
# hits: 2 per call of the function, a few more at the interpreter's exit);
# --cycle-every too; and a function whose def runs after the profiler found
# its code object. A missing pyenv version: the others run and the test
# ends as skipped (77); a failure under CI=true.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

TARGET="$(cd "$(dirname "$0")" && pwd)/py_watch_target.py"
N_MAIN=12 N_THREAD=6

# run_one PY NAME MODE(cycle|every) N_THREAD
run_one()
{
	local py=$1 name=$2 mode=$3 nthr=$4 out="$EP_WORK/$2.$3" own="$EP_WORK/$2.$3.own" opt
	opt=--cycle
	[ "$mode" = every ] && opt=--cycle-every
	TARGET_OUT="$EP_WORK/$name.$mode.target"
	"$py" "$TARGET" $N_MAIN "$nthr" "$own" >"$TARGET_OUT" 2>"$TARGET_OUT.err" </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "$name: target not ready: $(cat "$TARGET_OUT.err")"
	ep_prof_bg -v --pid "$TARGET_PID" -o "$out" --no-gpu --probes none "$opt" py:cycle_fn
	ep_wait_line "$PROF_ERR" "cycles: pid $TARGET_PID: cycle boundary py:cycle_fn: watchpoint on its code object" 30 "$PROF_PID" ||
		ep_fail "$name: not armed before the first call: $(grep cycles: "$PROF_ERR" | tail -n 3)"
	kill -USR1 "$TARGET_PID"
	ep_wait_exit "$PROF_PID" 60 || ep_fail "$name: ebpf-prof did not stop after the target exited"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "$name: ebpf-prof exited $EP_EXIT_RC ($(tail -n 3 "$PROF_ERR"))"
	grep -qx done "$own" || ep_fail "$name: target did not finish: $(tail -n 3 "$TARGET_OUT.err")"
	OWN="$own" MODE=$mode NTHR=$nthr ep_py "$out" <<'PY' || exit 1
own = [tuple(int(x) for x in l.split()[1:]) for l in open(os.environ["OWN"]) if l.startswith("call ")]
mode, nthr = os.environ["MODE"], int(os.environ["NTHR"])
m = R.get("cycles_meta", {})
w = m.get("py_watch") or {}
check(m.get("py_mechanism") == "watchpoint", "mechanism %r" % m.get("py_mechanism"))
C = R.get("cycles", [])
full = [c for c in C if not c["partial"]]
check(len({t for t, _, _ in own}) == (2 if nthr else 1), "target threads %r" % {t for t, _, _ in own})
MS = 1e6
if mode == "cycle":
    # One cycle per outermost call, none lost, none extra: the boundaries
    # (the code's reference taken and dropped) bracket the target's own
    # clock reads inside the call, by less than 20 ms (a preemption).
    check(len(full) == len(own) and len(C) == len(own), "%d cycles (%d partial) for %d calls" % (len(C), len(C) - len(full), len(own)))
    for (tid, a, b), c in zip(sorted(own, key=lambda o: o[1]), sorted(full, key=lambda c: c["start_ns"])):
        check(c["tid"] == tid, "cycle %d on tid %d, call on %d" % (c["index"], c["tid"], tid))
        check(0 <= a - c["start_ns"] < 20 * MS and 0 <= c["end_ns"] - b < 20 * MS,
              "cycle %d [%d, %d] vs call [%d, %d]: %.3f / %.3f ms outside" % (c["index"], c["start_ns"], c["end_ns"], a, b, (a - c["start_ns"]) / MS, (c["end_ns"] - b) / MS))
    check(m.get("unmatched_ends", 99) <= 3, "unmatched ends %r" % m.get("unmatched_ends"))
else:
    # A cycle from each call to the next: all but the last closed.
    check(len(full) == len(own) - 1 and len(C) == len(own), "--cycle-every: %d cycles (%d partial) for %d calls" % (len(C), len(C) - len(full), len(own)))
    for (tid, a, b), c in zip(sorted(own, key=lambda o: o[1]), sorted(C, key=lambda c: c["start_ns"])):
        check(0 <= a - c["start_ns"] < 20 * MS, "cycle %d starts %.3f ms before its call" % (c["index"], (a - c["start_ns"]) / MS))
# Two calls (the outer and the nested one) x two hits, plus the object's
# release at the interpreter's exit: the 5000 helper() calls per cycle
# never trap.
calls = 2 * len(own)
check(2 * calls <= w.get("hits", 0) <= 2 * calls + 8, "watchpoint hits %r for %d calls" % (w.get("hits"), calls))
check(w.get("unreadable", 1) == 0, "unreadable %r" % w.get("unreadable"))
PY
	ep_log "ok: $name $mode"
}

# A function defined after the profiler found its code object among its
# module's constants: the def's reference to the code is no call; it is
# watched from its def on, and every call is one cycle.
late_def()
{
	local py=$1 name=$2 out="$EP_WORK/$2.late" own="$EP_WORK/$2.late.own"
	TARGET_OUT="$EP_WORK/$name.late.target"
	"$py" "$(dirname "$TARGET")/py_watch_late_def.py" 10 "$own" >"$TARGET_OUT" 2>"$TARGET_OUT.err" </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "$name late: target not ready"
	ep_prof_bg -v --pid "$TARGET_PID" -o "$out" --no-gpu --probes none --cycle py:late_fn
	ep_wait_line "$PROF_ERR" "py:late_fn: its code object at 0x[0-9a-f]+ is not a function yet" 30 "$PROF_PID" ||
		ep_fail "$name late: code object not found before its def: $(grep cycles: "$PROF_ERR" | tail -n 3)"
	kill -USR1 "$TARGET_PID"
	ep_wait_line "$TARGET_OUT" '^defined$' 20 "$TARGET_PID" || ep_fail "$name late: no def"
	ep_wait_line "$PROF_ERR" "cycle boundary py:late_fn: watchpoint on its code object" 30 "$PROF_PID" ||
		ep_fail "$name late: not armed after the def: $(grep cycles: "$PROF_ERR" | tail -n 3)"
	kill -USR1 "$TARGET_PID"
	ep_wait_exit "$PROF_PID" 60 || ep_fail "$name late: ebpf-prof did not stop"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "$name late: ebpf-prof exited $EP_EXIT_RC"
	grep -qx done "$own" || ep_fail "$name late: target did not finish"
	ep_py "$out" <<'PY' || exit 1
C = R.get("cycles", [])
check(len(C) == 10 and not any(c["partial"] for c in C), "%d cycles (%d partial) for 10 calls of late_fn" % (len(C), sum(c["partial"] for c in C)))
PY
	ep_log "ok: $name late def"
}

run_one /usr/bin/python3.11 debian3.11 cycle $N_THREAD
late_def /usr/bin/python3.11 debian3.11
run_one /usr/bin/python3.11 debian3.11 every 0
n=0
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	ep_pyenv "$v" || continue
	py=$EP_PY
	run_one "$py" "pyenv$v" cycle $N_THREAD
	[ "$v" = 3.12 ] && late_def "$py" "pyenv$v"
	n=$((n + 1))
done
ep_log "ok (Debian's 3.11 and $n pyenv versions)"
