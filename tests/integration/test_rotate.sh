#!/bin/bash
# Continuous mode (--rotate 1 --keep 3, docs/pprof.md) on cpu_tree for
# 6.5 s: N >= 4 intervals are written (the first one also holds the
# start-up, ~1-2 s of BPF loading on a busy machine, so N is not fixed) and
# only the last three remain (the report lists exactly the files that
# exist); the kept intervals follow one
# another without a gap (end of one = start of the next, to the ns), each
# lasts exactly a second of sample time on a grid from the run's start, each pprof decodes with `go tool pprof` to the
# sample count of its JSON, the burn_a:burn_b split in them is the one the
# target measured itself over the run (check_split in lib.sh: the split
# does not change along the run), and the end-of-run bundle covers the
# time since the last rotation only.
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

ep_start_target cpu_tree 60
ep_split_ask "$TARGET_PID" "$TARGET_OUT"
ep_split_read "$TARGET_OUT"
A0=$SPLIT_A B0=$SPLIT_B
# 999 Hz: the three kept seconds hold enough samples for the split's check
# (check_split: sampling error at the count taken) on a loaded machine too.
ep_prof_run 60 --pid "$TARGET_PID" -F 999 -d 6.5 --rotate 1 --keep 3 -o "$EP_WORK/out"
ep_split_ask "$TARGET_PID" "$TARGET_OUT"
ep_split_read "$TARGET_OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC: $(tail -n 5 "$PROF_ERR")"
ep_check_outputs "$EP_WORK/out"
N=$(find "$EP_WORK/out" -name 'interval-*.json' | sed 's/.*interval-0*\([0-9]*\)\.json/\1/' | sort -n | tail -n 1)
[ -n "$N" ] && [ "$N" -ge 4 ] || ep_fail "only ${N:-0} intervals in 6.5 s at --rotate 1: $(ls "$EP_WORK/out")"
for n in $((N - 2)) $((N - 1)) $N; do
	f=$(printf '%s/out/interval-%06d.pb.gz' "$EP_WORK" "$n")
	[ -f "$f" ] || ep_fail "missing $f: $(ls "$EP_WORK/out")"
	"$GO" tool pprof -symbolize=none -raw "$f" >"$EP_WORK/$n.raw" 2>"$EP_WORK/pprof.err" ||
		ep_fail "go tool pprof rejected $f: $(tail -n 3 "$EP_WORK/pprof.err")"
done

OWN_A=$((SPLIT_A - A0)) OWN_B=$((SPLIT_B - B0)) N=$N W=$EP_WORK ep_py "$EP_WORK/out" <<'PY'
import glob, re
W, N = os.environ["W"], int(os.environ["N"])
K = (N - 2, N - 1, N)
names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(D, "interval-*")))
want = ["interval-%06d.%s" % (n, e) for n in K for e in ("json", "pb.gz")]
check(names == sorted(want), "interval files %r, want %r" % (names, sorted(want)))
files = R["output"]["files"]
check(sorted(f for f in files if f.startswith("interval-")) == sorted(want),
      "report.json output.files lists %r" % [f for f in files if f.startswith("interval-")])
J = [json.load(open(os.path.join(D, "interval-%06d.json" % n))) for n in K]
for j, n in zip(J, K):
    check(j["schema"] == "ebpf-prof-interval/1" and j["seq"] == n and j["profile"] == "interval-%06d.pb.gz" % n,
          "interval %d header: %r" % (n, {k: j.get(k) for k in ("schema", "seq", "profile")}))
    # Intervals are on a grid in sample time: exactly 1 s each.
    check(j["duration_ns"] == 1000000000, "interval %d lasted %d ns, want 1 s" % (n, j["duration_ns"]))
    check((j["start_ns"] - R["time"]["start_monotonic_ns"]) == (n - 1) * 1000000000,
          "interval %d starts %d ns after the run, want %d s" % (n, j["start_ns"] - R["time"]["start_monotonic_ns"], n - 1))
    check(j["end_ns"] - j["start_ns"] == j["duration_ns"], "interval %d: end - start != duration" % n)
for a, b in zip(J, J[1:]):
    check(b["start_ns"] == a["end_ns"], "gap between intervals %d and %d: %d ns" % (a["seq"], b["seq"], b["start_ns"] - a["end_ns"]))
# The end-of-run bundle: from the last rotation to the end (< 1 s).
check(R["samples"]["total"] <= 1.3 * max(j["samples"]["total"] for j in J) + 5,
      "report.json holds %d samples: more than the last second would have" % R["samples"]["total"])

a = b = 0
for n, j in zip(K, J):
    raw = open(os.path.join(W, "%d.raw" % n)).read()
    sec = raw.split("Samples:")[1].split("Locations")[0]
    tot = sum(int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\d+:", sec, re.M))
    check(tot == j["samples"]["total"], "interval %d: pprof has %d samples, its JSON %d" % (n, tot, j["samples"]["total"]))
    top = {f["name"]: f["self"] for f in j["top_functions"]}
    a += top.get("burn_a", 0)
    b += top.get("burn_b", 0)
check_split(a, b, int(os.environ["OWN_A"]), int(os.environ["OWN_B"]), "kept intervals")
PY
ep_log "ok"
