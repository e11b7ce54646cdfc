#!/bin/bash
# --alloc against tests/targets/alloc_leak, which prints what it asked the
# allocator for: 10 cycles of 2,000 malloc/free pairs (16..4096 bytes),
# 2 MiB leaked per cycle in 4 KiB blocks by leak_some, and one transient
# 8 MiB block in cycle 1 (transient_big).
#   - estimated bytes allocated and still live within 20% of the truth
#     (at --alloc-rate 32K: ~1,900 samples, of which ~640 leaked blocks, so
#     one standard error is 2.5% and 4% of them);
#   - the 8 MiB block in alloc.folded at its size, absent from inuse.folded;
#   - the leak finding names leak_some, its slope within 20% of 2 MiB per
#     cycle, and no other stack is reported leaking;
#   - per cycle: 10 rows, bytes kept summing to the leak within 20%;
#   - pprof and speedscope outputs in bytes.
# Without uprobe sessions (kernels before 6.13, simulated): the same
# estimates with a return probe on every call. Without bpf_loop either
# (5.15, simulated): the programs without the in-kernel walk load (check's
# list), stacks by frame pointers through main, the same estimates. jemalloc and tcmalloc
# preloaded in place of glibc's malloc: the same.
# Anonymous mappings made by the program with mmap (6 cycles: 2 MiB per
# cycle left mapped by map_leak, half of it trimmed to a 64 KiB boundary by
# unmapping head and tail, and a 4 MiB map_transient unmapped at once):
#   - every mapping counted (mmaps, mmap_bytes exact), glibc's own mmap of
#     the 8 MiB malloc block left out (mmaps_in_allocator) and that block in
#     alloc.folded once, at its size: no double counting;
#   - map_leak in inuse.folded within 20% of what is still mapped (the
#     trimmed tails stay counted: 3% here), map_transient in alloc.folded
#     only; leaks: leak_some and map_leak.
# Bad input: 200,000 live blocks sampled at --alloc-rate 1 with a tracking
# table of 1,024: the run ends, the table stays bounded, the rest is counted
# in dropped.
# The probes' cost in attach mode (--pid): probe hits x the trap calibrated
# this run, over the target's CPU, in memory.alloc.cost, the summary and
# stderr; above 3% the alloc_probe_cost finding, suggesting launch mode, and
# no generic probe_overhead for the same cost (the main run: ~2 us per call
# against ~1 us of work per allocation, far above 3%).
# Stated intervals (95%, sampling and fit): at the default rate, 30 cycles
# of 256 KiB leaked per cycle (~15 samples of it), the leak's interval at
# twice its width holds 256 KiB, and the live bytes' holds 30 x 256 KiB.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

# run NAME TARGET_ARGS... -- PROF_ARGS...
run()
{
	local name=$1 targs=()
	shift
	while [ "$1" != -- ]; do
		targs+=("$1")
		shift
	done
	shift
	LD_PRELOAD=${PRELOAD:-} ep_start_target alloc_leak "${targs[@]}"
	ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/$name" --no-gpu --alloc "$@"
	ep_wait_line "$PROF_ERR" "alloc: pid $TARGET_PID: .* probed in .*${PRELOAD:-libc}" 30 "$PROF_PID" ||
		ep_fail "$name: allocator not probed: $(tail -n 3 "$PROF_ERR")"
	ep_wait_line "$PROF_ERR" "cycles: pid $TARGET_PID: cycle marker" 30 "$PROF_PID" ||
		ep_fail "$name: cycle marker not attached: $(tail -n 3 "$PROF_ERR")"
	kill -USR1 "$TARGET_PID"
	ep_wait_exit "$PROF_PID" 120 || ep_fail "$name: ebpf-prof did not stop after the target exited"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "$name: ebpf-prof exited $EP_EXIT_RC: $(tail -n 5 "$PROF_ERR")"
	grep -qx done "$TARGET_OUT" || ep_fail "$name: target did not finish"
}

