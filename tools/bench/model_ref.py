#!/usr/bin/env python3
"""model_ref.py: pelab's model in plain PyTorch, the reference `pelab bench` is compared with.

The same llama-style causal decoder as model/model.c with `--pos rope` (pelab's default):
token embedding, then n_layers x [RMSNorm -> causal multi-head attention with RoPE on q and k
(interleaved pairs (2i, 2i+1), base 10000) -> residual, RMSNorm -> SwiGLU MLP -> residual],
a final RMSNorm and an output head tied to the embedding; no biases; RMSNorm eps 1e-5;
AdamW with weight decay on matrices and the embedding only (never on norm gains).

Attention is written out ("naive"): the [T, T] score matrix of every head is materialised, so
memory is quadratic in the length, as in a plain PyTorch implementation; `attention="sdpa"`
uses torch.nn.functional.scaled_dot_product_attention instead where it exists (torch >= 2.0).
Sampling uses a KV cache (`KVCache`), so it does the same work per token as pelab's decoder.

Run as a script, it checks the model against a pelab checkpoint:

    python3 tools/bench/model_ref.py CKPT.safetensors TEXT_FILE [--len N]

loads the weights (`load_pelab`), prints the parameter count and the mean NLL of TEXT_FILE in
non-overlapping windows of N tokens (default: the training length); `pelab score CKPT TEXT_FILE
--len N` must print the same NLL (to float32 rounding).
"""
import argparse
import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from configs import CONFIGS  # the benchmark configurations S and M


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, positions, base=10000.0):
    """cos, sin of pos * base^(-2j/head_dim) for pairs j, [len(positions), head_dim/2], float32"""
    j = torch.arange(head_dim // 2, dtype=torch.float64)
    freq = base ** (-2.0 * j / head_dim)
    angle = positions.to(torch.float64)[:, None] * freq[None, :]
    return torch.cos(angle).float(), torch.sin(angle).float()


def apply_rope(x, cos, sin):
    """rotate interleaved pairs (x[2j], x[2j+1]) of x [B, H, T, hd] by the angles of cos/sin [T, hd/2]"""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class KVCache:
    """keys (after RoPE) and values of every layer, [1, H, max_len, hd] each, filled in order"""

    def __init__(self, cfg, max_len, batch=1):
        hd = cfg["dim"] // cfg["n_heads"]
        shape = (batch, cfg["n_heads"], max_len, hd)
        self.k = [torch.zeros(shape) for _ in range(cfg["n_layers"])]
        self.v = [torch.zeros(shape) for _ in range(cfg["n_layers"])]
        self.len = 0


class Attention(nn.Module):
    def __init__(self, dim, n_heads, attention="naive"):
        super().__init__()
        self.n_heads, self.head_dim, self.attention = n_heads, dim // n_heads, attention
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin, cache=None, layer=0):
        B, T, D = x.shape
        H, hd = self.n_heads, self.head_dim
        q = self.wq(x).view(B, T, H, hd).transpose(1, 2)
        k = self.wk(x).view(B, T, H, hd).transpose(1, 2)
        v = self.wv(x).view(B, T, H, hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        start = 0
        if cache is not None:  # append, then attend to everything cached
            start = cache.len
            cache.k[layer][:, :, start:start + T] = k
            cache.v[layer][:, :, start:start + T] = v
            k, v = cache.k[layer][:, :, :start + T], cache.v[layer][:, :, :start + T]
        if self.attention == "sdpa":
            mask = None if T == 1 else causal_mask(T, start + T, x.device).logical_not()
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # [B, H, T, start + T]
            if T > 1:
                scores.masked_fill_(causal_mask(T, start + T, x.device), float("-inf"))
            out = torch.softmax(scores, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(B, T, D))


def causal_mask(n_q, n_k, device):
    """True where query i (at position n_k - n_q + i) may not see key j"""
    return torch.ones(n_q, n_k, dtype=torch.bool, device=device).triu(n_k - n_q + 1)


class MLP(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)  # gate
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)  # down
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)  # up

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg, attention):
        super().__init__()
        self.attn_norm = RMSNorm(cfg["dim"], cfg.get("norm_eps", 1e-5))
        self.attn = Attention(cfg["dim"], cfg["n_heads"], attention)
        self.mlp_norm = RMSNorm(cfg["dim"], cfg.get("norm_eps", 1e-5))
        self.mlp = MLP(cfg["dim"], cfg["hidden_dim"])

    def forward(self, x, cos, sin, cache, layer):
        x = x + self.attn(self.attn_norm(x), cos, sin, cache, layer)
        return x + self.mlp(self.mlp_norm(x))


