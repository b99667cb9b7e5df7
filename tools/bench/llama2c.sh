#!/usr/bin/env bash
# llama2c.sh: pelab's sampling beside llama2.c's `run` built with OpenMP, on the same model.
#   LLAMA2C_DIR=/path/to/llama2.c tools/bench/llama2c.sh [REPEATS]
#   PELAB_SAMPLE_FLAGS="--precision bf16" ...   (more flags for pelab sample)
#   LLAMA2C_MARCH=x86-64-v3 ...   (run.c's -march, default native: x86-64-v3 emulates an AVX2-only
#                                  CPU, beside PELAB=a pelab built -march=x86-64-v3 and PELAB_ISA=avx2)
# LLAMA2C_DIR is a checkout of https://github.com/karpathy/llama2.c (its run.c). The script builds
# run.c as llama2.c's README builds its OpenMP runner (gcc -Ofast -fopenmp -march=native), trains
# an M-shaped pelab model for a few steps (dim 288, 6 layers, 6 heads, hidden 768, T 256; the
# weights' values do not change the speed), exports it with `pelab export --llama2c`, then runs
# both greedily for 256 positions REPEATS times (default 5), alternating, and prints the median
# tokens/s of each (llama2.c's own "achieved tok/s", timed from its second step; pelab sample's
# "tokens/s after the first", timed the same way) and the ratio.
# Skips with a message when LLAMA2C_DIR is not set or holds no run.c.
set -euo pipefail
pelab=${PELAB:-./pelab}
repeats=${1:-5}
if [[ -z "${LLAMA2C_DIR:-}" || ! -f "$LLAMA2C_DIR/run.c" ]]; then
    echo "llama2c.sh: skipped: set LLAMA2C_DIR to a checkout of karpathy/llama2.c (with run.c)"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -Ofast -fopenmp -march="${LLAMA2C_MARCH:-native}" "$LLAMA2C_DIR/run.c" -lm -o "$work/runomp"
"$pelab" train --dim 288 --layers 6 --heads 6 --hidden 768 --seq-len 256 --batch 1 --steps 5 --eval-every 0 \
    --out "$work/m.safetensors" --quiet > /dev/null
"$pelab" export "$work/m.safetensors" --llama2c "$work/m.bin" --tokenizer-out "$work/tok.bin" > /dev/null
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
l2c=() ours=()
for ((i = 0; i < repeats; i++)); do
    l2c+=("$("$work/runomp" "$work/m.bin" -z "$work/tok.bin" -t 0 -n 256 2>&1 >/dev/null |
              awk '/achieved tok\/s/ {print $3}')")
    # shellcheck disable=SC2086
    ours+=("$("$pelab" sample "$work/m.safetensors" --temp 0 -n 255 ${PELAB_SAMPLE_FLAGS:-} 2>&1 >/dev/null |
               awk '/tokens\/s/ {for (k = 1; k <= NF; k++) if ($(k + 1) == "tokens/s") print $k}')")
done
a=$(printf '%s\n' "${l2c[@]}" | median)
b=$(printf '%s\n' "${ours[@]}" | median)
echo "llama2.c run (OpenMP) tokens/s: ${l2c[*]}  median $a"
echo "pelab sample tokens/s:          ${ours[*]}  median $b"
awk -v a="$a" -v b="$b" 'BEGIN {printf "pelab / llama2.c: x%.2f (M shape, greedy, 256 positions, %s threads)\n", b / a, ENVIRON["OMP_NUM_THREADS"] ? ENVIRON["OMP_NUM_THREADS"] : "all"}'
