#!/usr/bin/env bash
# A program of the probes or cycles part that the kernel refuses costs
# that program only, not the part (user/bpf_parts.h): the part loads again
# without it, the run says in one line on stderr which program, the
# verifier's reason and what is lost, and report.json kernel.bpf_degraded
# says the same. EBPF_PROF_FAULT_BPF=PREFIX:PROG[,PROG...] refuses those
# programs (one more at each load, as a kernel refusing a program and its
# twin). Per program, the rest of the part keeps exact data:
#   probe_usdt         the USDT probe asked for is reported unattached
#                      (probes.not_found), the function probes count
#                      exactly (llama_decode once per demo cycle)
#   probe_ldso         a library dlopen'ed after attach is still probed
#                      (found when the sampler sees it mapped): 123 calls
#   probe_fork_clone   launch mode: the other holds stay (a dlopen in the
#                      launched command is held: its 20 calls exact)
#   probe_thread_exit  `ebpf-prof check` lists it degraded (exit 1), its
#                      raw_tp twin loaded; with the twin refused too, the
#                      slots of exited threads are freed by the periodic
#                      scan: exactly one per exited thread, and the calls
#                      counted exactly
#   cycle_usdt         the cycle marker by uprobes on its functions: one
#                      cycle per demo cycle, with or without attach
#                      cookies; a function boundary exact; py: by
#                      watchpoint exact without the GC column; a USDT
#                      boundary (--cycle-every usdt:) cannot be served:
#                      exit 1 with an error naming the program
#   cycle_watch        py: cycles from CPython's USDT points instead
#                      (Debian's 3.11: from one return to the next), the
#                      GC column kept; with cycle_usdt refused too: exit 1
# Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
export PYTHONDONTWRITEBYTECODE=1
SRC="${EP_SOURCE_DIR:-$(dirname "$0")/../..}"
T=$EP_TARGETS_DIR
DEMO=$T/demo_experiment

run_demo() # FAULT OUTDIR [ARGS...]
{
	local fault=$1 out=$2
	shift 2
	EBPF_PROF_FAULT_BPF=$fault ep_prof_run 60 -v -F 99 -o "$out" "$@" -- "$DEMO" 2
}

# said PROG...: each refused program said once on stderr, with a reason.
said()
{
	local p k
	for p in "$@"; do
		k=$(grep -c "this kernel refuses BPF program $p ([^)]*[a-z]" "$PROF_ERR")
		[ "$k" -eq 1 ] || ep_fail "$p: the refusal said $k times, want once: $(grep -i refuses "$PROF_ERR")"
	done
}

demo_cycles()
{
	n=$(sed -n 's/^cycles: \([0-9][0-9]*\)$/\1/p' "$PROF_OUT")
	[ -n "$n" ] && [ "$n" -gt 5 ] || ep_fail "the demo did not report its cycles: $(cat "$PROF_OUT")"
}

# --- probe_usdt: a USDT probe asked for, the function probes exact ---
USDT="usdt:$DEMO:ebpf_prof:cycle_begin"
run_demo probe_:probe_usdt "$EP_WORK/usdt" --probe "$USDT"
[ "$PROF_RC" -eq 0 ] || ep_fail "probe_usdt: run failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
said probe_usdt
grep "refuses BPF program probe_usdt" "$PROF_ERR" | grep -Fq "USDT probes not attached: $USDT" ||
	ep_fail "probe_usdt: the line does not name the probe lost: $(grep refuses "$PROF_ERR")"
demo_cycles
USDT=$USDT DEMO_CYCLES=$n ep_py "$EP_WORK/usdt" <<'PY'
n, usdt = int(os.environ["DEMO_CYCLES"]), os.environ["USDT"]
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["probe_usdt"] and d[0]["reason"] and usdt in d[0]["lost"], "bpf_degraded %r" % d)
nf = [x for x in R["probes"]["not_found"] if x["probe"] == usdt]
check(len(nf) == 1 and "probe_usdt" in nf[0]["reason"], "not_found %r" % R["probes"]["not_found"])
P = {p["symbol"]: p for p in R["probes"]["list"]}
check("cycle_begin" not in P, "the USDT probe is listed: %r" % P.get("cycle_begin"))
c = P.get("llama_decode", {}).get("count")
check(c == n, "llama_decode %r calls, want one per cycle (%d)" % (c, n))
# The cycles part's own USDT program is not the probes': the marker stays.
check(len(R.get("cycles") or []) == n and R["cycles_meta"]["boundaries"] == "marker",
      "%d cycles (%r), want %d from the marker" % (len(R.get("cycles") or []), R["cycles_meta"].get("boundaries"), n))
