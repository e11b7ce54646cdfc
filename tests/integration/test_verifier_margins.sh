#!/usr/bin/env bash
# Every BPF program fits the running kernel's verifier with the margins
# of docs/design.md, and a program the kernel refuses costs only itself.
#   check       `ebpf-prof check --json`: every program a run loads (CPU
#               sampler, scheduler, memory/thermal, probes, cycles, --alloc)
#               is listed, loaded, with its instructions processed and its
#               combined stack under the margins (<= 448 of 512 bytes JIT'ed,
#               <= 512 without JIT, instructions <= a fifth of the limit);
#               exit 0. The table form says ok.
#   recording   `-v -- offcpu_mix`: no "did not load", "cannot load" or
#               "view off" line; report.json kernel.bpf_programs agrees;
#               offcpu.folded has the sleeper's sleep_phase.
#   degraded    EBPF_PROF_FAULT_BPF=sched_:sched_switch makes the kernel
#               refuse the switch program that walks user stacks: the run
#               takes its twin without bpf_loop, says so in one line and in
#               report.json kernel.bpf_degraded, and keeps on/off-CPU time
#               (the sleeper >= 95% off-CPU) and off-CPU stacks (frame
#               pointers) to sleep_phase.
#   sampler     EBPF_PROF_FAULT_BPF=profile:on_cpu_sample: the CPU sampler
#               takes its twin without bpf_loop (frame-pointer stacks), says
#               so once and in bpf_degraded; the spinner's samples still
#               reach spin_phase; the scheduler view is whole.
# Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

# --- check ---
"$EP_BIN" check --json >"$EP_WORK/check.json" 2>"$EP_WORK/check.err"
rc=$?
[ "$rc" -eq 0 ] || ep_fail "ebpf-prof check --json: exit $rc: $(tail -n 5 "$EP_WORK/check.err") $(grep -m3 -B2 '"loaded": false\|"within_margins": false' "$EP_WORK/check.json")"
python3 - "$EP_WORK/check.json" <<'PY' || ep_fail "check --json: the checks above failed"
import json, sys
FAILS = []
def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("  check failed: %s" % msg, file=sys.stderr)
c = json.load(open(sys.argv[1]))
check(c["ok"] is True, "check: ok is %r" % c["ok"])
progs = {p["name"]: p for p in c["programs"]}
for want in ("on_cpu_sample", "sched_switch", "sched_wake", "sched_exit", "probe_entry",
             "probe_return", "cycle_entry", "alloc_entry", "alloc_mmap_exit"):
    check(want in progs, "check: %s not listed (%s)" % (want, sorted(progs)))
lim = c["limits"]
check(lim["stack"] == 512 and lim["stack_max"] == 448, "limits %r" % lim)
for n, p in progs.items():
    check(p["loaded"], "%s not loaded: %s" % (n, p.get("reason")))
    check(p["within_margins"], "%s past a margin: %r" % (n, p))
    if "insns_processed" in p:
        check(0 < p["insns_processed"] <= p["insns_max"], "%s: %r insns" % (n, p["insns_processed"]))
    if "stack_combined" in p:
        check(0 <= p["stack_combined"] <= lim["stack_max"], "%s: stack %r" % (n, p["stack_combined"]))
        check(p["stack_combined_no_jit"] <= lim["stack"], "%s: no-JIT stack %r" % (n, p["stack_combined_no_jit"]))
        # The deepest chain holds at least the program's own frame.
        check(p["stack_combined"] >= p["stack_depths"][0], "%s: %r" % (n, p))
# The walkers must be measured, not skipped: their chains are the deep ones.
for n in ("on_cpu_sample", "sched_switch"):
    check(len(progs[n].get("stack_depths", [])) > 3 and progs[n]["stack_combined"] > 200,
          "%s: no call chain measured: %r" % (n, progs[n]))
check(c["degraded"] == [], "check: degraded %r" % c["degraded"])
check(c["kernel"]["release"] and c["kernel"]["btf"] in (True, False), "kernel %r" % c["kernel"])
sys.exit(1 if FAILS else 0)
PY
"$EP_BIN" check >"$EP_WORK/check.txt" 2>&1 || ep_fail "ebpf-prof check: exit $?: $(tail -n 5 "$EP_WORK/check.txt")"
grep -q "^ok: every program loads within the margins" "$EP_WORK/check.txt" ||
	ep_fail "check's table does not say ok: $(tail -n 3 "$EP_WORK/check.txt")"
"$EP_BIN" check --bogus >/dev/null 2>&1
[ $? -eq 2 ] || ep_fail "check --bogus is not a usage error"

# --- a recording loads everything ---
SECS=2
ep_prof_run 60 -v -F 99 -o "$EP_WORK/rec" -- "$EP_TARGETS_DIR/offcpu_mix" --seconds "$SECS" --dir "$EP_WORK"
[ "$PROF_RC" -eq 0 ] || ep_fail "recording: exit $PROF_RC: $(tail -n 5 "$PROF_ERR")"
if grep -E "did not load|cannot load|view off|refuses BPF program" "$PROF_ERR" >&2; then
	ep_fail "a recording lost a program on this kernel (lines above)"
