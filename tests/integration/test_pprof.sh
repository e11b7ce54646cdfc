#!/bin/bash
# pprof export (docs/pprof.md), read back by the reference reader, Debian's
# `go tool pprof` (golang-go):
#  - cpu_tree (--pid, frozen while ebpf-prof attaches and again before it
#    stops, so the window is exact): profile.pb.gz holds exactly the
#    samples of stacks.folded (same count per function), cpu = samples x
#    period (1e9 / -F), its total cpu/nanoseconds the CPU time the target
#    says it used in the window (within the tick rounding of
#    check_ticks_taken in lib.sh), the burn_a:burn_b split the target
#    measured by `-top` (check_split), the main;work_outer;burn_a chain leaf
#    first in `-raw`, thread labels, the binary's build-id as readelf
#    prints it;
#  - offcpu_mix (launched): offcpu.pb.gz has off_cpu/nanoseconds equal to
#    offcpu.folded's microseconds x 1000 per thread, and the sleeper's
#    off-CPU time is most of its 2 s;
#  - cycle_experiment (C cycle marker): every sample in a cycle carries the
#    cycle's index, and per cycle the count matches report.json's cycles
#    table within 2 samples (a run of identical samples is placed by its
#    first sample, the table places each sample);
#  - native file:line: cpu_tree's burn_a is cpu_tree.c at burn_a's
#    definition line (DWARF; frames keep no address: the function's line);
#  - Python (py_samename.py on Debian's python3.11 and pyenv 3.13, the
#    hot StandIn.run with a loop of two lines): `-raw` shows
#    `StandIn.run /path/py_samename.py:LINE`, name, file and line in their
#    fields, LINE one of the method's own lines, at least its two loop
#    lines as two Locations of the one function; `-top` (by function)
#    counts StandIn.run once, as many samples as its lines together, and
#    as stacks.folded's StandIn.run frames; `-list` shows the source file
#    with samples on the loop's line. On pyenv 3.10 the same with
#    the name "run" (co_name: no qualified name before 3.11, DB.run's
#    lines in the same Function).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

GO=$(command -v go || true)
if [ -z "$GO" ]; then
	[ "${CI:-}" = true ] && ep_fail "go not found: apt-get install golang-go (tools/install-deps.sh)"
	echo "SKIP: go not found (apt-get install golang-go)"
	exit 77
fi
export GOCACHE="$EP_WORK/gocache" GOPATH="$EP_WORK/gopath" PPROF_TMPDIR="$EP_WORK"
# -symbolize=none: the profile is symbolized; pprof must not look for
# binaries on its own and mix in what it finds.
pprof() { "$GO" tool pprof -symbolize=none "$@"; }

FREQ=999
ep_start_target cpu_tree 120
# The target's own figures (its "split" lines: CPU time of the process and
# of each burner) at the window's two edges: asked while it is frozen, it
# answers first thing once thawed. 3 s of its CPU time at 999 Hz: ~3000 samples.
ep_freeze "$TARGET_PID"
renice -n -20 $$ >/dev/null || ep_fail "cannot renice the test shell"
ep_prof_bg -v --pid "$TARGET_PID" -F "$FREQ" --no-gpu -o "$EP_WORK/cpu"
ep_wait_line "$PROF_ERR" "sampling " 30 "$PROF_PID" || ep_fail "ebpf-prof did not start"
read -r _ sl0 _ < <(ep_kernel_ran "$TARGET_PID")
st0=$(ep_steal_ns)
ep_split_ask "$TARGET_PID" "$TARGET_OUT"
ep_thaw "$TARGET_PID"
ep_split_read "$TARGET_OUT"
A0=$SPLIT_A B0=$SPLIT_B CPU0=$SPLIT_CPU
ep_wait_cpu "$TARGET_PID" 3 90
ep_freeze "$TARGET_PID"
read -r _ sl1 _ < <(ep_kernel_ran "$TARGET_PID")
st1=$(ep_steal_ns)
kill -INT "$PROF_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not stop on SIGINT"
PROF_RC=$EP_EXIT_RC
ep_split_ask "$TARGET_PID" "$TARGET_OUT"
ep_thaw "$TARGET_PID"
ep_split_read "$TARGET_OUT"
renice -n 0 $$ >/dev/null
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
ep_check_outputs "$EP_WORK/cpu"
pprof -raw "$EP_WORK/cpu/profile.pb.gz" >"$EP_WORK/cpu.raw" 2>"$EP_WORK/pprof.err" ||
	ep_fail "go tool pprof -raw rejected profile.pb.gz: $(tail -n 3 "$EP_WORK/pprof.err")"
