#!/bin/bash
# A kernel without its own BTF (JetPack kernels built
# without CONFIG_DEBUG_INFO_BTF), simulated: ebpf-prof runs in a private
# mount namespace with an empty tmpfs over /sys/kernel/btf, so neither it
# nor libbpf finds the kernel's BTF (this machine has no /boot/vmlinux-*
# for libbpf's other places; checked below). The kernel itself still has
# BTF: this tests the tool's path (the raw_tp twins of the tp_btf
# programs, no iterators, no task storage, no BTF-typed helpers), not a
# verifier without BTF.
#   no --btf     exit 1 with one error line naming --btf FILE, BTFHub,
#                `pahole -J` and docs/jetson.md, nothing loaded;
#   cfi-kernel   asked for with --btf: exit 1, it needs the kernel's BTF;
#   --btf FILE   (a copy of this kernel's BTF) report.json says raw_tp
#                programs, no kernel BTF and the file; one warning line
#                about it, one about the unwinding (not in the kernel):
#     fork+exec  cpu_tree launched through a shell that forks and execs it:
#                followed (raw_tp sched_process_fork/exec), its samples
#                named, burn_a's share as the target measured it
#                (check_split in lib.sh), the run ends when the shell exits;
#     sched      offcpu_mix: the sleeper's time off-CPU sleeping, its
#                sleep_phase stacks >= 85% of that (raw_tp sched_switch and
#                wakeups, state by tid), no kernel frames in the off-CPU
#                stacks (bpf_get_task_stack needs the kernel's BTF: the
#                documented loss), nothing dropped;
#     USDT       usdt_points: ep_lib:tick exactly 1000 times carrying
#                0..999 in order, the semaphore-guarded point 500 times
#                (the probes' raw_tp thread-exit program loaded beside);
#     programs   while that run is on, none of its loaded programs is of a
#                BTF-typed kind or calls a BTF-typed helper (bpftool).
# Needs root.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

command -v unshare >/dev/null || ep_fail "no unshare (util-linux)"
[ -r /sys/kernel/btf/vmlinux ] || ep_fail "this kernel has no /sys/kernel/btf/vmlinux to hide"
rel=$(uname -r)
for f in /boot/vmlinux-$rel /lib/modules/$rel/vmlinux-$rel /lib/modules/$rel/build/vmlinux \
	/usr/lib/modules/$rel/kernel/vmlinux /usr/lib/debug/boot/vmlinux-$rel \
	/usr/lib/debug/boot/vmlinux-$rel.debug /usr/lib/debug/lib/modules/$rel/vmlinux; do
	[ -e "$f" ] && ep_fail "$f exists: libbpf would find the kernel's BTF there (test assumes none)"
done
btf="$EP_WORK/vmlinux.btf"
cp /sys/kernel/btf/vmlinux "$btf" || ep_fail "cannot copy the kernel's BTF"
# EP_BIN in a mount namespace without the kernel's BTF; exec all the way
# down, so that ep_prof_bg's pid is ebpf-prof's.
real_bin=$EP_BIN
EP_BIN="$EP_WORK/ebpf-prof-nobtf"
cat >"$EP_BIN" <<EOF
#!/bin/sh
exec unshare -m sh -c 'mount -t tmpfs nobtf /sys/kernel/btf && exec "\$0" "\$@"' "$real_bin" "\$@"
EOF
chmod +x "$EP_BIN"
unshare -m sh -c 'mount -t tmpfs nobtf /sys/kernel/btf && [ ! -e /sys/kernel/btf/vmlinux ]' ||
	ep_fail "cannot hide /sys/kernel/btf in a mount namespace"

# --- no --btf: refused, in one line ---
ep_prof_run 60 -F 99 -o "$EP_WORK/none" -- "$EP_TARGETS_DIR/cpu_tree" 1
[ "$PROF_RC" -eq 1 ] || ep_fail "no BTF, no --btf: exit $PROF_RC, want 1 ($(tail -n 3 "$PROF_ERR"))"
n=$(grep -c "error" "$PROF_ERR" || true)
[ "$n" -eq 1 ] || ep_fail "no BTF, no --btf: $n error lines, want 1: $(cat "$PROF_ERR")"
line=$(grep "error" "$PROF_ERR")
for want in "this kernel has no BTF" "--btf FILE" "BTFHub's file for $rel" "pahole -J" "docs/jetson.md"; do
	case "$line" in *"$want"*) ;; *) ep_fail "no BTF: the error line lacks '$want': $line" ;; esac
