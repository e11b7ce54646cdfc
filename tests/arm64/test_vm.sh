#!/usr/bin/env bash
# ebpf-prof on arm64, in an emulated machine (tools/arm64-vm.sh: Debian
# 12's arm64 kernel under qemu-system-aarch64, software emulation). One
# boot, one recording of tests/arm64/vm_target (cross-built, frame
# pointers), checked against what the target is built to do:
#   CPU samples     burn_a/burn_b split 75/25 (+-0.10: ~100-200 samples in
#                   an emulated machine), stacks through work_outer to main;
#   probes          uprobe+uretprobe on outer/inner: exactly 200 and 600
#                   calls, all timed, nothing dropped;
#   USDT            ep_vm:tick with arm64 argument specs: exactly 1000
#                   events carrying 0..999 in order;
#   scheduler       its tracepoint programs load on the 6.1 kernel (an older
#                   verifier than this machine's) and see the 50 sleeps.
# Needs root (debugfs-free; the VM runs ebpf-prof as its root), qemu and
# the :arm64 packages (tools/cross-build.sh installs them). CI runs it
# through `tools/cross-build.sh arm64 --test`.
set -euo pipefail
: "${EP_SOURCE_DIR:?}" "${EP_BUILD_DIR:?}"
name=test_vm
fail() { echo "FAIL[$name]: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
	[ "${CI:-}" = true ] && fail "needs root (CI=true, not skipping)"
	echo "SKIP: needs root"
	exit 77
fi
target=$EP_BUILD_DIR/tests/vm_target
[ -x "$target" ] || fail "no $target (built by the cross build)"
work=$(mktemp -d /tmp/ep-test_vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
rc=0
EP_ARM64_BIN=$EP_BUILD_DIR/ebpf-prof "$EP_SOURCE_DIR/tools/arm64-vm.sh" -o "$work/out" -F 99 \
	--probes none --probe vm_target:outer --probe vm_target:inner \
	--probe usdt:/opt/ep/vm_target:ep_vm:tick -- "$target" 3 || rc=$?
[ "$rc" -eq 0 ] || { tail -n 40 "$work/out/console.log" >&2 || true; fail "ebpf-prof in the VM exited $rc"; }
grep -q "^done rounds=" "$work/out/console.log" || fail "the target did not finish"
python3 - "$work/out" <<'PY'
import json, os, sys
d = sys.argv[1]
R = json.load(open(os.path.join(d, "report.json")))
bad = []
def check(ok, msg):
    if not ok:
        bad.append(msg)
P = {p["label"]: p for p in R["probes"]["list"]}
for name, n in (("outer", 200), ("inner", 600), ("tick", 1000)):
    p = P.get(name, {})
    check(p.get("count") == n, "%s: %r calls, want %d" % (name, p.get("count"), n))
    check(p.get("completed") == n and p.get("errors") == 0, "%s: %r" % (name, p))
check(R["probes"]["dropped"]["total"] == 0, "probe drops %r" % R["probes"]["dropped"])
T = json.load(open(os.path.join(d, "trace.json")))["traceEvents"]
ticks = sorted((e for e in T if e.get("ph") == "X" and e.get("name") == "tick"), key=lambda e: e["ts"])
check([e["args"].get("ret") for e in ticks] == list(range(1000)),
      "tick arguments %r..." % [e["args"].get("ret") for e in ticks][:8])
F = []
for line in open(os.path.join(d, "stacks.folded")):
    st, n = line.rstrip("\n").rsplit(" ", 1)
    F.append((st.split(";"), int(n)))
a = sum(n for fr, n in F if "burn_a" in fr)
b = sum(n for fr, n in F if "burn_b" in fr)
rooted = sum(n for fr, n in F if ("burn_a" in fr or "burn_b" in fr) and "work_outer" in fr and "main" in fr)
print("[test_vm] burn_a %d burn_b %d (%.3f), %d reach main" % (a, b, a / max(a + b, 1), rooted))
check(a + b >= 80, "only %d samples in burn_a/burn_b" % (a + b))
check(abs(a / max(a + b, 1) - 0.75) <= 0.10, "burn_a share %.3f, want 0.75 +-0.10" % (a / max(a + b, 1)))
check(rooted >= 0.95 * (a + b), "%d of %d burn stacks reach main" % (rooted, a + b))
S = R.get("sched") or {}
check(S.get("voluntary_switches", 0) >= 45, "scheduler: %r voluntary switches for 50 sleeps" % S.get("voluntary_switches"))
check((S.get("off_cpu_by_reason") or {}).get("sleep", 0) >= 90e6, "scheduler: sleep %r ns for 50 x 2 ms" % (S.get("off_cpu_by_reason") or {}).get("sleep"))
check(R["dropped"]["total"] == 0, "sample drops %r" % R["dropped"])
for m in bad:
    print("  check failed: " + m)
sys.exit(1 if bad else 0)
PY
echo "PASS: $name"