pprof -top -sample_index=samples -nodecount=1000 "$EP_WORK/cpu/profile.pb.gz" >"$EP_WORK/cpu.top" 2>"$EP_WORK/pprof.err" ||
	ep_fail "go tool pprof -top rejected profile.pb.gz: $(tail -n 3 "$EP_WORK/pprof.err")"
BIN_ID=$(readelf -n "$EP_TARGETS_DIR/cpu_tree" | sed -n 's/.*Build ID: *//p')
[ -n "$BIN_ID" ] || ep_fail "readelf shows no build-id for cpu_tree"

cat >"$EP_WORK/raw.py" <<'PY'
import re
def parse_raw(path):
    """go tool pprof -raw: header, samples (values, location ids leaf
    first, labels), locations (id -> function names), mappings."""
    head, samples, locs, maps = {}, [], {}, {}
    sec = "head"
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("Samples:"):
            sec = "types"; continue
        if line.startswith("Locations"):
            sec = "locs"; continue
        if line.startswith("Mappings"):
            sec = "maps"; continue
        if sec == "head":
            m = re.match(r"(\w+): (.*)", line)
            if m:
                head[m.group(1)] = m.group(2)
        elif sec == "types":
            head["types"] = line.split()
            sec = "samples"
        elif sec == "samples":
            m = re.match(r"\s+([-\d ]+): ([\d ]*)$", line)
            if m:
                samples.append({"v": [int(x) for x in m.group(1).split()],
                                "loc": [int(x) for x in m.group(2).split()], "l": {}})
            elif line.strip() and samples:
                for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                    samples[-1]["l"][k] = v
        elif sec == "locs":
            m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=(\d+) (\S+) (\S*):(-?\d+) s=(-?\d+)", line)
            if m:
                # (name, mapping, file, line, function start line)
                locs[int(m.group(1))] = (m.group(3), int(m.group(2)), m.group(4),
                                         int(m.group(5)), int(m.group(6)))
        elif sec == "maps":
            m = re.match(r"(\d+): \S+ (\S+)(?: ([0-9a-f]+))?", line)
            if m:
                maps[int(m.group(1))] = (m.group(2), m.group(3))
    return head, samples, locs, maps
PY

OWN_A=$((SPLIT_A - A0)) OWN_B=$((SPLIT_B - B0)) OWN_CPU=$((SPLIT_CPU - CPU0)) SLICES=$((sl1 - sl0)) \
	STEAL=$((st1 - st0)) FREQ=$FREQ PID=$TARGET_PID BIN_ID=$BIN_ID W=$EP_WORK ep_py "$EP_WORK/cpu" <<'PY'
exec(open(os.path.join(os.environ["W"], "raw.py")).read())
freq, pid = int(os.environ["FREQ"]), int(os.environ["PID"])
head, smp, locs, maps = parse_raw(os.path.join(os.environ["W"], "cpu.raw"))
period = 1000000000 // freq
check(head.get("types") == ["samples/count", "cpu/nanoseconds[dflt]"], "sample types %r" % head.get("types"))
check(head.get("PeriodType") == "cpu nanoseconds", "PeriodType %r" % head.get("PeriodType"))
check(head.get("Period") == str(period), "Period %r, want %d" % (head.get("Period"), period))
tot = sum(s["v"][0] for s in smp)
check(tot == R["samples"]["total"], "pprof holds %d samples, report.json %d" % (tot, R["samples"]["total"]))
check(all(s["v"][1] == s["v"][0] * period for s in smp), "cpu value != samples x period in some sample")
# pprof's total CPU time against the target's own: the samples pprof holds
# plus the counted losses are the ticks taken (check_ticks_taken).
e = os.environ
pp_ns = sum(s["v"][1] for s in smp)
info("pprof: %.3f s of CPU, the target says it used %.3f s" % (pp_ns / 1e9, int(e["OWN_CPU"]) / 1e9))
check(pp_ns == R["samples"]["total"] * period, "pprof's cpu total %d ns, report.json %d samples" % (pp_ns, R["samples"]["total"]))
check_ticks_taken(int(e["OWN_CPU"]), int(e["SLICES"]), int(e["STEAL"]), freq, "pprof's cpu total")
check(all(s["l"].get("thread_id") == str(pid) and s["l"].get("pid") == str(pid) and
          s["l"].get("thread_name") == "cpu_tree" for s in smp),
      "labels: want pid/thread_id %d and thread_name cpu_tree on every sample: %r" % (pid, [s["l"] for s in smp][:3]))
