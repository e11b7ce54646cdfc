#!/bin/bash
# USDT points (sys/sdt.h) through --probe usdt:PATH:PROVIDER:NAME: exact
# counts, the first argument carried in each event, points in a shared
# library (given by basename) and in the executable (given by path), a
# semaphore-guarded point that only fires because the attach raised its
# semaphore, count-only mode, an unprobed point not counted, and a point
# name that does not exist. USDT points are instants: zero-length spans.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

LIB="$EP_TARGETS_DIR/usdt_points_lib"
ep_start_target usdt_points "$LIB"
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu --probes none \
	--probe "usdt:usdt_points_lib:ep_lib:tick" \
	--probe "usdt:usdt_points_lib:ep_lib:pair,label=pair_count,count" \
	--probe "usdt:$EP_TARGETS_DIR/usdt_points:ep_tgt:guarded" \
	--probe "usdt:usdt_points_lib:ep_lib:no_such_point"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: guarded in " 20 "$PROF_PID" || ep_fail "guarded not attached"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: tick in .*usdt_points_lib" 5 "$PROF_PID" || ep_fail "tick not attached"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: pair_count in .*usdt_points_lib" 5 "$PROF_PID" || ep_fail "pair not attached"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
grep -qx done "$TARGET_OUT" || ep_fail "target did not finish: $(cat "$TARGET_OUT")"
grep -q "cannot attach no_such_point in .*usdt_points_lib" "$PROF_ERR" || ep_fail "a missing USDT point was not reported with the file searched"
# The target's own view: the semaphore was raised by the attach (and only
# for the probed point), so the guarded point fired every time.
grep -qx "guarded_fired 500" "$TARGET_OUT" || ep_fail "semaphore not raised: $(cat "$TARGET_OUT")"
grep -qx "unwatched_fired 0" "$TARGET_OUT" || ep_fail "unprobed semaphore raised: $(cat "$TARGET_OUT")"
ep_check_outputs "$EP_WORK/out"
ep_py "$EP_WORK/out" <<'PY'
P = {p["label"]: p for p in R["probes"]["list"]}
check(set(P) >= {"tick", "pair_count", "guarded"}, "probes %r" % sorted(P))
check("unwatched" not in P, "unprobed point reported")
want = {"tick": 1000, "pair_count": 250, "guarded": 500}
for name, n in want.items():
    if name not in P:
        continue
    p = P[name]
    check(p["count"] == n, "%s count %r, want %d" % (name, p["count"], n))
    check(p["errors"] == 0, "%s errors %r" % (name, p["errors"]))
check(P.get("tick", {}).get("library", "").endswith("/usdt_points_lib"), "tick library %r" % P.get("tick"))
check(P.get("guarded", {}).get("library", "").endswith("/usdt_points"), "guarded library %r" % P.get("guarded"))
check(P.get("tick", {}).get("completed") == 1000, "tick completed %r" % P.get("tick"))
check(P.get("pair_count", {}).get("completed") == 0, "count-only pair sent events: %r" % P.get("pair_count"))
check(R["probes"]["dropped"]["total"] == 0, "drops %r" % R["probes"]["dropped"])
T = load_json("trace.json")["traceEvents"]
ev = {}
for e in T:
    if e.get("ph") == "X" and e["name"] in want:
        ev.setdefault(e["name"], []).append(e)
# Each event carries the point's first argument: i = 0..n-1, in order.
for name, n in (("tick", 1000), ("guarded", 500)):
    E = sorted(ev.get(name, []), key=lambda e: e["ts"])
    check([e["args"].get("ret") for e in E] == list(range(n)),
          "%s arguments: %r..." % (name, [e["args"].get("ret") for e in E][:10]))
    check(all(e["dur"] == 0 for e in E), "%s: USDT events are instants" % name)
    check(all(e["pid"] == E[0]["pid"] for e in E) if E else False, "%s pid" % name)
check("pair_count" not in ev, "count-only probe in trace.json")
PY
echo "PASS: test_probes_usdt"
