#!/bin/bash
# LLM timing read from llama_decode's batch (docs/cycles.md "LLM timing"):
# the real prebuilt libllama (llama_lib.sh) driven through ctypes by
# llama_llm_timing.py, which prints its own figures per cycle (prompt
# length, generation steps, the decode calls' own time, time to first
# token, inter-token latency). With --cycle-every libllama:llama_tokenize,
# every complete cycle's `llm` must say the same: exact token counts,
# prefill + decode within 10% of the program's decode time, TTFT within
# 2 ms, the KV cache filled to prompt + generated tokens of the n_ctx set.
# Half the cycles pass batches without positions (llama_batch_get_one),
# half with them (llama_batch_init): both ways of telling the KV fill.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
. "$(dirname "$0")/llama_lib.sh"
SRC="${EP_SOURCE_DIR:-$(dirname "$0")/../..}"
export PYTHONDONTWRITEBYTECODE=1
N=24

python3 "$SRC/tests/integration/tiny_llama_gguf.py" "$EP_WORK/tiny.gguf" || ep_fail "cannot write the model"
TARGET_OUT="$EP_WORK/target.out"
python3 "$SRC/tests/integration/llama_llm_timing.py" "$LLAMA_DIR" "$EP_WORK/tiny.gguf" $N \
	>"$TARGET_OUT" 2>"$EP_WORK/target.err" </dev/null &
TARGET_PID=$!
EP_PIDS+=("$TARGET_PID")
ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 30 "$TARGET_PID" ||
	ep_fail "target not ready: $(tail -3 "$EP_WORK/target.err")"
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu \
	--cycle-every libllama:llama_tokenize
ep_wait_line "$PROF_ERR" "cycles: pid $TARGET_PID: cycle boundary" 30 "$PROF_PID" ||
	ep_fail "cycle boundary not attached: $(tail -3 "$PROF_ERR")"
for s in llama_init_from_model llama_decode llama_memory_clear; do
	ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: $s in .*libllama.v0.5.0.so" 20 "$PROF_PID" ||
		ep_fail "$s not probed"
done
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^done$' 120 "$TARGET_PID" ||
	ep_fail "target did not finish: $(tail -3 "$EP_WORK/target.err")"
ep_wait_exit "$PROF_PID" 120 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC: $(tail -5 "$PROF_ERR")"
TARGET_OUT=$TARGET_OUT N=$N PROF_OUT=$PROF_OUT ep_py "$EP_WORK/out" <<'PY'
import csv
MS = 1e6
own = {}
for l in open(os.environ["TARGET_OUT"]):
    f = l.split()
    if f and f[0] == "cycle":
        own[int(f[1])] = [int(x) for x in f[2:]]
n = int(os.environ["N"])
check(len(own) == n, "target printed %d cycles" % len(own))
dr = R["probes"]["dropped"]["by_cause"]
check(dr.get("llama_batch_unreadable") == 0 and dr["ringbuf_full"] == 0, "dropped: %r" % dr)
C = [c for c in R["cycles"] if not c["partial"]]
check(len(C) == n - 1, "%d complete cycles, want %d (the last is partial)" % (len(C), n - 1))
KEYS = {"prompt_tokens", "generated_tokens", "prefill_ms", "decode_ms", "ttft_ms",
        "itl_p50_ms", "itl_p99_ms", "kv_used", "kv_size"}
strict = 0
for c in C:
    o = min(own.items(), key=lambda kv: abs(kv[1][0] - c["start_ns"]))
    i, (start, k, gen, dec, ttft, itl, preempted, preempted_ttft) = o
    L = c.get("llm")
    if not check(isinstance(L, dict) and set(L) == KEYS, "cycle %d llm %r" % (c["index"], L)):
        continue
    check(L["prompt_tokens"] == k, "cycle %d prompt_tokens %r, the program's %d" % (i, L["prompt_tokens"], k))
    check(L["generated_tokens"] == gen, "cycle %d generated_tokens %r, the program's %d" % (i, L["generated_tokens"], gen))
    check(c["tokens"] == gen, "cycle %d tokens %r, want %d" % (i, c["tokens"], gen))
    both = (L["prefill_ms"] + L["decode_ms"]) * MS
    # A cycle whose calls were preempted (a loaded machine: the program
    # says so) may have waited for a CPU outside the function, where the
    # program's clock runs and the probe's does not: only bounded then.
    if preempted == 0:
        strict += 1
        check(abs(both - dec) <= 0.1 * dec,
              "cycle %d prefill+decode %.3f ms, the program's decode calls %.3f ms" % (i, both / MS, dec / MS))
    else:
        check(0.2 * dec <= both <= 1.1 * dec,
              "cycle %d (preempted %d times) prefill+decode %.3f ms, the program's %.3f ms" % (i, preempted, both / MS, dec / MS))
    check(L["prefill_ms"] > L["decode_ms"] / gen, "cycle %d prefill %.3f ms not above one step" % (i, L["prefill_ms"]))
    check(L["ttft_ms"] is not None and (abs(L["ttft_ms"] * MS - ttft) <= 2 * MS or
                                        (preempted_ttft and 0 < L["ttft_ms"] * MS <= ttft + 2 * MS)),
          "cycle %d ttft %r ms, the program's %.3f ms (preempted %d times)" % (i, L["ttft_ms"], ttft / MS, preempted_ttft))
    check(L["itl_p50_ms"] is not None and (abs(L["itl_p50_ms"] * MS - itl) <= max(0.1 * itl, 0.1 * MS) or
                                           (preempted and 0 < L["itl_p50_ms"] * MS <= c["wall_ns"])),
          "cycle %d itl p50 %r ms, the program's %.3f ms" % (i, L["itl_p50_ms"], itl / MS))
    check(L["itl_p99_ms"] is not None and L["itl_p99_ms"] >= L["itl_p50_ms"], "cycle %d itl p99 %r" % (i, L["itl_p99_ms"]))
    check(L["kv_used"] == k + gen, "cycle %d kv_used %r, want %d" % (i, L["kv_used"], k + gen))
    check(L["kv_size"] == 512, "cycle %d kv_size %r" % (i, L["kv_size"]))
