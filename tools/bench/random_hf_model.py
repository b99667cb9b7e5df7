#!/usr/bin/env python3
"""random_hf_model.py: a Hugging Face Llama directory of a given config.json's shape with random
BF16 weights, for speed and memory figures of a real model's shape without downloading it.

    python3 tools/bench/random_hf_model.py CONFIG_DIR OUT_DIR [--seed 1]

CONFIG_DIR holds config.json (LlamaForCausalLM, tied or untied head; e.g.
../shared/data/hf-tokenizers/smollm2 for SmolLM2-135M) and optionally tokenizer.json; both are
copied to OUT_DIR with model.safetensors written beside them: every matrix entry a bf16 number of
random sign and magnitude in [2^-7, 2^-5) (about the 0.02 of an initialisation), every norm gain
1. The same seed gives the same file. Python's standard library only (no numpy, no torch);
SmolLM2-135M's shape (270 MB) takes about 5 seconds.
"""
import argparse
import json
import os
import random
import shutil
import struct


def tensors(cfg):
    """(name, shape) in file order, as HF's save_pretrained names them"""
    D, F, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    H = cfg["num_attention_heads"]
    hd = cfg.get("head_dim", D // H)
    KV = cfg.get("num_key_value_heads", H)
    out = [("model.embed_tokens.weight", [cfg["vocab_size"], D])]
    for l in range(L):
        p = "model.layers.%d." % l
        out += [(p + "input_layernorm.weight", [D]), (p + "self_attn.q_proj.weight", [H * hd, D]),
                (p + "self_attn.k_proj.weight", [KV * hd, D]), (p + "self_attn.v_proj.weight", [KV * hd, D]),
                (p + "self_attn.o_proj.weight", [D, H * hd]), (p + "post_attention_layernorm.weight", [D]),
                (p + "mlp.gate_proj.weight", [F, D]), (p + "mlp.up_proj.weight", [F, D]),
                (p + "mlp.down_proj.weight", [D, F])]
    out.append(("model.norm.weight", [D]))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", [cfg["vocab_size"], D]))
    return out


# high byte of a bf16: the sign bit kept from a random byte, exponent bits 0111100 (2^-7 or 2^-6
# with the low byte's top bit); the low byte random (that exponent bit and 7 mantissa bits)
HIGH = bytes((0x3C | (b & 0x80)) for b in range(256))


def random_bf16(rng, n):
    buf = bytearray(2 * n)
    buf[0::2] = rng.randbytes(n)
    buf[1::2] = rng.randbytes(n).translate(HIGH)
    return buf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    with open(os.path.join(a.config_dir, "config.json")) as f:
        cfg = json.load(f)
    os.makedirs(a.out_dir, exist_ok=True)
    cfg["torch_dtype"] = "bfloat16"
    with open(os.path.join(a.out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    tok = os.path.join(a.config_dir, "tokenizer.json")
    if os.path.exists(tok):
        shutil.copy(tok, os.path.join(a.out_dir, "tokenizer.json"))
    ts = tensors(cfg)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in ts:
        n = 1
        for s in shape:
            n *= s
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + 2 * n]}
        off += 2 * n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)  # the data start 8-byte aligned
    rng = random.Random(a.seed)
    path = os.path.join(a.out_dir, "model.safetensors")
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape in ts:
            n = 1
            for s in shape:
                n *= s
            f.write(b"\x80\x3f" * n if name.endswith("norm.weight") else random_bf16(rng, n))
    os.replace(path + ".tmp", path)
    print("%s: %d tensors, %d parameters (bf16, seed %d)" % (path, len(ts), off // 2, a.seed))


if __name__ == "__main__":
    main()
