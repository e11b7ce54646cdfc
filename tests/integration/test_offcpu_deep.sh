#!/bin/bash
# Off-CPU user stacks deeper than the sampler's 127 bpf_get_stack frames
# (tests/targets/kwalk_cases.c sleepdeep N: main -> run_sleep_deep ->
# sleep_rec x N -> sleep_leaf, napping 5 ms at a time, gcc -O2 without frame
# pointers, so only the CFI walker gets through):
#  - N = 200: every off-CPU stack under sleep_leaf holds all 200 sleep_rec
#    frames and reaches main, with no [truncated] marker (it was cut at 127);
#  - N = 400: deeper than the 256 user frames an off-CPU stack keeps: the
#    stack says [truncated] at its root, keeps the frames next to the leaf,
#    and does not claim to reach main.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

for n in 200 400; do
	ep_start_target kwalk_cases sleepdeep "$n"
	ep_prof_run 60 --pid "$TARGET_PID" -d 2 --probes none --no-gpu -o "$EP_WORK/d$n"
	[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof (N=$n) exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
	kill "$TARGET_PID" 2>/dev/null || true
	wait "$TARGET_PID" 2>/dev/null || true
	N=$n ep_py "$EP_WORK/d$n" <<'PY'
n = int(os.environ["N"])
OFF = load_folded("offcpu.folded")
mine = [(fr, c) for fr, c in OFF if "sleep_leaf" in fr]
tot = sum(c for _, c in mine)
info("N=%d: %d off-CPU stacks under sleep_leaf, weight %d" % (n, len(mine), tot))
check(len(mine) > 0, "no off-CPU stack under sleep_leaf: %r" % [fr[-4:] for fr, _ in OFF][:5])
for fr, c in mine:
    k = fr.count("sleep_rec")
    if n <= 256 - 8:
        check(k == n and "main" in fr and "[truncated]" not in fr,
              "N=%d: %d sleep_rec frames, main %s, truncated %s" % (n, k, "main" in fr, "[truncated]" in fr))
    else:
        root = [f for f in fr[1:] if not is_kernel(f)][0]
        check(root == "[truncated]" and "main" not in fr and 240 <= k <= 256,
              "N=%d: root %r, %d sleep_rec frames, main %s" % (n, root, k, "main" in fr))
PY
done
echo "PASS: test_offcpu_deep"
