# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The workload our users profile, for the stack-quality bench: a Python
experiment loop that drives the real llama.cpp libraries (prebuilt, from
@node-llama-cpp/linux-x64) through ctypes and logs each cycle to a SQLite
file database with Debian's libsqlite3.

usage: python3 py_llama_experiment.py LLAMA_DIR MODEL DB SECONDS

Each cycle: build a prompt in pure Python (nested calls), tokenize it,
decode it, generate 16 tokens, then INSERT a row and commit. Prints
"ready PID" once the model is loaded and "cycles N" at the end (with
EP_CYCLE_TIMES=1 also "cycle_ms" and each cycle's own wall time).
"""
import ctypes as C
import os
import sqlite3
import sys
import time


class Batch(C.Structure):
    _fields_ = [("n_tokens", C.c_int32), ("token", C.POINTER(C.c_int32)),
                ("embd", C.c_void_p), ("pos", C.c_void_p), ("n_seq_id", C.c_void_p),
                ("seq_id", C.c_void_p), ("logits", C.c_void_p)]


class Big(C.Structure):
    # Structs passed by value get more room than any version needs; the
    # callee reads its own layout (as tests/targets/llama_model.c does).
    _fields_ = [("b", C.c_ubyte * 1024)]


def load(d):
    mode = os.RTLD_NOW | os.RTLD_GLOBAL
    C.CDLL(os.path.join(d, "libggml-base.so"), mode=mode)
    ggml = C.CDLL(os.path.join(d, "libggml.v0.5.0.so"), mode=mode)
    llama = C.CDLL(os.path.join(d, "libllama.v0.5.0.so"), mode=mode)
    ggml.ggml_backend_load.restype = C.c_void_p
    ggml.ggml_backend_load.argtypes = [C.c_char_p]
    if not ggml.ggml_backend_load(os.path.join(d, "libggml-cpu-x64.so").encode()):
        sys.exit("cannot load the CPU backend")
    LOG = C.CFUNCTYPE(None, C.c_int, C.c_char_p, C.c_void_p)
    quiet = LOG(lambda *a: None)
    llama.llama_log_set.argtypes = [LOG, C.c_void_p]
    llama.llama_log_set(quiet, None)
    llama.llama_backend_init()
    for name, res, args in [
        ("llama_model_default_params", Big, []),
        ("llama_model_load_from_file", C.c_void_p, [C.c_char_p, Big]),
        ("llama_context_default_params", Big, []),
        ("llama_init_from_model", C.c_void_p, [C.c_void_p, Big]),
        ("llama_model_get_vocab", C.c_void_p, [C.c_void_p]),
        ("llama_tokenize", C.c_int32, [C.c_void_p, C.c_char_p, C.c_int32,
                                       C.POINTER(C.c_int32), C.c_int32, C.c_bool, C.c_bool]),
        ("llama_batch_get_one", Batch, [C.POINTER(C.c_int32), C.c_int32]),
        ("llama_decode", C.c_int32, [C.c_void_p, Batch]),
        ("llama_sampler_init_greedy", C.c_void_p, []),
        ("llama_sampler_sample", C.c_int32, [C.c_void_p, C.c_void_p, C.c_int32]),
        ("llama_set_n_threads", None, [C.c_void_p, C.c_int32, C.c_int32]),
        ("llama_memory_clear", None, [C.c_void_p, C.c_bool]),
        ("llama_get_memory", C.c_void_p, [C.c_void_p]),
    ]:
        f = getattr(llama, name)
        f.restype, f.argtypes = res, args
    return llama, quiet


def words(i, depth):
    if depth == 0:
        return ["w%d" % ((i * 7 + k) % 13) for k in range(6)]
    return words(i, depth - 1) + words(i + depth, depth - 1)[:2]


def build_prompt(i):
    return " ".join(words(i, 6))[:120]


def main():
    d, model_path, db_path, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    llama, _keep = load(d)
    model = llama.llama_model_load_from_file(model_path.encode(),
                                             llama.llama_model_default_params())
    if not model:
        sys.exit("cannot load the model")
    cp = llama.llama_context_default_params()
    cp.b[0:4] = (512).to_bytes(4, "little")  # n_ctx is the first field
    ctx = llama.llama_init_from_model(model, cp)
    vocab = llama.llama_model_get_vocab(model)
    smpl = llama.llama_sampler_init_greedy()
    llama.llama_set_n_threads(ctx, 1, 1)
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE IF NOT EXISTS runs(i INTEGER, prompt TEXT, toks INTEGER)")
    toks = (C.c_int32 * 256)()
    print("ready", os.getpid(), flush=True)
    end = time.monotonic() + seconds
    n = 0
    times = [] if os.environ.get("EP_CYCLE_TIMES") else None
    while time.monotonic() < end:
        t0 = time.monotonic()
        prompt = build_prompt(n).encode()
        k = llama.llama_tokenize(vocab, prompt, len(prompt), toks, 256, True, False)
        llama.llama_memory_clear(llama.llama_get_memory(ctx), True)
        llama.llama_decode(ctx, llama.llama_batch_get_one(toks, k))
        for _ in range(16):
            t = C.c_int32(llama.llama_sampler_sample(smpl, ctx, -1))
            llama.llama_decode(ctx, llama.llama_batch_get_one(C.byref(t), 1))
        db.execute("INSERT INTO runs VALUES (?, ?, ?)", (n, prompt, k))
        db.commit()
        n += 1
        if times is not None:
            times.append(time.monotonic() - t0)
    print("cycles", n, flush=True)
    if times is not None:  # EP_CYCLE_TIMES=1: the loop's own cycle times, ms
        print("cycle_ms", " ".join("%.1f" % (t * 1e3) for t in times), flush=True)


if __name__ == "__main__":
    main()
