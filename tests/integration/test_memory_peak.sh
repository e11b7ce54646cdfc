#!/bin/bash
# Memory monitor: a target maps, touches and unmaps known amounts (96 MiB,
# then 32 MiB) with no pause at the peak. report.json's peak RSS must match
# what the kernel reported to the target itself at its peak, the timeline must
# show the fall after each block, and the minor faults must cover every page
# touched. Without a hold, a 100 ms /proc sampler would usually miss the peak:
# this checks the rss_stat path. Twice: from the raw tracepoint (tp_btf, the
# program loaded where the kernel has BTF, as here) and from the classic
# one, which the collector falls back to when the kernel refuses the first
# (EBPF_PROF_FAULT_BPF=sm_:sm_rss_btf: said once on stderr).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

PEAK_MIB=96
SECOND_MIB=32

check_run() # MODE(tp_btf|tracepoint) OUTDIR
{
local mode=$1 OUT=$2
if [ "$mode" = tp_btf ]; then
	ep_prof_run 60 -o "$OUT" -- "$EP_TARGETS_DIR/alloc_pattern" "$PEAK_MIB" "$SECOND_MIB"
else
	EBPF_PROF_FAULT_BPF=sm_:sm_rss_btf ep_prof_run 60 -o "$OUT" -- "$EP_TARGETS_DIR/alloc_pattern" "$PEAK_MIB" "$SECOND_MIB"
	k=$(grep -c "this kernel refuses BPF program sm_rss_btf ([^)]*).*RSS from the classic tracepoint" "$PROF_ERR")
	[ "$k" -eq 1 ] || ep_fail "the refused sm_rss_btf said $k times, want once: $(grep -i refuses "$PROF_ERR")"
fi
[ "$PROF_RC" -eq 0 ] || ep_fail "[$mode] ebpf-prof -- alloc_pattern exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
grep -q '^done$' "$PROF_OUT" || ep_fail "[$mode] alloc_pattern did not finish (stdout: $(head -c 300 "$PROF_OUT"))"
ep_check_outputs "$OUT"

MODE=$mode TARGET_OUT="$PROF_OUT" PEAK_MIB=$PEAK_MIB SECOND_MIB=$SECOND_MIB ep_py "$OUT" <<'PY'
out = open(os.environ["TARGET_OUT"]).read()
peak_mib, second_mib = int(os.environ["PEAK_MIB"]), int(os.environ["SECOND_MIB"])
MiB = 1 << 20
seen = {int(a): int(b) * 1024 for a, b in re.findall(r"^touched_mib (\d+) rss_kb (\d+)$", out, re.M)}
base = int(re.search(r"^baseline_kb (\d+)$", out, re.M).group(1)) * 1024
m = R.get("memory")
if not check(isinstance(m, dict), "report.memory missing"):
    sys.exit(1)
check(m["sources"]["rss"] == "kmem/rss_stat", "rss source %r, want kmem/rss_stat" % m["sources"]["rss"])
check(m["sources"].get("rss_program") == os.environ["MODE"],
      "rss program %r, want %r" % (m["sources"].get("rss_program"), os.environ["MODE"]))
procs = m["processes"]
check(len(procs) == 1, "memory.processes has %d entries, want 1" % len(procs))
p = procs[0]
pid = R["target"]["pids"][0]
check(p["pid"] == pid, "memory pid %r != target pid %r" % (p["pid"], pid))
check(p["execs"] == 1, "execs %r, want 1 (launch mode execs once)" % p["execs"])
peak = p["peak_rss_bytes"]
# Oracle: the RSS the target read from /proc/self/statm right after touching
# the big block. The kernel's per-CPU counters may lag by a few batches, so
# 2 MiB or 2 % of slack, whichever is larger.
want = seen[peak_mib]
tol = max(2 * MiB, 0.02 * want)
check(abs(peak - want) <= tol, "peak_rss %d B, target saw %d B at its peak (tolerance %d)" % (peak, want, tol))
check(abs(peak - (base + peak_mib * MiB)) <= 4 * MiB + 0.02 * peak_mib * MiB,
      "peak_rss %.1f MiB vs baseline %.1f + %d MiB" % (peak / MiB, base / MiB, peak_mib))
check(m["peak_rss_bytes"] == peak, "memory.peak_rss_bytes %r != process peak %r" % (m["peak_rss_bytes"], peak))
memtotal = int(re.search(r"^MemTotal:\s+(\d+) kB", open("/proc/meminfo").read(), re.M).group(1)) * 1024
pct = m["peak_rss_pct_of_ram"]
check(abs(pct - 100.0 * peak / memtotal) <= 0.01 * 100.0 * peak / memtotal + 1e-9,
      "peak_rss_pct_of_ram %r vs %r from MemTotal" % (pct, 100.0 * peak / memtotal))
# Every touched page faults once (huge pages off in the target).
pages = (peak_mib + second_mib) * MiB // os.sysconf("SC_PAGE_SIZE")
check(p["faults"]["minor"] is not None and p["faults"]["minor"] >= pages,
      "minor faults %r < %d pages touched" % (p["faults"]["minor"], pages))
# Timeline: rises to the peak, falls below half of it, rises to the second
# block (well under the peak), and ends low.
tl = [x for x in m["timeline"] if x["pid"] == pid and x["rss_bytes"] is not None]
check(len(tl) >= 10, "only %d timeline points" % len(tl))
ts = [x["t_s"] for x in tl]
check(ts == sorted(ts), "timeline not in time order")
rss = [x["rss_bytes"] for x in tl]
ip = max(range(len(rss)), key=lambda i: rss[i])
check(rss[ip] >= peak - 2 * MiB, "timeline max %.1f MiB far below peak %.1f MiB" % (rss[ip] / MiB, peak / MiB))
# The trough between the blocks: the first point back near the baseline.
ilow = next((i for i in range(ip, len(rss)) if rss[i] < base + 8 * MiB), None)
if not check(ilow is not None, "after the peak the RSS never fell back near baseline (min %.1f MiB)" % (min(rss[ip:]) / MiB)):
    ilow = len(rss) - 1
second = max(rss[ilow:], default=0)
check(abs(second - seen[second_mib]) <= max(2 * MiB, 0.05 * seen[second_mib]),
      "second block peak %.1f MiB, target saw %.1f MiB" % (second / MiB, seen[second_mib] / MiB))
check(rss[-1] < base + 8 * MiB, "last RSS %.1f MiB, want near baseline" % (rss[-1] / MiB))
check(R["sysmon"]["dropped"]["ringbuf_full"] == 0, "sysmon ring buffer dropped events")
check(m["oom_kills"] == [], "unexpected OOM kills %r" % m["oom_kills"])
# This VM has no cpufreq or thermal zones: unavailable, not zeros.
if not os.path.isdir("/sys/devices/system/cpu/cpu0/cpufreq"):
    check(R["cpufreq"]["available"] is False, "cpufreq.available should be false here")
    check(R["cpufreq"]["cpus"] == [], "cpufreq.cpus should be empty when unavailable")
if not any(n.startswith("thermal_zone") for n in os.listdir("/sys/class/thermal")):
    check(R["thermal"]["available"] is False, "thermal.available should be false here")
    check(R["throttling"]["verdict"] == "unknown", "throttling.verdict %r, want unknown" % R["throttling"]["verdict"])
PY
# Counter tracks in trace.json.
ep_py "$OUT" <<'PY'
T = load_json("trace.json")
ev = T["traceEvents"] if isinstance(T, dict) else T
mem = [e for e in ev if e.get("cat") == "memory" and e.get("ph") == "C"]
check(len(mem) >= 10, "trace.json has %d memory counter events" % len(mem))
check(all("rss_mib" in e["args"] or "vm_mib" in e["args"] for e in mem), "memory counters lack rss_mib/vm_mib")
PY
ep_log "$mode: ok"
}

check_run tp_btf "$EP_WORK/out"
check_run tracepoint "$EP_WORK/out_classic"
