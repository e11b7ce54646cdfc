#!/bin/bash
# USDT begin/end pairs timed as spans (--probe usdt:...:BEGIN,pair and
# ,end=NAME): exact counts per pair over two threads firing interleaved,
# durations against the target's own clock, a pair nested in another pair
# (inner spans inside their outer span on the same thread), the same pair
# nesting in itself (recursion: inclusive total counted once), the end
# point's first argument in `ret`, and an end
# point with no begin counted as unmatched, not paired with a later begin.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

BIN="$EP_TARGETS_DIR/usdt_pairs"
ep_start_target usdt_pairs
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu --probes none \
	--probe "usdt:$BIN:ep_pair:work__start,pair" \
	--probe "usdt:$BIN:ep_pair:outer_begin,pair,label=outer" \
	--probe "usdt:$BIN:ep_pair:inner_go,end=inner_stop,label=inner" \
	--probe "usdt:$BIN:ep_pair:rec__entry,pair,label=rec"
for p in work__start outer inner rec; do
	ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: $p in .*usdt_pairs" 20 "$PROF_PID" || ep_fail "$p not attached"
done
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 60 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
grep -qx done "$TARGET_OUT" || ep_fail "target did not finish: $(cat "$TARGET_OUT")"
OWN_WORK=$(sed -n 's/^own_work_ns //p' "$TARGET_OUT")
OWN_REC=$(sed -n 's/^own_rec_ns //p' "$TARGET_OUT")
ep_check_outputs "$EP_WORK/out"
OWN_WORK=$OWN_WORK OWN_REC=$OWN_REC ep_py "$EP_WORK/out" <<'PY'
import os
P = {p["label"]: p for p in R["probes"]["list"]}
check(set(P) == {"work__start", "outer", "inner", "rec"}, "probes %r" % sorted(P))
# 2 threads: work 100, outer 50, inner 3 x 50, rec 20 top calls of depth 3
# (4 levels) each.
want = {"work__start": 200, "outer": 100, "inner": 300, "rec": 160}
for name, n in want.items():
    p = P.get(name)
    if not p:
        continue
    check(p["count"] == n, "%s count %r, want %d" % (name, p["count"], n))
    check(p["completed"] == n, "%s completed %r, want %d" % (name, p["completed"], n))
    check(p["open"] == 0, "%s open %r" % (name, p["open"]))
    check(p.get("usdt_provider") == "ep_pair", "%s provider %r" % (name, p.get("usdt_provider")))
ends = {"work__start": "work__done", "outer": "outer_end", "inner": "inner_stop", "rec": "rec__return"}
for name, end in ends.items():
    check(P.get(name, {}).get("usdt_end") == end, "%s end point %r, want %s" % (name, P.get(name, {}).get("usdt_end"), end))
# The one work__done before any work__start: counted, never paired,
d = R["probes"]["dropped"]
check(d["by_cause"].get("unmatched_return") == 1, "unmatched %r" % d)
# ...and no drop: that span began before the attach, nothing was lost.
check(d["total"] == 0, "drops %r" % d)
# Durations: each span contains the target's own timed interval plus the
# trap of the points around it (a few us here; 50 us each allowed) and
# must not be shorter than what the target measured itself.
own_work, own_rec = int(os.environ["OWN_WORK"]), int(os.environ["OWN_REC"])
w = P.get("work__start", {})
check(own_work <= w.get("total_ns", 0) <= own_work + 200 * 50000,
      "work total %r vs own %d" % (w.get("total_ns"), own_work))
check(w.get("min_ns", 0) >= 200000, "work min %r < 200 us busy" % w.get("min_ns"))
# Recursion: the inclusive total counts each top-level rec() once (the
# target times the same 40 calls from outside, so it is the upper bound).
r = P.get("rec", {})
check(own_rec - 40 * 50000 <= r.get("total_ns", 0) <= own_rec,
      "rec total %r vs own %d (recursion double-counted?)" % (r.get("total_ns"), own_rec))
T = load_json("trace.json")["traceEvents"]
ev = {}
for e in T:
    if e.get("ph") == "X" and e["name"] in want:
        ev.setdefault(e["name"], []).append(e)
for name, n in want.items():
    check(len(ev.get(name, [])) == n, "%s: %d trace events, want %d" % (name, len(ev.get(name, [])), n))
check(len({e["tid"] for e in ev.get("work__start", [])}) == 2, "work spans not on two threads")
# Arguments: begin's first argument is i, end's -i, per thread 0..99.
wk = ev.get("work__start", [])
for tid in {e["tid"] for e in wk}:
    E = sorted((e for e in wk if e["tid"] == tid), key=lambda e: e["ts"])
    check([e["args"].get("ret") for e in E] == [-i for i in range(100)],
          "work end arguments on %d: %r..." % (tid, [e["args"].get("ret") for e in E][:5]))
# Each inner span lies inside an outer span of its own thread (1 us of
# slack for the microsecond timestamps).
outer = ev.get("outer", [])
for e in ev.get("inner", []):
    ok = any(o["tid"] == e["tid"] and o["ts"] - 1 <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"] + 1
             for o in outer)
    check(ok, "inner span at %r on %r outside every outer span" % (e["ts"], e["tid"]))
    if not ok:
        break
# Recursion: the end point's argument is the level (3 at the top); each
# top-level span holds the 3 deeper levels of its own thread.
rc = ev.get("rec", [])
top = [e for e in rc if e["args"].get("ret") == 3]
check(len(top) == 40, "%d top-level rec spans, want 40" % len(top))
for t in top:
    inside = [e for e in rc if e is not t and e["tid"] == t["tid"] and t["ts"] - 1 <= e["ts"]
              and e["ts"] + e["dur"] <= t["ts"] + t["dur"] + 1]
    check(sorted(e["args"].get("ret") for e in inside) == [0, 1, 2],
          "rec at %r holds levels %r" % (t["ts"], [e["args"].get("ret") for e in inside]))
PY
echo "PASS: test_probes_usdt_pairs"