PY
ep_log "probe_usdt: the USDT probe reported lost, llama_decode exact ($n)"

# --- probe_ldso: a library dlopen'ed after attach is probed anyway ---
ep_start_target dlopen_late "$T/dlopen_late_lib"
EBPF_PROF_FAULT_BPF=probe_:probe_ldso ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/ldso" --no-gpu \
	--probes none --probe dlopen_late_lib:late_work
ep_wait_attached "$PROF_PID" 20
ep_wait_line "$PROF_ERR" "refuses BPF program probe_ldso" 20 "$PROF_PID" || ep_fail "probe_ldso: no refusal line"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^loaded$' 10 "$TARGET_PID" || ep_fail "probe_ldso: target did not load the library"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: late_work in .*dlopen_late_lib" 10 "$PROF_PID" ||
	ep_fail "probe_ldso: the late library was not probed: $(grep probes: "$PROF_ERR" | tail -n 3)"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "probe_ldso: ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "probe_ldso: ebpf-prof exited $EP_EXIT_RC: $(tail -n 5 "$PROF_ERR")"
said probe_ldso
ep_py "$EP_WORK/ldso" <<'PY'
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["probe_ldso"] and "ld.so" in d[0]["lost"], "bpf_degraded %r" % d)
progs = {p["name"]: p for p in R["kernel"]["bpf_programs"]}
check(progs.get("probe_ldso", {}).get("loaded") is False, "probe_ldso %r" % progs.get("probe_ldso"))
P = {p["label"]: p for p in R["probes"]["list"]}
check(P.get("late_work", {}).get("count") == 123, "late_work %r, the target made 123 calls" % P.get("late_work"))
PY
ep_log "probe_ldso: the late library probed without the ld.so trigger (123 calls)"

# --- probe_fork_clone: launch mode's exec and link-map holds stay ---
EBPF_PROF_FAULT_BPF=probe_:probe_fork_clone ep_prof_run 60 -v -F 99 -o "$EP_WORK/fork" \
	--probes none --probe dlopen_late_lib:late_work -- "$T/fork_tree" calls "$T/dlopen_late_lib" 20
[ "$PROF_RC" -eq 0 ] || ep_fail "probe_fork_clone: run failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
grep -qx "calls 40" "$PROF_OUT" || ep_fail "probe_fork_clone: the target did not make its calls: $(cat "$PROF_OUT")"
said probe_fork_clone
ep_py "$EP_WORK/fork" <<'PY'
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["probe_fork_clone"] and "without exec" in d[0]["lost"], "bpf_degraded %r" % d)
P = {p["label"]: p for p in R["probes"]["list"]}
# The parent's 20 calls, after its dlopen's hold, exact; its child's, made
# at once after the fork, are not held for.
c = P.get("late_work", {}).get("count") or 0
check(20 <= c <= 40, "late_work %r, the parent made 20 calls, its child 20" % P.get("late_work"))
PY
ep_log "probe_fork_clone: the parent's calls exact without the fork hold"

# --- probe_thread_exit: `ebpf-prof check` says it, the raw_tp twin loads ---
EBPF_PROF_FAULT_BPF=probe_:probe_thread_exit,probe_ldso "$EP_BIN" check --json \
	>"$EP_WORK/check.json" 2>"$EP_WORK/check.err"
rc=$?
[ "$rc" -eq 1 ] || ep_fail "check with programs refused: exit $rc, want 1: $(tail -n 3 "$EP_WORK/check.err")"
python3 - "$EP_WORK/check.json" <<'PY' || ep_fail "check --json: the checks above failed"
import json, sys
c = json.load(open(sys.argv[1]))
d = {x["program"]: x for x in c["degraded"]}
ok = c["ok"] is False and sorted(d) == ["probe_ldso", "probe_thread_exit"] and \
    "probe_thread_exit_raw" in d["probe_thread_exit"]["lost"] and all(x["reason"] for x in d.values())
