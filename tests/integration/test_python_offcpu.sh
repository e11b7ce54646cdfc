#!/bin/bash
# Python frames beyond the CPU samples (docs/python.md): off-CPU stacks name
# the Python function that blocked, per-cycle top functions and the live
# top view name Python functions. py_tree.py's sleep mode: nap_long (30 ms)
# and nap_short (10 ms) both sleep through nap() at the same line, so the
# native wait site is the same for both (3.11+ has no C frame per Python
# call): only the Python frames tell them apart, 3:1 of the off-CPU time.
# Debian's python3.11 is never skipped under CI; pyenv's 3.12 (shared
# libpython, with --unwind cfi-kernel) and 3.9 (an evaluator call per
# Python call) are skipped with a message where missing.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

PY_TREE="$(cd "$(dirname "$0")" && pwd)/py_tree.py"

# offcpu PYTHON [PROF_ARGS...]: the sleep mode for 2 s; the off-CPU time of
# nap_long and nap_short is the program's own (PY_TREE_OUT) within 5 points.
offcpu()
{
	local py=$1 out="$EP_WORK/off.$(basename "$1")"
	shift
	export PY_TREE_OUT="$EP_WORK/slept.$(basename "$py")"
	ep_prof_run 60 -F 99 --probes none -o "$out" "$@" -- "$py" "$PY_TREE" 2 sleep
	[ "$PROF_RC" -eq 0 ] || ep_fail "$py: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	ep_check_outputs "$out"
	PY_BIN=$py ep_py "$out" <<'PY' || exit 1
OF = load_folded("offcpu.folded")
def names(fr):
    return [f.split(" (")[0] for f in fr if "(py_tree.py:" in f]
def total(pred):
    return sum(c for fr, c in OF if pred(fr))
slept = [float(x) for x in open(os.environ["PY_TREE_OUT"]).read().split()]
truth = 100.0 * slept[0] / sum(slept)
# The episodes of the sleep syscall (the rest: start-up, exit):
# clock_nanosleep, select before 3.11.
def is_sleep(f):
    return "clock_nanosleep" in f or "select" in f
sleeps = total(lambda fr: any(is_sleep(f) for f in fr))
lng = total(lambda fr: has_seq(names(fr), ["main", "nap_long", "nap"]))
sht = total(lambda fr: has_seq(names(fr), ["main", "nap_short", "nap"]))
# nap's frame above the native sleep: Python caller first, then the call.
order = total(lambda fr: "nap" in names(fr) and
              [f.split(" (")[0] for f in fr].index("nap") <
              min([i for i, f in enumerate(fr) if is_sleep(f)] or [-1]))
info("%s: %d us asleep, nap_long %d us, nap_short %d us (%.1f%%, the program slept %.1f%% in nap_long); %d us with nap above the syscall"
     % (os.environ["PY_BIN"], sleeps, lng, sht, 100.0 * lng / max(1, lng + sht), truth, order))
# All of the program's sleeps (it measured them; the episode starts at the
# switch-out, after its clock read: a little longer).
check(0.95 * sum(slept) * 1e6 <= sleeps <= 1.05 * sum(slept) * 1e6 + 20000,
      "%d us of sleep episodes, the program slept %d us" % (sleeps, sum(slept) * 1e6))
check(lng + sht >= 0.98 * sleeps, "only %d of %d us of sleeps under main;nap_long|nap_short;nap" % (lng + sht, sleeps))
check(order >= 0.98 * sleeps, "only %d of %d us of sleeps with nap above the sleep call" % (order, sleeps))
check(abs(100.0 * lng / max(1, lng + sht) - truth) <= 5,
      "nap_long holds %.1f%% of the sleeps, it slept %.1f%% +- 5" % (100.0 * lng / max(1, lng + sht), truth))
# report.json counts the off-CPU episodes that got Python frames: every
# episode in offcpu.folded with one (each folded line sums >= 1 episode).
PYR = R.get("python") or {}
eps = (PYR.get("offcpu") or {}).get("episodes_with_python", 0)
lines = sum(1 for fr, c in OF if any("(py_tree.py:" in f for f in fr))
check(PYR.get("mode") == "mixed", "report.json python.mode %r" % PYR.get("mode"))
check(eps >= lines > 0, "python.offcpu.episodes_with_python %d, %d folded stacks with Python frames" % (eps, lines))
check((PYR.get("offcpu") or {}).get("frames", 0) >= 3 * eps,
      "python.offcpu.frames %r for %d episodes (main;nap_*;nap each)" % ((PYR.get("offcpu") or {}).get("frames"), eps))
PY
}

