#!/usr/bin/env python3
"""ggml_to_float.py: ggml's own dequantization and quantizer (the libggml-base that node-llama-cpp
3.21.1 ships, llama.cpp of its v0.4.0 release), through ctypes: the oracle of pelab's GGUF block
decoding (tests/test_gguf_quant.c).

  PELAB_LLAMACPP_DIR=DIR python3 tools/ggml_to_float.py to_float TYPE IN OUT
      IN: whole blocks of ggml type TYPE (its number); OUT: their float32 values (little-endian),
      as ggml_get_type_traits(TYPE)->to_float computes them
  PELAB_LLAMACPP_DIR=DIR python3 tools/ggml_to_float.py quantize TYPE N SEED OUT
      N blocks of pseudo-random floats (seed SEED; per block a scale from 1e-3 to 10 and, for
      every fourth block, an offset) quantized by ggml_quantize_chunk (no importance matrix) to OUT

Exits 2 when DIR holds another node-llama-cpp than 3.21.1 or its type table is not the one read below."""
import ctypes
import json
import os
import random
import sys


class TypeTraits(ctypes.Structure):  # ggml.h's struct ggml_type_traits at v0.4.0
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64), ("blck_size_interleave", ctypes.c_int64),
                ("type_size", ctypes.c_size_t), ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p),
                ("from_float_ref", ctypes.c_void_p)]


TO_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64)


def llamacpp_bins(tool, header):
    """the folder of node-llama-cpp 3.21.1's libraries under PELAB_LLAMACPP_DIR; exits 2 (naming tool)
    for another version, whose header (ggml.h, llama.h) the ctypes layouts here may not match"""
    root = os.path.join(os.environ.get("PELAB_LLAMACPP_DIR", "."), "node_modules")
    with open(os.path.join(root, "node-llama-cpp", "package.json")) as f:
        version = json.load(f)["version"]
    if version != "3.21.1":
        print(f"{tool}: node-llama-cpp {version}, not 3.21.1: its {header} may differ", file=sys.stderr)
        sys.exit(2)
    return os.path.join(root, "@node-llama-cpp", "linux-x64", "bins", "linux-x64")


def load():
    bins = llamacpp_bins("ggml_to_float", "ggml.h")
    ggml = ctypes.CDLL(os.path.join(bins, "libggml-base.so"))
    ggml.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
    ggml.ggml_get_type_traits.argtypes = [ctypes.c_int]
    ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    return ggml


def traits(ggml, t):
    tr = ggml.ggml_get_type_traits(t).contents
    name = tr.type_name.decode() if tr.type_name else ""
    # the layout above checked: a known name, its block, and to_float the library's dequantize_row_<name>
    sym = getattr(ggml, "dequantize_row_" + name, None) if name and name not in ("f32", "f16", "bf16") else None
    if not tr.to_float or (sym is not None and ctypes.cast(sym, ctypes.c_void_p).value != tr.to_float):
        print(f"ggml_to_float: type {t}: type traits {name!r} {tr.blck_size} {tr.type_size}: not ggml.h's layout",
              file=sys.stderr)
        sys.exit(2)
    return tr


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("to_float", "quantize"):
        sys.exit(__doc__)
    ggml = load()
    t = int(sys.argv[2])
    tr = traits(ggml, t)
    bs, ts = tr.blck_size, tr.type_size
    if sys.argv[1] == "to_float":
        data = open(sys.argv[3], "rb").read()
        if len(data) % ts:
            sys.exit(f"ggml_to_float: {len(data)} bytes: not whole blocks of {ts}")
        n = len(data) // ts * bs
        out = (ctypes.c_float * max(n, 1))()
        buf = ctypes.create_string_buffer(data, len(data))
        TO_FLOAT(tr.to_float)(ctypes.cast(buf, ctypes.c_void_p), out, n)
        with open(sys.argv[4], "wb") as f:
            f.write(bytes(out)[:4 * n])
    else:
        nb, seed = int(sys.argv[3]), int(sys.argv[4])
        rng = random.Random(seed)
        x = []
        for b in range(nb):
            scale = 10 ** rng.uniform(-3, 1)
            offset = rng.uniform(-2, 2) * scale if b % 4 == 3 else 0.0
            x += [rng.gauss(0, scale) + offset for _ in range(bs)]
        src = (ctypes.c_float * len(x))(*x)
        dst = ctypes.create_string_buffer(nb * ts)
        got = ggml.ggml_quantize_chunk(t, src, dst, 0, nb, bs, None)
        if got != nb * ts:
            sys.exit(f"ggml_to_float: quantize wrote {got} bytes, expected {nb * ts}")
        with open(sys.argv[5], "wb") as f:
            f.write(dst.raw)


if __name__ == "__main__":
    main()
