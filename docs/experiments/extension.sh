#!/bin/sh
# extension.sh MODE OUTDIR [SEED]: the inference-time extension methods of docs/EXPERIMENTS.md section 12
# (Self-Extend, ReRoPE, leaky ReRoPE, StreamingLLM) against PI, NTK, YaRN and dynamic NTK, both
# protocols to 16L. MODE:
#   shakespeare       the tinyshakespeare RoPE run of section 10 (L = 128, seed SEED: its checkpoint
#                     at $RUNS/rope_sSEED.safetensors), on the held-out last 10% of the text
#   stories           stories260K (llama2.c, L = 512) on the TinyStories validation prefix
#   stream            StreamingLLM's loss far past L: 64L-token windows, stream:4:W against a window
#                     without sinks, the dense model and the sliding-window recomputation
# Needs ../shared/data. One core per job (THREADS).
set -eu
mode=$1
out=$2
data=${PELAB_SHARED_DATA:-../shared/data}
pelab=${PELAB:-./pelab}
threads=${THREADS:-1}
runs=${RUNS:-/work/exp/new14/lm/runs}
mkdir -p "$out"
heldout="$out/shakespeare_heldout.txt"
[ -f "$heldout" ] || python3 -c "
import sys; t = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(t[int(len(t) * 0.9):])" \
    "$data/tinyshakespeare/input.txt" "$heldout"
case $mode in
shakespeare)
    seed=$3
    # S = 16 for the rules; Self-Extend at two (G, W): reaching 8 (128 - 64) + 64 = 576 and 32 x 96 + 32
    # = 3104 positions; ReRoPE at W = L/2; leaky at K = 32 so that 64 + 1983/32 stays under L at 16L
    $pelab eval "$runs/rope_s$seed.safetensors" --data "$heldout" --lengths 128,256,512,1024,2048 \
        --scale none,pi:16,ntk:16,yarn:16,dynamic-ntk,selfextend:8:64,selfextend:32:32,rerope:64,leaky-rerope:64:32 \
        --max-tokens 32768 --buckets 16 --threads "$threads" --csv "$out/shakespeare_s$seed.csv" \
        > "$out/shakespeare_s$seed.txt"
    ;;
stories)
    [ -f "$out/s260.safetensors" ] || $pelab import --llama2c "$data/stories260K/stories260K.bin" \
        --tokenizer "$data/stories260K/tok512.bin" --out "$out/s260.safetensors"
    $pelab eval "$out/s260.safetensors" --data "$data/tinystories/valid_prefix.txt" \
        --lengths 512,1024,2048,4096,8192 \
        --scale none,pi:16,ntk:16,yarn:16,dynamic-ntk,selfextend:32:128,selfextend:8:256,rerope:256,leaky-rerope:256:32 \
        --max-tokens 65536 --buckets 16 --threads "$threads" --csv "$out/stories.csv" > "$out/stories.txt"
    ;;
*) echo "usage: extension.sh shakespeare|stories|stream OUTDIR [SEED]" >&2; exit 2 ;;
esac
