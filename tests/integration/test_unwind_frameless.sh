#!/bin/bash
# User stacks of code built without frame pointers (-O2 -fomit-frame-pointer,
# tests/targets/unwind_frameless.c and its shared library unwind_lib): the
# default unwinding (cfi-kernel: walked in the kernel from CFI tables) must
# attribute the frameless leaf to its real parents with the shares the target
# is built to have (3:2:1:2), reach main through the library and a 40-deep
# recursion; auto (CFI over a copied window) too, and it marks stacks deeper
# than the window as [truncated] with their share in report.json, where
# cfi-kernel reaches main. Frame-pointer mode on the same target shows why:
# the parents are lost.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=499
ep_start_target unwind_frameless 0
PID=$TARGET_PID
ep_wait_cpu "$PID" 0.2 10

OUT="$EP_WORK/auto"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 3 --no-sched --probes none -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
U = R.get("unwind") or {}
check(U.get("mode") == "cfi-kernel", "report.unwind.mode is %r, expected cfi-kernel (the default)" % U.get("mode"))
check(U.get("stack_bytes") == 0, "report.unwind.stack_bytes %r, expected 0 (no stack copy)" % U.get("stack_bytes"))
KW = U.get("kernel_walk") or {}
check(KW.get("objects_with_cfi", 0) >= 3, "kernel_walk tables: %r" % KW)
check(0 < KW.get("bpf_map_bytes", 0) < 8 << 20, "kernel_walk.bpf_map_bytes %r" % KW.get("bpf_map_bytes"))
leaf = folded_total(lambda fr: "leaf_work" in fr)
check(leaf >= 500, "only %d samples in leaf_work (3 s at 499 Hz of a CPU-bound target)" % leaf)
# Built 3:2:1:2 units per round with the same loop: each parent's share of the
# leaf's samples must match. +-0.05 absolute: binomial noise at >= 500 samples
# is below 0.022 (2 sigma), and the rest covers call overhead and loop edges;
# a frame-pointer unwinder gets 0 for every parent.
paths = {
    "parent_a": ["main", "round_once", "parent_a", "leaf_work"],
    "parent_b": ["main", "round_once", "parent_b", "leaf_work"],
    "via_lib": ["main", "round_once", "via_lib", "lib_relay", "lib_cb", "leaf_work"],
    "recurse": ["main", "round_once"] + ["recurse"] * 40 + ["leaf_work"],
}
want = {"parent_a": 3 / 8, "parent_b": 2 / 8, "via_lib": 1 / 8, "recurse": 2 / 8}
for k, seq in paths.items():
    n = folded_total(lambda fr: has_seq(fr, seq))
    share = n / max(leaf, 1)
    info("%s: %d of %d leaf samples (%.3f, expected %.3f)" % (k, n, leaf, share, want[k]))
    check(abs(share - want[k]) <= 0.05, "%s share of leaf_work %.3f, expected %.3f +-0.05" % (k, share, want[k]))
# Exactly 40 recursion frames, never more or fewer (a wrong CFA skips or repeats frames).
rec = [(fr, c) for fr, c in F if "recurse" in fr and "leaf_work" in fr]
bad = [(fr.count("recurse"), c) for fr, c in rec if fr.count("recurse") != 40]
check(sum(c for _, c in bad) <= 0.01 * max(leaf, 1), "recursion stacks with a wrong depth: %r" % bad[:5])
# Stacks reach main: at most 1% of leaf samples stop short (sample edge cases).
reach = folded_total(lambda fr: "leaf_work" in fr and "main" in fr)
check(reach >= 0.99 * leaf, "only %d of %d leaf_work stacks reach main" % (reach, leaf))
check(U.get("truncated_share", 1) <= 0.01, "truncated_share %r on a target whose stacks fit" % U.get("truncated_share"))
# The library frame is named and filed under the library.
lib_files = {f.get("file") for f in S["shared"]["frames"] if f.get("name") == "lib_relay"}
check(any(x and x.endswith("/unwind_lib") for x in lib_files), "lib_relay not from unwind_lib: %r" % lib_files)
PY

OUT2="$EP_WORK/fp"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 2 --no-sched --probes none --unwind fp -o "$OUT2"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof --unwind fp exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_py "$OUT2" <<'PY'
check((R.get("unwind") or {}).get("mode") == "fp", "report.unwind.mode is not fp")
check((R.get("unwind") or {}).get("cfi_stacks") == 0, "fp mode unwound with CFI")
leaf = folded_total(lambda fr: "leaf_work" in fr)
right = folded_total(lambda fr: "leaf_work" in fr and "main" in fr and "round_once" in fr)
info("fp mode: %d of %d leaf_work stacks reach main" % (right, leaf))
# The contrast that motivates CFI: without frame pointers the walk loses the
# callers. If this ever passes with most stacks right, the target was built
# with frame pointers and the test above proves nothing.
check(leaf > 0 and right <= 0.2 * leaf, "fp mode got %d of %d leaf stacks right: target has frame pointers?" % (right, leaf))
PY

