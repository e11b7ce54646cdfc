# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An LLM experiment with its own timing figures, for test_llama_llm_timing.sh:
the real llama.cpp libraries through ctypes (tools/bench/py_llama_experiment.py's
loader), per cycle: tokenize a prompt, clear the KV cache, decode the
prompt in one batch, then K generation steps (sample, decode one token).
Prompt lengths and K change from cycle to cycle. Even cycles use
llama_batch_get_one (no positions: llama.cpp numbers the tokens itself),
odd ones a batch of llama_batch_init with explicit positions.

usage: python3 llama_llm_timing.py LLAMA_DIR MODEL CYCLES

Prints "ready PID" once the libraries are loaded, waits for SIGUSR1, then
loads the model and creates the context (n_ctx 512) and prints per cycle (CLOCK_MONOTONIC ns)
    cycle I start_ns n_prompt n_gen decode_ns ttft_ns itl_p50_ns preempted preempted_ttft
(start: before the llama_tokenize call; decode: the sum of the llama_decode
calls' own durations; ttft: start -> after the first generation decode;
itl: between the ends of consecutive generation decodes; preempted: the
thread's involuntary context switches during those calls, each a wait for
a CPU that may fall outside the function itself; preempted_ttft: the same
from start to the end of the first generation decode) and "done".
"""
import ctypes as C
import os
import resource
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tools", "bench"))
import py_llama_experiment as E  # noqa: E402

now = __import__("time").monotonic_ns


def ivcsw():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


def main():
    d, model_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    llama, _keep = E.load(d)
    llama.llama_batch_init.restype = E.Batch
    llama.llama_batch_init.argtypes = [C.c_int32, C.c_int32, C.c_int32]
    llama.llama_batch_free.restype = None
    llama.llama_batch_free.argtypes = [E.Batch]
    # The model and context after the signal: the profiler reads n_ctx
    # where the context is created.
    print("ready %d" % os.getpid(), flush=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    signal.sigwait({signal.SIGUSR1})
    model = llama.llama_model_load_from_file(model_path.encode(),
                                             llama.llama_model_default_params())
    if not model:
        sys.exit("cannot load the model")
    cp = llama.llama_context_default_params()
    cp.b[0:4] = (512).to_bytes(4, "little")  # n_ctx
    ctx = llama.llama_init_from_model(model, cp)
    vocab = llama.llama_model_get_vocab(model)
    smpl = llama.llama_sampler_init_greedy()
    llama.llama_set_n_threads(ctx, 1, 1)
    toks = (C.c_int32 * 256)()
    big = llama.llama_batch_init(256, 0, 1)
    pos = C.cast(big.pos, C.POINTER(C.c_int32))
    nseq = C.cast(big.n_seq_id, C.POINTER(C.c_int32))
    seq = C.cast(big.seq_id, C.POINTER(C.POINTER(C.c_int32)))
    logits = C.cast(big.logits, C.POINTER(C.c_int8))

    def positioned(tokens, k, p0):
        for j in range(k):
            big.token[j] = tokens[j]
            pos[j] = p0 + j
            nseq[j] = 1
            seq[j][0] = 0
            logits[j] = 1 if j == k - 1 else 0
        big.n_tokens = k
        return big

    rows = []
    for i in range(n):
        prompt = (" ".join(E.words(i, 3)) * (1 + i % 3))[:40 + 25 * (i % 4)].encode()
        gen = 6 + i % 5
        sw0 = ivcsw()
        t0 = now()
        k = llama.llama_tokenize(vocab, prompt, len(prompt), toks, 256, True, False)
        llama.llama_memory_clear(llama.llama_get_memory(ctx), True)
        b = llama.llama_batch_get_one(toks, k) if i % 2 == 0 else positioned(toks, k, 0)
        sw = ivcsw()
        a = now()
        llama.llama_decode(ctx, b)
        dec = now() - a
        sw = ivcsw() - sw
        ends = []
        for g in range(gen):
            t = C.c_int32(llama.llama_sampler_sample(smpl, ctx, -1))
            if i % 2 == 0:
                b = llama.llama_batch_get_one(C.byref(t), 1)
            else:
                b = positioned((C.c_int32 * 1)(t.value), 1, k + g)
            s0 = ivcsw()
            a = now()
            llama.llama_decode(ctx, b)
            e = now()
            sw += ivcsw() - s0
            if g == 0:
                sw_ttft = ivcsw() - sw0
            dec += e - a
            ends.append(e)
        gaps = sorted(y - x for x, y in zip(ends, ends[1:]))
        rows.append((i, t0, k, gen, dec, ends[0] - t0, gaps[(len(gaps) + 1) // 2 - 1], sw,
                     sw_ttft))
    for r in rows:
        print("cycle %d %d %d %d %d %d %d %d %d" % r)
    print("done", flush=True)


main()
