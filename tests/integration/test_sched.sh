#!/bin/bash
# Scheduler view against a target with known proportions (tests/targets/
# offcpu_mix.c): a thread that sleeps, one blocked on a pipe, one doing
# synchronous disk writes, one spinning. Checks off-CPU time by reason per
# thread, the off-CPU stacks (offcpu.folded and the speedscope off-CPU
# profiles) against those times, and that nothing was dropped.
#
# Tolerances, and why:
#  - sleeper/piper: >= 95% of their observed time off-CPU, and of the time
#    they were blocked (not runnable) >= 98% is "sleep"; the run-queue part
#    depends on the machine's load, so it is not bounded beyond sleep >= 60%.
#  - disker: of its blocked time >= 90% "uninterruptible" (fdatasync waits for
#    the disk), and >= 10% of its time not spent waiting for a CPU (device
#    dependent). Its waits
#    are mostly under the 1 ms stack threshold: its stacks must exist and
#    stay within its off-CPU time, no more.
#  - spinner: never blocks: sleep + uninterruptible < 2% of its time.
#  - per thread, on-CPU time = the thread's own CPU clock (printed by the
#    target) within 2% + 5 ms + 10 us per switch, whatever the machine's
#    load; on + off covers the run: within 10% of the traced window. A
#    switch that reaches no program (a few per run on 6.18 in a VM) cost
#    the spinner 0.1-0.8 s in 1 run of 15; such intervals are now split by
#    the thread's run time (sched.unreported_switches).
#  - stacks: the off-CPU profile of sleep_phase() holds >= 85% of the
#    sleeper's blocked time (episodes are >= 10 ms, all above the 1 ms
#    threshold; the part below is the run-queue wait after each wakeup and
#    the last, unfinished episode).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

SECS=3
steal0=$(ep_steal_ns)
ep_prof_run 60 -o "$EP_WORK/out" -- "$EP_TARGETS_DIR/offcpu_mix" --seconds "$SECS" --dir "$EP_WORK"
STEAL_NS=$(($(ep_steal_ns) - steal0))
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
grep -q "scheduler view off" "$PROF_ERR" && ep_fail "sched module did not run: $(grep 'scheduler view' "$PROF_ERR")"
grep -q '^Scheduler:' "$PROF_OUT" || ep_fail "summary has no Scheduler line"

SECS=$SECS PROF_OUT=$PROF_OUT STEAL_NS=$STEAL_NS ep_py "$EP_WORK/out" <<'PY'
validate_all()
secs = float(os.environ["SECS"])
# Each thread's own CPU clock at its end, printed by the target.
own = {}
for line in open(os.environ["PROF_OUT"]):
    w = line.split()
    if len(w) == 3 and w[0] == "cpu":
        own[w[1]] = int(w[2])
sc = R.get("sched")
if not check(isinstance(sc, dict), "report.sched missing"):
    sys.exit(1)
check(sc["dropped"]["total"] == 0, "sched drops: %r" % sc["dropped"])
th = {t["comm"]: t for t in sc["threads"]}
for name in ("sleeper", "piper", "feeder", "disker", "spinner"):
    check(name in th, "no sched entry for thread %s (have %s)" % (name, sorted(th)))
if FAILS:
    sys.exit(1)

def span(t):
    return t["on_cpu_ns"] + t["off_cpu_ns"]

def frac(t, reason):
    return t["off_cpu_by_reason"][reason] / max(1, span(t))

for name, t in th.items():
    check(sum(t["off_cpu_by_reason"].values()) == t["off_cpu_ns"],
          "%s: reasons do not add up to off_cpu_ns" % name)
for name in ("sleeper", "piper", "feeder", "disker", "spinner"):
    t = th[name]
    check(0.9 * secs * 1e9 <= span(t) <= 1.1 * (secs + 1) * 1e9,
          "%s: on+off = %.3f s, run was ~%.1f s" % (name, span(t) / 1e9, secs))
    info("%-8s on %.3f s, off %s, cs %d, rq p99 %d ns" % (name, t["on_cpu_ns"] / 1e9,
         {k: round(v / 1e9, 3) for k, v in t["off_cpu_by_reason"].items()},
         t["context_switches"], t["runqueue_latency_ns"]["p99"]))

def blocked(t):
    r = t["off_cpu_by_reason"]
    return r["sleep"] + r["uninterruptible"] + r["other"]

# How long a woken thread waits for a CPU depends on the machine's load (ctest
# runs tests in parallel): the checks split "blocked" from "runnable" so
# that only the blocking reason, not the contention, is asserted.
for name in ("sleeper", "piper"):
    t = th[name]
    check(t["off_cpu_ns"] >= 0.95 * span(t), "%s: off-CPU %.3f of its time" % (name, t["off_cpu_ns"] / span(t)))
    check(t["off_cpu_by_reason"]["sleep"] >= 0.98 * blocked(t), "%s: blocked, but not sleeping: %r" % (name, t["off_cpu_by_reason"]))
    check(frac(t, "sleep") >= 0.6, "%s: sleep share %.3f < 0.6" % (name, frac(t, "sleep")))
dkr = th["disker"]
check(dkr["off_cpu_by_reason"]["uninterruptible"] >= 0.9 * blocked(dkr),
      "disker: blocked, but not in D: %r" % dkr["off_cpu_by_reason"])
# Of the time it was not waiting for a CPU (under a loaded ctest run the
# disker can spend most of its time runnable: contention, not its behaviour).
dr = dkr["off_cpu_by_reason"]
not_waiting = max(1, span(dkr) - dr["runqueue"] - dr["preempted"])
check(dr["uninterruptible"] >= 0.1 * not_waiting,
      "disker: uninterruptible %.3f of its time not waiting for a CPU, < 0.1" % (dr["uninterruptible"] / not_waiting))
