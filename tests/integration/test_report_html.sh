#!/usr/bin/env bash
# `ebpf-prof report DIR` on a synthetic report.json with ten cycles (cycle 6
# slow because of one SQL statement), then report.html rendered in headless
# Chromium: the DOM must hold the findings, the per-cycle bars, the
# distribution, timelines, flame graph frames and the probe/SQL tables.
# No root needed. Chromium missing: skip, or fail under CI=true.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_init

dir="$EP_WORK/out"
mkdir -p "$dir"
python3 - "$dir/report.json" <<'PY'
import json, sys
MS = 1000000
t0 = 5_000_000_000
cycles = []
s = t0
for i in range(10):
    sql = 200 * MS if i == 6 else 10 * MS
    inf, other = 60 * MS, 10 * MS
    wall = inf + sql + other
    cycles.append({
        "index": i, "tid": 42, "start_ns": s, "end_ns": s + wall, "wall_ns": wall,
        "truncated": False, "samples": 7, "on_cpu_ns": 70 * MS, "off_cpu_ns": 0,
        "inference_ns": inf, "inference_calls": 1, "tokens": 32, "tokens_per_s": 32 / 0.06,
        "sql_ns": sql, "sql_count": 3, "sql_slowest_ns": sql - 2 * MS,
        "sql_slowest": "INSERT INTO results VALUES (?, '</script><img src=x onerror=alert(1)>')",
        "other_ns": other,
        "breakdown": {"inference_ns": inf, "sql_ns": sql, "gc_ns": 0, "probes_ns": 0,
                      "off_cpu_ns": {}, "other_ns": other},
        "rss_end_bytes": (200 + i) * 1048576, "rss_delta_bytes": 1048576,
        "cpu_mhz_mean": 2000 - 10 * i, "cpu_mhz_min": 1800, "throttled_share": 0,
        "gpu": None, "top_functions": [{"name": "ggml_vec_dot", "samples": 5}],
    })
    s += wall
# Cycle 10: still open when the run ended (--cycle-every's last), 3 s cut
# there: partial, out of the figures, the findings, the scale.
cycles.append({
    "index": 10, "tid": 42, "start_ns": s, "end_ns": s + 3000 * MS, "wall_ns": 3000 * MS,
    "truncated": True, "partial": True, "samples": 0, "on_cpu_ns": 0, "off_cpu_ns": 0,
    "inference_ns": 0, "inference_calls": 0, "tokens": 0, "tokens_per_s": 0,
    "sql_ns": 0, "sql_count": 0, "sql_slowest_ns": 0, "sql_slowest": None, "other_ns": 3000 * MS,
    "breakdown": {"inference_ns": 0, "sql_ns": 0, "gc_ns": 0, "probes_ns": 0,
                  "off_cpu_ns": {}, "other_ns": 3000 * MS},
    "rss_end_bytes": 210 * 1048576, "rss_delta_bytes": 0, "cpu_mhz_mean": 1900,
    "cpu_mhz_min": 1800, "throttled_share": 0, "gpu": None, "top_functions": [],
})
s += 3000 * MS
frames = [{"name": n, "kernel": False} for n in
          ["main", "run_cycle", "llama_decode", "ggml_vec_dot", "sqlite3_step", "pwrite64"]]
