#!/bin/bash
# Python frames in allocation stacks (docs/alloc.md, docs/python.md):
# tests/integration/py_alloc.py, launched under `ebpf-prof --alloc`, calls
# tests/targets/py_ctypes_lib through ctypes from two known lines: churn_hot
# -> c_alloc_churn (32 MiB malloc'd and freed a round) and keep_some ->
# c_alloc_keep (a 256 KiB block a round, kept to the end). On pyenv's 3.11,
# 3.12 and 3.13 (shared libpython; a missing one is skipped, a failure
# under CI=true):
#   - alloc.folded: >= 98% of c_alloc_churn's bytes sit under
#     `churn_hot (py_alloc.py:LINE)` at the exact line of the call, with
#     main and <module> above it (every one of those calls comes from that
#     line: the 2% is room for a walk that fails, e.g. a code object read
#     while being created); c_alloc_churn's bytes within 15% of what it
#     asked for (~6,000 samples at --alloc-rate 128K: 1.3% standard error);
#   - inuse.folded: the same for c_alloc_keep under keep_some (>= 90%: two
#     of its ~21 sampled blocks may lose a Python frame), its bytes
#     within 25% of what is kept (24 blocks of 256 KiB, each sampled with
#     probability 0.86: 8% standard error);
#   - report.json: the top allocating stack is c_alloc_churn's, with
#     churn_hot at that line in it;
#   - the share of sampled allocations with Python frames (report.json
#     memory.alloc.python): >= 95% of the samples (the program's own
#     allocations are > 99% of its bytes, all from Python; the interpreter's
#     start-up and exit, without Python frames, are the rest), and the
#     counts agree with each other (with Python <= walked <= walks, nothing
#     malformed);
#   - alloc.pb.gz (go tool pprof -raw): the function churn_hot with file
#     py_alloc.py and the line of the call, in samples holding >= 98% of
#     c_alloc_churn's bytes; inuse.pb.gz names keep_some.
# --python native: no Python frames in allocation stacks, no python section.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

PYA="$(cd "$(dirname "$0")" && pwd)/py_alloc.py"
LIB="$EP_TARGETS_DIR/py_ctypes_lib"
ROUNDS=24
GO=$(command -v go || true)
[ -n "$GO" ] || ep_skip_part "go not found: the pprof checks need go tool pprof (golang-go)"

# run PYTHON LABEL [PROF_ARGS...]
run()
{
	local py=$1 label=$2 out="$EP_WORK/$2"
	shift 2
	ep_prof_run 120 -F 99 --no-sched --probes none --no-gpu --alloc --alloc-rate 128K "$@" -o "$out" \
		-- "$py" "$PYA" "$LIB" "$ROUNDS" "$out.own"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$label: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	grep -q "^churn_line " "$out.own" 2>/dev/null || ep_fail "$label: the target did not finish: $(tail -n 3 "$PROF_OUT")"
	if [ -n "$GO" ]; then
		for f in alloc inuse; do
			"$GO" tool pprof -symbolize=none -raw "$out/$f.pb.gz" >"$out.$f.raw" 2>"$EP_WORK/pprof.err" ||
				ep_fail "$label: go tool pprof -raw rejected $f.pb.gz: $(tail -n 3 "$EP_WORK/pprof.err")"
		done
	fi
}