check(all(l in locs for s in smp for l in s["loc"]), "a sample names a location that is not there")

def names(s):
    return [locs[l][0] for l in s["loc"]]  # leaf first

def pp_total(pred):
    return sum(s["v"][0] for s in smp if pred(names(s)))

# Same data as stacks.folded, function by function (folded is root first).
for fn in ("burn_a", "burn_b", "work_outer", "main"):
    a, b = pp_total(lambda n: fn in n), folded_total(lambda fr: fn in fr)
    check(a == b, "%s: %d samples in pprof, %d in stacks.folded" % (fn, a, b))
# Leaf first: burn_a <- work_outer <- main.
a = pp_total(lambda n: "burn_a" in n)
chain = pp_total(lambda n: n[:3] == ["burn_a", "work_outer", "main"])
check(chain >= 0.9 * a, "only %d of %d burn_a samples read burn_a;work_outer;main leaf first" % (chain, a))

# The split as `go tool pprof -top` prints it (flat sample counts).
flat = {}
for line in open(os.path.join(os.environ["W"], "cpu.top")):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(\S+)$", line)
    if m:
        flat[m.group(3)] = int(m.group(1))
a, b = flat.get("burn_a", 0), flat.get("burn_b", 0)
check(a + b > 0, "-top lists no burn_a/burn_b: %r" % list(flat)[:10])
check_split(a, b, int(e["OWN_A"]), int(e["OWN_B"]), "pprof -top")

# Native file:line from DWARF: burn_a's definition line in cpu_tree.c.
src = os.path.join(os.environ["EP_SOURCE_DIR"], "tests/targets/cpu_tree.c")
defl = [i for i, l in enumerate(open(src), 1) if re.match(r".*\bvoid burn_a\(", l)]
bl = {(lo[2], lo[3], lo[4]) for lo in locs.values() if lo[0] == "burn_a"}
check(len(defl) == 1 and bl and all(f.endswith("cpu_tree.c") and ln == defl[0] and st == defl[0] for f, ln, st in bl),
      "burn_a's locations %r, want cpu_tree.c:%r" % (bl, defl))

mods = {path: bid for path, bid in maps.values()}
binp = [p for p in mods if p.endswith("/cpu_tree")]
if check(binp, "no mapping for the cpu_tree binary: %r" % list(mods)):
    check(mods[binp[0]] == os.environ["BIN_ID"],
          "cpu_tree build-id %r, readelf says %r" % (mods[binp[0]], os.environ["BIN_ID"]))
check(os.path.isfile(os.path.join(D, "profile.pb.gz")) and "profile.pb.gz" in R["output"]["files"],
      "report.json output.files lacks profile.pb.gz")
PY

# ---- off-CPU ----
ep_prof_run 60 -o "$EP_WORK/off" -- "$EP_TARGETS_DIR/offcpu_mix" --seconds 2 --dir "$EP_WORK"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof (offcpu_mix) exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
[ -s "$EP_WORK/off/offcpu.pb.gz" ] || ep_fail "no offcpu.pb.gz (sched module off?): $(grep -i sched "$PROF_ERR" | head -3)"
pprof -raw "$EP_WORK/off/offcpu.pb.gz" >"$EP_WORK/off.raw" 2>"$EP_WORK/pprof.err" ||
	ep_fail "go tool pprof -raw rejected offcpu.pb.gz: $(tail -n 3 "$EP_WORK/pprof.err")"
W=$EP_WORK ep_py "$EP_WORK/off" <<'PY'
exec(open(os.path.join(os.environ["W"], "raw.py")).read())
head, smp, locs, maps = parse_raw(os.path.join(os.environ["W"], "off.raw"))
check(head.get("types") == ["off_cpu/nanoseconds[dflt]"], "off-CPU sample types %r" % head.get("types"))
OF = load_folded("offcpu.folded")
by_thread = {}
for s in smp:
    by_thread[s["l"].get("thread_name")] = by_thread.get(s["l"].get("thread_name"), 0) + s["v"][0]
