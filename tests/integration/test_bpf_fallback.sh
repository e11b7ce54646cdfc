#!/usr/bin/env bash
# The modules' BPF parts (scheduler "sched_", memory/thermal "sm_", probes
# "probe_", cycles "cycle_") load as one object; when that load fails, each
# part is loaded alone so only the failing one is lost (user/kernel/bpf_parts.h).
# EBPF_PROF_FAULT_BPF=PREFIX breaks one part on purpose. For each part, on
# the README demo in launch mode: the run succeeds, says that part is off,
# and every other part still delivers its data (one llama_decode and one
# cycle per demo loop, off-CPU time, RSS from the tracepoint). An explicit
# --cycle whose part cannot load ends the run with exit code 1.
# EBPF_PROF_FAULT_BPF=PREFIX:PROGRAM refuses one program: where the part
# has a twin for it (the probes' and cycles' programs without attach
# cookies) the part stays, said once, with the same exact counts. Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

run_demo() # FAULT OUTDIR [ARGS...]
{
	local fault=$1 out=$2
	shift 2
	EBPF_PROF_FAULT_BPF=$fault ep_prof_run 60 -v -F 99 -o "$out" "$@" -- \
		"$EP_TARGETS_DIR/demo_experiment" 2
}

# Without a fault the parts load together: no fallback message.
run_demo "" "$EP_WORK/none"
[ "$PROF_RC" -eq 0 ] || ep_fail "run without fault failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
! grep -q "did not load together" "$PROF_ERR" ||
	ep_fail "the shared load failed without a fault: $(grep -m1 'did not load' "$PROF_ERR")"

for fault in sched_ sm_ probe_ cycle_; do
	out="$EP_WORK/$fault"
	run_demo "$fault" "$out"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$fault: run failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	grep -q "did not load together" "$PROF_ERR" ||
		ep_fail "$fault: no fallback to loading each part alone: $(tail -n 5 "$PROF_ERR")"
	n=$(sed -n 's/^cycles: \([0-9][0-9]*\)$/\1/p' "$PROF_OUT")
	[ -n "$n" ] && [ "$n" -gt 5 ] || ep_fail "$fault: the demo did not report its cycles: $(cat "$PROF_OUT")"
	FAULT=$fault DEMO_CYCLES=$n ERRLOG="$PROF_ERR" ep_py "$out" <<'PY'
fault, n = os.environ["FAULT"], int(os.environ["DEMO_CYCLES"])
err = open(os.environ["ERRLOG"]).read()
off = {
    "sched_": "scheduler view off: cannot load its BPF programs",
    "sm_": "memory/thermal tracepoints unavailable (BPF load",
    "probe_": "probes disabled: cannot load the BPF programs",
    "cycle_": "cycles: no cycle boundaries: cannot load the BPF programs",
}
check(off[fault] in err, "%s: the failed part is not reported (%r)" % (fault, off[fault]))
check(R["samples"]["total"] > 0 and R["dropped"]["total"] == 0, "%s: CPU samples %r" % (fault, R["samples"]))

# Each part: off when it is the broken one, exact otherwise.
if fault == "sched_":
    check("sched" not in R, "sched_: a scheduler section without its programs")
else:
    sc = R.get("sched") or {}
    check(sc.get("off_cpu_ns", 0) > 0 and sc.get("context_switches", 0) >= n,
          "%s: scheduler view lost: %r" % (fault, {k: sc.get(k) for k in ("off_cpu_ns", "context_switches")}))
rss = R["memory"]["sources"]["rss"]
if fault == "sm_":
    check(rss != "kmem/rss_stat", "sm_: RSS claims the tracepoint")
else:
    check(rss == "kmem/rss_stat", "%s: RSS source %r, want the tracepoint" % (fault, rss))
if fault == "probe_":
    check("probes" not in R, "probe_: a probes section without its programs")
else:
    probes = {p["symbol"]: p for p in R["probes"]["list"]}
    c = probes.get("llama_decode", {}).get("count")
    check(c == n, "%s: llama_decode %r calls, want one per cycle (%d)" % (fault, c, n))
meta = R.get("cycles_meta") or {}
if fault == "cycle_":
    check(meta.get("boundaries") != "marker", "cycle_: cycles from the marker without its programs")
else:
    # Holding the launched command at its start-up until everything is
    # attached is the probes part's dynamic-linker hook: without it the
    # marker is found at the cycles module's first rescan, a few of the
    # demo's ~130 cycles/s later.
    nc = len(R.get("cycles") or [])
    lo = n - 30 if fault == "probe_" else n
    check(meta.get("boundaries") == "marker" and lo <= nc <= n,
          "%s: cycles %d (%r), want %s from the marker" % (fault, nc, meta.get("boundaries"),
                                                           n if lo == n else "%d..%d" % (lo, n)))
PY
	ep_log "$fault: part off, the others exact ($n cycles)"
done

# One program refused where the part has a twin for it (the kernel's
# verifier or a missing attach kind, simulated): the part stays, with the
# programs that match calls by probed address instead of attach cookies;
# the loss said once, in bpf_degraded, and the data as exact as without.
for fault in probe_:probe_entry cycle_:cycle_entry; do
	out="$EP_WORK/${fault%%:*}-one"
	run_demo "$fault" "$out" --cycle "$EP_TARGETS_DIR/demo_experiment:build_prompt"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$fault: run failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	prog=${fault#*:}
	k=$(grep -c "this kernel refuses BPF program $prog" "$PROF_ERR")
	[ "$k" -eq 1 ] || ep_fail "$fault: the refusal said $k times, want once"
	n=$(sed -n 's/^cycles: \([0-9][0-9]*\)$/\1/p' "$PROF_OUT")
	[ -n "$n" ] && [ "$n" -gt 5 ] || ep_fail "$fault: the demo did not report its cycles"
	PROG=$prog DEMO_CYCLES=$n ep_py "$out" <<'PY'
prog, n = os.environ["PROG"], int(os.environ["DEMO_CYCLES"])
d = R["kernel"]["bpf_degraded"]
check([x["program"] for x in d] == [prog] and "attach cookies" in d[0]["lost"], "bpf_degraded %r" % d)
P = {p["name"]: p for p in R["kernel"]["bpf_programs"]}
check(P.get(prog + "_nc", {}).get("loaded") is True, "the twin of %s: %r" % (prog, P.get(prog + "_nc")))
probes = {p["symbol"]: p for p in R["probes"]["list"]}
c = probes.get("llama_decode", {}).get("count")
check(c == n, "%s: llama_decode %r calls, want one per cycle (%d)" % (prog, c, n))
# One cycle per build_prompt call: the demo's loops, the last one open.
nc = len(R.get("cycles") or [])
check(n - 1 <= nc <= n, "%s: %d cycles by build_prompt, the demo ran %d" % (prog, nc, n))
PY
	ep_log "$fault: the part kept its data through the twin ($n cycles)"
done

# Cycles asked for explicitly cannot silently become one whole-run cycle.
run_demo cycle_ "$EP_WORK/explicit" --cycle marker
[ "$PROF_RC" -eq 1 ] || ep_fail "--cycle marker with its part broken: rc $PROF_RC, want 1"
grep -q "cycles: cannot load the BPF programs for --cycle marker" "$PROF_ERR" ||
	ep_fail "--cycle marker: no error naming the option: $(tail -n 3 "$PROF_ERR")"
exit 0
