#!/bin/bash
# --alloc in launch mode samples inside the command (docs/alloc.md, "Two
# mechanisms"): tests/targets/alloc_cycles (per cycle 256 KiB leaked by
# leaky_put in 16 KiB blocks, ~4,000 malloc/free in churn, an 8 MiB
# transient) run as `ebpf-prof --alloc --cycle alloc_cycles:cycle_step --`,
# with a seeded draw (EBPF_PROF_ALLOC_SEED) at --alloc-rate 64K:
#   - the mechanism: libebpf-prof-alloc.so preloaded, only its probed
#     function attached, no allocator uprobes;
#   - every call counted in the process (the target's own, plus at most a
#     few of the C library's), while the traps (the probed function's hits)
#     are only the samples, the frees of sampled blocks and a few counts:
#     under 5% of the calls;
#   - leaky_put's in-use bytes and its leak finding's growth within 15% of
#     the truth; the 8 MiB transient in alloc.folded once at its size (the
#     allocator's own mmap of it left out by the library's flag), not in
#     inuse.folded; no frame of the library in the stacks;
# The fallbacks: --alloc-mode uprobe (the allocator's uprobes, the same
# estimates); a setuid copy of the target (one line says why, uprobes); a
# tree where one process drops LD_PRELOAD (that process falls back, said
# once, the others stay sampled inside: "mixed"). jemalloc and tcmalloc
# preloaded after the library: it forwards to them, the same estimates.
# The cost (the target's own loop time) is measured by
# tools/bench/alloc_cost.sh, not here.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

BIN=$EP_TARGETS_DIR/alloc_cycles
[ -x "$BIN" ] || ep_fail "$BIN not built"
LIB=$(dirname "$EP_BIN")/libebpf-prof-alloc.so
[ -e "$LIB" ] || ep_fail "$LIB not built"

# run NAME PROF_ARGS... -- COMMAND...: ebpf-prof --alloc in launch mode
run()
{
	local name=$1
	shift
	ep_prof_run 240 -v -o "$EP_WORK/$name" --no-gpu --alloc "$@"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$name: ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
	grep -qx done "$PROF_OUT" || ep_fail "$name: target did not finish"
	cp "$PROF_OUT" "$EP_WORK/$name.out"
	cp "$PROF_ERR" "$EP_WORK/$name.err"
}

