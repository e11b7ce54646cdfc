# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The users' workload with known per-cycle figures, for the live view
test (test_cycles_top_llama_tmux.sh): tools/bench/py_llama_experiment.py's
loop (tokenize, decode the prompt, 16 tokens each sampled and decoded, an
INSERT and a commit into a SQLite file) plus a 20 ms sleep.

usage: python3 llama_cycles.py LLAMA_DIR MODEL DB CYCLES [nowait]

Prints "ready PID", waits for SIGUSR1 (not with nowait: the loop starts
as soon as the model is loaded, as a script does), then per cycle
(CLOCK_MONOTONIC ns)
    cycle I start_ns infer_ns sql_ns tokenize_ns
(start: the llama_tokenize call; infer: from before the first decode to
after the last, sampling included; tokenize: the llama_tokenize call) and
"done".
"""
import ctypes as C
import os
import signal
import sqlite3
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tools", "bench"))
import py_llama_experiment as E  # noqa: E402

now = time.monotonic_ns


def main():
    d, model_path, db_path, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    llama, _keep = E.load(d)
    model = llama.llama_model_load_from_file(model_path.encode(),
                                             llama.llama_model_default_params())
    if not model:
        sys.exit("cannot load the model")
    cp = llama.llama_context_default_params()
    cp.b[0:4] = (512).to_bytes(4, "little")
    ctx = llama.llama_init_from_model(model, cp)
    vocab = llama.llama_model_get_vocab(model)
    smpl = llama.llama_sampler_init_greedy()
    llama.llama_set_n_threads(ctx, 1, 1)
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE IF NOT EXISTS runs(i INTEGER, prompt TEXT, toks INTEGER)")
    toks = (C.c_int32 * 256)()
    print("ready %d" % os.getpid(), flush=True)
    if len(sys.argv) <= 5 or sys.argv[5] != "nowait":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        signal.sigwait({signal.SIGUSR1})
    rows = []
    for i in range(n):
        prompt = E.build_prompt(i).encode()
        t0 = now()
        k = llama.llama_tokenize(vocab, prompt, len(prompt), toks, 256, True, False)
        a = now()
        llama.llama_memory_clear(llama.llama_get_memory(ctx), True)
        llama.llama_decode(ctx, llama.llama_batch_get_one(toks, k))
        for _ in range(16):
            t = C.c_int32(llama.llama_sampler_sample(smpl, ctx, -1))
            llama.llama_decode(ctx, llama.llama_batch_get_one(C.byref(t), 1))
        b = now()
        db.execute("INSERT INTO runs VALUES (?, ?, ?)", (i, prompt, k))
        db.commit()
        c = now()
        time.sleep(0.02)
        rows.append((i, t0, b - a, c - b, a - t0))
    for r in rows:
        print("cycle %d %d %d %d %d" % r)
    print("done", flush=True)


main()
