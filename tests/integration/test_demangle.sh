#!/bin/bash
# C++ names are demangled in every output (folded, speedscope, report.json,
# report.html, the printed summary), and kept raw with --no-demangle
# (tests/targets/cpp_names.cpp).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

ep_start_target cpp_names
PID=$TARGET_PID
ep_wait_cpu "$PID" 0.2 10

for mode in demangled raw; do
	extra=()
	[ "$mode" = raw ] && extra=(--no-demangle)
	OUT="$EP_WORK/$mode"
	ep_prof_run 60 --pid "$PID" -F 499 -d 2 --no-sched --probes none -o "$OUT" "${extra[@]}"
	[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof ($mode) exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	ep_check_outputs "$OUT"
	MODE=$mode SUMMARY="$PROF_OUT" ep_py "$OUT" <<'PY'
mode = os.environ["MODE"]
names = {"demangled": ("epdemo::Accum<double>::spin(double)", "epdemo::Worker::crunch(int)"),
         "raw": ("_ZN6epdemo5AccumIdE4spinEd", "_ZN6epdemo6Worker6crunchEi")}
spin, crunch = names[mode]
other = names["raw" if mode == "demangled" else "demangled"]
tot = R["samples"]["total"]
both = folded_total(lambda fr: has_seq(fr, ["main", crunch, spin]))
info("%s: %d of %d samples in main;%s;%s" % (mode, both, tot, crunch, spin))
# The target does nothing but this loop.
check(tot >= 100 and both >= 0.9 * tot, "%s: only %d of %d samples in main;%s;%s" % (mode, both, tot, crunch, spin))
check(folded_total(lambda fr: any(o in fr for o in other)) == 0, "%s: %r names in stacks.folded" % (mode, other))
ss = {f["name"] for f in S["shared"]["frames"]}
check(spin in ss and crunch in ss, "%s: speedscope frames lack %s / %s" % (mode, spin, crunch))
check(not any(o in ss for o in other), "%s: speedscope has %r names" % (mode, other))
tf = [f["name"] for f in R["top_functions"]]
check(tf and tf[0] == spin, "%s: report.json top function is %r, want %s" % (mode, tf[:1], spin))
html = open(os.path.join(D, "report.html"), encoding="utf-8").read()
# The page embeds report.json with '<' and '>' escaped (no "</script>" inside).
check(spin.replace("<", "\\u003c").replace(">", "\\u003e") in html, "%s: report.html lacks %s" % (mode, spin))
summary = open(os.environ["SUMMARY"], encoding="utf-8", errors="replace").read()
check(spin in summary, "%s: the printed summary lacks %s" % (mode, spin))
PY
done
ep_log "ok"