for th in ("sleeper", "piper", "disker"):
    us = sum(c for fr, c in OF if fr[0] == th)
    check(by_thread.get(th, 0) == us * 1000,
          "%s: %d ns off-CPU in offcpu.pb.gz, offcpu.folded says %d us" % (th, by_thread.get(th, 0), us))
# The sleeper naps 10 ms at a time for the target's 2 s: nearly all of
# them off-CPU (>= 80%), and never more than the recording lasted.
dur = R["time"]["duration_ns"]
sl = by_thread.get("sleeper", 0)
info("sleeper off-CPU %.2f s of the target's 2 s (recording %.2f s)" % (sl / 1e9, dur / 1e9))
check(1.6e9 <= sl <= dur, "sleeper off-CPU %d ns, want 1.6e9..%d (2 s of 10 ms naps)" % (sl, dur))
PY

# ---- cycle labels ----
ep_start_target cycle_experiment 8 5
ep_prof_bg -v -F 999 --pid "$TARGET_PID" -o "$EP_WORK/cyc" --no-gpu
ep_wait_line "$PROF_ERR" "cycles: pid [0-9]*: cycle marker in .*cycle_experiment" 30 "$PROF_PID" ||
	ep_fail "cycle marker not attached: $(tail -n 3 "$PROF_ERR")"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 60 || ep_fail "ebpf-prof did not stop after the target exited"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof (cycles) exited $EP_EXIT_RC"
pprof -raw "$EP_WORK/cyc/profile.pb.gz" >"$EP_WORK/cyc.raw" 2>"$EP_WORK/pprof.err" ||
	ep_fail "go tool pprof -raw rejected the cycles run: $(tail -n 3 "$EP_WORK/pprof.err")"
W=$EP_WORK ep_py "$EP_WORK/cyc" <<'PY'
exec(open(os.path.join(os.environ["W"], "raw.py")).read())
head, smp, locs, maps = parse_raw(os.path.join(os.environ["W"], "cyc.raw"))
rows = R.get("cycles")
if not isinstance(rows, list):
    die("report.json has no cycles table: %r" % type(rows))
per = {}
for s in smp:
    c = s["l"].get("cycle")
    per[c] = per.get(c, 0) + s["v"][0]
check(len(rows) >= 8, "%d cycles in report.json, want >= 8" % len(rows))
for r in rows:
    got = per.get(str(r["index"]), 0)
    check(abs(got - r["samples"]) <= 2, "cycle %d: %d samples labelled, the table has %d" % (r["index"], got, r["samples"]))
info("samples per cycle label %r" % sorted(per.items(), key=lambda kv: (kv[0] is None, kv[0])))
PY