report = {
    "schema": "ebpf-prof/1", "version": "test",
    "target": {"pids": [42], "command": "python3 experiment.py"},
    "time": {"start_monotonic_ns": t0, "end_monotonic_ns": s, "duration_ns": s - t0},
    "sampling": {"frequency_hz": 100, "period_ns": 10 * MS},
    "samples": {"total": 70},
    "cycles": cycles,
    "findings": [],
    # Per-thread counts ("t": [thread entry, n]): thread 42 runs the model,
    # 43 the database; a hostile thread name; a malformed "t" and a pair
    # naming no thread are ignored, not fatal.
    "flame": {"unit": "samples", "total": 70, "frames": frames,
              "stacks": [{"f": [0, 1, 2, 3], "n": 50, "t": [[0, 50]]},
                         {"f": [0, 1, 4, 5], "n": 20, "t": [[1, 20], [99, 5]]},
                         {"f": [0], "n": 0, "t": "garbage"}],
              "threads": [{"pid": 42, "tid": 42, "comm": "python3", "n": 50},
                          {"pid": 42, "tid": 43, "comm": "db<img src=x onerror=alert(2)>", "n": 20}]},
    # Off-CPU time in us: 43 waits 150 ms in fdatasync, 42 sleeps 30 ms and
    # waits 0.3 ms in llama_decode;
    # three more threads merged into one entry.
    "offcpu_flame": {"unit": "us", "total": 180800, "min_us": 1000,
                     "frames": frames + [{"name": "fdatasync", "kernel": True},
                                         {"name": "nanosleep", "kernel": True}],
                     "stacks": [{"f": [0, 1, 4, 6], "n": 150000, "t": [[0, 150000]]},
                                {"f": [0, 1, 7], "n": 30500, "t": [[1, 30000], [2, 500]]},
                                # 1-2 px at the page's 600-1200 px: merged at the default 3 px
                                {"f": [0, 1, 2], "n": 300, "t": [[1, 300]]}],
                     "threads": [{"pid": 42, "tid": 43, "comm": "db", "n": 150000},
                                 {"pid": 42, "tid": 42, "comm": "python3", "n": 30300},
                                 {"pid": 0, "tid": 0, "comm": "other threads", "n": 500, "merged": 3}]},
    "memory": {"system_ram_bytes": 8 << 30, "peak_rss_bytes": 209 * 1048576,
               "timeline": [{"t_s": k * 0.1, "rss_bytes": (200 + k) * 1048576} for k in range(10)]},
    "throttling": {"verdict": "not-throttled", "episodes": []},
    "probes": {"list": [{"label": "llama_decode", "count": 10, "total_ns": 600 * MS,
                         "mean_ns": 60 * MS, "p50_ns": 60 * MS, "p99_ns": 60 * MS,
                         "max_ns": 60 * MS, "errors": 0},
                        {"label": "sqlite3_reset", "count": 30, "total_ns": 360000,
                         "mean_ns": 12000, "p50_ns": 12000, "p99_ns": 12000,
                         "max_ns": 12000, "errors": 0},
                        # Counted, not timed: its zeros are not times.
                        {"label": "llama_init_from_model", "mode": "count", "count": 1,
                         "total_ns": 0, "mean_ns": 0, "p50_ns": 0, "p99_ns": 0, "max_ns": 0,
                         "errors": 0}]},
    "sql": {"statements": [{"text": "INSERT INTO results VALUES (?, ?)", "count": 30,
                            "total_ns": 290 * MS, "p50_ns": 3 * MS, "p99_ns": 198 * MS,
                            "rows": 0}]},
}
json.dump(report, open(sys.argv[1], "w"))
PY

out=$("$EP_BIN" report "$dir") || ep_fail "ebpf-prof report failed: $out"
ep_log "$out"
grep -q "^Cycles: 10 " <<<"$out" || ep_fail "summary lacks the cycle count: $out"
grep -q "^  partial cycle #10: 3000.0 ms" <<<"$out" || ep_fail "summary does not name the partial cycle: $out"
# Shares over the ten complete cycles (990 ms), never with the partial one.
grep -q "of 990.0 ms wall over 10 cycle(s)" <<<"$out" || ep_fail "shares not over the complete cycles: $out"
sed -n '/^Findings/,$p' <<<"$out" | grep -Eq "#10\b|cycle 10:|3990.0 ms" && ep_fail "the partial cycle is in a finding: $out"
grep -q "slow cycle" <<<"$out" || ep_fail "summary lacks the slow-cycle finding: $out"
[ -s "$dir/report.html" ] || ep_fail "report.html not written"
[ "$(wc -l <"$dir/cycles.csv")" -eq 12 ] || ep_fail "cycles.csv should have a header and 11 rows"
grep -q '^10,42,[0-9]*,[0-9]*,3000.000,1,1,' "$dir/cycles.csv" || ep_fail "cycles.csv: cycle 10 not truncated,partial"
grep -q '^6,42,' "$dir/cycles.csv" || ep_fail "cycles.csv lacks cycle 6"

# A broken report.json is refused with a message, and nothing is written.
mkdir -p "$EP_WORK/bad"
head -c 300 "$dir/report.json" >"$EP_WORK/bad/report.json"
if "$EP_BIN" report "$EP_WORK/bad" 2>"$EP_WORK/bad.err"; then
	ep_fail "a truncated report.json was accepted"
fi
grep -q "report.json" "$EP_WORK/bad.err" || ep_fail "error does not name the file: $(cat "$EP_WORK/bad.err")"
[ ! -e "$EP_WORK/bad/report.html" ] || ep_fail "report.html written from a broken report.json"

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	if [ "${CI:-}" = true ]; then
		ep_fail "chromium is not installed (CI=true, not skipping): run tools/install-deps.sh"
	fi
	echo "SKIP: chromium not installed (apt-get install chromium)"
	exit 77
fi
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$EP_WORK/chrome"
	--virtual-time-budget=5000)
timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$dir/report.html" \
	>"$EP_WORK/dom.html" 2>"$EP_WORK/chrome.err" ||
	ep_fail "chromium --dump-dom failed: $(tail -5 "$EP_WORK/chrome.err")"
timeout 120 "$chrome" "${flags[@]}" --window-size=1280,3000 \
	--screenshot="$EP_WORK/report.png" "file://$dir/report.html" \
	>/dev/null 2>>"$EP_WORK/chrome.err" || ep_fail "chromium --screenshot failed"
