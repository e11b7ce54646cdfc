#!/usr/bin/env bash
# --btf FILE: the kernel's BTF from a file (libbpf's custom BTF path) for the
# programs' relocations. It does not make a kernel without BTF work (tp_btf
# needs the kernel's own: tests/arm64/test_vm.sh, docs/jetson.md).
# This kernel has BTF, so the test hands ebpf-prof a copy of it as a file:
# the recording must work as without the option (CPU shares of cpu_tree's
# 75/25 split, the modules loaded); a file that is not BTF must fail the run
# with the file named, a missing one must be a usage error. Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
btf="$EP_WORK/vmlinux.btf"
cp /sys/kernel/btf/vmlinux "$btf" || ep_fail "cannot copy the kernel's BTF"
out="$EP_WORK/out"
ep_prof_run 60 --btf "$btf" -F 199 -o "$out" -- "$EP_TARGETS_DIR/cpu_tree" 2
[ "$PROF_RC" -eq 0 ] || ep_fail "recording with --btf failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
ep_py "$out" <<'PY'
a = folded_total(lambda fr: "burn_a" in fr)
b = folded_total(lambda fr: "burn_b" in fr)
check(a + b >= 100, "only %d samples in burn_a/burn_b" % (a + b))
# Only that the CPU profile works: both burners under work_outer, burn_a
# the larger. The split itself is tested closely elsewhere; here, with 400
# samples at a fixed 5 ms period against cpu_tree's ~0.3 ms rounds, it came
# out 0.85-0.86 on loaded machines (aliasing), and a +-0.10 bound flaked.
both = folded_total(lambda fr: has_seq(fr, ["main", "work_outer"]) and ("burn_a" in fr or "burn_b" in fr))
check(b > 0 and 0.55 <= a / max(a + b, 1) <= 0.95, "burn_a share %.3f (%d/%d), want 0.55-0.95" % (a / max(a + b, 1), a, b))
check(both == a + b, "%d of %d burn samples not under main;work_outer" % (a + b - both, a + b))
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
