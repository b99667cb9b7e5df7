#!/usr/bin/env python3
"""hf_llama_check.py: Hugging Face's Llama forward, written from its documented conventions
(rotate_half, repeat_kv, RMSNorm in float32, SiLU-gated MLP, every rope_scaling type) with
PyTorch alone -- no transformers -- on a directory written by `pelab export --hf DIR`, compared
with the per-token log-probs `pelab score CKPT TEXT --len N --per-token CSV` wrote for the same
text (a byte model: token id = byte value; windows start every N tokens and hold N + 1).

usage: hf_llama_check.py DIR TEXT N CSV [DIR TEXT N CSV ...] [--tol 1e-4]
prints "DIR: max |delta log p| = X over T tokens" per directory and exits 1 when one X > tol (or
the tokens differ).
"""
import json
import math
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def load_safetensors(path):
    """a tiny reader: u64 header length, JSON header, raw little-endian data"""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = memoryview(raw)[8 + n :]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[b:end]), dtype=DTYPES[e["dtype"]])
        out[name] = t.reshape(e["shape"]).float()
    return out


def rope_parameters(cfg, seq_len):
    """inverse frequencies and the attention factor, as transformers' ROPE_INIT_FUNCTIONS"""
    base = cfg.get("rope_theta", 10000.0)
    hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    dim = int(hd * cfg.get("partial_rotary_factor", 1.0))
    rs = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    kind = rs.get("rope_type", rs.get("type", "default"))
    max_pos = cfg["max_position_embeddings"]

    def inv_of(b):
        return 1.0 / (b ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))

    inv, attn = inv_of(base), 1.0
    if kind == "linear":
        inv = inv / rs["factor"]
    elif kind == "dynamic":
        factor = rs["factor"]
        if seq_len > max_pos:  # the base grows with the length past max_position_embeddings
            base = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
            inv = inv_of(base)
    elif kind == "yarn":
        factor = rs["factor"]
        orig = rs.get("original_max_position_embeddings")
        if orig:
            factor = max_pos / orig
        else:
            orig = max_pos

        def get_mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        attn = rs.get("attention_factor")
        if attn is None:
            ms, msa = rs.get("mscale"), rs.get("mscale_all_dim")
            attn = get_mscale(factor, ms) / get_mscale(factor, msa) if ms and msa else get_mscale(factor)
        beta_fast, beta_slow = rs.get("beta_fast") or 32, rs.get("beta_slow") or 1

        def corr_dim(rot):
            return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))

        low, high = corr_dim(beta_fast), corr_dim(beta_slow)
        if rs.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extrap = 1 - ramp
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        inv = (1.0 / (factor * pos_freqs)) * (1 - extrap) + (1.0 / pos_freqs) * extrap
    elif kind == "longrope":
        orig = cfg.get("original_max_position_embeddings") or rs.get("original_max_position_embeddings") or max_pos
        factor = max_pos / orig if cfg.get("original_max_position_embeddings") else rs.get("factor", 1.0)
        attn = rs.get("attention_factor")
        if attn is None:
            attn = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(orig))
        ext = torch.tensor(rs["long_factor"] if seq_len > orig else rs["short_factor"], dtype=torch.float32)
        inv = 1.0 / (ext * base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    elif kind == "llama3":
        factor, low_ff, high_ff = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wl, high_wl = old / low_ff, old / high_ff
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - low_ff) / (high_ff - low_ff)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        inv = torch.where(medium, smoothed, scaled)
    elif kind != "default":
        sys.exit(f"hf_llama_check: rope type {kind} not implemented")
    return inv, attn


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rms_norm(x, w, eps):
    x32 = x.float()
    return w * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps))


def forward(cfg, w, ids):
    """log-probs [T, V] of one sequence at positions 0..T-1"""
    H, KV, L = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    hd = cfg.get("head_dim") or cfg["hidden_size"] // H
    eps = cfg["rms_norm_eps"]
    T = len(ids)
    inv, attn = rope_parameters(cfg, T)
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * attn, emb.sin() * attn
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    mask = torch.full((T, T), float("-inf")).triu(1)
    for layer in range(L):
        p = f"model.layers.{layer}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(T, H, hd).transpose(0, 1)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(T, KV, hd).transpose(0, 1)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(T, KV, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(H // KV, dim=0), v.repeat_interleave(H // KV, dim=0)  # repeat_kv
        probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(hd) + mask, dim=-1, dtype=torch.float32)
        x = x + (probs @ v).transpose(0, 1).reshape(T, H * hd) @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = h @ w[p + "mlp.gate_proj.weight"].T, h @ w[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    return torch.log_softmax(x @ head.T, dim=-1)


def main():
    args = sys.argv[1:]
    tol = 1e-4
    if "--tol" in args:
        i = args.index("--tol")
        tol = float(args[i + 1])
        del args[i : i + 2]
    if not args or len(args) % 4:
        sys.exit(__doc__)
    ok = True
    for i in range(0, len(args), 4):
        ok &= check(args[i], args[i + 1], int(args[i + 2]), args[i + 3], tol)
    sys.exit(0 if ok else 1)


def check(d, text, n, csv, tol):
    with open(f"{d}/config.json") as f:
        cfg = json.load(f)
    w = load_safetensors(f"{d}/model.safetensors")
    toks = list(open(text, "rb").read())
    rows = [line.split(",") for line in open(csv).read().splitlines()[1:]]
    worst, count, cache = 0.0, 0, {}
    for win, pos, tok, lp in rows:
        win, pos, tok, lp = int(win), int(pos), int(tok), float(lp)
        if win not in cache:
            cache[win] = forward(cfg, w, toks[win * n : win * n + n])
        ids = toks[win * n : win * n + n + 1]
        if ids[pos] != tok:
            print(f"{d}: window {win} position {pos}: token {tok} in {csv}, {ids[pos]} in {text}")
            return False
        worst = max(worst, abs(cache[win][pos - 1, tok].item() - lp))
        count += 1
    print(f"{d}: max |delta log p| = {worst:.3g} over {count} tokens (tolerance {tol:g})")
    return count > 0 and worst <= tol


if __name__ == "__main__":
    main()
