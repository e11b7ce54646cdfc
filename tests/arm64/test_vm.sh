#!/usr/bin/env bash
# ebpf-prof on arm64, in an emulated machine (tools/arm64-vm.sh: Debian
# 12's arm64 kernel under qemu-system-aarch64, software emulation). One
# boot (~15 s), several recordings in it (~10-13 s each), each checked
# against what its target is built to do (tests/arm64/vm_target.c):
#   fp target       vm_target (frame pointers, shared libc), default unwinding:
#                   burn_a/burn_b split 75/25 (+-0.15: ~200 samples at 99 Hz),
#                   stacks through work_outer to main;
#   probes          uprobe+uretprobe on outer/inner: exactly 200 and 600
#                   calls, all timed, nothing dropped;
#   USDT            ep_vm:tick with arm64 argument specs: exactly 1000
#                   events carrying 0..999 in order;
#   scheduler       its tracepoint programs load on the 6.1 kernel (an older
#                   verifier than this machine's) and see the 50 sleeps;
#   nofp            vm_target_nofp (static, -fomit-frame-pointer: burn_a/b are
#                   leaves whose return address stays in x30, work_outer and
#                   main keep no frame record, main's frame is over 1 KiB
#                   with x30 saved near sp; checked on the binary): the
#                   in-kernel CFI walk gives main;work_outer;burn_x in >= 95%
#                   of their samples, >= 90% rooted at _start, same shares,
#                   and off-CPU stacks of the sleeps through main;
#   fp contrast     the same binary with --unwind fp: main and work_outer are
#                   missing from >= 90% of the burn stacks (so the nofp
#                   check above can only pass through the CFI walk);
#   nocfi           vm_target_nocfi (frame pointers, no CFI for its own
#                   functions): the frame-pointer fallback inside the walk,
#                   then libc's CFI again above main (>= 90% rooted);
#   signal frame    vm_sig (static, no frame pointers): samples in a SIGALRM
#                   handler's callee reach main through the vdso's signal
#                   frame, spin (the interrupted leaf, its return address
#                   in the sigcontext's x30) and main in >= 90%;
#   uretprobes      vm_target_nofp_dyn (the same, dynamic), uretprobes on
#                   work_outer (x30 saved on its stack) and on burn_a (a
#                   leaf: the trampoline in x30 itself): the walk
#                   puts the original return addresses back (kernel_walk.
#                   uretprobe_fixed > 0), main;work_outer;burn_x stays;
#   Jetson          --sysfs-root on the fixture trees (../shared/fixtures/
#                   jetson): the GPU load of expected/<tree>.json, the
#                   throttled Orin's verdict and sources, none on the Nano;
#   no BTF          simulated: /sys/kernel/btf is covered by an empty tmpfs,
#                   so userspace finds no kernel BTF; the kernel still has
#                   its own (no kernel without BTF is booted): this tests
#                   the tool's path (libbpf with --btf, the raw_tp twins of
#                   the tp_btf programs, no iterators, no task storage, no
#                   BTF-typed helpers), not a verifier without BTF. Without
#                   --btf the run is refused naming --btf; with --btf FILE
#                   (the BTF cut from the booted image, tools/btf-from-image.py)
#                   on the frame-pointer target: raw_tp programs in
#                   report.json, frame-pointer unwinding (the in-kernel walk
#                   needs the kernel's BTF), burn_a the larger (0.55-0.95:
#                   the split aliases at 99 Hz) with stacks to main, the sleeps in the scheduler view with user stacks
#                   and no kernel frames, the 1000 USDT ticks in order.
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
nofp=$EP_BUILD_DIR/tests/vm_target_nofp
nocfi=$EP_BUILD_DIR/tests/vm_target_nocfi
nofp_dyn=$EP_BUILD_DIR/tests/vm_target_nofp_dyn
sig=$EP_BUILD_DIR/tests/vm_sig
for t in "$target" "$nofp" "$nocfi" "$nofp_dyn" "$sig"; do
	[ -x "$t" ] || fail "no $t (built by the cross build)"