[ -s "$EP_WORK/report.png" ] || ep_fail "no screenshot"
# Kept for a human look (the work dir is removed at exit).
cp "$EP_WORK/report.png" "${EP_BUILD_DIR:-$EP_WORK}/report_html_screenshot.png" 2>/dev/null || true

python3 - "$EP_WORK/dom.html" <<'PY' || ep_fail "DOM assertions failed"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
fails = []
def check(c, m):
    if not c:
        fails.append(m)
        print("  check failed: " + m, file=sys.stderr)
check('data-rendered="yes"' in dom, "the page script did not finish")
rules = re.findall(r'<div class="finding (\w+)" data-rule="(\w+)"', dom)
check(("warning", "slow_cycles") in rules or ("critical", "slow_cycles") in rules,
      "slow_cycles finding shown: %r" % rules)
check(any(r == "database_overhead" for _, r in rules), "database finding shown: %r" % rules)
check("cycle 6: 270.0 ms" in dom, "slow cycle 6 named with its wall time")
check("SQL +190.0 ms" in dom, "slow cycle explained by SQL")
bars = dom.count('class="bar-seg"')
check(bars == 30, "3 segments per cycle (inference, SQL, other): %d" % bars)
check(dom.count('class="hist-bar"') >= 5, "distribution bins")
check(dom.count('class="bar-partial"') == 1, "the partial cycle as one grey bar")
check(dom.count('<tr class="partial"') == 1, "the partial cycle greyed in the table")
check(">12.0 \u00b5s<" in dom or ">12.0 µs<" in dom, "a 12 us figure in us, not 0.01 ms")
check("0.00 ms" not in dom, "no 0.00 ms")
check(re.search(r'<text[^>]*hist-label[^>]*>median', dom) and re.search(r'<text[^>]*hist-label[^>]*>p95', dom), "median and p95 labels")
check('data-title="Throttled share per cycle"' in dom, "throttled share chart when throttling was judged")
check(dom.count('class="timeline"') >= 2, "RSS and CPU MHz timelines")
frames = dom.count('class="frame"')
check(frames == 7, "flame: root + 6 frames, got %d" % frames)
check("ggml_vec_dot: 50 samples" in dom, "flame tooltip with counts")
check(re.search(r'<td class="t">llama_decode</td><td>10</td>', dom), "probe table row")
check(re.search(r'<td class="t">llama_init_from_model</td><td>1</td><td>not timed</td>', dom)
      and not re.search(r'llama_init_from_model</td><td>1</td><td>0 ms', dom),
      "a count-only probe's times say not timed, not 0 ms")
check('<td class="t">INSERT INTO results VALUES (?, ?)</td>' in dom, "SQL table row")
# The hostile statement is text, never markup.
check("<img src" not in dom, "no injected element")
check("&lt;img src=x" in dom or "&lt;/script&gt;&lt;img" in dom, "hostile text shown escaped")
check('id="flame-search"' in dom and 'id="flame-minw"' in dom, "flame search and min-width controls")
sys.exit(1 if fails else 0)
PY
# The flame graph's search, from a link: the one ggml_vec_dot frame (50 of
# 70 samples) highlighted and the matched share said.
timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$dir/report.html#search=ggml_vec" \
	>"$EP_WORK/dom2.html" 2>>"$EP_WORK/chrome.err" || ep_fail "chromium --dump-dom (search) failed"
