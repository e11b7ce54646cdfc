#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Write a tiny llama-architecture GGUF v3 model for the probes test.

    tiny_llama_gguf.py OUT.gguf

One transformer block, 64-wide embeddings, 4 heads, a SentencePiece-style
("llama") vocabulary of <unk> <s> </s>, the 256 byte-fallback tokens and a
few words, F32 weights from a fixed-seed generator (deterministic file).
It generates nonsense, but libllama loads it, tokenizes any text (byte
fallback) and decodes/samples with it like with a real model.
"""
import random
import struct
import sys

N_EMBD, N_HEAD, N_FF, N_LAYER, N_CTX = 64, 4, 128, 1, 256
WORDS = ["\u2581hello", "\u2581world", "\u2581the", "\u2581probe", "\u2581token", "\u2581a", "\u2581b"]

# GGUF value types
U32, I32, F32, STR, ARR = 4, 5, 6, 8, 9
GGML_F32 = 0
ALIGN = 32


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gstr(key) + struct.pack("<I", vtype)
    if vtype == U32:
        out += struct.pack("<I", value)
    elif vtype == F32:
        out += struct.pack("<f", value)
    elif vtype == STR:
        out += gstr(value)
    elif vtype == ARR:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        for it in items:
            out += gstr(it) if etype == STR else struct.pack("<f" if etype == F32 else "<i", it)
    return out


def main():
    out = sys.argv[1]
    rng = random.Random(1234)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)] + WORDS
    # token types: 1 normal, 2 unknown, 3 control, 6 byte
    ttype = [2, 3, 3] + [6] * 256 + [1] * len(WORDS)
    scores = [0.0, 0.0, 0.0] + [0.0] * 256 + [-float(i + 1) for i in range(len(WORDS))]
    n_vocab = len(tokens)

    meta = [
        kv("general.architecture", STR, "llama"),
        kv("general.name", STR, "ebpf-prof tiny test model"),
        kv("llama.context_length", U32, N_CTX),
        kv("llama.embedding_length", U32, N_EMBD),
        kv("llama.block_count", U32, N_LAYER),
        kv("llama.feed_forward_length", U32, N_FF),
        kv("llama.attention.head_count", U32, N_HEAD),
        kv("llama.attention.head_count_kv", U32, N_HEAD),
        kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        kv("llama.rope.dimension_count", U32, N_EMBD // N_HEAD),
        kv("llama.vocab_size", U32, n_vocab),
        kv("tokenizer.ggml.model", STR, "llama"),
        kv("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        kv("tokenizer.ggml.scores", ARR, (F32, scores)),
        kv("tokenizer.ggml.token_type", ARR, (I32, ttype)),
        kv("tokenizer.ggml.unknown_token_id", U32, 0),
        kv("tokenizer.ggml.bos_token_id", U32, 1),
        kv("tokenizer.ggml.eos_token_id", U32, 2),
    ]

    # (name, dims with ne0 first, init): "one" for norm weights, else random
    tensors = [("token_embd.weight", [N_EMBD, n_vocab], "rand"),
               ("output_norm.weight", [N_EMBD], "one"),
               ("output.weight", [N_EMBD, n_vocab], "rand")]
    for i in range(N_LAYER):
        b = "blk.%d." % i
        tensors += [(b + "attn_norm.weight", [N_EMBD], "one"),
                    (b + "attn_q.weight", [N_EMBD, N_EMBD], "rand"),
                    (b + "attn_k.weight", [N_EMBD, N_EMBD], "rand"),
                    (b + "attn_v.weight", [N_EMBD, N_EMBD], "rand"),
                    (b + "attn_output.weight", [N_EMBD, N_EMBD], "rand"),
                    (b + "ffn_norm.weight", [N_EMBD], "one"),
                    (b + "ffn_gate.weight", [N_EMBD, N_FF], "rand"),
                    (b + "ffn_up.weight", [N_EMBD, N_FF], "rand"),
                    (b + "ffn_down.weight", [N_FF, N_EMBD], "rand")]

    infos, blobs, off = b"", [], 0
    for name, dims, init in tensors:
        n = 1
        for d in dims:
            n *= d
        if init == "one":
            data = struct.pack("<%df" % n, *([1.0] * n))
        else:
            data = struct.pack("<%df" % n, *(rng.gauss(0.0, 0.2) for _ in range(n)))
        infos += gstr(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", GGML_F32, off)
        pad = -len(data) % ALIGN
        blobs.append(data + b"\0" * pad)
        off += len(data) + pad

    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta) + infos
    head += b"\0" * (-len(head) % ALIGN)
    with open(out, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)


if __name__ == "__main__":
    main()
