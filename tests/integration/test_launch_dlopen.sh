#!/usr/bin/env bash
# Launch mode with a library the command loads with dlopen and calls at
# once (as ctypes or a Node addon does): the command is stopped at ld.so's
# link-map change until the probes and the cycle boundary are attached in
# the new library, so no call is missed: exactly N probed calls and N
# cycles, the program's own count. (Before, the first calls ran between the
# dlopen and the next poll's scan: 0 of 40 were seen on this machine.)
# Then the same after a dlopen that fails once ld.so mapped the library
# (a missing DT_NEEDED: three link-map calls, not two), of a library that
# brings late_work as its own DT_NEEDED: the hold follows ld.so's r_state,
# not a count of calls (counted, the hold came at the RT_ADD of
# dlopen_wrap_lib, before its dependency was mapped: 0 of 40).
# Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
out="$EP_WORK/out"
N=40
T=$EP_TARGETS_DIR
for run in 1 2 3 fail1 fail2 fail3; do
	rm -rf "$out"
	case $run in
	fail*) args=("$T/dlopen_wrap_lib" --now "$N" "$T/dlopen_missing_dep_lib") ;;
	*) args=("$T/dlopen_late_lib" --now "$N") ;;
	esac
	ep_prof_run 60 -F 99 -v -o "$out" --probes none --probe dlopen_late_lib:late_work \
		--cycle late_work -- "$T/dlopen_late" "${args[@]}"
	[ "$PROF_RC" -eq 0 ] || ep_fail "recording failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	grep -qx "calls $N" "$PROF_OUT" || ep_fail "the target did not make its $N calls: $(cat "$PROF_OUT")"
	case $run in
	fail*) grep -q "^first failed: libep-absent-for-test" "$PROF_OUT" ||
		ep_fail "the first dlopen did not fail on its missing dependency: $(cat "$PROF_OUT")" ;;
	esac
	grep -q "and [1-9][0-9]* dlopen/dlclose" "$PROF_ERR" || ep_fail "no dlopen hold reported: $(grep probes: "$PROF_ERR" | tail -n 3)"
	RUN=$run N=$N ep_py "$out" <<'PY'
run, n = os.environ["RUN"], int(os.environ["N"])
P = {p["symbol"]: p for p in R["probes"]["list"]}
lw = P.get("late_work", {})
check(lw.get("count") == n and lw.get("completed") == n, "run %s: late_work %r, program made %d" % (run, lw, n))
cyc = [c for c in (R.get("cycles") or []) if not c.get("partial")]
check(len(cyc) == n, "run %s: %d complete cycles, program ran %d" % (run, len(cyc), n))
check(not (R.get("cycles_meta") or {}).get("unmatched_ends"), "run %s: unmatched ends" % run)
PY
done
echo "PASS: test_launch_dlopen"