progs = {p["name"]: p for p in c["programs"]}
ok = ok and progs["probe_thread_exit_raw"]["loaded"] and not progs["probe_thread_exit"]["loaded"]
if not ok:
    print("  check --json: ok %r, degraded %r, raw twin %r" % (c["ok"], c["degraded"], progs.get("probe_thread_exit_raw")), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
EBPF_PROF_FAULT_BPF=probe_:probe_thread_exit "$EP_BIN" check >"$EP_WORK/check.txt" 2>&1
[ $? -eq 1 ] || ep_fail "check (table) with probe_thread_exit refused does not exit 1"
grep -q "^degraded: probe_thread_exit refused (.*): its raw_tp twin" "$EP_WORK/check.txt" ||
	ep_fail "check's table does not list the degradation: $(tail -n 4 "$EP_WORK/check.txt")"
ep_log "probe_thread_exit: check lists it, the raw_tp twin loads"

# --- both thread-exit programs refused: the periodic scan frees the slots ---
# Python threads, one after the other, each calling a probed C function
# (ctypes) and exiting; the process lives on until the scan has run.
NTHR=4 CALLS=50
cat >"$EP_WORK/thread_exits.py" <<'PY'
import ctypes, os, signal, sys, threading
lib = ctypes.CDLL(sys.argv[1])
lib.c_burn.argtypes = [ctypes.c_long]
lib.c_burn.restype = ctypes.c_long
nthr, calls = int(sys.argv[2]), int(sys.argv[3])
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready %d" % os.getpid(), flush=True)
signal.sigwait({signal.SIGUSR1})
tids = []
def work():
    tids.append(threading.get_native_id())
    for _ in range(calls):
        lib.c_burn(1000)
for _ in range(nthr):
    t = threading.Thread(target=work)
    t.start()
    t.join()
print("exited", *tids, flush=True)
signal.sigwait({signal.SIGUSR1})
print("done", flush=True)
PY
TARGET_OUT="$EP_WORK/thread_exits.out"
/usr/bin/python3 "$EP_WORK/thread_exits.py" "$T/py_ctypes_lib" $NTHR $CALLS >"$TARGET_OUT" 2>"$EP_WORK/thread_exits.err" </dev/null &
TARGET_PID=$!
EP_PIDS+=("$TARGET_PID")
ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "thread_exits.py not ready: $(cat "$EP_WORK/thread_exits.err")"
EBPF_PROF_FAULT_BPF=probe_:probe_thread_exit,probe_thread_exit_raw ep_prof_bg -vv --pid "$TARGET_PID" \
	-o "$EP_WORK/exits" --no-gpu --probes none --probe py_ctypes_lib:c_burn
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: c_burn in " 20 "$PROF_PID" || ep_fail "c_burn not attached: $(tail -n 3 "$PROF_ERR")"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^exited ' 20 "$TARGET_PID" || ep_fail "the threads did not run: $(cat "$EP_WORK/thread_exits.err")"
ep_wait_line "$PROF_ERR" "call-stack slots of exited threads freed \($NTHR in all\)" 10 "$PROF_PID" ||
	ep_fail "the $NTHR exited threads' slots were not freed: $(grep 'slots of exited' "$PROF_ERR")"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "thread exits: ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "thread exits: ebpf-prof exited $EP_EXIT_RC: $(tail -n 5 "$PROF_ERR")"
said probe_thread_exit probe_thread_exit_raw
grep -q "no thread-exit program: $NTHR call-stack slots of exited threads freed" "$PROF_ERR" ||
	ep_fail "slots freed at the end: $(grep 'no thread-exit' "$PROF_ERR"), want $NTHR"
NTHR=$NTHR CALLS=$CALLS ep_py "$EP_WORK/exits" <<'PY'
nthr, calls = int(os.environ["NTHR"]), int(os.environ["CALLS"])
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["probe_thread_exit", "probe_thread_exit_raw"] and
      "probe_thread_exit_raw" in d[0]["lost"] and "scan" in d[1]["lost"], "bpf_degraded %r" % d)
P = {p["label"]: p for p in R["probes"]["list"]}
cb = P.get("c_burn", {})
check(cb.get("count") == nthr * calls and cb.get("completed") == nthr * calls,
      "c_burn %r, the threads made %d calls" % (cb, nthr * calls))
PY
ep_log "probe_thread_exit + _raw: $NTHR exited threads' slots freed by the scan, c_burn exact"