done
[ ! -e "$EP_WORK/none/report.json" ] || ep_fail "no BTF, no --btf: a report was written"

# The in-kernel walk asked for explicitly: it needs the kernel's BTF.
ep_prof_run 60 --btf "$btf" --unwind cfi-kernel -F 99 -o "$EP_WORK/kwalk" -- "$EP_TARGETS_DIR/cpu_tree" 1
[ "$PROF_RC" -eq 1 ] || ep_fail "--unwind cfi-kernel without kernel BTF: exit $PROF_RC, want 1"
grep -q -- "--unwind cfi-kernel needs the kernel's BTF" "$PROF_ERR" ||
	ep_fail "--unwind cfi-kernel without kernel BTF: $(tail -n 3 "$PROF_ERR")"

# Every run with --btf: raw_tp programs, said once, no error.
check_run() {
	ERRLOG=$PROF_ERR BTF=$btf ep_py "$1" <<'PY'
err = open(os.environ["ERRLOG"]).read().splitlines()
K = R.get("kernel") or {}
check({k: K.get(k) for k in ("btf", "btf_file", "tracepoint_programs")} ==
      {"btf": False, "btf_file": os.environ["BTF"], "tracepoint_programs": "raw_tp"}, "report.kernel %r" % K)
# The programs loaded are the raw_tp twins, all of them, none given up.
P = {p["name"]: p for p in K.get("bpf_programs", [])}
check(P.get("sched_switch_raw", {}).get("loaded") and "sched_switch" not in P,
      "switch programs %r" % [n for n in P if n.startswith("sched_switch")])
check(all(p["loaded"] and p["within_margins"] for p in P.values()),
      "programs not loaded or past a margin: %r" % [n for n, p in P.items() if not p["within_margins"]])
check(K.get("bpf_degraded") == [], "degraded %r" % K.get("bpf_degraded"))
# RSS from the classic tracepoint (a raw one needs the kernel's BTF to attach).
check(P.get("sm_rss", {}).get("loaded") and "sm_rss_btf" not in P,
      "rss programs %r" % [n for n in P if n.startswith("sm_rss")])
check(((R.get("memory") or {}).get("sources") or {}).get("rss_program") == "tracepoint",
      "rss program %r" % ((R.get("memory") or {}).get("sources")))
w = [l for l in err if "warning" in l and "no BTF" in l]
check(len(w) == 2, "%d warning lines about the missing BTF, want 2: %r" % (len(w), w))
check(any("raw_tp programs" in l and os.environ["BTF"] in l for l in w), "no raw_tp line: %r" % w)
check(any("not in the kernel" in l for l in w), "no unwinding line: %r" % w)
bad = [l for l in err if "error" in l or "cannot load" in l or "did not load" in l]
check(not bad, "errors: %r" % bad[:3])
PY
}

# --- fork + exec through a shell (the `; :` keeps sh from exec'ing cpu_tree itself) ---
# 2 s of cpu_tree's CPU time at 499 Hz (~1000 samples whatever the load); its
# "done" line (on ebpf-prof's stdout) has its own split.
ep_prof_run 90 --btf "$btf" -F 499 --no-gpu -o "$EP_WORK/tree" -- /bin/sh -c "\"$EP_TARGETS_DIR/cpu_tree\" --cpu 2; :"
[ "$PROF_RC" -eq 0 ] || ep_fail "cpu_tree with --btf: exit $PROF_RC: $(tail -n 5 "$PROF_ERR")"
check_run "$EP_WORK/tree" || exit 1
done_line=$(grep '^done cycles=' "$PROF_OUT") || ep_fail "cpu_tree did not finish: $(head -c 300 "$PROF_OUT")"
OWN_A=$(sed 's/.* a_ns=\([0-9]*\).*/\1/' <<<"$done_line") OWN_B=$(sed 's/.* b_ns=\([0-9]*\).*/\1/' <<<"$done_line") \
	ep_py "$EP_WORK/tree" <<'PY'
