#!/bin/bash
# llama.cpp parameters read at set-up: the target llama_model sets known
# values (EP_LLAMA_PARAMS: n_ctx, n_batch, n_ubatch, n_threads,
# n_threads_batch, n_gpu_layers) in the structs it passes by value to
# llama_model_load_from_file / llama_init_from_model of the real prebuilt
# libllama (llama_lib.sh), and prints what the context reports through its
# own accessors. Asserts report.json "llama" holds exactly those values, the
# GGUF facts of the tiny model tiny_llama_gguf.py wrote, the KV-cache size
# llama.cpp itself logs, and the findings they give (n_ctx oversized with
# its saving, beyond the training context; none for the 1 thread set by
# llama_set_n_threads after the 3 the context was created with). The target
# runs and exits while ebpf-prof is stopped: its events are handled after it
# is gone.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
. "$(dirname "$0")/llama_lib.sh"

N=8
MODEL="$EP_WORK/tiny-llama.gguf"
python3 "$(dirname "$0")/tiny_llama_gguf.py" "$MODEL" || ep_fail "cannot write the test model"
# n_ctx 4096 > the model's 256; n_batch 96 >= the 57-token prompt (llama.cpp
# aborts on a larger batch); n_threads 3, n_threads_batch 2; no GPU layers.
export EP_LLAMA_PARAMS="4096 96 32 3 2 0" EP_LLAMA_VERBOSE=1
ep_start_target llama_model "$LLAMA_DIR" "$MODEL" "$N"
unset EP_LLAMA_PARAMS EP_LLAMA_VERBOSE
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu --probes llama
ep_wait_attached "$PROF_PID" 20
ep_wait_line "$PROF_ERR" "sampling " 20 "$PROF_PID" || ep_fail "ebpf-prof did not start"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^loaded$' 20 "$TARGET_PID" || ep_fail "target could not load the libraries"
# Every probe the checks read must be attached before the target runs (one
# uprobe's attach takes ~100 ms on a loaded machine).
for s in llama_model_load_from_file llama_init_from_model llama_set_n_threads llama_tokenize \
	llama_decode llama_sampler_sample; do
	ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: $s in .*libllama.v0.5.0.so" 10 "$PROF_PID" ||
		ep_fail "$s not probed"
done
# ebpf-prof stopped while the target loads the model and exits: the model's
# event is handled once the process is gone, as when the drain lags on a
# loaded machine; the file is still read, with the rights the kernel gave
# the caller at the call.
kill -STOP "$PROF_PID"
kill -USR1 "$TARGET_PID"
if ! ep_wait_exit "$TARGET_PID" 60; then
	kill -CONT "$PROF_PID"
	ep_fail "target did not finish"
fi
TARGET_RC=$EP_EXIT_RC
kill -CONT "$PROF_PID"
[ "$TARGET_RC" -eq 0 ] || ep_fail "target exited $TARGET_RC"
ep_wait_exit "$PROF_PID" 120 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
grep -qx "bad 0" "$TARGET_OUT" || ep_fail "target run failed: $(cat "$TARGET_OUT")"
ep_check_outputs "$EP_WORK/out"
OWN="$TARGET_OUT" OWN_ERR="$(ls "$EP_WORK"/llama_model.*.err | head -n 1)" MODEL="$MODEL" \
	ep_py "$EP_WORK/out" <<'PY'
own = {}
for line in open(os.environ["OWN"]):
    k, _, v = line.strip().partition(" ")
    own[k] = v
acc = [int(x) for x in own["ctx_params"].split()]
# The accessors first: they prove the offsets the target wrote (the same
# table ebpf-prof uses) are the fields this build reads.
check(acc == [4096, 96, 32, 3, 2], "the library's own accessors say %r" % acc)
L = R.get("llama")
if not check(L is not None, "no llama section"):
    sys.exit(1)
check(L["problems"] == [], "problems %r" % L["problems"])
check(len(L["contexts"]) == 1 and len(L["models"]) == 1, "setups %r" % L)
c, m = L["contexts"][0], L["models"][0]
# n_threads 3 / 2 at init; the target then calls llama_set_n_threads(ctx, 1, 1)
# (and checks llama_n_threads says 1): that is what the context runs with.
want = dict(n_ctx=4096, n_batch=96, n_ubatch=32, n_seq_max=1, n_threads_init=3,
            n_threads_batch_init=2, n_threads=1, n_threads_batch=1, set_n_threads_calls=1)
for k, v in want.items():
    check(c.get(k) == v, "context %s %r, set %d" % (k, c.get(k), v))
check(c.get("llama_version") == "0.5.0-dev", "version %r" % c.get("llama_version"))
check(m.get("n_gpu_layers") == 0, "n_gpu_layers %r" % m.get("n_gpu_layers"))
check(m.get("path") == os.environ["MODEL"], "path %r" % m.get("path"))
g = m.get("gguf", {})
# tiny_llama_gguf.py: llama, 1 block, 64 wide, 4 heads, context 256, F32.
for k, v in dict(architecture="llama", n_layer=1, n_embd=64, n_head=4, n_head_kv=4,
                 n_ctx_train=256, main_tensor_type="F32", version=3).items():
    check(g.get(k) == v, "gguf %s %r, file has %r" % (k, g.get(k), v))
# KV cache: llama.cpp's own log line, "llama_kv_cache: size = X MiB" (2 decimals).
kv = None
for line in open(os.environ["OWN_ERR"], errors="replace"):
    mm = re.search(r"llama_kv_cache: size = +([0-9.]+) MiB", line)
    if mm:
        kv = float(mm.group(1))
if check(kv is not None, "no KV size line in the target's log"):
    check(abs(c.get("kv_cache_bytes_f16", 0) / 1048576 - kv) <= 0.005,
          "kv_cache_bytes_f16 %r vs llama.cpp's %.2f MiB" % (c.get("kv_cache_bytes_f16"), kv))
n_prompt = int(own["n_prompt"])
check(L.get("max_prompt_tokens") == n_prompt, "max prompt %r vs %d" % (L.get("max_prompt_tokens"), n_prompt))
F = {f["rule"]: f for f in R["findings"]}
o = F.get("llama_ctx_oversized")
if check(o is not None, "no llama_ctx_oversized: %r" % list(F)):
    need = n_prompt + int(own["sample_calls"])
    sug = max(256, -(-(need + (need + 3) // 4) // 256) * 256)
    check(o["title"] == "n_ctx is 4096 while prompts never exceed %d tokens" % n_prompt, o["title"])
    check("Set n_ctx to %d " % sug in o["recommendation"], o["recommendation"])
    saved = 256 * (4096 - sug)  # bytes: KiB below 1 MiB, as the finding prints it
    txt = "%.0f KiB" % (saved / 1024) if saved < 1048576 else "%.1f MiB" % (saved / 1048576)
    check("saving ~%s" % txt in o["recommendation"], o["recommendation"])
check("llama_ctx_over_train" in F, "no llama_ctx_over_train")
check("llama_threads_oversubscribed" not in F, "threads finding for 1 thread: %r" % list(F))
check("llama_batch_small" not in F, "batch 96 >= prompt %d flagged" % n_prompt)
PY
echo "PASS: test_llama_params"