# --- cycle_usdt: the marker by uprobes, function boundaries exact ---
run_demo cycle_:cycle_usdt "$EP_WORK/cusdt"
[ "$PROF_RC" -eq 0 ] || ep_fail "cycle_usdt: run failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
said cycle_usdt
demo_cycles
DEMO_CYCLES=$n ep_py "$EP_WORK/cusdt" <<'PY'
n = int(os.environ["DEMO_CYCLES"])
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["cycle_usdt"] and "uprobes" in d[0]["lost"], "bpf_degraded %r" % d)
nc = len(R.get("cycles") or [])
check(R["cycles_meta"]["boundaries"] == "marker" and nc == n,
      "%d cycles (%r), want %d from the marker" % (nc, R["cycles_meta"].get("boundaries"), n))
P = {p["symbol"]: p for p in R["probes"]["list"]}
check(P.get("llama_decode", {}).get("count") == n, "llama_decode %r" % P.get("llama_decode"))
PY
ep_log "cycle_usdt: the marker by uprobes ($n cycles)"

# The marker asked for, on a kernel without attach cookies as well.
run_demo cycle_:cycle_usdt,cycle_entry "$EP_WORK/cusdt-nc" --cycle marker
[ "$PROF_RC" -eq 0 ] || ep_fail "--cycle marker, cycle_usdt + cycle_entry refused: rc $PROF_RC: $(tail -n 5 "$PROF_ERR")"
said cycle_usdt cycle_entry
demo_cycles
DEMO_CYCLES=$n ep_py "$EP_WORK/cusdt-nc" <<'PY'
n = int(os.environ["DEMO_CYCLES"])
check([x["program"] for x in R["kernel"]["bpf_degraded"]] == ["cycle_usdt", "cycle_entry"], "bpf_degraded %r" % R["kernel"]["bpf_degraded"])
progs = {p["name"]: p for p in R["kernel"]["bpf_programs"]}
check(progs.get("cycle_entry_nc", {}).get("loaded") and progs.get("cycle_return_nc", {}).get("loaded"),
      "the twins without cookies: %r %r" % (progs.get("cycle_entry_nc"), progs.get("cycle_return_nc")))
nc = len(R.get("cycles") or [])
check(R["cycles_meta"]["boundaries"] == "marker" and nc == n, "%d cycles, want %d from the marker" % (nc, n))
PY
ep_log "cycle_usdt + cycle_entry: --cycle marker by uprobes without cookies ($n cycles)"

run_demo cycle_:cycle_usdt "$EP_WORK/cusdt-fn" --cycle "$DEMO:build_prompt"
[ "$PROF_RC" -eq 0 ] || ep_fail "cycle_usdt, --cycle FUNCTION: rc $PROF_RC: $(tail -n 5 "$PROF_ERR")"
said cycle_usdt
demo_cycles
DEMO_CYCLES=$n ep_py "$EP_WORK/cusdt-fn" <<'PY'
n = int(os.environ["DEMO_CYCLES"])
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["cycle_usdt"] and "GC" in d[0]["lost"], "bpf_degraded %r" % d)
# One cycle per build_prompt call: the demo's loops, the last one open.
nc = len(R.get("cycles") or [])
check(n - 1 <= nc <= n, "%d cycles by build_prompt, the demo ran %d" % (nc, n))
PY
ep_log "cycle_usdt: --cycle FUNCTION exact ($n cycles)"

# A USDT boundary cannot be served without the USDT program: an error.
run_demo cycle_:cycle_usdt "$EP_WORK/cusdt-usdt" --cycle-every "usdt:$DEMO:ebpf_prof:cycle_begin"
[ "$PROF_RC" -eq 1 ] || ep_fail "--cycle-every usdt: with cycle_usdt refused: rc $PROF_RC, want 1"
grep -q "this kernel refuses BPF program cycle_usdt ([^)]*[a-z]" "$PROF_ERR" ||
	ep_fail "no line with the verifier's reason: $(tail -n 3 "$PROF_ERR")"
grep -q "error: cycles: cannot load the BPF programs for --cycle-every usdt:.*this kernel refuses cycle_usdt" "$PROF_ERR" ||
	ep_fail "no error naming the option and the program: $(tail -n 3 "$PROF_ERR")"
ep_log "cycle_usdt: --cycle-every usdt: is an error"