run main 10 2048 2000 -- --alloc-rate 32K
TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/main" <<'PY'
import gzip
own = {}
for line in open(os.environ["TARGET_OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own[f[0]] = int(f[1])
MiB = 1 << 20
A = R["memory"]["alloc"]
E = A["estimated"]
def near(x, want, tol, what):
    check(abs(x - want) <= tol * want, "%s %.2f MiB, truth %.2f MiB (tolerance %d%%)" % (what, x / MiB, want / MiB, tol * 100))
check(A["rate_bytes"] == 32768, "rate %r" % A["rate_bytes"])
# The exact counter sees every call: the target's own, plus stdio's buffer.
check(own["asked"] <= A["bytes_requested"] <= own["asked"] + MiB, "bytes asked %d, target's %d" % (A["bytes_requested"], own["asked"]))
near(E["alloc_bytes"], own["asked"], 0.2, "estimated allocated")
near(E["inuse_bytes"], own["leaked"], 0.2, "estimated live at the end")
check(A["dropped"]["total"] == 0, "dropped %r" % A["dropped"])
check(A["stack_errors"] == 0, "stack errors %d" % A["stack_errors"])
check(A["samples"] > 1000, "only %d samples" % A["samples"])

AF = load_folded("alloc.folded")
UF = load_folded("inuse.folded")
big = [c for fr, c in AF if fr[-1] == "transient_big"]
check(len(big) == 1 and abs(big[0] - own["big"]) <= own["big"] * 0.001, "transient_big in alloc.folded: %r, want %d" % (big, own["big"]))
check(not any("transient_big" in fr for fr, c in UF), "transient_big in inuse.folded")
leak_u = sum(c for fr, c in UF if fr[-1] == "leak_some")
near(leak_u, own["leaked"], 0.2, "leak_some in inuse.folded")
check(all(fr[-1] == "leak_some" or c < 0.02 * own["leaked"] for fr, c in UF), "other live stacks: %r" % [(fr[-1], c) for fr, c in UF])
churn = sum(c for fr, c in AF if fr[-1] in ("churn_alloc", "churn"))
check(churn > 0 and has_seq(next(fr for fr, c in AF if fr[-1] == "churn_alloc"), ["main", "run_cycle", "churn", "churn_alloc"]), "churn stacks %r" % [fr for fr, c in AF][:3])

L = A["leaks"]
check(len(L) == 1, "leaks: %r" % [(l["function"], l["bytes_per_cycle"]) for l in L])
if L:
    l = L[0]
    check(l["function"] == "leak_some", "leaking function %r" % l["function"])
    near(l["bytes_per_cycle"], own["leaked"] / 10, 0.2, "leak per cycle")
    check(0 < l["bytes_per_cycle_se"] < l["bytes_per_cycle"] / 3, "slope spread %r" % l["bytes_per_cycle_se"])
    check(l["first_cycle"] == 0 and l["last_cycle"] == 9, "leak cycles %d..%d" % (l["first_cycle"], l["last_cycle"]))
    check(len(l["live_by_cycle"]) == 10, "live_by_cycle %r" % l["live_by_cycle"])
fl = [f for f in R["findings"] if f["rule"] == "alloc_leak"]
check(len(fl) == 1 and "leak_some" in fl[0]["title"], "alloc_leak finding %r" % fl)

C = A["cycles"]
check([c["index"] for c in C] == list(range(10)), "cycles %r" % [c["index"] for c in C])
near(sum(c["kept_bytes"] for c in C), own["leaked"], 0.2, "kept bytes over the cycles")
check(C[1]["alloc_bytes"] > own["big"], "cycle 1 allocated %d, under the 8 MiB block" % C[1]["alloc_bytes"])
check(all(C[i]["live_at_end_bytes"] < C[i + 1]["live_at_end_bytes"] for i in range(9)), "live at cycle ends %r" % [c["live_at_end_bytes"] for c in C])

for name in ("alloc.pb.gz", "inuse.pb.gz"):
    raw = gzip.open(os.path.join(D, name)).read()
    check(b"alloc_space" in raw if name.startswith("alloc") else b"inuse_space" in raw, "%s sample type" % name)
    check(b"bytes" in raw and b"leak_some" in raw, "%s content" % name)
SS = load_json("alloc.speedscope.json")
check(SS["profiles"] and all(p["unit"] == "bytes" for p in SS["profiles"]), "speedscope units")
# Kernel 6.13+: one session program, a return probe only for sampled calls
# (and reallocs of sampled blocks); the probe hits are the programs' runs.
hits, base = A["cost"]["probe_hits"], A["calls"] + A["frees"]
check(A["return_probes"] == "sampled", "return probes %r" % A["return_probes"])
check(base <= hits <= base + 2 * A["samples"], "probe hits %d, calls + frees %d, samples %d" % (hits, base, A["samples"]))
check(A["cost"]["per_call_ns"] > 0, "cost %r" % A["cost"])
# The leak's stated interval, at twice its width, holds the truth.
if L:
    l = L[0]
    half = l["bytes_per_cycle_high"] - l["bytes_per_cycle"]
    check(half > 0 and abs(l["bytes_per_cycle_low"] - (l["bytes_per_cycle"] - half)) <= 1, "interval %r" % l)
    check(abs(l["bytes_per_cycle"] - own["leaked"] / 10) <= 2 * half, "leak %d, 95%% half-width %d, truth %d" % (l["bytes_per_cycle"], half, own["leaked"] / 10))
    check(abs(l["bytes_per_cycle_se"] - (l["bytes_per_cycle_sampling_se"] ** 2 + l["bytes_per_cycle_fit_se"] ** 2) ** 0.5) <= 2, "se parts %r" % l)
check(abs(E["inuse_bytes"] - own["leaked"]) <= 2 * 1.96 * E["inuse_bytes_se"], "live %d +/- %d, leaked %d" % (E["inuse_bytes"], E["inuse_bytes_se"], own["leaked"]))
# Attach mode: the cost from this run's calibrated trap, a finding above 3%.
C = A["cost"]
check(C["mode"] == "attach", "mode %r" % C["mode"])
check(C["trap_ns"] and C["trap_ns"] > 0 and C["target_cpu_ns"] > 0, "cost %r" % C)
want = C["probe_hits"] * C["trap_ns"] + C["bpf_ns"]
check(abs(C["estimated_ns"] - want) <= 0.001 * want + 1, "estimated %d, hits x trap + BPF %d" % (C["estimated_ns"], want))
check(abs(C["target_cpu_share"] - C["estimated_ns"] / C["target_cpu_ns"]) < 1e-6, "share %r" % C)
check(C["warn_share"] == 0.03, "threshold %r" % C["warn_share"])
check(C["target_cpu_share"] > C["warn_share"], "2,000 pairs per cycle under the threshold: %r" % C)
F = {f["rule"]: f for f in R["findings"]}
pc = F.get("alloc_probe_cost")
if check(pc is not None, "no alloc_probe_cost finding: %r" % sorted(F)):
    check(abs(pc["value"] - C["target_cpu_share"]) < 1e-9, "finding value %r" % pc["value"])
    check("launch mode" in pc["recommendation"] and "ebpf-prof --alloc -- COMMAND" in pc["recommendation"], "recommendation %r" % pc["recommendation"])
    check(str(C["probe_hits"]) in pc["evidence"], "evidence %r" % pc["evidence"])
ov = R["overhead"].get("probe_share") or 0
check("probe_overhead" not in F or ov - C["target_cpu_share"] > 0.02, "probe_overhead for the allocator probes' cost: %r" % F.get("probe_overhead"))
PY
[ $? -eq 0 ] || ep_fail "main run"
grep -q "^Allocations (--alloc" "$PROF_OUT" || ep_fail "no allocation lines in the summary"
# report.html: the leak table names the function, rendered in Chromium.
if ep_need_cmd chromium chromium; then
	timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom \
		"file://$EP_WORK/main/report.html" 2>/dev/null >"$EP_WORK/main.dom" || true
	python3 - "$EP_WORK/main.dom" <<'PY' || ep_fail "report.html: no allocation section with the leak"
import re, sys
d = open(sys.argv[1]).read()
i = d.find('id="alloc-section"')
sec = re.sub(r"<[^>]+>", " ", d[i:i + 20000]) if i >= 0 else ""
sys.exit(0 if 'data-rendered="yes"' in d and "leak_some" in sec and "KiB" in sec and "transient_big" in sec else 1)
PY
fi
grep -q "LEAK leak_some" "$PROF_OUT" || ep_fail "no leak line in the summary"
grep -Eq "^  cost: [0-9]+ probe hits x [0-9]+ ns trap \+ BPF = .* of the targets' CPU" "$PROF_OUT" ||
	ep_fail "no cost line in the summary: $(grep cost: "$PROF_OUT")"
grep -q "WARNING: --alloc costs the targets more than 3%" "$PROF_OUT" || ep_fail "no cost warning in the summary"
grep -q "alloc_probe_cost\|Allocation probes take" "$PROF_OUT" || ep_fail "the cost finding is not in the summary's findings"
grep -Eq "warning: alloc: the allocator probes cost [0-9]+ probe hits" "$PROF_ERR" || ep_fail "no cost warning on stderr"

# At the default rate (512 KiB) a 256 KiB/cycle leak gets ~15 samples in
# 30 cycles: a wide interval, that must hold the truth at twice its width.
run interval 30 256 1000 --
TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/interval" <<'PY'
own = {}
for line in open(os.environ["TARGET_OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own[f[0]] = int(f[1])
A = R["memory"]["alloc"]
check(A["rate_bytes"] == 512 * 1024, "rate %r" % A["rate_bytes"])
L = [l for l in A["leaks"] if l["function"] == "leak_some"]
if check(len(L) == 1, "leaks %r" % [l["function"] for l in A["leaks"]]):
    l = L[0]
    truth = own["leaked"] / 30
    half = l["bytes_per_cycle_high"] - l["bytes_per_cycle"]
    info("leak %.0f KiB/cycle, 95%% %.0f..%.0f KiB (sampling se %.0f, fit se %.0f), truth %.0f KiB" % (l["bytes_per_cycle"] / 1024, l["bytes_per_cycle_low"] / 1024, l["bytes_per_cycle_high"] / 1024, l["bytes_per_cycle_sampling_se"] / 1024, l["bytes_per_cycle_fit_se"] / 1024, truth / 1024))
    check(abs(l["bytes_per_cycle"] - truth) <= 2 * half, "leak %d +/- %d, truth %d" % (l["bytes_per_cycle"], half, truth))
    # The sampling part dominates here: the fit's residuals alone were
    # the bug (an interval a few KiB wide).
    check(l["bytes_per_cycle_sampling_se"] > l["bytes_per_cycle_fit_se"], "se parts %r" % l)
    check(abs(l["live_bytes"] - own["leaked"]) <= 2 * 1.96 * l["live_bytes_se"], "live %d +/- %d, leaked %d" % (l["live_bytes"], l["live_bytes_se"], own["leaked"]))
fl = [f for f in R["findings"] if f["rule"] == "alloc_leak"]
check(fl and "(95%: " in fl[0]["title"], "leak finding %r" % fl)
PY
[ $? -eq 0 ] || ep_fail "interval run"

run mmap 6 512 500 0 2048 -- --alloc-rate 32K
TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/mmap" <<'PY'
own = {}
for line in open(os.environ["TARGET_OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own[f[0]] = int(f[1])
MiB = 1 << 20
A = R["memory"]["alloc"]
E = A["estimated"]
def near(x, want, tol, what):
    check(abs(x - want) <= tol * want, "%s %.2f MiB, truth %.2f MiB (tolerance %d%%)" % (what, x / MiB, want / MiB, tol * 100))
# Per cycle: two 1 MiB mappings (one made 64 KiB larger) and one of 4 MiB.
check(A["mmaps"] == 3 * 6, "mmaps %d, want 18" % A["mmaps"])
check(A["mmap_bytes"] == own["mapped"], "mmap bytes %d, target mapped %d" % (A["mmap_bytes"], own["mapped"]))
check(A["mmaps_in_allocator"] >= 1, "glibc's mmap of the 8 MiB block not seen inside malloc: %d" % A["mmaps_in_allocator"])
check(A["munmaps_of_head"] <= 3, "head unmaps %d" % A["munmaps_of_head"])
near(E["alloc_bytes"], own["asked"] + own["mapped"], 0.2, "estimated allocated (malloc + mmap)")
near(E["inuse_bytes"], own["leaked"] + own["map_leaked"], 0.2, "estimated live (malloc + mmap)")
check(A["dropped"]["total"] == 0, "dropped %r" % A["dropped"])
AF = load_folded("alloc.folded")
UF = load_folded("inuse.folded")
big = [c for fr, c in AF if fr[-1] == "transient_big"]
check(len(big) == 1 and abs(big[0] - own["big"]) <= own["big"] * 0.001, "transient_big in alloc.folded: %r, want %d once" % (big, own["big"]))
mt = [(fr, c) for fr, c in AF if fr[-1] == "map_transient"]
check(len(mt) == 1 and abs(mt[0][1] - 6 * own["map_big"]) <= 0.2 * 6 * own["map_big"], "map_transient in alloc.folded: %r" % [c for fr, c in mt])
check(mt and has_seq(mt[0][0], ["main", "run_cycle", "map_transient"]), "map_transient stack %r" % (mt[0][0] if mt else None))
check(not any("map_transient" in fr or "transient_big" in fr for fr, c in UF), "a transient block in inuse.folded")
near(sum(c for fr, c in UF if fr[-1] == "map_leak"), own["map_leaked"], 0.2, "map_leak in inuse.folded")
check(not any(fr[-1] in ("mmap", "mmap64", "__mmap64") for fr, c in AF), "the syscall wrapper as a leaf")
check(sorted(l["function"] for l in A["leaks"]) == ["leak_some", "map_leak"], "leaks %r" % [l["function"] for l in A["leaks"]])
for l in A["leaks"]:
    if l["function"] == "map_leak":
        near(l["bytes_per_cycle"], own["map_leaked"] / 6, 0.2, "map_leak per cycle")
PY
[ $? -eq 0 ] || ep_fail "mmap run"

# Kernels before 6.13 (no uprobe sessions, simulated here): an entry and a
# return probe on every call, the same estimates.
EBPF_PROF_FAULT_BPF=alloc_session run nosession 4 2048 500 -- --alloc-rate 32K
TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/nosession" <<'PY'
own = {}
for line in open(os.environ["TARGET_OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own[f[0]] = int(f[1])
A = R["memory"]["alloc"]
check(A["return_probes"] == "every_call", "return probes %r" % A["return_probes"])
check(A["cost"]["probe_hits"] >= 2 * A["calls"] + A["frees"], "probe hits %d, calls %d, frees %d" % (A["cost"]["probe_hits"], A["calls"], A["frees"]))
check(abs(A["estimated"]["inuse_bytes"] - own["leaked"]) <= 0.2 * own["leaked"], "live %d, leaked %d" % (A["estimated"]["inuse_bytes"], own["leaked"]))
check([l["function"] for l in A["leaks"]] == ["leak_some"], "leaks %r" % [l["function"] for l in A["leaks"]])
PY
[ $? -eq 0 ] || ep_fail "run without sessions"
grep -q "no uprobe sessions here" "$PROF_ERR" || ep_fail "no word of the fallback in the log"

# Kernels without bpf_loop (5.13-5.16: Ubuntu 22.04's 5.15, JetPack 6;
# simulated here, uprobe sessions hidden too): the return probe and mmap's
# exit built without the in-kernel stack walk load in place of the others
# (whose walk, a global function, such a kernel verifies even when unused,
# refusing the object); stacks by frame pointers, the same estimates.
EBPF_PROF_FAULT_KFEAT=bpf_loop EBPF_PROF_FAULT_BPF=alloc_session run noloop 4 2048 500 -- --alloc-rate 32K
TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/noloop" <<'PY'
own = {}
for line in open(os.environ["TARGET_OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own[f[0]] = int(f[1])
A = R["memory"]["alloc"]
check(A["stacks"] == "frame-pointers", "stacks %r" % A["stacks"])
check(A["return_probes"] == "every_call", "return probes %r" % A["return_probes"])
check(A["stack_errors"] == 0, "stack errors %d" % A["stack_errors"])
check(abs(A["estimated"]["inuse_bytes"] - own["leaked"]) <= 0.2 * own["leaked"], "live %d, leaked %d" % (A["estimated"]["inuse_bytes"], own["leaked"]))
check([l["function"] for l in A["leaks"]] == ["leak_some"], "leaks %r" % [l["function"] for l in A["leaks"]])
UF = load_folded("inuse.folded")
leak = [fr for fr, c in UF if fr[-1] == "leak_some"]
check(leak and all(has_seq(fr, ["main", "run_cycle", "leak_some"]) for fr in leak), "leak_some stacks %r" % leak[:2])
PY
[ $? -eq 0 ] || ep_fail "run without bpf_loop"
EBPF_PROF_FAULT_KFEAT=bpf_loop "$EP_BIN" check --json >"$EP_WORK/noloop/check.json" 2>"$EP_WORK/noloop/check.err" ||
	ep_fail "check without bpf_loop: $(tail -n 3 "$EP_WORK/noloop/check.err")"
ep_py "$EP_WORK/noloop" <<'PY'
C = load_json("check.json")
P = {p["name"]: p for p in C["programs"] if p.get("object") == "alloc"}
for name in ("alloc_ret_noloop", "alloc_mmap_exit_noloop", "alloc_entry", "alloc_free"):
    check(P.get(name, {}).get("loaded") is True, "without bpf_loop %s not loaded: %r" % (name, P.get(name)))
check("alloc_ret" not in P and "alloc_mmap_exit" not in P, "without bpf_loop the walking twins loaded too: %r" % sorted(P))
PY
[ $? -eq 0 ] || ep_fail "check without bpf_loop"

# jemalloc and tcmalloc in place of glibc's malloc (LD_PRELOAD): found by
# their malloc, probed there, the same estimates.
for lib in libjemalloc.so.2 libtcmalloc_minimal.so.4; do
	path=/usr/lib/$(gcc -print-multiarch)/$lib
	[ -e "$path" ] || ep_fail "$path missing (tools/install-deps.sh installs it)"
	PRELOAD=$path run "${lib%%.*}" 4 1024 500 -- --alloc-rate 16K
	LIB=$lib TARGET_OUT=$TARGET_OUT ep_py "$EP_WORK/${lib%%.*}" <<'PY'
own = {}
for line in open(os.environ["TARGET_OUT"]):
    f = line.split()
    if len(f) == 2 and f[1].isdigit():
        own[f[0]] = int(f[1])
A = R["memory"]["alloc"]
check(any(os.environ["LIB"].split(".")[0] in p for p in A["probed_files"]), "probed files %r" % A["probed_files"])
E = A["estimated"]
check(abs(E["alloc_bytes"] - own["asked"]) <= 0.2 * own["asked"], "allocated %d, asked %d" % (E["alloc_bytes"], own["asked"]))
check(abs(E["inuse_bytes"] - own["leaked"]) <= 0.2 * own["leaked"], "live %d, leaked %d" % (E["inuse_bytes"], own["leaked"]))
check([l["function"] for l in A["leaks"]] == ["leak_some"], "leaks %r" % [l["function"] for l in A["leaks"]])
UF = load_folded("inuse.folded")
check(not any("transient_big" in fr for fr, c in UF), "transient_big in inuse.folded")
PY
	[ $? -eq 0 ] || ep_fail "$lib run"
done

run live 2 0 0 200000 -- --alloc-rate 1 --alloc-max-live 1024
ep_py "$EP_WORK/live" <<'PY'
A = R["memory"]["alloc"]
d = A["dropped"]
check(A["max_live"] == 1024, "max_live %r" % A["max_live"])
# Every 32-byte block is sampled at rate 1; 1,024 of them at most are
# tracked, the others are counted (or lost with a full ring, counted too).
check(d["live_full"] + d["ringbuf_full"] >= 200000 - 1024, "dropped %r" % d)
check(d["total"] >= d["live_full"] + d["ringbuf_full"], "total %r" % d)
check(A["samples"] + d["ringbuf_full"] >= 200000, "samples %d + ring drops %d" % (A["samples"], d["ringbuf_full"]))
check(A["calls"] >= 200000, "calls %d" % A["calls"])
PY
[ $? -eq 0 ] || ep_fail "live-blocks run"
echo "PASS: test_alloc"
