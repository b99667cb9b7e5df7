#!/bin/sh
# extension.sh MODE OUTDIR [SEED]: the inference-time extension methods of docs/EXPERIMENTS.md section 12
# (Self-Extend, ReRoPE, leaky ReRoPE, StreamingLLM) against PI, NTK, YaRN and dynamic NTK, both
# protocols to 16L. MODE:
#   shakespeare       the tinyshakespeare RoPE run of section 10 (L = 128, seed SEED: its checkpoint
#                     at $RUNS/rope_sSEED.safetensors), on the held-out last 10% of the text
#   stories           stories260K (llama2.c, L = 512) on the TinyStories validation prefix
#   stream            StreamingLLM's loss far past L on the SEED run: 16L and 64L windows, stream:4:W
#                     against a window without sinks, the dense model and the sliding-window
#                     recomputation
#   stream-stories    the same on stories260K (16L and 64L)
#   memory            peak RSS of sample to 10L, 100L and 1000L, dense against stream
# Needs ../shared/data for stories260K (tinyshakespeare: the shipped data/corpora). One core per job (THREADS).
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
    "data/corpora/tinyshakespeare.txt" "$heldout"
case $mode in
shakespeare)
    seed=$3
    # S = 16 for the rules; Self-Extend at two (G, W): reaching 8 (128 - 64) + 64 = 576 and 32 x 96 + 32
    # = 3104 positions; ReRoPE at W = L/2; leaky at K = 32 so that 64 + 1983/32 stays under L at 16L
    $pelab eval "$runs/rope_s$seed.safetensors" --data "$heldout" --lengths 128,256,512,1024,2048 \
        --scale none,pi:16,ntk:16,yarn:16,dynamic-ntk,selfextend:8:64,selfextend:32:32,rerope:64,leaky-rerope:64:32 \
        --max-tokens 32768 --buckets 16 --threads "$threads" --csv "$out/shakespeare_s$seed.csv" \
        > "$out/shakespeare_s$seed.txt"
    # the same methods with Qwen's logn on the queries (Su pairs ReRoPE with it)
    $pelab eval "$runs/rope_s$seed.safetensors" --data "$heldout" --lengths 128,512,2048 --attn-scale logn \
        --scale none,rerope:64,leaky-rerope:64:32,selfextend:32:32 --max-tokens 32768 --buckets 16 \
        --threads "$threads" --csv "$out/logn_s$seed.csv" > "$out/logn_s$seed.txt"
    ;;
stories)
    [ -f "$out/s260.safetensors" ] || $pelab import --llama2c "$data/stories260K/stories260K.bin" \
        --tokenizer "$data/stories260K/tok512.bin" --out "$out/s260.safetensors"
    $pelab eval "$out/s260.safetensors" --data "$data/tinystories/valid_prefix.txt" \
        --lengths 512,1024,2048,4096,8192 \
        --scale none,pi:16,ntk:16,yarn:16,dynamic-ntk,selfextend:32:128,selfextend:8:256,rerope:256,leaky-rerope:256:32 \
        --max-tokens 65536 --buckets 16 --threads "$threads" --csv "$out/stories.csv" > "$out/stories.txt"
    ;;
stream)
    # StreamingLLM on the tinyshakespeare run of seed SEED: 16L and 64L windows decoded through a
    # cache of L keys (4 sinks + 123 recent + the query, and a plain window of 127 + the query) or 2L;
    # the dense model;
    # and the sliding window with recomputation (every token scored after >= 120 tokens of its own
    # context, recomputed for each: the paper's oracle baseline)
    seed=$3
    ckpt="$runs/rope_s$seed.safetensors"
    $pelab eval "$ckpt" --data "$heldout" --lengths 2048,8192 --scale none,stream:4:123,stream:0:127,stream:4:251 \
        --max-tokens 32768 --buckets 16 --threads "$threads" --csv "$out/stream_s$seed.csv" > "$out/stream_s$seed.txt"
    $pelab eval "$ckpt" --data "$heldout" --lengths 128 --stride 8 --max-tokens 32768 --threads "$threads" \
        --csv "$out/recompute_s$seed.csv" > "$out/recompute_s$seed.txt"
    ;;
stream-stories)
    $pelab eval "$out/s260.safetensors" --data "$data/tinystories/valid_prefix.txt" --lengths 8192,32768 \
        --scale stream:4:507,stream:0:511 --max-tokens 65536 --buckets 16 --threads "$threads" \
        --csv "$out/stream_stories.csv" > "$out/stream_stories.txt"
    $pelab eval "$out/s260.safetensors" --data "$data/tinystories/valid_prefix.txt" --lengths 512 --stride 64 \
        --max-tokens 65536 --threads "$threads" --csv "$out/recompute_stories.csv" > "$out/recompute_stories.txt"
    ;;
memory)
    # peak RSS of sample to 10L, 100L and 1000L: dense against stream:4:123 (tinyshakespeare seed 1)
    for n in 1280 12800 128000; do
        for rule in none stream:4:123; do
            [ "$rule" = none ] && [ "$n" -gt 12800 ] && continue
            /usr/bin/time -f "$rule n=$n %e s %M KB" $pelab sample "$runs/rope_s1.safetensors" -n "$n" --temp 0 \
                --scale "$rule" --threads 1 > /dev/null 2>> "$out/memory.txt"
        done
    done
    ;;
*) echo "usage: extension.sh shakespeare|stories|stream|stream-stories|memory OUTDIR [SEED]" >&2; exit 2 ;;
esac