# --- py: cycles (Debian's python3, which has the USDT points) ---
[ -x /usr/bin/python3 ] || ep_fail "Debian's /usr/bin/python3 is missing (python3 package)"
N=8
# run_py NAME FAULT WAIT_PATTERN [PROF_ARGS...]: sets PY_RC.
run_py()
{
	local name=$1 fault=$2 pattern=$3
	shift 3
	TARGET_OUT="$EP_WORK/driver.$name.out"
	/usr/bin/python3 "$SRC/tests/integration/cycle_driver.py" $N 5 plain "$SRC/tools/cycle_marker" \
		>"$TARGET_OUT" 2>"$EP_WORK/driver.$name.err" </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "$name: driver not ready: $(cat "$EP_WORK/driver.$name.err")"
	EBPF_PROF_FAULT_BPF=$fault ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/$name" --no-gpu "$@"
	ep_wait_line "$PROF_ERR" "$pattern" 30 "$PROF_PID" || ep_fail "$name: no '$pattern': $(tail -n 3 "$PROF_ERR")"
	kill -USR1 "$TARGET_PID"
	ep_wait_exit "$PROF_PID" 60 || ep_fail "$name: ebpf-prof did not stop"
	PY_RC=$EP_EXIT_RC
}

run_py watch cycle_:cycle_watch "cycles: pid [0-9]*: cycle boundary py:run_cycle in .*python3" --cycle py:run_cycle
[ "$PY_RC" -eq 0 ] || ep_fail "cycle_watch: ebpf-prof exited $PY_RC: $(tail -n 5 "$PROF_ERR")"
grep -qx done "$TARGET_OUT" || ep_fail "cycle_watch: the driver did not finish"
said cycle_watch
N=$N ep_py "$EP_WORK/watch" <<'PY'
n = int(os.environ["N"])
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["cycle_watch"] and "function__entry" in d[0]["lost"], "bpf_degraded %r" % d)
m = R["cycles_meta"]
check(m.get("py_mechanism") == "usdt", "mechanism %r" % m.get("py_mechanism"))
# Debian's 3.11 fires function__return only (CPython gh-98894): cycles
# from one return to the next.
C = R.get("cycles") or []
check(len(C) == n - 1, "%d cycles, want %d" % (len(C), n - 1))
# The GC column (its USDT points) stays: each cycle runs a gc.collect().
check(all(c["breakdown"]["gc_ns"] > 0 for c in C), "gc_ns %r" % [c["breakdown"]["gc_ns"] for c in C])
PY
ep_log "cycle_watch: py: by CPython's USDT points ($((N - 1)) cycles), GC column kept"

run_py nogc cycle_:cycle_usdt "cycles: pid [0-9]*: cycle boundary py:run_cycle: watchpoint on its code object" --cycle py:run_cycle
[ "$PY_RC" -eq 0 ] || ep_fail "cycle_usdt, py: by watchpoint: ebpf-prof exited $PY_RC: $(tail -n 5 "$PROF_ERR")"
grep -qx done "$TARGET_OUT" || ep_fail "cycle_usdt, py:: the driver did not finish"
said cycle_usdt
N=$N ep_py "$EP_WORK/nogc" <<'PY'
n = int(os.environ["N"])
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["cycle_usdt"] and "GC" in d[0]["lost"], "bpf_degraded %r" % d)
C = R.get("cycles") or []
check(R["cycles_meta"].get("py_mechanism") == "watchpoint" and len(C) == n, "%d cycles (%r), want %d" % (len(C), R["cycles_meta"].get("py_mechanism"), n))
check(all(c["breakdown"]["gc_ns"] == 0 for c in C), "a GC column without its probes: %r" % [c["breakdown"]["gc_ns"] for c in C])
PY
ep_log "cycle_usdt: py: by watchpoint exact ($N cycles), no GC column"

run_py none cycle_:cycle_watch,cycle_usdt "error: cycles: cannot load the BPF programs" --cycle py:run_cycle
[ "$PY_RC" -eq 1 ] || ep_fail "py: with cycle_watch and cycle_usdt refused: rc $PY_RC, want 1"
grep -q "error: cycles: cannot load the BPF programs for --cycle py:run_cycle: this kernel refuses cycle_usdt" "$PROF_ERR" ||
	ep_fail "no error naming the option and the program: $(tail -n 3 "$PROF_ERR")"
ep_log "cycle_watch + cycle_usdt: --cycle py: is an error"
exit 0