# ---- Python frames: name, file and line in their own fields ----
PYT="$(cd "$(dirname "$0")" && pwd)/py_samename.py"
py_pprof()
{
	local py=$1 label=$2 qual=$3 out="$EP_WORK/py.$2"
	TARGET_OUT="$out.target"
	"$py" "$PYT" 40 "$out.own" 300000 >"$TARGET_OUT" 2>"$TARGET_OUT.err" </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "$label: target not ready: $(cat "$TARGET_OUT.err")"
	ep_prof_bg -v -F 999 --pid "$TARGET_PID" -o "$out" --no-gpu --probes none
	ep_wait_line "$PROF_ERR" "sampling " 30 "$PROF_PID" || ep_fail "$label: ebpf-prof did not start"
	kill -USR1 "$TARGET_PID"
	ep_wait_exit "$PROF_PID" 60 || ep_fail "$label: ebpf-prof did not stop after the target exited"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "$label: ebpf-prof exited $EP_EXIT_RC ($(tail -n 3 "$PROF_ERR"))"
	grep -qx done "$out.own" || ep_fail "$label: target did not finish"
	pprof -raw "$out/profile.pb.gz" >"$out.raw" 2>"$EP_WORK/pprof.err" ||
		ep_fail "$label: go tool pprof -raw rejected profile.pb.gz: $(tail -n 3 "$EP_WORK/pprof.err")"
	pprof -top -sample_index=samples -nodecount=1000 "$out/profile.pb.gz" >"$out.top" 2>"$EP_WORK/pprof.err" ||
		ep_fail "$label: go tool pprof -top rejected profile.pb.gz: $(tail -n 3 "$EP_WORK/pprof.err")"
	W=$EP_WORK RAW=$out.raw TOP=$out.top PYT=$PYT QUAL=$qual ep_py "$out" <<'PY' || exit 1
exec(open(os.path.join(os.environ["W"], "raw.py")).read())
head, smp, locs, maps = parse_raw(os.environ["RAW"])
path, qual = os.environ["PYT"], os.environ["QUAL"]
lines = open(path).read().split("\n")
d = [i for i, l in enumerate(lines, 1) if l.startswith("    def run(self, prompt, spin)")]
db = [i for i, l in enumerate(lines, 1) if l.startswith("    def run(self, sql)")]
check(len(d) == 1 and len(db) == 1, "the two run methods not found once each in %s" % path)
body = set(range(d[0] + 1, d[0] + 8))  # StandIn.run's 7 lines
loop = {i for i in body if lines[i - 1].strip() in ("s += k", "s ^= k >> 3")}
if qual == "run":
    # Before 3.11 a code object has no qualified name: DB.run's lines
    # are those of the same Function "run" of this file.
    body |= set(range(db[0] + 1, db[0] + 7))
si = {lid: lo for lid, lo in locs.items() if lo[0] == qual}
check(si, "no location of function %s: %r" % (qual, sorted({lo[0] for lo in locs.values()})[:20]))
check(all(lo[2] == path for lo in si.values()), "%s's files %r, want %s" % (qual, {lo[2] for lo in si.values()}, path))
check(all(lo[3] in body for lo in si.values()), "%s's lines %r, want within %r" % (qual, sorted(lo[3] for lo in si.values()), sorted(body)))
check(loop <= {lo[3] for lo in si.values()}, "StandIn.run's loop lines %r not all among %r" % (sorted(loop), sorted(lo[3] for lo in si.values())))
check(not any(".py:" in lo[0] or " (" in lo[0] for lo in locs.values()), "a function name still holds file:line: %r" % [lo[0] for lo in locs.values() if ".py" in lo[0]][:5])
for fn in (("DB.run", "main", "<module>") if qual != "run" else ("main", "<module>")):
    check(any(lo[0] == fn and lo[2] == path and lo[3] > 0 for lo in locs.values()), "no location of %s in %s with a line" % (fn, path))
# By function (pprof -top's default): one row, with the samples of all
# its lines as flat, equal to stacks.folded's frames named
# QUAL (py_samename.py:LINE) at the leaf.
flat = {}
for line in open(os.environ["TOP"]):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", line)
    if m:
        flat.setdefault(m.group(3), []).append(int(m.group(1)))
check(len(flat.get(qual, [])) == 1, "-top rows for %s: %r" % (qual, flat.get(qual)))
leaf = sum(s["v"][0] for s in smp if s["loc"] and s["loc"][0] in si)
fold = folded_total(lambda fr: fr[-1].startswith(qual + " (py_samename.py:"))
check(flat.get(qual, [0])[0] == leaf == fold and leaf > 0,
      "%s flat: -top %r, -raw %d, stacks.folded %d" % (qual, flat.get(qual), leaf, fold))
info("%s: %d samples over lines %r" % (qual, leaf, sorted({lo[3] for lo in si.values()})))
PY
	# The source view: pprof reads the file the Function names and puts
	# the samples on its lines. -trim_path=/: pprof otherwise guesses a
	# prefix to cut from the path and looks under the current directory.
	pprof -trim_path=/ -list "^$qual\$" "$out/profile.pb.gz" >"$out.list" 2>"$EP_WORK/pprof.err" ||
		ep_fail "$label: go tool pprof -list $qual failed: $(tail -n 3 "$EP_WORK/pprof.err")"
	grep -q "^ROUTINE =* $qual in /\?${PYT#/}\$" "$out.list" ||
		ep_fail "$label: -list shows no routine $qual in $PYT: $(head -n 3 "$out.list")"
	grep -Eq '^ +[0-9.]+m?s +[0-9.]+m?s +[0-9]+: +s \^= k >> 3$' "$out.list" ||
		ep_fail "$label: -list puts no samples on StandIn.run's loop line: $(grep -n 'k >> 3' "$out.list")"
	ep_log "ok: Python frames ($label)"
}
py_pprof /usr/bin/python3.11 debian3.11 StandIn.run
ep_pyenv 3.13 && py_pprof "$EP_PY" pyenv3.13 StandIn.run
ep_pyenv 3.10 && py_pprof "$EP_PY" pyenv3.10 run
ep_log "ok"
