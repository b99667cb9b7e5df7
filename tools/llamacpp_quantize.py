#!/usr/bin/env python3
"""llamacpp_quantize.py: llama.cpp's own quantizer (llama_model_quantize in the libllama that
node-llama-cpp 3.21.1 ships, llama.cpp of its v0.4.0 release) on a GGUF file, through ctypes: a file
written by llama.cpp's GGUF writer, with its quantized types, for tests/test_gguf.c to import.

  PELAB_LLAMACPP_DIR=DIR python3 tools/llamacpp_quantize.py IN.gguf OUT.gguf TYPE

TYPE: q4_0, q8_0, q4_1, q5_0, q5_1, q2_k or q6_k (every tensor that can, the embedding and output
included: pure), or llama.cpp's mixes q3_k_m, q4_k_m and q5_k_m (its own choice per tensor, as
`llama-quantize` makes the files people download: Q6_K for some, Q4_K/Q5_K for others). Exits 2 when
DIR holds another node-llama-cpp than 3.21.1 (the parameter struct below is that version's)."""
import ctypes
import os
import sys

from ggml_to_float import llamacpp_bins  # beside this file: the version check and the libraries' folder

FTYPES = {"q4_0": 2, "q8_0": 7, "q4_1": 3, "q5_0": 8, "q5_1": 9, "q2_k": 10, "q6_k": 18,  # llama.h's
          "q3_k_m": 12, "q4_k_m": 15, "q5_k_m": 17}                                        # LLAMA_FTYPE_MOSTLY_*
GGML_TYPES = {"q4_0": 2, "q8_0": 8, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q2_k": 10, "q6_k": 14}  # pure: ggml's type


class QuantizeParams(ctypes.Structure):  # include/llama.h's llama_model_quantize_params at v0.4.0
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int), ("output_tensor_type", ctypes.c_int),
                ("token_embedding_type", ctypes.c_int), ("allow_requantize", ctypes.c_bool),
                ("quantize_output_tensor", ctypes.c_bool), ("only_copy", ctypes.c_bool), ("pure", ctypes.c_bool),
                ("keep_split", ctypes.c_bool), ("dry_run", ctypes.c_bool), ("imatrix", ctypes.c_void_p),
                ("kv_overrides", ctypes.c_void_p), ("tt_overrides", ctypes.c_void_p),
                ("prune_layers", ctypes.c_void_p), ("max_buf_size", ctypes.c_size_t)]


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in FTYPES:
        sys.exit("usage: llamacpp_quantize.py IN.gguf OUT.gguf " + "|".join(FTYPES))
    bins = llamacpp_bins("llamacpp_quantize", "llama.h")
    for lib in ("libggml-base.so", "libggml.v0.4.0.so"):
        ctypes.CDLL(os.path.join(bins, lib), mode=ctypes.RTLD_GLOBAL)
    llama = ctypes.CDLL(os.path.join(bins, "libllama.v0.4.0.so"))
    llama.llama_model_quantize_default_params.restype = QuantizeParams
    llama.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(QuantizeParams)]
    llama.llama_backend_init()
    p = llama.llama_model_quantize_default_params()
    kind = sys.argv[3]
    p.nthread, p.ftype = 1, FTYPES[kind]
    if kind in GGML_TYPES:
        p.pure = True
        p.output_tensor_type = p.token_embedding_type = GGML_TYPES[kind]
    rc = llama.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(p))
    sys.exit(0 if rc == 0 else 1)


if __name__ == "__main__":
    main()
