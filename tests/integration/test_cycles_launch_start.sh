#!/usr/bin/env bash
# Launch mode with the cycle marker in a program whose first cycle begins at
# the first instruction of main: the command is held at its start-up until
# the probes AND the marker are attached, so no cycle is lost: exactly one
# cycle and one llama_decode call per loop iteration, none unmatched. (The
# marker used to be attached after the command was resumed: the demo lost
# its first cycle on a loaded CI machine; this target loses it every time.)
# Run 4 probes nothing (--probes none): the command is held all the same
# (it lost cycles before, all but one in a run, and under emulation on
# Linux 5.10 two thirds of them); its cycles then have no llama_decode
# call, and report.json no probes section.
# Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
out="$EP_WORK/out"
for run in 1 2 3 4; do
	rm -rf "$out"
	extra=()
	[ "$run" -eq 4 ] && extra=(--probes none)
	ep_prof_run 60 -F 99 "${extra[@]}" -o "$out" -- "$EP_TARGETS_DIR/cycles_at_start" 20
	[ "$PROF_RC" -eq 0 ] || ep_fail "recording failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	grep -qx 'cycles: 20' "$PROF_OUT" || ep_fail "the target did not run its 20 cycles: $(cat "$PROF_OUT")"
	RUN=$run ep_py "$out" <<'PY'
cyc = R.get("cycles") or []
meta = R.get("cycles_meta") or {}
run = os.environ["RUN"]
check(meta.get("boundaries") == "marker", "run %s: cycles from the marker: %r" % (run, meta))
check(len(cyc) == 20, "run %s: 20 cycles, got %d" % (run, len(cyc)))
inf = sum(c.get("inference_calls", 0) for c in cyc)
if run == "4":
    check(inf == 0 and R.get("probes") is None, "run 4 (--probes none): %d llama_decode calls, probes %r" % (inf, R.get("probes")))
else:
    check(inf == 20, "run %s: one llama_decode per cycle: %d" % (run, inf))
check(not meta.get("unmatched_ends"), "run %s: no end without its begin: %r" % (run, meta))
PY
done
exit 0
