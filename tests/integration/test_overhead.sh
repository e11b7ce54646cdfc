#!/bin/bash
# Our own cost, measured and said (report.json "overhead", finding
# probe_overhead): --cycle py:FUNCTION with --python native (CPython's USDT
# points) makes every Python function return trap into the kernel. On a call-heavy loop (py_calls.py) the run must
# count every probe hit, find the probes' share of the target's CPU near
# what the target itself loses (its CPU time with the probes against
# without), and say so in a finding that recommends the marker instead of
# "add probes". The same loop with cycles from a native call made once per
# cycle (--cycle-every getppid), or from the default py: watchpoint (a trap
# at generate's calls and returns only), must not get that finding.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
export PYTHONDONTWRITEBYTECODE=1
SRC="${EP_SOURCE_DIR:-$(dirname "$0")/../..}"
[ -x /usr/bin/python3 ] || ep_fail "Debian's /usr/bin/python3 is missing (python3 package)"
CYC=6
# 30000 calls: ~300 samples at 999 Hz, margin over the 200 the share needs
CALLS=30000

# run_py OUT_DIR [PROF_ARGS...]: the loop, under ebpf-prof when args given.
run_py()
{
	local out=$1
	shift
	TARGET_OUT="$EP_WORK/$(basename "$out").target"
	/usr/bin/python3 "$SRC/tests/integration/py_calls.py" $CYC $CALLS >"$TARGET_OUT" 2>&1 </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "py_calls not ready: $(cat "$TARGET_OUT")"
	if [ $# -gt 0 ]; then
		ep_prof_bg -v --pid "$TARGET_PID" -o "$out" --no-gpu -F 999 "$@"
		ep_wait_line "$PROF_ERR" "cycles: pid [0-9]*: cycle boundary" 30 "$PROF_PID" ||
			ep_fail "boundaries not attached: $(tail -n 3 "$PROF_ERR")"
	fi
	kill -USR1 "$TARGET_PID"
	ep_wait_line "$TARGET_OUT" '^done$' 120 "$TARGET_PID" || ep_fail "py_calls did not finish"
	if [ $# -gt 0 ]; then
		ep_wait_exit "$PROF_PID" 60 || ep_fail "ebpf-prof did not stop after the target exited"
		[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
	fi
}

run_py "$EP_WORK/base"
BASE_OUT=$TARGET_OUT
run_py "$EP_WORK/py" --python native --cycle py:generate
BASE_OUT=$BASE_OUT TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/py" <<'PY'
def own(path):
    for l in open(path):
        f = l.split()
        if f and f[0] == "cycles":
            return int(f[3]), int(f[5])
    die("no 'cycles' line in %s" % path)
returns, cpu = own(os.environ["TARGET_OUT"])
_, base = own(os.environ["BASE_OUT"])
ov = R.get("overhead")
if not check(ov, "no overhead section"):
    sys.exit(1)
prog = {p["name"]: p for p in ov["programs"]}
# Every Python function return of the loop traps once into cycle_usdt (the
# name filter runs after the trap); nothing else Python runs meanwhile
# (gc off, the interpreter waits in sigwait before) but the loop's end:
# exact within 20 returns.
hits = prog.get("cycle_usdt", {}).get("runs", 0)
check(returns <= hits <= returns + 20, "cycle_usdt ran %d times, the loop made %d returns" % (hits, returns))
check(ov["probe_hits"] >= hits, "probe_hits %d < cycle_usdt runs %d" % (ov["probe_hits"], hits))
check(ov["trap_ns"] is not None and 50 < ov["trap_ns"] < 50000, "trap %r ns" % ov["trap_ns"])
# What the target lost, by its own CPU clock: with the probes its loop took
# cpu ns, without base. The share of its CPU in the kernel's uprobe code
# (the finding's figure) is part of that loss: the rest is CPython building
# the probe's arguments in user space. At least half of it, at most all of
# it (+5 points for the sampling error of ~500+ samples).
loss = 1 - base / cpu
share = ov["probe_share"]
info("target CPU %.1f ms with probes, %.1f ms without: loss %.1f%%; probes' share %.1f%% (%d of %d samples); estimate %.1f ms" %
     (cpu / 1e6, base / 1e6, loss * 100, share * 100, ov["samples_in_probes"], ov["samples_total"], ov["probe_ns"] / 1e6))
check(ov["samples_total"] >= 200, "only %d samples" % ov["samples_total"])
check(0.5 * loss <= share <= loss + 0.05, "probes' share %.3f, the target lost %.3f" % (share, loss))
F = {f["rule"]: f for f in R["findings"]}
po = F.get("probe_overhead")
if check(po is not None, "no probe_overhead finding: %r" % sorted(F)):
    check(abs(po["value"] - share) < 1e-9, "finding value %r, share %r" % (po["value"], share))
    check("marker" in po["recommendation"], "recommendation %r" % po["recommendation"])
un = F.get("unattributed_time")
if un:
    check("probe_overhead" in un["evidence"], "unattributed_time does not name our probes: %r" % un["evidence"])
# Every recommended option exists: no --probe py:.
check(not any("--probe py:" in f["recommendation"] for f in R["findings"]), "a finding recommends --probe py:")
PY
grep -q "^Overhead (our cost inside the target): probes " "$PROF_OUT" || ep_fail "no Overhead line in the summary"

# Cycles from one native call per cycle: 10 probe hits, no finding. A
# longer loop (~0.3 s of CPU) so that the share comes from 200+ samples.
CYC=10 CALLS=200000 run_py "$EP_WORK/native" --cycle-every getppid
ep_py "$EP_WORK/native" <<'PY'
ov = R["overhead"]
F = {f["rule"] for f in R["findings"]}
info("--cycle-every getppid: %d probe hits, share %r of %d samples" % (ov["probe_hits"], ov["probe_share"], ov["samples_total"]))
prog = {p["name"]: p for p in ov["programs"]}
# One per cycle; CPython's gc__start/gc__done (attached for any Python
# target) fire for the collections at its exit.
check(prog["cycle_entry"]["runs"] == 10, "cycle_entry ran %d times" % prog["cycle_entry"]["runs"])
check(ov["probe_hits"] <= 30, "probe hits %d" % ov["probe_hits"])
check(len(R["cycles"]) >= 9, "%d cycles" % len(R["cycles"]))
check(ov["probe_share"] is not None and ov["probe_share"] < 0.02, "share %r" % ov["probe_share"])
check("probe_overhead" not in F, "probe_overhead for 10 probe hits: %r" % F)
PY
# The same loop, py:generate by watchpoint (the default with Python
# frames): two hits per call of generate, whatever the 60000 calls of
# step/tok inside; the hits and their measured cost are in the estimate;
# no finding.
run_py "$EP_WORK/watch" --cycle py:generate
ep_py "$EP_WORK/watch" <<'PY'
ov = R["overhead"]
F = {f["rule"] for f in R["findings"]}
prog = {p["name"]: p for p in ov["programs"]}
w = prog.get("cycle_watch", {})
info("py:generate by watchpoint: %d hits x %r ns, share %r of %d samples" % (w.get("runs", 0), ov.get("watch_trap_ns"), ov["probe_share"], ov["samples_total"]))
check(w.get("kind") == "watchpoint", "cycle_watch %r" % w)
# 6 calls, 2 hits each; the release of generate's code at the exit.
check(12 <= w.get("runs", 0) <= 20, "cycle_watch ran %d times for 6 calls" % w.get("runs", 0))
# cycle_usdt serves CPython's GC points here (gc off: a few at the exit),
# not function__return: 360k hits if it were.
check(prog.get("cycle_usdt", {}).get("runs", 0) <= 10, "cycle_usdt ran %r times" % prog.get("cycle_usdt"))
check(ov.get("watch_trap_ns") is not None and 0 < ov["watch_trap_ns"] < 1e6, "watch trap %r ns" % ov.get("watch_trap_ns"))
check(ov["probe_hits"] >= w.get("runs", 0), "probe_hits %d" % ov["probe_hits"])
check(len([c for c in R["cycles"] if not c["partial"]]) == 6, "%d cycles" % len(R["cycles"]))
check(ov["probe_share"] is not None and ov["probe_share"] < 0.02, "share %r" % ov["probe_share"])
check("probe_overhead" not in F, "probe_overhead for %d watchpoint hits: %r" % (w.get("runs", 0), F))
PY
echo "PASS: test_overhead"
