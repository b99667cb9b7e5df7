#!/usr/bin/env bash
# llama2c.sh: pelab's sampling beside llama2.c's `run` built with OpenMP, on the same model (the
# earlier entry point, kept for the commands in docs/PERFORMANCE.md): decode_sidebyside.sh with
# llama2.c alone, at OMP_NUM_THREADS threads (default 1).
#   LLAMA2C_DIR=/path/to/llama2.c tools/bench/llama2c.sh [REPEATS]
#   PELAB_SAMPLE_FLAGS="--precision bf16" ...   (more flags for pelab sample; llama2.c stays fp32)
if [[ -z "${LLAMA2C_DIR:-}" || ! -f "$LLAMA2C_DIR/run.c" ]]; then
    echo "llama2c.sh: skipped: set LLAMA2C_DIR to a checkout of karpathy/llama2.c (with run.c)"
    exit 0
fi
THREADS=${OMP_NUM_THREADS:-1} PELAB_LLAMACPP_DIR= exec "$(dirname "$0")/decode_sidebyside.sh" "${1:-5}"
