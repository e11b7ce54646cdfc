#!/bin/bash
# Cost rule of off-CPU user stacks (bpf/sched_acct.h ep_ustack_plan), on
# tests/targets/switch_mix.c: two threads bounce a byte over pipes (tens of
# thousands of short blocking reads, under the 1 ms threshold), and 20 times
# the pinger naps 20 ms in long_nap(), which also keeps the ponger 20 ms in a
# read at the same call as its short ones.
#
# Default configuration:
#  - short blocks do not pay for user stacks: the user stack walks the
#    kernel made (offcpu_stacks.user_stack_walks) are bounded by what the
#    rule allows: one per wait site first seen (64 sites per thread at most)
#    plus two per long episode (the thread's next wait, and the site's next
#    wait). Both counts come from the kernel; the bound is the rule's.
#  - every long wait still has its user frames: >= 95% of each thread's
#    off-CPU profile has user frames, and >= 90% of 19 naps x 20 ms is under
#    long_nap() for the pinger and under pong_read() for the ponger (reused
#    from an earlier walk at the same call; 19: the first may come before
#    the symbolizer knows the new program's mappings); episodes without user
#    frames (user_stack_skipped) are fewer than 5% of the episodes.
# --offcpu-ustack-every 1 (walk at every blocking switch-out): the walk count
# reaches the blocking switch-outs of the two threads (>= 90%: a few
# switch-outs at exit are not walked), so the counter above is a live one.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

HOPS=40000
NAPS=20
for mode in default every1; do
	args=(-o "$EP_WORK/$mode")
	[ "$mode" = every1 ] && args+=(--offcpu-ustack-every 1)
	ep_prof_run 60 "${args[@]}" -- "$EP_TARGETS_DIR/switch_mix" --hops "$HOPS" --naps "$NAPS"
	[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof ($mode) exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
	grep -q "scheduler view off" "$PROF_ERR" && ep_fail "sched module did not run: $(grep 'scheduler view' "$PROF_ERR")"
done

MODE=default NAPS=$NAPS ep_py "$EP_WORK/default" <<'PY'
naps = int(os.environ["NAPS"])
sc = R["sched"]
st = sc["offcpu_stacks"]
check(sc["dropped"]["total"] == 0, "sched drops: %r" % sc["dropped"])
th = {t["comm"]: t for t in sc["threads"]}
for name in ("pinger", "ponger"):
    if not check(name in th, "no sched entry for %s (have %s)" % (name, sorted(th))):
        sys.exit(1)
vol = th["pinger"]["voluntary_switches"] + th["ponger"]["voluntary_switches"]
longs = sum(t["offcpu_episodes_long"] for t in sc["threads"])
bound = 128 * len(sc["threads"]) + 2 * longs
info("blocking switch-outs %d, long episodes %d, user stack walks %d (rule's bound %d), "
     "skipped %d of %d episodes" % (vol, longs, st["user_stack_walks"], bound,
                                    st["user_stack_skipped"], st["episodes"]))
check(vol >= 40000, "only %d blocking switch-outs: the target did not run" % vol)
check(st["user_stack_walks"] <= bound,
      "%d user stack walks, the rule allows %d (128 per thread: 64 bits in each of two site sets, + 2 per long episode)"
      % (st["user_stack_walks"], bound))
check(st["user_stack_skipped"] <= 0.05 * st["episodes"],
      "%d of %d episodes without user frames" % (st["user_stack_skipped"], st["episodes"]))

OF = load_folded("offcpu.folded")
def us(thread, fn=None):
    return sum(c for fr, c in OF if fr[0] == thread and (fn is None or fn in fr))
def us_user(thread):
    return sum(c for fr, c in OF if fr[0] == thread and any(not is_kernel(x) for x in fr[1:]))
# Names: the first episode can come before the symbolizer has the launched
# program's mappings (its frames then show as [unknown] addresses), so one
# nap of each thread is not required to be named; user frames are.
for thread, fn in (("pinger", "long_nap"), ("ponger", "pong_read")):
    check(us_user(thread) >= 0.95 * us(thread),
          "%s: %d of %d us with user frames" % (thread, us_user(thread), us(thread)))
    check(us(thread, fn) >= 0.9 * (naps - 1) * 20000,
          "%s: %d us under %s, expected >= %d" % (thread, us(thread, fn), fn, 0.9 * (naps - 1) * 20000))
PY

ep_py "$EP_WORK/every1" <<'PY'
sc = R["sched"]
th = {t["comm"]: t for t in sc["threads"]}
vol = th["pinger"]["voluntary_switches"] + th["ponger"]["voluntary_switches"]
walks = sc["offcpu_stacks"]["user_stack_walks"]
info("--offcpu-ustack-every 1: %d walks, %d blocking switch-outs" % (walks, vol))
check(walks >= 0.9 * vol, "every1: %d walks for %d blocking switch-outs" % (walks, vol))
check(sc["offcpu_stacks"]["user_stack_skipped"] == 0,
      "every1: %d episodes skipped" % sc["offcpu_stacks"]["user_stack_skipped"])
PY
ep_log "ok"