class Transformer(nn.Module):
    def __init__(self, cfg, attention="naive", rope_base=10000.0):
        super().__init__()
        if attention == "sdpa" and not hasattr(F, "scaled_dot_product_attention"):
            raise RuntimeError("attention=sdpa needs torch >= 2.0 (this is %s)" % torch.__version__)
        self.cfg, self.rope_base = cfg, rope_base
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["dim"])
        self.layers = nn.ModuleList(Block(cfg, attention) for _ in range(cfg["n_layers"]))
        self.final_norm = RMSNorm(cfg["dim"], cfg.get("norm_eps", 1e-5))
        self.init_weights()

    def init_weights(self, seed=1):
        """pelab's init: N(0, 0.02), projections into the residual N(0, 0.02 / sqrt(2 L)), gains 1"""
        g = torch.Generator().manual_seed(seed)
        resid_std = 0.02 / math.sqrt(2 * self.cfg["n_layers"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("norm.weight"):
                    p.fill_(1.0)
                else:
                    std = resid_std if name.endswith(("wo.weight", "w2.weight")) else 0.02
                    p.normal_(0.0, std, generator=g)

    def forward(self, tokens, targets=None, cache=None):
        """tokens [B, T] at positions cache.len.. (0.. without a cache); returns the mean
        cross-entropy with targets, else the logits [B, T, V]"""
        B, T = tokens.shape
        start = cache.len if cache is not None else 0
        hd = self.cfg["dim"] // self.cfg["n_heads"]
        cos, sin = rope_tables(hd, torch.arange(start, start + T), self.rope_base)
        x = self.tok_emb(tokens)
        for layer, block in enumerate(self.layers):
            x = block(x, cos, sin, cache, layer)
        if cache is not None:
            cache.len += T
        logits = F.linear(self.final_norm(x), self.tok_emb.weight)  # tied head
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))

    def n_params(self):
        return sum(p.numel() for p in self.parameters())


def make_optimizer(model, lr=1e-4, foreach=None):
    """AdamW as pelab's bench: betas (0.9, 0.95), eps 1e-8, decay 0.1 on matrices and the embedding"""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    kwargs = {} if foreach is None else {"foreach": foreach}
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, **kwargs)


# ---- pelab checkpoints ----

def read_safetensors(path):
    """(metadata, {name: float32 tensor}) of a pelab checkpoint (docs/FORMAT.md)"""
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise ValueError("%s: tensor %s has dtype %s, expected F32" % (path, name, t["dtype"]))
        begin, end = t["data_offsets"]
        raw = bytearray(buf[8 + n + begin:8 + n + end])
        tensors[name] = torch.frombuffer(raw, dtype=torch.float32).reshape(t["shape"])
    return meta, tensors


def load_pelab(path):
    """a Transformer holding the weights of a pelab checkpoint (rope, interleaved, tied, MHA only)"""
    meta, w = read_safetensors(path)
    pos = meta.get("pos", "")
    opts = dict(kv.split("=", 1) for kv in pos.split(":", 1)[1].split(",")) if ":" in pos else {}
    if not pos.startswith("rope") or opts.get("layout", "interleaved") != "interleaved" or \
            opts.get("scale", "none") != "none" or float(opts.get("fraction", 1)) != 1.0:
        raise ValueError("%s: position scheme %s; the reference implements plain interleaved rope" % (path, pos))
    if meta.get("tied") != "1" or meta.get("n_kv_heads") != meta.get("n_heads"):
        raise ValueError("%s: the reference implements tied heads without grouped-query attention" % path)
    cfg = {k: int(meta[k]) for k in ("dim", "n_layers", "n_heads", "hidden_dim", "vocab_size", "seq_len")}
    cfg["norm_eps"] = float(meta["norm_eps"])
    model = Transformer(cfg, rope_base=float(opts.get("base", 10000)))
    with torch.no_grad():
        model.tok_emb.weight.copy_(w["tok_emb"])
        model.final_norm.weight.copy_(w["final_norm"])
        for l, b in enumerate(model.layers):
            b.attn_norm.weight.copy_(w["layers.attn_norm"][l])
            b.mlp_norm.weight.copy_(w["layers.mlp_norm"][l])
            for name in ("wq", "wk", "wv", "wo"):
                getattr(b.attn, name).weight.copy_(w["layers." + name][l])
            for name in ("w1", "w2", "w3"):
                getattr(b.mlp, name).weight.copy_(w["layers." + name][l])
    return model


def mean_nll(model, tokens, length):
    """pelab score's protocol: windows [w*len, w*len + len], positions from 0, each target once"""
    nll, count = 0.0, 0
    with torch.no_grad():
        for s in range(0, len(tokens) - 1, length):
            window = tokens[s:s + length + 1]
            if len(window) < 2:
                break
            inp, tgt = window[:-1][None], window[1:]
            logp = torch.log_softmax(model(inp)[0], dim=-1)
            nll -= logp.gather(1, tgt[:, None]).sum().item()
            count += len(tgt)
    return nll / count, count


def main():
    ap = argparse.ArgumentParser(description="check the reference model against a pelab checkpoint")
    ap.add_argument("checkpoint")
    ap.add_argument("text", help="text file scored byte by byte, as `pelab score` does")
    ap.add_argument("--len", type=int, default=0, help="window length (default: the training length)")
    args = ap.parse_args()
    model = load_pelab(args.checkpoint)
    with open(args.text, "rb") as f:
        tokens = torch.tensor(list(f.read()), dtype=torch.long)
    length = args.len or model.cfg["seq_len"]
    nll, count = mean_nll(model, tokens, length)
    print("parameters: %d" % model.n_params())
    print("mean NLL %.6f nats/token over %d tokens (windows of %d)" % (nll, count, length))
    for name, cfg in CONFIGS.items():
        print("bench config %s: %d parameters" % (name, Transformer(cfg).n_params()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