a = folded_total(lambda fr: "burn_a" in fr)
b = folded_total(lambda fr: "burn_b" in fr)
info("burn_a %d, burn_b %d samples" % (a, b))
check(a + b >= 500, "only %d samples in burn_a/burn_b: the forked child was not followed" % (a + b))
check_split(a, b, int(os.environ["OWN_A"]), int(os.environ["OWN_B"]), "fork + exec")
both = folded_total(lambda fr: has_seq(fr, ["main", "work_outer"]) and ("burn_a" in fr or "burn_b" in fr))
# A rare walk stops short of main ("cpu_tree;work_outer;burn_a" once in
# ~1000): at most 0.5%.
check(both >= 0.995 * (a + b), "%d of %d burn samples not under main;work_outer" % (a + b - both, a + b))
check(R["stop_reason"] == "targets-exited", "stop reason %r" % R["stop_reason"])
PY

# --- the scheduler view ---
SECS=3
ep_prof_run 60 --btf "$btf" --no-gpu -o "$EP_WORK/sched" -- "$EP_TARGETS_DIR/offcpu_mix" --seconds "$SECS" --dir "$EP_WORK"
[ "$PROF_RC" -eq 0 ] || ep_fail "offcpu_mix with --btf: exit $PROF_RC: $(tail -n 5 "$PROF_ERR")"
check_run "$EP_WORK/sched" || exit 1
SECS=$SECS ep_py "$EP_WORK/sched" <<'PY'
secs = float(os.environ["SECS"])
sc = R.get("sched")
if not check(isinstance(sc, dict), "report.sched missing"):
    sys.exit(1)
check(sc["dropped"]["total"] == 0, "sched drops: %r" % sc["dropped"])
th = {t["comm"]: t for t in sc["threads"]}
if not check("sleeper" in th and "spinner" in th, "threads %r" % sorted(th)):
    sys.exit(1)
sl, sp = th["sleeper"], th["spinner"]
span = sl["on_cpu_ns"] + sl["off_cpu_ns"]
r = sl["off_cpu_by_reason"]
blocked = r["sleep"] + r["uninterruptible"] + r["other"]
check(0.9 * secs * 1e9 <= span <= 1.1 * (secs + 1) * 1e9, "sleeper: on+off %.3f s" % (span / 1e9))
check(sl["off_cpu_ns"] >= 0.95 * span, "sleeper: off-CPU %.3f of its time" % (sl["off_cpu_ns"] / span))
check(r["sleep"] >= 0.98 * blocked, "sleeper: blocked, not sleeping: %r" % r)
check(0.5 * secs * 100 <= sl["voluntary_switches"] <= 1.2 * secs * 100, "sleeper switches %d" % sl["voluntary_switches"])
spb = sum(sp["off_cpu_by_reason"][k] for k in ("sleep", "uninterruptible", "other"))
check(spb < 0.02 * (sp["on_cpu_ns"] + sp["off_cpu_ns"]), "spinner blocked: %r" % sp["off_cpu_by_reason"])
OF = load_folded("offcpu.folded")
got = sum(c for fr, c in OF if fr[0] == "sleeper" and "sleep_phase" in fr)
info("sleeper: sleep %d us, sleep_phase stacks %d us" % (r["sleep"] / 1000, got))
check(0.85 * blocked / 1000 <= got <= 1.15 * (blocked + r["runqueue"]) / 1000,
      "sleep_phase off-CPU %d us vs the sleeper's blocked time %d us" % (got, blocked / 1000))
kern = [fr for fr, c in OF if any(is_kernel(x) for x in fr)]
check(not kern, "kernel frames in off-CPU stacks without the kernel's BTF: %r" % kern[:2])
PY