DEB=/usr/bin/python3.11
if [ -x "$DEB" ]; then
	offcpu "$DEB"
	# --python native: off-CPU stacks as before, without Python frames.
	out="$EP_WORK/native"
	ep_prof_run 60 -F 99 --probes none --python native -o "$out" -- "$DEB" "$PY_TREE" 1 sleep
	[ "$PROF_RC" -eq 0 ] || ep_fail "--python native: ebpf-prof exited $PROF_RC"
	ep_py "$out" <<'PY' || exit 1
OF = load_folded("offcpu.folded")
n = sum(c for fr, c in OF if any("(py_tree.py:" in f for f in fr))
check(n == 0, "%d us of off-CPU stacks with Python frames under --python native" % n)
check("python" not in R, "report.json has a python section under --python native")
# Against the program's own measure of its sleeps (a fixed 0.5 s failed
# under load: with the start-up slowed, the 1 s program slept 0.46 s).
slept = sum(float(x) for x in open(os.environ["PY_TREE_OUT"]).read().split())
asleep = sum(c for fr, c in OF if any("clock_nanosleep" in f or "select" in f for f in fr))
check(asleep >= 0.95 * slept * 1e6 and slept > 0.1,
      "%d us of sleep episodes off-CPU, the program slept %d us" % (asleep, slept * 1e6))
PY
	# Per-cycle top functions and the live view (piped: plain snapshots).
	# --cycle-every py:nap_long (a watchpoint, docs/cycles.md): each cycle
	# runs from one call of nap_long to the next and holds burn() twice,
	# the CPU part of the cycle.
	out="$EP_WORK/top"
	ep_prof_run 60 top -F 499 --interval 0.5 --probes none --cycle-every py:nap_long -o "$out" \
		-- "$DEB" "$PY_TREE" 3 sleep
	[ "$PROF_RC" -eq 0 ] || ep_fail "top --cycle: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	grep -Eq '^ *[0-9.]+% +[0-9.]+%  burn \(py_tree\.py:[0-9]+\)' "$PROF_OUT" ||
		ep_fail "burn (py_tree.py:N) not in any snapshot of the live view: $(grep -m 12 '%' "$PROF_OUT")"
	ep_py "$out" <<'PY' || exit 1
C = R["cycles"]
tops = [[t["name"] for t in c["top_functions"]] for c in C if c["samples"] >= 3]
burn = [t for t in tops if t and t[0].startswith("burn (py_tree.py:")]
info("%d cycles, %d with 3+ samples, %d with burn (py_tree.py:N) on top; e.g. %r"
     % (len(C), len(tops), len(burn), tops[:2]))
check(len(C) >= 20, "only %d cycles of nap_long in 3 s" % len(C))
check(len(tops) >= 10, "only %d cycles with 3+ samples" % len(tops))
check(len(burn) >= 0.9 * len(tops), "burn on top of only %d of %d cycles: %r" % (len(burn), len(tops), tops))
# A sample in the interpreter's C code under burn (str(), the allocator:
# about half of them) counts for burn, not for that C function.
nb = sum(t["samples"] for c in C for t in c["top_functions"] if t["name"].startswith("burn ("))
ns = sum(c["samples"] for c in C)
info("%d of %d cycle samples count for burn" % (nb, ns))
check(nb >= 0.85 * ns, "only %d of %d cycle samples count for burn" % (nb, ns))
PY
else
	ep_skip_part "Debian's $DEB is missing (python3.11 package)"
fi

for v in 3.12 3.9; do
	ep_pyenv "$v" || continue
	py=$EP_PY
	case $v in
	3.12) offcpu "$py" --unwind cfi-kernel ;;
	*) offcpu "$py" ;;
	esac
done
ep_log "ok"