done
# Not under /tmp: the VM mounts a tmpfs there, over the files copied in.
work=$(mktemp -d /var/tmp/ep-test_vm.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The no-frame-pointer binary must be what the unwinding checks assume:
# leaves that never store x30, callers without a frame record.
dis() { aarch64-linux-gnu-objdump -d --no-show-raw-insn "$nofp" | awk -v f="<$1>:" '$2 == f {p = 1; next} p && NF == 0 {exit} p'; }
[ -n "$(dis burn_a)" ] || fail "cannot disassemble burn_a in $nofp"
! dis burn_a | grep -q 'x30' || fail "burn_a in $nofp saves its return address: not a leaf case"
! dis work_outer | grep -q 'x29' || fail "work_outer in $nofp keeps a frame record"
! dis main | grep -q 'x29' || fail "main in $nofp keeps a frame record"
# main's frame is over 1 KiB with x30 saved near sp: the table keeps that
# slot from sp (EP_UW_REG_AT_SP), the rooted checks below go through it.
# (|| true: the early exits of awk/head end the pipeline with SIGPIPE.)
msub=$(dis main | sed -n 's/.*sub[[:space:]]*sp, sp, #0x\([0-9a-f]*\).*/\1/p' | head -n 1 || true)
[ -n "$msub" ] && [ $((16#$msub)) -ge 1024 ] || fail "main in $nofp has no frame over 1 KiB (sub sp, #0x${msub:-?})"

# The BTF the kernel carries, cut from the image the VM boots.
btf=$work/vmlinux.btf
fx=""
if [ -d "${EP_SHARED_DIR:-}/fixtures/jetson/expected" ]; then
	fx=$(cd "$EP_SHARED_DIR/fixtures/jetson" && pwd)
elif [ "${CI:-}" = true ]; then
	fail "no Jetson fixtures at ${EP_SHARED_DIR:-(EP_SHARED_DIR unset)}/fixtures/jetson"
else
	echo "[test_vm] no Jetson fixtures (EP_SHARED_DIR): the Jetson runs are skipped"
fi
{
	echo "nofp -F 99 --probes none -- /opt/ep/vm_target_nofp 3"
	echo "fp -F 99 --probes none --no-sched --unwind fp -- /opt/ep/vm_target_nofp 2"
	echo "nocfi -F 99 --probes none --no-sched -- /opt/ep/vm_target_nocfi 2"
	echo "sig -F 99 --probes none --no-sched -- /opt/ep/vm_sig"
	echo "uret -F 99 --probes none --no-sched --probe vm_target_nofp_dyn:work_outer --probe vm_target_nofp_dyn:burn_a -- /opt/ep/vm_target_nofp_dyn 2"
	if [ -n "$fx" ]; then
		for t in jp6-agx-orin-throttled jp4-nano; do
			echo "jetson-$t -F 99 --probes none --no-sched --gpu-interval 20 --sysfs-root $fx/$t -- /opt/ep/vm_target_nofp 1"
		done
	fi
	echo "! mount -t tmpfs nobtf /sys/kernel/btf"
	echo "nobtf -F 99 --probes none --no-sched -- /opt/ep/vm_target_nofp 1"
	echo "btf --btf $btf -F 99 --probes none --probe usdt:/opt/ep/vm_target:ep_vm:tick -- /opt/ep/vm_target 2"
} >"$work/runs"
files=""
[ -z "$fx" ] || files="$fx/jp6-agx-orin-throttled $fx/jp4-nano"
rc=0
kimg=$(EP_VM_FETCH_ONLY=1 EP_ARM64_BIN=$EP_BUILD_DIR/ebpf-prof "$EP_SOURCE_DIR/tools/arm64-vm.sh" \
	-o "$work/fetch" -- "$nofp") || fail "cannot fetch the VM's kernel"
[ -f "$kimg" ] || fail "no kernel image at $kimg"
aarch64-linux-gnu-nm "$sig" >"$work/vm_sig.nm" || fail "cannot read the symbols of $sig"
python3 "$EP_SOURCE_DIR/tools/btf-from-image.py" "$kimg" "$btf" >/dev/null ||
	fail "cannot cut the BTF out of $kimg"
EP_VM_RUNS=$work/runs EP_VM_PROGS="$nofp $nocfi $nofp_dyn $sig" EP_VM_FILES="$btf $files" \
	EP_ARM64_BIN=$EP_BUILD_DIR/ebpf-prof "$EP_SOURCE_DIR/tools/arm64-vm.sh" -o "$work/out" -F 99 \
	--probes none --probe vm_target:outer --probe vm_target:inner \
	--probe usdt:/opt/ep/vm_target:ep_vm:tick -- "$target" 3 2>"$work/vm.err" || rc=$?
cat "$work/vm.err" >&2
[ "$rc" -eq 0 ] || { tail -n 40 "$work/out/console.log" >&2 || true; fail "ebpf-prof in the VM exited $rc"; }
grep -q "^done rounds=" "$work/out/console.log" || fail "the target did not finish"
python3 - "$work/out" "$fx" "$btf" <<'PY'
import json, os, re, sys
d, fx, btf = sys.argv[1], sys.argv[2], sys.argv[3]
bad = []
def check(ok, msg):
    if not ok:
        bad.append(msg)
    return ok
def load(run, name):
    return json.load(open(os.path.join(d, run, name)))
def folded(run, name="stacks.folded"):
    F = []
    for line in open(os.path.join(d, run, name)):
        st, n = line.rstrip("\n").rsplit(" ", 1)
        F.append((st.split(";"), int(n)))
    return F
def rc(run):
    return int(open(os.path.join(d, "runs", run + ".rc")).read())
def burns(F):
    """(frames, n, the burn function's index) of the samples in burn_a/b."""
    out = []
    for fr, n in F:
        for i, f in enumerate(fr):
            if f in ("burn_a", "burn_b"):
                out.append((fr, n, i))
                break
    return out
def share(run, B):
    a = sum(n for fr, n, i in B if fr[i] == "burn_a")
    b = sum(n for fr, n, i in B if fr[i] == "burn_b")
    check(a + b >= 50, "%s: only %d samples in burn_a/burn_b" % (run, a + b))
    r = a / max(a + b, 1)
    # +-0.15 as test_pid_mode: under emulation at 99 Hz burn_a came out
    # 0.863 and 0.875 in single runs (2026-11-29), with no tool change.
    check(abs(r - 0.75) <= 0.15, "%s: burn_a share %.3f, want 0.75 +-0.15" % (run, r))
    return a, b
console = open(os.path.join(d, "console.log"), errors="replace").read().replace("\r", "")

# --- the frame-pointer target, probes, USDT, scheduler (first run) ---
R = json.load(open(os.path.join(d, "report.json")))
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
B = burns(folded("."))
a, b = share("fp-target", B)
rooted = sum(n for fr, n, i in B if "work_outer" in fr and "main" in fr)
print("[test_vm] fp target (%s): burn_a %d burn_b %d, %d reach main" % (R["unwind"]["mode"], a, b, rooted))
check(rooted >= 0.95 * (a + b), "fp target: %d of %d burn stacks reach main" % (rooted, a + b))
S = R.get("sched") or {}
check(S.get("voluntary_switches", 0) >= 45, "scheduler: %r voluntary switches for 50 sleeps" % S.get("voluntary_switches"))
check((S.get("off_cpu_by_reason") or {}).get("sleep", 0) >= 90e6, "scheduler: sleep %r ns for 50 x 2 ms" % (S.get("off_cpu_by_reason") or {}).get("sleep"))
check(R["dropped"]["total"] == 0, "sample drops %r" % R["dropped"])

# --- stacks of code without frame pointers, and the contrasts ---
def whole(run, want_root=0.90):
    R = load("runs/" + run, "report.json")
    check(rc(run) == 0, "%s: ebpf-prof exited %d" % (run, rc(run)))
    B = burns(folded("runs/" + run))
    a, b = share(run, B)
    callers = sum(n for fr, n, i in B if i >= 2 and fr[i - 2:i] == ["main", "work_outer"])
    root = sum(n for fr, n, i in B if "_start" in fr[:i])
    kw = R["unwind"].get("kernel_walk") or {}
    print("[test_vm] %s (%s): burn_a %d burn_b %d; main;work_outer;burn_x %d, rooted %d; ends %r"
          % (run, R["unwind"]["mode"], a, b, callers, root, kw.get("ends")))
    check(R["unwind"]["mode"] == "cfi-kernel", "%s: unwinding mode %r" % (run, R["unwind"]["mode"]))
    check(callers >= 0.95 * (a + b), "%s: %d of %d burn stacks are main;work_outer;burn_x" % (run, callers, a + b))
    if want_root is not None:
        check(root >= want_root * (a + b), "%s: %d of %d burn stacks reach _start" % (run, root, a + b))
    return R
R = whole("nofp")
O = folded("runs/nofp", "offcpu.folded")
sl = sum(n for fr, n in O if "__clock_nanosleep" in fr or "clock_nanosleep" in fr)
slm = sum(n for fr, n in O if ("__clock_nanosleep" in fr or "clock_nanosleep" in fr) and "main" in fr)
check(sl > 0 and slm >= 0.9 * sl, "nofp: off-CPU sleep stacks through main %d of %d (ns)" % (slm, sl))
F = folded("runs/fp")
check(rc("fp") == 0, "fp: ebpf-prof exited %d" % rc("fp"))
B = burns(F)
a, b = share("fp", B)
lost = sum(n for fr, n, i in B if "work_outer" not in fr and "main" not in fr)
print("[test_vm] fp (--unwind fp) on the same binary: %d of %d burn stacks without main and work_outer" % (lost, a + b))
check(lost >= 0.90 * (a + b), "fp: frame pointers found main/work_outer in %d of %d stacks: the binary is not frameless" % (a + b - lost, a + b))
whole("nocfi")
check(rc("sig") == 0, "sig: ebpf-prof exited %d" % rc("sig"))
# By address too: the symbolizer once left this short static process's
# frames as "[unknown] 0x..." (seen once in four runs); the walk is what
# this checks, so the frames are named from the binary's symbols.
syms = []
for line in open(os.path.join(os.path.dirname(d), "vm_sig.nm")):
    a, t, n = line.split()[:3]
    if t in "tT":
        syms.append((int(a, 16), n))
syms.sort()
def name(f):
    m = re.match(r"\[unknown\] 0x([0-9a-f]+)$", f)
    if not m:
        return f
    a = int(m.group(1), 16)
    best = None
    for s_a, s_n in syms:
        if s_a <= a:
            best = s_n
    return best or f
F = [([name(f) for f in fr], n) for fr, n in folded("runs/sig")]
H = [(fr, n, fr.index("in_handler")) for fr, n in F if "in_handler" in fr]
h = sum(n for fr, n, i in H)
# Root first: ... main;spin;<the vdso's sigreturn>;on_alarm;in_handler
through = sum(n for fr, n, i in H if i >= 4 and fr[i - 1] == "on_alarm" and fr[i - 3] == "spin"
              and fr[i - 4] == "main")
print("[test_vm] sig: %d samples in in_handler, %d as main;spin;%s;on_alarm;in_handler"
      % (h, through, H[0][0][H[0][2] - 2] if H and H[0][2] >= 2 else "?"))
check(h >= 30, "sig: only %d samples in in_handler" % h)
check(through >= 0.90 * h, "sig: %d of %d handler stacks cross the signal frame to spin and main" % (through, h))
# Dynamic: libc's table comes after its mmap (slower than the start under
# emulation), so the frames above main are not checked.
R = whole("uret", None)
kw = R["unwind"].get("kernel_walk") or {}
P = {p["label"]: p for p in R["probes"]["list"]}
# The probes only place the trampolines here: their counts are test_vm's
# first run's business (one burn_a return in ~150 was seen uncounted).
for name in ("work_outer", "burn_a"):
    p = P.get(name, {})
    check(p.get("count", 0) > 0 and p.get("errors") == 0, "uret: probe %s %r" % (name, p))
check(kw.get("uretprobe_fixed", 0) > 0, "uret: no trampoline return address put back (%r)" % kw.get("uretprobe_fixed"))
# A sample between the kernel's hijack of x30 and its return instance on
# the list cannot be repaired (docs/unwinding.md): at most 2%.
um = (kw.get("ends") or {}).get("uretprobe_unmatched", 0)
check(um <= 0.02 * sum((kw.get("ends") or {}).values()), "uret: unmatched trampolines %r" % kw.get("ends"))

# --- the Jetson module on the fixture trees ---
if fx:
    for t, throttled in (("jp6-agx-orin-throttled", True), ("jp4-nano", False)):
        run = "jetson-" + t
        check(rc(run) == 0, "%s: ebpf-prof exited %d" % (run, rc(run)))
        R = load("runs/" + run, "report.json")
        E = json.load(open(os.path.join(fx, "expected", t + ".json")))
        g = R.get("gpu")
        if not check(g is not None, "%s: report.json has no gpu section" % run):
            continue
        check(g["samples"] >= 10, "%s: gpu.samples %r, want >= 10" % (run, g["samples"]))
        load_ = (g["metrics"].get("gpu_load_pct") or {}).get("mean")
        check(load_ is not None and abs(load_ - E["gpu"]["load_pct"]) < 1e-6,
              "%s: gpu load mean %r, want %r" % (run, load_, E["gpu"]["load_pct"]))
        th = R.get("throttling") or {}
        srcs = {s for e in th.get("episodes", []) for s in e.get("sources", [])}
        print("[test_vm] %s: gpu load %r, %d samples, verdict %r, sources %r" % (run, load_, g["samples"], th.get("verdict"), sorted(srcs)))
        if throttled:
            check(th.get("verdict") == "throttled", "%s: verdict %r" % (run, th.get("verdict")))
            check({"jetson:gpu", "jetson:gpu-throttle-alert"} <= srcs, "%s: sources %r" % (run, sorted(srcs)))
        else:
            check(not any(s.startswith("jetson:") for s in srcs), "%s: blamed %r" % (run, sorted(srcs)))

# --- no kernel BTF in sysfs ---
check(rc("nobtf") == 1, "nobtf: exited %d, want 1" % rc("nobtf"))
check(re.search(r"no BTF .*--btf FILE", console) is not None, "nobtf: the refusal does not name --btf")
check(rc("btf") == 0, "btf: with --btf exited %d" % rc("btf"))
if rc("btf") == 0:
    Rb = load("runs/btf", "report.json")
    check({k: (Rb.get("kernel") or {}).get(k) for k in ("btf", "btf_file", "tracepoint_programs")} ==
          {"btf": False, "btf_file": btf, "tracepoint_programs": "raw_tp"},
          "btf: report.kernel %r" % Rb.get("kernel"))
    # Its stderr: the console from its EP-VM-RUN line to the next marker.
    err = re.split(r"^EP-VM-(?:RUN|RC|CMD)", console.split("EP-VM-RUN: btf ", 1)[-1], flags=re.M)[0]
    w = re.findall(r"^ebpf-prof: warning: this kernel has no BTF.*$", err, re.M)
    check(len(w) == 2 and any("raw_tp programs" in l for l in w) and any("--unwind fp" in l for l in w),
          "btf: warning lines about the missing BTF %r" % w)
    check(not re.search(r"^ebpf-prof: error", err, re.M), "btf: errors %r" % re.findall(r"^ebpf-prof: error.*", err, re.M))
    check(Rb["unwind"]["mode"] == "fp", "btf: unwinding %r, want fp" % Rb["unwind"]["mode"])
    B = burns(folded("runs/btf"))
    # Not share()'s +-0.15: this run is about the raw_tp path, and at 99 Hz
    # against the target's rounds under emulation the split aliases (0.863
    # and the default 5.10 run's 0.875 seen, on tp_btf too): burn_a the
    # larger, as test_btf.sh's bound.
    a = sum(n for fr, n, i in B if fr[i] == "burn_a")
    b = sum(n for fr, n, i in B if fr[i] == "burn_b")
    check(a + b >= 100 and b > 0 and 0.55 <= a / max(a + b, 1) <= 0.95,
          "btf: burn_a %d, burn_b %d: want >= 100 samples, burn_a's share 0.55-0.95" % (a, b))
    rooted = sum(n for fr, n, i in B if "work_outer" in fr and "main" in fr)
    check(rooted >= 0.95 * (a + b), "btf: %d of %d burn stacks reach main" % (rooted, a + b))
    S = Rb.get("sched") or {}
    sleep = (S.get("off_cpu_by_reason") or {}).get("sleep", 0)
    check(S.get("voluntary_switches", 0) >= 45 and sleep >= 90e6,
          "btf: scheduler %r voluntary switches, sleep %r ns for 50 x 2 ms" % (S.get("voluntary_switches"), sleep))
    O = folded("runs/btf", "offcpu.folded")
    sl = sum(n for fr, n in O if "clock_nanosleep" in fr or "__clock_nanosleep" in fr)
    slm = sum(n for fr, n in O if ("clock_nanosleep" in fr or "__clock_nanosleep" in fr) and "main" in fr)
    check(sl > 0 and slm >= 0.9 * sl, "btf: off-CPU sleep stacks through main %d of %d" % (slm, sl))
    check(not any(x.endswith("_[k]") for fr, n in O for x in fr), "btf: kernel frames off-CPU without the kernel's BTF")
    Pb = {p["label"]: p for p in Rb["probes"]["list"]}
    check(Pb.get("tick", {}).get("count") == 1000, "btf: tick %r, want 1000" % Pb.get("tick"))
    T = load("runs/btf", "trace.json")["traceEvents"]
    ticks = sorted((e for e in T if e.get("ph") == "X" and e.get("name") == "tick"), key=lambda e: e["ts"])
    check([e["args"].get("ret") for e in ticks] == list(range(1000)), "btf: tick arguments out of order")
    print("[test_vm] btf (raw_tp, %s): burn_a %d burn_b %d, %d reach main; sleep %d ns; ticks %d"
          % (Rb["unwind"]["mode"], a, b, rooted, sleep, len(ticks)))
for m in bad:
    print("  check failed: " + m)
sys.exit(1 if bad else 0)
PY
# Boot and run times, from the console's uptime stamps.
tr -d '\r' <"$work/out/console.log" | grep -E '^EP-VM-(RUN|RC)' | sed 's/^/[test_vm] /'
grep -h 'booted in' "$work/vm.err" | sed 's/^/[test_vm] /' || true
echo "PASS: $name"