# Under CI the machine is quiet enough; elsewhere a busy machine (other
# tests, builds) can preempt nearly every cycle: then the times are only
# bounded, and the run says so.
if strict < 3:
    msg = "only %d of %d cycles ran unpreempted: the machine is too busy to compare times exactly" % (strict, len(C))
    if os.environ.get("CI") == "true":
        check(False, msg)
    else:
        print("SKIP (exact time comparison): " + msg, file=sys.stderr)
# The whole run, every decode (the partial last cycle's too).
W = R.get("llm")
if check(isinstance(W, dict), "no llm section"):
    check(W["prompts"] == n, "prompts %r, want %d" % (W["prompts"], n))
    check(W["prompt_tokens"] == sum(v[1] for v in own.values()), "run prompt_tokens %r" % W["prompt_tokens"])
    check(W["generated_tokens"] == sum(v[2] for v in own.values()), "run generated_tokens %r" % W["generated_tokens"])
    check(W["batches_unknown"] == 0, "unknown batches %r" % W["batches_unknown"])
    check(W["kv_size"] == 512 and W["kv_used_max"] == max(v[1] + v[2] for v in own.values()),
          "kv %r of %r" % (W["kv_used_max"], W["kv_size"]))
A = R["cycles_meta"]["all_cycles"].get("llm")
if check(isinstance(A, dict), "no all_cycles.llm"):
    check(A["cycles"] == n - 1 and A["prompts"] == n - 1, "all_cycles.llm %r" % A)
rows = list(csv.DictReader(open(os.path.join(D, "cycles.csv"))))
for r, c in zip(rows, R["cycles"]):
    L = c["llm"] or {}
    check(r["prompt_tokens"] == str(L.get("prompt_tokens", "")) and
          r["kv_used"] == str(L.get("kv_used", "")), "cycles.csv row %s: %r" % (r["index"], r))
out = open(os.environ["PROF_OUT"]).read()
check(re.search(r"LLM: \d+ prompt tokens .* generated", out) is not None, "no cycles' LLM line in the summary")
if W:
    check("  LLM: %d prompts, %d prompt tokens (" % (W["prompts"], W["prompt_tokens"]) in out,
          "no run's LLM line under the probes in the summary")
PY
# report.html shows them: the LLM section and the cycle table's columns.
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	[ "${CI:-}" = true ] && ep_fail "chromium is not installed (CI=true): run tools/install-deps.sh"
	echo "SKIP (report.html part): chromium not installed"
else
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$EP_WORK/chrome" --virtual-time-budget=5000 \
		--dump-dom "file://$EP_WORK/out/report.html" >"$EP_WORK/dom.html" 2>"$EP_WORK/chrome.err" ||
		ep_fail "chromium --dump-dom failed: $(tail -5 "$EP_WORK/chrome.err")"
	N=$N python3 - "$EP_WORK/dom.html" "$EP_WORK/out/report.json" <<'PY' || ep_fail "report.html checks failed"
import json, os, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
R = json.load(open(sys.argv[2]))
L = R["llm"]
fails = []
def check(c, m):
    if not c:
        fails.append(m)
        print("  check failed: " + m, file=sys.stderr)
check('data-rendered="yes"' in dom, "the page script did not finish")
info = re.search(r'<div id="llm-info"[^>]*>([^<]*)</div>', dom)
check(info and info.group(1).startswith("%d prompts: %d prompt tokens in " % (L["prompts"], L["prompt_tokens"])),
      "LLM section: %r" % (info and info.group(1)))
check(info and ("KV cache up to %d of 512 cells." % L["kv_used_max"]) in info.group(1), "KV in the LLM section")
check(dom.count('data-title="Time to first token per cycle"') == 1, "TTFT chart")
check(dom.count('data-title="KV-cache fill at each cycle end"') == 1, "KV chart")
check("<th>prompt / gen tokens</th>" in dom and "<th>TTFT</th>" in dom, "LLM columns in the cycle table")
c = R["cycles"][1]["llm"]
check("<td>%d / %d</td>" % (c["prompt_tokens"], c["generated_tokens"]) in dom, "cycle 1's tokens in the table")
sys.exit(1 if fails else 0)
PY
fi
echo "PASS: test_llama_llm_timing"