# --- USDT probes with exact counts ---
LIB="$EP_TARGETS_DIR/usdt_points_lib"
ep_start_target usdt_points "$LIB"
ep_prof_bg -v --btf "$btf" --pid "$TARGET_PID" -o "$EP_WORK/usdt" --no-gpu --probes none \
	--probe "usdt:usdt_points_lib:ep_lib:tick" --probe "usdt:$EP_TARGETS_DIR/usdt_points:ep_tgt:guarded"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: guarded in " 20 "$PROF_PID" || ep_fail "guarded not attached"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: tick in .*usdt_points_lib" 5 "$PROF_PID" || ep_fail "tick not attached"
# What no verifier test here can show (the kernel has BTF): no program of
# this run is a BTF-typed kind (tracing: tp_btf, iterators) or calls a
# helper that takes or returns a BTF-typed pointer; a kernel without BTF
# refuses those. Read from the loaded programs (bpftool, outside the
# namespace), while they run.
PROF_PID=$PROF_PID python3 - <<'PY' || ep_fail "BTF-typed programs or helpers loaded without kernel BTF"
import json, os, subprocess, sys
pid = int(os.environ["PROF_PID"])
# Ours: the programs whose fds the process holds (fdinfo's prog_id).
ids = set()
for fd in os.listdir("/proc/%d/fdinfo" % pid):
    try:
        for line in open("/proc/%d/fdinfo/%s" % (pid, fd)):
            if line.startswith("prog_id:"):
                ids.add(int(line.split()[1]))
    except OSError:
        pass
progs = [p for p in json.loads(subprocess.check_output(["bpftool", "prog", "show", "-j"]))
         if p["id"] in ids]
bad_helpers = ("bpf_get_current_task_btf", "bpf_task_pt_regs", "bpf_task_storage_get",
               "bpf_task_storage_delete", "bpf_find_vma", "bpf_get_task_stack", "bpf_per_cpu_ptr",
               "bpf_this_cpu_ptr", "bpf_d_path", "bpf_snprintf_btf", "bpf_seq_printf_btf",
               "bpf_btf_find_by_name_kind", "kernel-function")
bad = []
for p in progs:
    if p.get("type") in ("tracing", "lsm", "ext", "struct_ops"):
        bad.append("%s: type %s" % (p.get("name"), p.get("type")))
    x = subprocess.run(["bpftool", "prog", "dump", "xlated", "id", str(p["id"])],
                       capture_output=True, text=True).stdout
    for h in bad_helpers:
        if "call " + h in x:
            bad.append("%s calls %s" % (p.get("name"), h))
print("[test_nobtf] %d programs of pid %d checked: %s" % (len(progs), pid, sorted(p.get("name") for p in progs)))
if len(progs) < 5 or not any(p.get("type") == "raw_tracepoint" for p in progs):
    print("too few programs, or no raw_tracepoint one: %r" % [(p.get("name"), p.get("type")) for p in progs])
    sys.exit(1)
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "USDT with --btf: exit $EP_EXIT_RC: $(grep -i error "$PROF_ERR" | head -n 3)"
grep -qx "guarded_fired 500" "$TARGET_OUT" || ep_fail "semaphore not raised: $(cat "$TARGET_OUT")"
check_run "$EP_WORK/usdt" || exit 1
ep_py "$EP_WORK/usdt" <<'PY'
P = {p["label"]: p for p in R["probes"]["list"]}
for name, n in (("tick", 1000), ("guarded", 500)):
    if check(name in P, "no probe %s: %r" % (name, sorted(P))):
        check(P[name]["count"] == n and P[name]["errors"] == 0, "%s: %r, want %d" % (name, P[name], n))
check(R["probes"]["dropped"]["total"] == 0, "drops %r" % R["probes"]["dropped"])
E = sorted((e for e in load_json("trace.json")["traceEvents"] if e.get("ph") == "X" and e["name"] == "tick"),
           key=lambda e: e["ts"])
check([e["args"].get("ret") for e in E] == list(range(1000)), "tick arguments: %r..." % [e["args"].get("ret") for e in E][:10])
PY
ep_log "ok"