# auto mode (copied window, CFI in the collector): same attribution.
OUT5="$EP_WORK/auto-window"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 2 --no-sched --probes none --unwind auto -o "$OUT5"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof --unwind auto exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_py "$OUT5" <<'PY'
U = R.get("unwind") or {}
check(U.get("mode") == "auto" and U.get("stack_bytes") == 8192, "auto mode: %r" % U)
leaf = folded_total(lambda fr: "leaf_work" in fr)
a = folded_total(lambda fr: has_seq(fr, ["main", "round_once", "parent_a", "leaf_work"]))
check(leaf > 0 and abs(a / leaf - 3 / 8) <= 0.06, "auto mode: parent_a share %d/%d, expected 0.375 +-0.06" % (a, leaf))
PY

# dwarf mode: CFI only, same attribution.
OUT4="$EP_WORK/dwarf"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 2 --no-sched --probes none --unwind dwarf -o "$OUT4"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof --unwind dwarf exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_py "$OUT4" <<'PY'
U = R.get("unwind") or {}
check(U.get("mode") == "dwarf" and U.get("fp_stacks") == 0, "dwarf mode: %r" % U)
leaf = folded_total(lambda fr: "leaf_work" in fr)
a = folded_total(lambda fr: has_seq(fr, ["main", "round_once", "parent_a", "leaf_work"]))
check(leaf > 0 and abs(a / leaf - 3 / 8) <= 0.06, "dwarf mode: parent_a share %d/%d, expected 0.375 +-0.06" % (a, leaf))
PY
ep_stop_pid "$PID"

# Stacks deeper than the window: 24 frames of 1 KiB locals under the leaf.
ep_start_target unwind_frameless 0 --deep
PID=$TARGET_PID
ep_wait_cpu "$PID" 0.2 10
OUT3="$EP_WORK/deep"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 3 --no-sched --probes none --unwind auto -o "$OUT3"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof (deep) exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_py "$OUT3" <<'PY'
U = R.get("unwind") or {}
deep = folded_total(lambda fr: "deep_frames" in fr)
# Folded lines start with the comm; the marker is the root frame after it.
marked = folded_total(lambda fr: len(fr) > 1 and fr[1] == "[truncated]")
deep_leaf = folded_total(lambda fr: "deep_frames" in fr and "leaf_work" in fr)
deep_leaf_marked = folded_total(lambda fr: "deep_frames" in fr and "leaf_work" in fr and fr[1] == "[truncated]")
tot = R["samples"]["total"]
info("deep: %d samples in deep_frames, %d under [truncated], report truncated %r share %r" %
     (deep, marked, U.get("truncated"), U.get("truncated_share")))
# 2 of 10 units per round run 24 KiB below round_once: an 8 KiB window cannot hold them.
check(abs(deep / max(tot, 1) - 0.2) <= 0.05, "deep_frames share %.3f, expected 0.2 +-0.05" % (deep / max(tot, 1)))
# The leaf sits 24 KiB below round_once: none of those can reach main.
check(folded_total(lambda fr: "deep_frames" in fr and "leaf_work" in fr and "main" in fr) == 0,
      "deep leaf stacks reached main through an 8 KiB window?")
check(deep_leaf > 0 and deep_leaf_marked >= 0.99 * deep_leaf,
      "only %d of %d deep leaf stacks carry the [truncated] root" % (deep_leaf_marked, deep_leaf))
check(U.get("truncated", -1) == marked, "report.unwind.truncated %r != %d [truncated] stacks" % (U.get("truncated"), marked))
check(abs(U.get("truncated_share", -1) - marked / max(tot, 1)) <= 0.002, "truncated_share %r vs %d/%d" % (U.get("truncated_share"), marked, tot))
# The other parents still reach main.
check(folded_total(lambda fr: has_seq(fr, ["main", "round_once", "parent_a", "leaf_work"])) > 0, "parent_a lost in --deep run")
PY

# The in-kernel walker has no window: the same deep stacks reach main.
OUT6="$EP_WORK/deep-kernel"
ep_prof_run 60 --pid "$PID" -F "$FREQ" -d 3 --no-sched --probes none -o "$OUT6"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof (deep, cfi-kernel) exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_py "$OUT6" <<'PY'
U = R.get("unwind") or {}
deep_leaf = folded_total(lambda fr: "deep_frames" in fr and "leaf_work" in fr)
reach = folded_total(lambda fr: "deep_frames" in fr and "leaf_work" in fr and has_seq(fr, ["main", "round_once"]))
info("cfi-kernel deep: %d of %d deep leaf stacks reach main" % (reach, deep_leaf))
check(deep_leaf > 0 and reach >= 0.99 * deep_leaf, "only %d of %d deep leaf stacks reach main" % (reach, deep_leaf))
check(U.get("truncated", -1) == 0, "cfi-kernel truncated %r stacks of 24 KiB" % U.get("truncated"))
PY
ep_log "ok"
