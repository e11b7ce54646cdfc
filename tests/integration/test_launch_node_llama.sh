#!/usr/bin/env bash
# Launch mode on the Node twin of the Python llama experiment
# (node_llama_experiment.js): Debian's node loads the prebuilt N-API addon of
# @node-llama-cpp/linux-x64 (llama-addon.node, whose DT_NEEDED pull in
# libllama and libggml) with process.dlopen, the addon dlopens each CPU
# backend variant and dlcloses all but the best, and the loop starts as
# soon as the tiny model is loaded. Every cycle from the first one must be
# seen: the script's own counts of prompts, llama_tokenize and llama_decode
# calls are the probes' counts and the cycles' (12 of 30 Node cycles
# were once lost; before the dlopen hold 0-8 of 30 were seen here), the
# model load and the context's parameters are read, nothing is dropped, and
# the cycles' wall times are the script's own (CLOCK_MONOTONIC both).
#   1. --cycle-every llama_tokenize (main thread): N cycles, the last open;
#   2. the same after a failed load of an optional native module (a missing
#      DT_NEEDED: ld.so's odd link-map call, bpf/probes.bpf.c dl_hold_here);
#   3. --cycle llama_decode (libuv worker threads): N * (GEN + 1) cycles.
# Needs root, node and the npm package (fetched as the other llama tests do).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
# shellcheck source=llama_lib.sh
. "$(dirname "$0")/llama_lib.sh"
NODE=${EP_NODE:-$(command -v node || true)}
[ -n "$NODE" ] || llama_skip "node not installed (tools/install-deps.sh installs it)"
[ -f "$LLAMA_DIR/llama-addon.node" ] || ep_fail "no llama-addon.node in $LLAMA_DIR"

N=30
GEN=4
MODEL="$EP_WORK/tiny-llama.gguf"
python3 "$(dirname "$0")/tiny_llama_gguf.py" "$MODEL" || ep_fail "cannot write the test model"
SCRIPT="$(cd "$(dirname "$0")" && pwd)/node_llama_experiment.js"
out="$EP_WORK/out"

for run in every every-optional decode; do
	rm -rf "$out"
	mode=${run%%-*}
	extra=()
	if [ "$mode" = every ]; then
		spec=(--cycle-every llama_tokenize)
	else
		spec=(--cycle llama_decode)
	fi
	[ "$run" = every-optional ] && extra=(--try-dlopen "$EP_TARGETS_DIR/dlopen_missing_dep_lib")
	ep_prof_run 90 -F 99 -v -o "$out" --no-gpu "${spec[@]}" -- "$NODE" "$SCRIPT" "$LLAMA_DIR" "$MODEL" "$N" "$GEN" 2 "${extra[@]}"
	[ "$PROF_RC" -eq 0 ] || ep_fail "recording failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	if [ "$run" = every-optional ]; then
		grep -q "^try_dlopen failed " "$PROF_OUT" || ep_fail "the optional module did not fail to load: $(grep try_dlopen "$PROF_OUT")"
	fi
	grep -qx "cycles $N" "$PROF_OUT" || ep_fail "the script did not run its $N cycles: $(grep -v '^ ' "$PROF_OUT" | head -n 20) $(tail -n 5 "$PROF_ERR")"
	ep_check_outputs "$out"
	MODE=$mode N=$N GEN=$GEN OWN="$PROF_OUT" ep_py "$out" <<'PY'
mode, n, gen = os.environ["MODE"], int(os.environ["N"]), int(os.environ["GEN"])
own = {}
for line in open(os.environ["OWN"]):
    k, _, v = line.strip().partition(" ")
    if k in ("cycles", "tokenize_calls", "decode_calls", "prompt_tokens"):
        own[k] = int(v)
    elif k == "cycle_ms":
        own[k] = [float(x) for x in v.split()]
check(own.get("tokenize_calls") == n, "the addon tokenized %r times for %d prompts" % (own.get("tokenize_calls"), n))
check(own.get("decode_calls") == n * (gen + 1), "own decode count %r" % own.get("decode_calls"))
P = {}
for p in R["probes"]["list"]:
    P.setdefault(p["symbol"], []).append(p)
def total(sym, key="count"):
    return sum(p.get(key, 0) for p in P.get(sym, []))
# Every call from the first one, entry and return: none ran before attach.
for sym, want in (("llama_tokenize", own["tokenize_calls"]), ("llama_decode", own["decode_calls"]),
                  ("ggml_graph_compute", own["decode_calls"]), ("llama_model_load_from_file", 1)):
    check(total(sym) == want and total(sym, "completed") == want and total(sym, "errors") == 0,
          "%s: %r, the script made %d" % (sym, P.get(sym), want))
    check(total(sym, "open") == 0, "%s left open: %r" % (sym, P.get(sym)))
