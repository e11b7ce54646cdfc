#!/bin/bash
# Generic probes: nesting and recursion in an executable's own functions
# (exact counts, recursion counted once in totals, pairing survives a
# recursion deeper than the per-thread stack), a library dlopen'ed after
# attach, and a probe whose symbol does not exist.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

# ---- nesting / recursion ----
ep_start_target nested_calls
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/nest" --no-gpu --probes none \
	--probe nested_calls:outer --probe nested_calls:inner --probe nested_calls:rec,label=recursive \
	--probe nested_calls:no_such_fn_here
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: recursive in " 20 "$PROF_PID" || ep_fail "probes not attached"
grep -q "symbol no_such_fn_here not found in .*nested_calls" "$PROF_ERR" || ep_fail "missing symbol not reported with the file searched"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
grep -qx done "$TARGET_OUT" || ep_fail "target did not finish"
OWN_REC=$(sed -n 's/^own_rec_ns //p' "$TARGET_OUT") ep_py "$EP_WORK/nest" <<'PY'
P = {p["label"]: p for p in R["probes"]["list"]}
check(set(P) == {"outer", "inner", "recursive"}, "probes %r" % sorted(P))
if len(P) == 3:
    check(P["outer"]["count"] == 200, "outer %r" % P["outer"]["count"])
    check(P["inner"]["count"] == 600, "inner %r" % P["inner"]["count"])
    # 100 x rec(5) = 600 calls, rec(40) = 41, rec(5) = 6
    check(P["recursive"]["count"] == 600 + 41 + 6, "rec count %r" % P["recursive"]["count"])
    # Calls deeper than the 16-frame stack are counted, not timed.
    check(P["recursive"]["completed"] == 600 + 16 + 6, "rec completed %r" % P["recursive"]["completed"])
    dr = R["probes"]["dropped"]["by_cause"]
    check(dr["nesting_too_deep"] == 41 - 16, "nesting_too_deep %r" % dr["nesting_too_deep"])
    check(dr["unmatched_return"] == 0 and dr["lost_return"] == 0, "pairing broke: %r" % dr)
    # Inclusive: outer covers its three inner calls.
    check(P["outer"]["total_ns"] >= P["inner"]["total_ns"], "outer total < inner total")
    # Recursion counted once: total is the top-level calls only, so the sum
    # of all inclusive durations exceeds it by the nested calls' durations
    # (counting every level would make the two equal). A ratio bound failed
    # in CI under ASan: a preemption inside a top-level call adds to both
    # sides and pulls the ratio towards 1. The difference does not shrink:
    # 520 nested calls (622 timed - 102 top-level), each at least its own
    # two uprobe traps, so >= 100 ns apiece is a bound that cannot flake.
    rec = P["recursive"]
    incl = rec["mean_ns"] * rec["completed"]
    nested = rec["completed"] - 102
    check(incl - rec["total_ns"] >= nested * 100,
          "rec total %d not below inclusive sum %d by %d nested calls" % (rec["total_ns"], incl, nested))
    X = [e for e in load_json("trace.json")["traceEvents"] if e.get("ph") == "X" and e["name"] == "recursive"]
    own = int(os.environ["OWN_REC"])
    top = sorted(X, key=lambda e: e["ts"])
    # spans of the 100 timed top-level calls: depth-0 ones among the first 600
    outer_spans = [e for e in X if not any(o is not e and o["ts"] < e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"] for o in X if abs(o["ts"] - e["ts"]) < 1000)]
    first100 = sorted(outer_spans, key=lambda e: e["ts"])[:100]
    got = sum(e["dur"] for e in first100) * 1000
    # Each top-level call here is almost all uprobe traps (12 per call), and
    # the span leaves out the outer call's own entry and return traps: ~2/12
    # of the target's timing, ~9 us a call on a quiet host, twice that when
    # the host is slow (seen in CI: 23 vs 45 us). So the lower bound is a
    # share, not a fixed number of microseconds per call.
    check(got <= own and got >= own / 2, "top-level rec time %.0f ns vs own %d ns" % (got, own))
nf = R["probes"]["not_found"]
check(any("no_such_fn_here" in x["probe"] and "nested_calls" in x["reason"] for x in nf), "not_found %r" % nf)
PY

# ---- a library loaded after attach ----
ep_start_target dlopen_late "$EP_TARGETS_DIR/dlopen_late_lib"
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/late" --no-gpu --probes none --probe dlopen_late_lib:late_work
ep_wait_attached "$PROF_PID" 20
ep_wait_line "$PROF_ERR" "no traced process|probes:|sampling" 20 "$PROF_PID" || true
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^loaded$' 10 "$TARGET_PID" || ep_fail "target did not load the library"
# ld.so's _dl_debug_state trigger (or the 500 ms rescan) attaches it.
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: late_work in .*dlopen_late_lib" 10 "$PROF_PID" ||
	ep_fail "late library not probed"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
ep_py "$EP_WORK/late" <<'PY'
P = {p["label"]: p for p in R["probes"]["list"]}
if check("late_work" in P, "late_work not probed: %r" % sorted(P)):
    check(P["late_work"]["count"] == 123, "late_work count %r" % P["late_work"]["count"])
    check(P["late_work"]["library"].endswith("dlopen_late_lib"), "library %r" % P["late_work"]["library"])
PY
echo "PASS: test_probes_generic"