sp = th["spinner"]
check(blocked(sp) < 0.02 * span(sp), "spinner blocked: %r" % sp["off_cpu_by_reason"])
# On-CPU time against the thread's own CPU clock, not against the run:
# under a loaded ctest the spinner gets what the machine leaves it (15% of
# its time with three busy loops beside it), and the share said nothing of
# the accounting. Tolerance 2% + 5 ms (the clock is read before
# the thread's last instructions and exit) + 10 us per context switch: the
# tracepoint edges are not the kernel's own runtime edges (a thread woken
# onto an idle CPU is charged from its wakeup: the disker's clock runs
# ~3.4 us per switch ahead of its on-CPU time, see docs/performance.md);
# a lost interval is milliseconds or more.
# Time the hypervisor stole while a thread was current counts in its
# on-CPU time but not in its clock (docs/performance.md): allowed above the
# clock, up to what all CPUs lost during the run.
steal = int(os.environ["STEAL_NS"])
info("steal during the run: %.3f s" % (steal / 1e9))
for name in ("sleeper", "piper", "feeder", "disker", "spinner"):
    if check(name in own, "the target printed no CPU time for %s" % name):
        on, cs = th[name]["on_cpu_ns"], th[name]["context_switches"]
        info("%-8s on-CPU %.4f s, own clock %.4f s, %d switches" % (name, on / 1e9, own[name] / 1e9, cs))
        tol = 0.02 * own[name] + 5e6 + 1e4 * cs
        check(-tol <= on - own[name] <= tol + steal,
              "%s: on-CPU %.4f s, its own CPU clock %.4f s (%d switches, %.3f s stolen)" %
              (name, on / 1e9, own[name] / 1e9, cs, steal / 1e9))
check(sp["on_cpu_ns"] >= 0.05 * span(sp), "spinner on-CPU only %.3f of its time" % (sp["on_cpu_ns"] / span(sp)))
check(sc["unreported_switches"] == sum(t["unreported_switches"] for t in sc["threads"]),
      "unreported_switches %r is not the threads' sum" % sc["unreported_switches"])
info("switches that reached no program: %d" % sc["unreported_switches"])
# ~100 sleeps/s of 10 ms: about secs*100 voluntary switches
check(0.5 * secs * 100 <= th["sleeper"]["voluntary_switches"] <= 1.2 * secs * 100,
      "sleeper voluntary switches %d, expected ~%d" % (th["sleeper"]["voluntary_switches"], secs * 100))
check(th["sleeper"]["runqueue_latency_ns"]["count"] >= 0.5 * secs * 100, "sleeper: few run-queue samples")

# Off-CPU stacks: offcpu.folded (microseconds).
OF = load_folded("offcpu.folded")
def us_with(fn):
    return sum(c for fr, c in OF if fn in fr)
sl = th["sleeper"]
blocked_us = (sl["off_cpu_by_reason"]["sleep"]) / 1000.0
got = us_with("sleep_phase")
check(0.85 * blocked_us <= got <= 1.15 * (blocked_us + sl["off_cpu_by_reason"]["runqueue"] / 1000.0),
      "sleep_phase off-CPU %d us vs sleeper sleep time %d us" % (got, blocked_us))
pw = [fr for fr, c in OF if "pipe_wait" in fr]
check(pw, "no off-CPU stack through pipe_wait")
# the kernel part: the pipe read path (pipe_read, anon_pipe_read on 6.x);
# the scheduler's own frames are left out by the kernel's unwinder
check(any(any(re.match(r"(anon_)?pipe_read_\[k\]$", x) for x in fr) for fr in pw),
      "pipe_wait stacks lack the kernel pipe_read frame: %r" % pw[:2])
check(all(fr[0] == "piper" and is_kernel(fr[-1]) for fr in pw), "pipe_wait stacks: %r" % pw[:2])
dk = us_with("disk_phase")
# Most fdatasync waits are shorter than the 1 ms threshold, so only part of
# the D time has stacks: present, and never more than the thread was off.
dko = th["disker"]["off_cpu_ns"] / 1000.0
check(0 < dk <= 1.01 * dko, "disk_phase off-CPU %d us vs disker off-CPU %d us" % (dk, dko))
check(us_with("spin_phase") <= 0.05 * sp["on_cpu_ns"] / 1000.0, "spin_phase shows as blocking")
check(sc["offcpu_stacks"]["episodes"] > 0 and sc["offcpu_stacks"]["file"] == "offcpu.folded",
      "offcpu_stacks: %r" % sc["offcpu_stacks"])
check(abs(sum(c for _, c in OF) - sc["offcpu_stacks"]["episodes_ns"] / 1000.0) <= sc["offcpu_stacks"]["episodes"] + 1,
      "offcpu.folded total != offcpu_stacks.episodes_ns")
check("offcpu.folded" in R.get("output_files", R.get("files", ["offcpu.folded"])), "report does not list offcpu.folded")

# The same profile in speedscope, in nanoseconds.
offp = [p for p in S["profiles"] if p["name"].startswith("off-CPU: sleeper ")]
if check(len(offp) == 1, "speedscope has %d off-CPU sleeper profiles" % len(offp)):
    p = offp[0]
    check(p["unit"] == "nanoseconds", "off-CPU unit %r" % p["unit"])
    names = [f["name"] for f in S["shared"]["frames"]]
    w = sum(wt for st, wt in zip(p["samples"], p["weights"]) if any(names[i] == "sleep_phase" for i in st))
    check(abs(w - got * 1000) <= 1000 * len(p["weights"]), "speedscope sleep_phase %d ns vs folded %d us" % (w, got))
PY
ep_log "ok"