fi

sched_ok() # DIR: the sleeper's time and its off-CPU stacks
{
	SECS=$SECS ep_py "$1" <<'PY'
sc = R.get("sched")
if not check(isinstance(sc, dict), "report.sched missing"):
    sys.exit(1)
th = {t["comm"]: t for t in sc["threads"]}
if not check("sleeper" in th, "threads %r" % sorted(th)):
    sys.exit(1)
sl = th["sleeper"]
span = sl["on_cpu_ns"] + sl["off_cpu_ns"]
check(span > 0.8 * float(os.environ["SECS"]) * 1e9, "sleeper: on+off %.3f s" % (span / 1e9))
check(sl["off_cpu_ns"] >= 0.95 * span, "sleeper: off-CPU %.3f of its time" % (sl["off_cpu_ns"] / max(span, 1)))
OF = load_folded("offcpu.folded")
got = sum(c for fr, c in OF if fr[0] == "sleeper" and "sleep_phase" in fr)
check(got >= 0.5 * sl["off_cpu_ns"] / 1000, "sleep_phase off-CPU stacks %d us of %d" % (got, sl["off_cpu_ns"] / 1000))
progs = R["kernel"]["bpf_programs"]
check(any(p["name"].startswith("sched_switch") and p["loaded"] for p in progs),
      "no switch program loaded: %r" % [p["name"] for p in progs])
PY
}
sched_ok "$EP_WORK/rec" || exit 1
ep_py "$EP_WORK/rec" <<'PY'
k = R["kernel"]
check(k["bpf_degraded"] == [], "degraded %r" % k["bpf_degraded"])
bad = [p["name"] for p in k["bpf_programs"] if not p["within_margins"]]
check(not bad, "past a margin in the recording: %r" % bad)
PY

# --- one program refused: the rest of the scheduler stays ---
EBPF_PROF_FAULT_BPF=sched_:sched_switch ep_prof_run 60 -v -F 99 -o "$EP_WORK/deg" -- \
	"$EP_TARGETS_DIR/offcpu_mix" --seconds "$SECS" --dir "$EP_WORK"
[ "$PROF_RC" -eq 0 ] || ep_fail "degraded recording: exit $PROF_RC: $(tail -n 5 "$PROF_ERR")"
n=$(grep -c "this kernel refuses BPF program sched_switch" "$PROF_ERR")
[ "$n" -eq 1 ] || ep_fail "the refused program is said $n times, want once: $(grep -i refus "$PROF_ERR")"
! grep -q "view off" "$PROF_ERR" || ep_fail "the whole scheduler view went off: $(grep 'view off' "$PROF_ERR")"
sched_ok "$EP_WORK/deg" || exit 1
ep_py "$EP_WORK/deg" <<'PY'
d = R["kernel"]["bpf_degraded"]
check(len(d) == 1 and d[0]["program"] == "sched_switch" and d[0]["reason"] and "kept" in d[0]["lost"],
      "bpf_degraded %r" % d)
progs = {p["name"]: p for p in R["kernel"]["bpf_programs"]}
check(progs.get("sched_switch", {}).get("loaded") is False, "sched_switch %r" % progs.get("sched_switch"))
check(progs.get("sched_switch_noloop", {}).get("loaded") is True, "the twin %r" % progs.get("sched_switch_noloop"))
PY
# --- the CPU sampler's walking program refused ---
EBPF_PROF_FAULT_BPF=profile:on_cpu_sample ep_prof_run 60 -v -F 199 -o "$EP_WORK/cpu" -- \
	"$EP_TARGETS_DIR/offcpu_mix" --seconds "$SECS" --dir "$EP_WORK"
[ "$PROF_RC" -eq 0 ] || ep_fail "sampler-degraded recording: exit $PROF_RC: $(tail -n 5 "$PROF_ERR")"
n=$(grep -c "this kernel refuses BPF program on_cpu_sample" "$PROF_ERR")
[ "$n" -eq 1 ] || ep_fail "the refused sampler program is said $n times, want once"
sched_ok "$EP_WORK/cpu" || exit 1
ep_py "$EP_WORK/cpu" <<'PY'
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == ["on_cpu_sample"] and "frame pointers" in d[0]["lost"], "bpf_degraded %r" % d)
progs = {p["name"]: p for p in R["kernel"]["bpf_programs"]}
check(progs.get("on_cpu_sample_noloop", {}).get("loaded") is True, "the twin %r" % progs.get("on_cpu_sample_noloop"))
F = load_folded("stacks.folded")
spin = sum(c for fr, c in F if fr[0] == "spinner")
inside = sum(c for fr, c in F if fr[0] == "spinner" and "spin_phase" in fr)
check(spin >= 100 and inside >= 0.9 * spin, "spinner: %d samples, %d in spin_phase" % (spin, inside))
PY
ep_log "ok"
