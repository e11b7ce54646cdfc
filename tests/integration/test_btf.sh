#!/usr/bin/env bash
# --btf FILE: the kernel's BTF from a file (libbpf's custom BTF path) for the
# programs' relocations. It does not make a kernel without BTF work (tp_btf
# needs the kernel's own: tests/arm64/test_vm.sh, docs/jetson.md).
# This kernel has BTF, so the test hands ebpf-prof a copy of it as a file:
# the recording must work as without the option (cpu_tree's burn_a:burn_b
# split as the target measures it, the modules loaded); a file that is not
# BTF must fail the run with the file named, a missing one must be a usage
# error. Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
btf="$EP_WORK/vmlinux.btf"
cp /sys/kernel/btf/vmlinux "$btf" || ep_fail "cannot copy the kernel's BTF"
out="$EP_WORK/out"
# 2 s of cpu_tree's CPU time at 499 Hz: ~1000 samples however loaded the
# machine is. Its stdout is ebpf-prof's: the "done" line has its own split.
ep_prof_run 90 --btf "$btf" -F 499 -o "$out" -- "$EP_TARGETS_DIR/cpu_tree" --cpu 2
[ "$PROF_RC" -eq 0 ] || ep_fail "recording with --btf failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
done_line=$(grep '^done cycles=' "$PROF_OUT") || ep_fail "cpu_tree did not finish: $(head -c 300 "$PROF_OUT")"
OWN_A=$(sed 's/.* a_ns=\([0-9]*\).*/\1/' <<<"$done_line") OWN_B=$(sed 's/.* b_ns=\([0-9]*\).*/\1/' <<<"$done_line") \
	ep_py "$out" <<'PY'
a = folded_total(lambda fr: "burn_a" in fr)
b = folded_total(lambda fr: "burn_b" in fr)
check(a + b >= 500, "only %d samples in burn_a/burn_b" % (a + b))
check_split(a, b, int(os.environ["OWN_A"]), int(os.environ["OWN_B"]), "--btf")
both = folded_total(lambda fr: has_seq(fr, ["main", "work_outer"]) and ("burn_a" in fr or "burn_b" in fr))
# A rare walk stops short of main ("cpu_tree;work_outer;burn_a" once in
# ~1000): at most 0.5%.
check(both >= 0.995 * (a + b), "%d of %d burn samples not under main;work_outer" % (a + b - both, a + b))
check((R.get("sched") or {}).get("context_switches", 0) > 0, "the scheduler module did not load with --btf")
PY
head -c 65536 /dev/urandom >"$EP_WORK/junk.btf"
ep_prof_run 60 --btf "$EP_WORK/junk.btf" -F 99 -o "$EP_WORK/junk" -- "$EP_TARGETS_DIR/cpu_tree" 1
[ "$PROF_RC" -eq 1 ] || ep_fail "a file that is not BTF: rc $PROF_RC, want 1"
grep -q "with --btf $EP_WORK/junk.btf" "$PROF_ERR" || ep_fail "the error does not name the --btf file: $(tail -n 3 "$PROF_ERR")"
ep_prof_run 60 --btf "$EP_WORK/none.btf" -F 99 -o "$EP_WORK/none" -- "$EP_TARGETS_DIR/cpu_tree" 1
[ "$PROF_RC" -eq 2 ] || ep_fail "a missing --btf file: rc $PROF_RC, want 2 (usage)"
grep -q -- "--btf $EP_WORK/none.btf: No such file" "$PROF_ERR" || ep_fail "missing file not reported: $(cat "$PROF_ERR")"
ep_log "ok"
