#!/bin/bash
# The in-kernel CFI walker (--unwind cfi-kernel, the default) on the stacks
# unwinders get wrong, in a gcc -O2 -fomit-frame-pointer build
# (tests/targets/kwalk_cases.c): frames of 20 KiB and 72 KiB, a 300-deep
# recursion, PLT stubs, a signal handler, and a function in the middle of a
# 150-deep stack with a uretprobe on it (its return address on the stack is
# the uprobe trampoline's). Each case must show its exact callers down to
# main in >= 99% of its samples, and so must the whole profile.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

FREQ=999
ep_start_target kwalk_cases
PID=$TARGET_PID
ep_wait_cpu "$PID" 0.2 10

OUT="$EP_WORK/kwalk"
ep_prof_run 90 --pid "$PID" -F "$FREQ" -d 4 --no-sched --probes none \
	--probe "$EP_TARGETS_DIR/kwalk_cases:mid_probed" -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
U = R.get("unwind") or {}
KW = U.get("kernel_walk") or {}
check(U.get("mode") == "cfi-kernel", "unwind.mode %r, expected the cfi-kernel default" % U.get("mode"))
P = {p["label"]: p for p in (R.get("probes") or {}).get("list", [])}
check("mid_probed" in P and P["mid_probed"].get("count", 0) > 0, "mid_probed probe: %r" % P.get("mid_probed"))

tot = R["samples"]["total"]
user = [(fr, c) for fr, c in F if any(not is_kernel(f) for f in fr[1:])]
utot = sum(c for _, c in user)
rooted = sum(c for fr, c in user if "main" in fr)
info("%d samples, %d with user frames, %d reach main; ends %r" % (tot, utot, rooted, KW.get("ends")))
check(utot >= 200, "only %d samples with user frames (4 s at 999 Hz)" % utot)
check(rooted >= 0.99 * utot, "only %d of %d stacks reach main" % (rooted, utot))
bare = folded_total(lambda fr: any(re.match(r"(\[unknown\] )?0x[0-9a-f]+$", f) for f in fr))
check(bare == 0, "%d samples with a bare address frame" % bare)

def case(name, leaf, seq, extra=lambda fr: True):
    n = folded_total(lambda fr: name in fr and leaf in fr)
    good = folded_total(lambda fr: name in fr and leaf in fr and has_seq(fr, seq) and extra(fr))
    info("%s: %d of %d %s stacks as expected" % (name, good, n, leaf))
    check(n >= 15, "%s: only %d samples in %s" % (name, n, leaf))
    check(good >= 0.99 * n, "%s: only %d of %d stacks are %s" % (name, good, n, ";".join(seq[:6])))

base = ["main", "run_round"]
case("case_big16", "leaf_burn", base + ["case_big16", "leaf_burn"])
case("case_big64", "leaf_burn", base + ["case_big64", "leaf_burn"])
case("case_deep", "leaf_burn", base + ["case_deep"] + ["deep_rec"] * 300 + ["leaf_burn"],
     lambda fr: fr.count("deep_rec") == 300)
case("case_plt", "plt_loop", base + ["case_plt", "plt_loop"])
# The handler's frames sit on the signal frame (__restore_rt) above the
# interrupted raise(), which case_sig called.
case("case_sig", "on_usr1", base + ["case_sig"], lambda fr: has_seq(fr, ["__restore_rt", "on_usr1"]))
case("case_probed", "leaf_burn",
     base + ["case_probed"] + ["rec_a"] * 100 + ["mid_probed"] + ["rec_b"] * 50 + ["leaf_burn"])
# Samples between mid_probed's entry and return walked through the trampoline.
check(KW.get("uretprobe_fixed", 0) > 0, "no sample had a uretprobe return address put back: %r" % KW)
# The PLT case samples strlen and the stub itself: both walk back to plt_loop.
plt = folded_total(lambda fr: "plt_loop" in fr and fr[-1] != "plt_loop" and not is_kernel(fr[-1]))
info("case_plt: %d samples below plt_loop (strlen, the PLT stub)" % plt)
check(plt > 0, "no sample below plt_loop: the PLT path is not exercised")
PY
ep_log "ok"