check_python()
{
	local label=$1 out="$EP_WORK/$1"
	OWN=$out.own RAWP=$out PYA=$PYA LABEL=$label ep_py "$out" <<'PY' || exit 1
import re
own = dict(l.split() for l in open(os.environ["OWN"]))
own = {k: int(v) for k, v in own.items()}
label, pya = os.environ["LABEL"], os.environ["PYA"]
def pyf(fr, fn, line=None):
    return fr.startswith(fn + " (py_alloc.py:") and (line is None or fr == "%s (py_alloc.py:%d)" % (fn, line))
def under(fr, fn, line, cfn):
    """cfn below fn at line, with main and <module> above fn."""
    if cfn not in fr:
        return False
    i = next((k for k, f in enumerate(fr) if pyf(f, fn, line)), -1)
    names = [f.split(" (")[0] for f in fr[:max(i, 0)] if "(py_alloc.py:" in f]
    return i >= 0 and fr.index(cfn) > i and names[-2:] == ["<module>", "main"]
def near(x, want, tol, what):
    check(abs(x - want) <= tol * want, "%s: %s %.2f MiB, truth %.2f MiB (tolerance %d%%)"
          % (label, what, x / 2**20, want / 2**20, tol * 100))
AF = load_folded("alloc.folded")
UF = load_folded("inuse.folded")
churn = sum(c for fr, c in AF if "c_alloc_churn" in fr)
churn_py = sum(c for fr, c in AF if under(fr, "churn_hot", own["churn_line"], "c_alloc_churn"))
keep = sum(c for fr, c in UF if "c_alloc_keep" in fr)
keep_py = sum(c for fr, c in UF if under(fr, "keep_some", own["keep_line"], "c_alloc_keep"))
anypy = sum(c for fr, c in AF if any(".py:" in f for f in fr))
info("%s: c_alloc_churn %.1f MiB, %.1f%% under churn_hot (py_alloc.py:%d); c_alloc_keep in use %.2f MiB, "
     "%.1f%% under keep_some (py_alloc.py:%d); %.1f%% of all allocated bytes with Python frames"
     % (label, churn / 2**20, 100.0 * churn_py / max(churn, 1), own["churn_line"], keep / 2**20,
        100.0 * keep_py / max(keep, 1), own["keep_line"], 100.0 * anypy / max(sum(c for fr, c in AF), 1)))
near(churn, own["churn"], 0.15, "c_alloc_churn allocated")
near(keep, own["keep"], 0.25, "c_alloc_keep in use")
check(churn_py >= 0.98 * churn, "%s: only %d of %d bytes of c_alloc_churn under churn_hot at line %d: %r"
      % (label, churn_py, churn, own["churn_line"], [fr for fr, c in AF if "c_alloc_churn" in fr][:2]))
# In use are ~21 sampled blocks, one ~4.3% of the bytes: a frame lost in ~1% of
# samples (docs/alloc.md, "Known defect"; churn above counts thousands)
# takes one of them now and then, so up to two may miss it here.
check(keep_py >= 0.90 * keep, "%s: only %d of %d bytes of c_alloc_keep in use under keep_some at line %d"
      % (label, keep_py, keep, own["keep_line"]))
A = R["memory"]["alloc"]
P = A.get("python") or {}
n = A["samples"]
share = P.get("samples_with_python", 0) / max(n, 1)
info("%s: %d of %d allocation samples (%.1f%%) with Python frames, %r" % (label, P.get("samples_with_python", 0), n, 100 * share, P))
check(n >= 1000, "%s: only %d samples" % (label, n))
T = A["top_alloc"][0] if A["top_alloc"] else {}
check(T.get("function") == "c_alloc_churn" and "churn_hot (py_alloc.py:%d)" % own["churn_line"] in T.get("stack", []),
      "%s: report.json top_alloc[0] %r" % (label, T))
check(share >= 0.95, "%s: %.1f%% of the allocation samples with Python frames, want >= 95%%" % (label, 100 * share))
check(P.get("walks_bad") == 0 and P["samples_with_python"] <= P["samples_walked"] <= P["walks"] and P["frames"] >= P["samples_with_python"],
      "%s: python counts %r" % (label, P))
if os.path.exists(os.environ["RAWP"] + ".alloc.raw"):
    def locs_samples(path):
        locs, smp, sec = {}, [], ""
        for line in open(path):
            if line.startswith("Samples:"):
                sec = "types"; continue
            if line.startswith("Locations"):
                sec = "locs"; continue
            if line.startswith("Mappings"):
                sec = "maps"; continue
            if sec == "types":
                sec = "samples"
            elif sec == "samples":
                m = re.match(r"\s+([-\d ]+): ([\d ]*)$", line)
                if m:
                    smp.append(([int(x) for x in m.group(1).split()], [int(x) for x in m.group(2).split()]))
            elif sec == "locs":
                m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=(\d+) (\S+) (\S*):(-?\d+) s=(-?\d+)", line)
                if m:
                    locs[int(m.group(1))] = (m.group(3), m.group(4), int(m.group(5)))
        return locs, smp
    locs, smp = locs_samples(os.environ["RAWP"] + ".alloc.raw")
    hot = {i for i, l in locs.items() if l == ("churn_hot", pya, own["churn_line"])}
    cfn = {i for i, l in locs.items() if l[0] == "c_alloc_churn"}
    tot = sum(v[-1] for v, lo in smp if set(lo) & cfn)
    got = sum(v[-1] for v, lo in smp if set(lo) & cfn and set(lo) & hot)
    check(hot and got >= 0.98 * tot > 0, "%s: alloc.pb.gz: churn_hot %s:%d in %d of %d bytes of c_alloc_churn; functions %r"
          % (label, pya, own["churn_line"], got, tot, sorted({l[0] for l in locs.values()})[:30]))
    locs, smp = locs_samples(os.environ["RAWP"] + ".inuse.raw")
    check(any(l[0] == "keep_some" and l[1] == pya and l[2] == own["keep_line"] for l in locs.values()),
          "%s: inuse.pb.gz has no keep_some at %s:%d" % (label, pya, own["keep_line"]))
PY
}

found=0
for v in 3.11 3.12 3.13; do
	ep_pyenv "$v" || continue
	found=$((found + 1))
	run "$EP_PY" "py$v"
	check_python "py$v"
	if [ "$v" = 3.12 ]; then
		run "$EP_PY" native --python native
		ep_py "$EP_WORK/native" <<'PY' || exit 1
AF = load_folded("alloc.folded")
n = sum(c for fr, c in AF if any(".py:" in f for f in fr))
ev = sum(c for fr, c in AF if "c_alloc_churn" in fr and "_PyEval_EvalFrameDefault" in fr)
check(n == 0, "--python native: %d bytes under Python frames" % n)
check(ev > 0, "--python native: c_alloc_churn not under _PyEval_EvalFrameDefault")
check("python" not in R["memory"]["alloc"], "--python native: memory.alloc.python %r" % R["memory"]["alloc"].get("python"))
PY
	fi
done
ep_log "ok ($found pyenv interpreters)"
