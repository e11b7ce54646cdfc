#!/bin/bash
# Bounded memory on a long attach, shortened: the collector's per-thread
# timeline (one run per stretch of samples with one stack) is its one store
# that grows with every sample; it is bounded (profile.h, max_runs) and this
# lowers the bound (EBPF_PROF_TIMELINE_RUNS) so that a short run crosses it
# many times. cpu_tree sampled at 4999 Hz starts ~1,000 runs a second
# (16 KB/s, ~400 KB over the checked window without the bound).
# - The bound holds end to end: speedscope writes one sample per run, so its
#   per-thread samples number at most the bound, and their weights add up to
#   report.json's samples.total exactly (merging loses no sample).
# - report.json sampling.timeline_bucket_ns and the summary say it merged.
# - The collector's RSS, read every second, does not grow after the first
#   10 s (least-squares growth over the rest under 200 KiB). Not under the
#   sanitizers: their quarantine holds freed memory by design.
# tools/bench/soak.sh is the long version on the llama.cpp workload.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

BOUND=2048
SECS=34
ep_start_target cpu_tree $((SECS + 20))
OUT="$EP_WORK/out"
EBPF_PROF_TIMELINE_RUNS=$BOUND ep_prof_bg -F 4999 --pid "$TARGET_PID" -d "$SECS" -o "$OUT"
ep_wait_attached "$PROF_PID" 20
t0=$(ep_now_ms)
: >"$EP_WORK/rss"
while ep_pid_alive "$PROF_PID"; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$PROF_PID/status" 2>/dev/null || true)
	[ -n "$rss" ] && echo "$(($(ep_now_ms) - t0)) $rss" >>"$EP_WORK/rss"
	sleep 1
done
rc=0
wait "$PROF_PID" || rc=$?
[ "$rc" -eq 0 ] || ep_fail "ebpf-prof exited $rc (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
grep -Eq "^timeline: samples (of the first [0-9]+ s )?merged per [0-9]+ ms" "$PROF_OUT" ||
	ep_fail "no 'timeline: samples merged' line in the summary: $(head -c 600 "$PROF_OUT")"

RSS="$EP_WORK/rss" BOUND=$BOUND SECS=$SECS ep_py "$OUT" <<'PY'
bound, secs = int(os.environ["BOUND"]), int(os.environ["SECS"])
S = json.load(open(os.path.join(D, "profile.speedscope.json")))
runs = sum(len(p["samples"]) for p in S["profiles"] if p["type"] == "sampled")
total = R["samples"]["total"]
check(total > 20 * bound, "only %d samples: the bound %d was not crossed often" % (total, bound))
check(0 < runs < bound, "speedscope holds %d runs, bound %d" % (runs, bound))
period = R["sampling"]["period_ns"]
weights = sum(sum(p["weights"]) for p in S["profiles"] if p["type"] == "sampled")
check(weights == total * period,
      "speedscope weights %d ns != samples.total %d x period %d" % (weights, total, period))
check(R["sampling"]["timeline_bucket_ns"] >= 1000000,
      "timeline_bucket_ns %r, want a merge" % R["sampling"]["timeline_bucket_ns"])
if os.environ.get("EP_SANITIZED"):
    print("RSS check skipped: sanitizer build")
else:
    rows = [tuple(map(int, l.split())) for l in open(os.environ["RSS"]) if l.strip()]
    late = [(t / 1000.0, kb) for t, kb in rows if 10000 <= t <= (secs - 1) * 1000]
    if check(len(late) >= 10, "only %d RSS samples after 10 s" % len(late)):
        n = len(late)
        mt = sum(t for t, _ in late) / n
        mk = sum(k for _, k in late) / n
        slope = sum((t - mt) * (k - mk) for t, k in late) / sum((t - mt) ** 2 for t, _ in late)
        growth = slope * (late[-1][0] - late[0][0])
        print("RSS %d..%d KiB, growth after 10 s %.0f KiB (%d samples)"
              % (min(k for _, k in late), max(k for _, k in late), growth, n))
        check(growth < 200, "collector RSS grew %.0f KiB after warm-up, limit 200" % growth)
PY