python3 - "$EP_WORK/dom2.html" <<'PY' || ep_fail "flame search assertions failed"
import sys
dom = open(sys.argv[1], encoding="utf-8").read()
ok = dom.count('class="frame match"') == 1 and "match: 50 samples (71.4%)" in dom
if not ok:
    print("  check failed: search: %d highlighted, match line %r" % (dom.count('class="frame match"'), "match:" in dom), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
# The thread picker and the off-CPU view, from links: one thread's stacks
# only; off-CPU frames weighted by time; the merged entry; a link naming no
# thread (or garbage) shows all threads and the page still renders.
for view in "thread=43" "mode=offcpu&thread=43" "mode=offcpu&thread=other" "mode=offcpu" 'thread=%22%5D' \
	"mode=offcpu&minw=0.5" "mode=offcpu&depth=8&minw=0.5" "depth=4"; do
	timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$dir/report.html#$view" \
		>"$EP_WORK/dom_$(tr -c 'a-z0-9\n' _ <<<"$view")" 2>>"$EP_WORK/chrome.err" ||
		ep_fail "chromium --dump-dom (#$view) failed"
done
python3 - "$EP_WORK" <<'PY' || ep_fail "flame thread/off-CPU assertions failed"
import os, re, sys
fails = []
def dom(view):
    return open(os.path.join(sys.argv[1], "dom_" + re.sub(r"[^a-z0-9]", "_", view)), encoding="utf-8").read()
def flame(d):
    return d.split('id="flame-section"')[1].split("</section>")[0]
def check(c, m):
    if not c:
        fails.append(m)
        print("  check failed: " + m, file=sys.stderr)
d = dom("thread=43")
f = flame(d)
check("<title>all: 20 samples (100.0%)</title>" in f, "thread 43: 20 samples at the root")
check("pwrite64: 20 samples" in f and "ggml_vec_dot" not in f, "thread 43: only the database stack")
check(f.count('class="frame"') == 5, "thread 43: root + 4 frames, got %d" % f.count('class="frame"'))
check("db&lt;img src=x" in f and "<img" not in d, "hostile thread name escaped in the picker")
d = dom("mode=offcpu&thread=43")
f = flame(d)
check('data-mode="offcpu"' in f, "off-CPU view not shown")
check("<title>fdatasync: 150.0 ms (100.0%)</title>" in f, "thread 43 off-CPU: fdatasync 150.0 ms")
check("nanosleep" not in f, "thread 43 off-CPU: another thread's wait shown")
check("episodes of 1000 \u00b5s or more" in f, "off-CPU info names the threshold")
f = flame(dom("mode=offcpu&thread=other"))
check("<title>nanosleep: 500.0 µs (100.0%)</title>" in f, "merged threads: nanosleep 500 us: %r" % re.findall(r"<title>([^<]*)</title>", f))
check("other threads (3)" in f, "merged entry in the picker")
f = flame(dom("mode=offcpu"))
check("<title>all: 180.8 ms (100.0%)</title>" in f, "all threads off-CPU: 180.8 ms")
# Minimum frame width: llama_decode (1-2 px) merged at 3 px, drawn at 0.5.
check("llama_decode" not in f and "<title>1 frame(s) under 3 px: 300.0 \u00b5s</title>" in f,
      "off-CPU: the 1-2 px frame not merged at 3 px: %r" % re.findall(r"<title>([^<]*)</title>", f))
f = flame(dom("mode=offcpu&minw=0.5"))
check("<title>llama_decode: 300.0 \u00b5s (0.2%)</title>" in f and "frame-merged" not in f,
      "off-CPU at 0.5 px: llama_decode not drawn")
# Depth: 8 is more than these stacks have, 4 cuts their leaves.
def rows(f):
    return len(set(re.findall(r'<g class="fl" transform="translate\([0-9.]+,([0-9]+)\)"', f)))
check(rows(flame(dom("mode=offcpu&depth=8&minw=0.5"))) == 5, "depth 8: all 5 rows")
f = flame(dom("depth=4"))
check(rows(f) == 4 and "llama_decode" in f and "ggml_vec_dot" not in f and "pwrite64" not in f,
      "depth 4: %d rows: %r" % (rows(f), re.findall(r"<title>([^<]*)</title>", f)))
d = dom('thread=%22%5D')
check('data-rendered="yes"' in d and "<title>all: 70 samples (100.0%)</title>" in flame(d), "a garbage thread in the link: all threads")
sys.exit(1 if fails else 0)
PY
# A report.json from before the thread data and off-CPU stacks: all
# threads only, the off-CPU view offered as not recorded, the graph drawn.
mkdir -p "$EP_WORK/old"
python3 - "$dir/report.json" "$EP_WORK/old/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
del r["offcpu_flame"], r["flame"]["threads"]
for s in r["flame"]["stacks"]:
    s.pop("t", None)
json.dump(r, open(sys.argv[2], "w"))
PY
"$EP_BIN" report "$EP_WORK/old" >/dev/null 2>"$EP_WORK/old.err" || ep_fail "ebpf-prof report (old report.json) failed: $(cat "$EP_WORK/old.err")"
timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$EP_WORK/old/report.html#thread=43&mode=offcpu" \
	>"$EP_WORK/dom_old.html" 2>>"$EP_WORK/chrome.err" || ep_fail "chromium --dump-dom (old report) failed"
python3 - "$EP_WORK/dom_old.html" <<'PY' || ep_fail "old report.json: flame graph assertions failed"
import re, sys
d = open(sys.argv[1], encoding="utf-8").read()
f = d.split('id="flame-section"')[1].split("</section>")[0]
ok = ('data-rendered="yes"' in d and "<title>all: 70 samples (100.0%)</title>" in f and 'data-mode="cpu"' in f
      and re.search(r'<option value="offcpu" disabled="">off-CPU \(no stacks recorded\)</option>', f)
      and re.search(r'<select id="flame-thread" disabled="">\s*<option value="all">all threads</option>\s*</select>', f))
if not ok:
    print("  check failed: old report: %r" % f[:1500], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
ep_log "report.html renders: findings, bars, distribution, timelines, flame graph (threads, off-CPU), tables"
exit 0