# The checks every run shares: NCYCLES cycles of the target, RUNS_OF runs
# of it in the command (the target's figures are summed), TOL the
# tolerance of the estimates, SLACK the calls allowed beyond the target's.
check_common()
{
	local name=$1
	OUT=$EP_WORK/$name.out ERR=$EP_WORK/$name.err LIB=$LIB ep_py "$EP_WORK/$name" <<'PY'
own = {}
for line in open(os.environ["OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit() and f[0] in ("calls", "frees", "asked", "leaked", "loop_ns"):
        own[f[0]] = own.get(f[0], 0) + int(f[1])
ncyc = int(os.environ["NCYCLES"])
runs = int(os.environ.get("RUNS_OF", "1"))
tol = float(os.environ["TOL"])
A = R["memory"]["alloc"]
KiB, MiB = 1024, 1 << 20
def near(x, want, what):
    check(abs(x - want) <= tol * want, "%s %.1f KiB, truth %.1f KiB (tolerance %d%%)" % (what, x / KiB, want / KiB, tol * 100))
check(A["dropped"]["total"] == 0, "dropped %r" % A["dropped"])
check(A["stack_errors"] == 0, "stack errors %d" % A["stack_errors"])
# Every call is counted (where it is sampled): the target's, and a few of
# the C library's own (stdio's buffer, start-up), and the shell's.
slack = int(os.environ.get("SLACK", "64" if runs == 1 else "1024"))
check(own["calls"] <= A["calls"] <= own["calls"] + slack, "calls %d, the target's %d" % (A["calls"], own["calls"]))
check(own["asked"] <= A["bytes_requested"] <= own["asked"] + 256 * KiB, "bytes asked %d, the target's %d" % (A["bytes_requested"], own["asked"]))
UF = load_folded("inuse.folded")
AF = load_folded("alloc.folded")
leak = sum(c for fr, c in UF if fr[-1] == "leaky_put")
near(leak, own["leaked"], "leaky_put in inuse.folded")
check(all(fr[-1] == "leaky_put" or c < 0.05 * own["leaked"] for fr, c in UF), "other live stacks: %r" % [(fr[-1], c) for fr, c in UF])
tr = sum(c for fr, c in AF if fr[-1] == "transient")
want = runs * ncyc * 8 * MiB
check(abs(tr - want) <= 0.001 * want, "transient in alloc.folded %d, want %d" % (tr, want))
check(not any("transient" in fr for fr, c in UF), "transient in inuse.folded")
bad = [fr for fr, c in AF if any(x in ("ebpf_prof_alloc_event", "malloc", "calloc", "realloc", "on_alloc") for x in fr)]
check(not bad, "allocator or library frames in the stacks: %r" % bad[:2])
L = [l for l in A["leaks"] if l["function"] == "leaky_put"]
check(len(L) == 1, "leaks %r" % [(l["function"], l["bytes_per_cycle"]) for l in A["leaks"]])
if L:
    near(L[0]["bytes_per_cycle"], own["leaked"] / ncyc / runs, "leak per cycle")
PY
}

# 1. Sampled inside the process.
EBPF_PROF_ALLOC_SEED=7 run preload --alloc-rate 64K --cycle alloc_cycles:cycle_step -- "$BIN" 200 0
NCYCLES=200 TOL=0.15 check_common preload || ep_fail "preload run"
OUT=$EP_WORK/preload.out LIB=$LIB ep_py "$EP_WORK/preload" <<'PY'
A = R["memory"]["alloc"]
own = {}
for line in open(os.environ["OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own.setdefault(f[0], int(f[1]))
check(A["mechanism"] == "preload", "mechanism %r" % A["mechanism"])
check(A["processes_preload"] == 1 and A["processes_uprobe"] == 0, "processes %d preload, %d uprobe" % (A["processes_preload"], A["processes_uprobe"]))
check(A["probed_files"] == [os.path.realpath(os.environ["LIB"])], "probed files %r" % A["probed_files"])
check(A["probes"] == 1, "probes %d: the library's function only" % A["probes"])
# Frees are counted in the process too: the target's, plus a few.
check(own["frees"] <= A["frees"] <= own["frees"] + 64, "frees %d, the target's %d" % (A["frees"], own["frees"]))
# The traps: one per sample, per free of a sampled block, and a few
# counts (start-up, exit); far below the calls.
traps, s, fs = A["preload_events"], A["samples"], A["frees_of_samples"]
check(s + fs <= traps <= s + fs + 8, "traps %d, samples %d, frees of samples %d" % (traps, s, fs))
check(traps < 0.05 * (A["calls"] + A["frees"]), "traps %d for %d calls and %d frees" % (traps, A["calls"], A["frees"]))
check(s > 1000, "samples %d" % s)
check(A["cost"]["probe_hits"] >= traps, "probe hits %r" % A["cost"])
check(A["mmaps_in_allocator"] >= 1, "the allocator's mmap of the 8 MiB block not left out: %d" % A["mmaps_in_allocator"])
fl = [f for f in R["findings"] if f["rule"] == "alloc_leak"]
check(len(fl) == 1 and "leaky_put" in fl[0]["title"], "alloc_leak finding %r" % fl)
PY
[ $? -eq 0 ] || ep_fail "preload run: mechanism"
grep -q "alloc: sampling inside the command" "$EP_WORK/preload.err" || ep_fail "no word of the preloaded library"
grep -q "probed in .*libc" "$EP_WORK/preload.err" && ep_fail "allocator uprobes attached beside the library"

# 2. --alloc-mode uprobe: today's uprobes, the same estimates.
run uprobe --alloc-mode uprobe --alloc-rate 16K --cycle alloc_cycles:cycle_step -- "$BIN" 20 0
NCYCLES=20 TOL=0.15 check_common uprobe || ep_fail "uprobe run"
ep_py "$EP_WORK/uprobe" <<'PY'
A = R["memory"]["alloc"]
check(A["mechanism"] == "uprobe" and A["processes_preload"] == 0, "mechanism %r" % A["mechanism"])
check(any("libc" in p for p in A["probed_files"]), "probed files %r" % A["probed_files"])
check(A["preload_events"] == 0, "preload events %d" % A["preload_events"])
PY
[ $? -eq 0 ] || ep_fail "uprobe run: mechanism"
grep -q "sampling inside the command" "$EP_WORK/uprobe.err" && ep_fail "uprobe run: the library was preloaded"

# 3. A setuid copy: LD_PRELOAD would not reach it; said in one line.
cp "$BIN" "$EP_WORK/alloc_cycles"
chmod 4755 "$EP_WORK/alloc_cycles"
run setuid --alloc-rate 16K --cycle alloc_cycles:cycle_step -- "$EP_WORK/alloc_cycles" 20 0
NCYCLES=20 TOL=0.15 check_common setuid || ep_fail "setuid run"
[ "$(grep -c "is setuid, LD_PRELOAD does not reach it" "$EP_WORK/setuid.err")" -eq 1 ] ||
	ep_fail "setuid: not one line saying why: $(grep -i preload "$EP_WORK/setuid.err")"
ep_py "$EP_WORK/setuid" <<'PY'
A = R["memory"]["alloc"]
check(A["mechanism"] == "uprobe", "mechanism %r" % A["mechanism"])
PY
[ $? -eq 0 ] || ep_fail "setuid run: mechanism"

# 4. A tree: sh runs the target twice, the second time without LD_PRELOAD.
# The children inherit the library; the one without it falls back.
run tree --alloc-rate 16K --cycle alloc_cycles:cycle_step -- \
	sh -c "$BIN 20 0; env -u LD_PRELOAD $BIN 20 0"
RUNS_OF=2 NCYCLES=20 TOL=0.15 check_common tree || ep_fail "tree run"
ep_py "$EP_WORK/tree" <<'PY'
A = R["memory"]["alloc"]
check(A["mechanism"] == "mixed", "mechanism %r" % A["mechanism"])
check(A["processes_preload"] >= 2 and A["processes_uprobe"] == 1, "processes %d preload, %d uprobe" % (A["processes_preload"], A["processes_uprobe"]))
PY
[ $? -eq 0 ] || ep_fail "tree run: mechanism"
[ "$(grep -c "runs without libebpf-prof-alloc.so" "$EP_WORK/tree.err")" -eq 1 ] ||
	ep_fail "tree: not one line for the fallback: $(grep -i "without" "$EP_WORK/tree.err")"

# 5. jemalloc and tcmalloc preloaded after the library (appended to the
# LD_PRELOAD the command was given): it forwards to them.
for lib in libjemalloc.so.2 libtcmalloc_minimal.so.4; do
	path=/usr/lib/$(gcc -print-multiarch)/$lib
	[ -e "$path" ] || ep_fail "$path missing (tools/install-deps.sh installs it)"
	EBPF_PROF_ALLOC_SEED=7 run "${lib%%.*}" --alloc-rate 16K --cycle alloc_cycles:cycle_step -- \
		sh -c "LD_PRELOAD=\"\$LD_PRELOAD $path\" exec $BIN 20 0"
	SLACK=1024 NCYCLES=20 TOL=0.15 check_common "${lib%%.*}" || ep_fail "$lib run"
	ep_py "$EP_WORK/${lib%%.*}" <<'PY'
A = R["memory"]["alloc"]
check(A["mechanism"] == "preload", "mechanism %r" % A["mechanism"])
PY
	[ $? -eq 0 ] || ep_fail "$lib run: mechanism"
done
echo "PASS: test_alloc_preload"