g = [p for p in P.get("ggml_graph_compute", []) if p["count"]]
check(len(g) == 1, "graph computes in more than the kept CPU variant: %r" % g)
check(R["probes"]["dropped"]["total"] == 0, "drops %r" % R["probes"]["dropped"])
ctxs = (R.get("llama") or {}).get("contexts") or []
if check(len(ctxs) == 1, "llama contexts %r" % ctxs):
    c = ctxs[0]
    got = {k: c.get(k) for k in ("n_ctx", "n_batch", "n_seq_max", "n_threads")}
    check(got == {"n_ctx": 256, "n_batch": 128, "n_seq_max": 1, "n_threads": 1}, "context params %r" % got)
meta = R.get("cycles_meta") or {}
check(not meta.get("unmatched_ends"), "unmatched ends %r" % meta.get("unmatched_ends"))
cyc = R.get("cycles") or []
done = [c for c in cyc if not c.get("partial")]
if mode == "every":
    # A boundary at each prompt's tokenize: N cycles, the last one open
    # until the run ends (partial), all on the main thread.
    check(len(cyc) == n and len(done) == n - 1 and cyc[-1].get("partial"),
          "%d cycles (%d complete), the script ran %d" % (len(cyc), len(done), n))
    check(len({c["tid"] for c in cyc}) == 1, "cycles on threads %r" % {c["tid"] for c in cyc})
    # Each complete cycle holds its prompt's tokenize and GEN + 1 decodes
    # (run on libuv workers; their graph computes nest inside).
    calls = sorted({c["inference_calls"] for c in done})
    check(calls == [gen + 2], "inference calls per cycle %r, want %d" % (calls, gen + 2))
    # Boundary to boundary vs the script's own cycle (from before the prompt
    # is built to after the sleep): they differ by the difference of two
    # prompt builds (us); the sum telescopes to the first and last. The
    # first cycle is left out: its prompt build is cold (V8 compiles it,
    # and a library it loads stops the process until probed: 14 ms once
    # under the sanitizer build), so its share before the boundary is not
    # a later cycle's.
    ms = own["cycle_ms"][1: len(done)]
    walls = [c["wall_ns"] / 1e6 for c in done[1:]]
    diff = sum(walls) - sum(ms)
    check(abs(diff) <= 2 + 0.01 * sum(ms), "cycles 2..%d sum %.2f ms, the script's own %.2f ms" % (len(done), sum(walls), sum(ms)))
    d = sorted(abs(w - m) for w, m in zip(walls, ms))
    check(d[len(d) // 2] <= 0.2, "median |cycle - own| %.3f ms" % d[len(d) // 2])
    # The addon samples by itself (no llama_sampler_sample): the tokens
    # come from llama_decode's batches, which carry positions here.
    for c in done:
        L = c.get("llm") or {}
        check(L.get("generated_tokens") == gen and c["tokens"] == gen and L.get("prompt_tokens", 0) > 1,
              "cycle %d llm %r tokens %r, want %d generated" % (c["index"], L, c["tokens"], gen))
        check(L.get("kv_used") == L.get("prompt_tokens", 0) + gen and L.get("kv_size") == 256,
              "cycle %d KV %r of %r" % (c["index"], L.get("kv_used"), L.get("kv_size")))
    check(sum((c.get("llm") or {}).get("prompt_tokens", 0) for c in cyc) == own["prompt_tokens"],
          "prompt tokens %r, the script's %d" % ([(c.get("llm") or {}).get("prompt_tokens") for c in cyc], own["prompt_tokens"]))
    W = R.get("llm") or {}
    check(W.get("prompts") == n and W.get("generated_tokens") == n * gen and W.get("batches_unknown") == 0,
          "run llm %r" % W)
else:
    # One cycle per llama_decode, each complete on the worker that ran it.
    check(len(cyc) == own["decode_calls"] and len(done) == len(cyc),
          "%d cycles (%d complete), the script decoded %d times" % (len(cyc), len(done), own["decode_calls"]))
    check({c["inference_calls"] for c in cyc} == {1}, "inference calls %r" % sorted({c["inference_calls"] for c in cyc}))
PY
	grep -q "and [1-9][0-9]* dlopen/dlclose" "$PROF_ERR" || ep_fail "no dlopen hold reported: $(grep probes: "$PROF_ERR" | tail -n 3)"
done
echo "PASS: test_launch_node_llama"
