#!/bin/bash
# A --cycle that never attaches: the run is one cycle, and the report says
# which spec gave none and why (cycles_meta.problem, the no_cycles finding)
# instead of "no --cycle was given". libcycle_experiment is no file the
# target maps (the prefix of the executable's name is not its soname stem).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

ep_start_target cycle_experiment 2 9
ep_prof_run 30 -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu -d 1 --cycle cycle_exp:run_cycle
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
grep -q "cycles: --cycle cycle_exp:run_cycle: never attached" "$PROF_ERR" ||
	ep_fail "no warning naming the spec: $(grep cycles "$PROF_ERR" | tail -3)"
ep_py "$EP_WORK/out" <<'PY'
check(R["cycles_whole_run"] is True, "not the whole run")
m = R["cycles_meta"]
check(m.get("spec") == "cycle_exp:run_cycle", "spec %r" % m.get("spec"))
check("never attached" in m.get("problem", ""), "problem %r" % m.get("problem"))
F = {f["rule"]: f for f in R["findings"]}
nc = F.get("no_cycles")
if check(nc is not None, "no no_cycles finding: %r" % sorted(F)):
    check("cycle_exp:run_cycle" in nc["title"] and "never attached" in nc["evidence"], "finding %r" % nc)
    check("no --cycle" not in nc["evidence"], "says no --cycle was given: %r" % nc["evidence"])
PY
kill -USR1 "$TARGET_PID" 2>/dev/null || true
echo "PASS: test_cycle_spec_unattached"
