#!/bin/sh
# sinks.sh MODE OUTDIR [SEED]: StreamingLLM's claim 2 on models trained with a sink token
# (docs/EXPERIMENTS.md section 12.4). MODE:
#   shakespeare  two RoPE models on tinyshakespeare (L = 128, dim 96, 3 layers, 4 heads, 2000
#                steps): "sink", every training window opened by byte 0 (train --sink-token 0), and
#                "plain", windows cut anywhere; held-out text: the last 10% of the file
#   stories      one sink-token model on synth:stories (L = 128, dim 96, 4 layers, 4 heads, 2000
#                steps); held-out text: `pelab synth stories --seed 99`
# Then for each model
#   - probe sinks: the first token's attention per layer from the queries in the second half of
#     64 held-out windows of L (a sink model's windows opened by byte 0, as in training);
#   - eval: held-out streams of 64L (8192 bytes; shakespeare: 4 from offsets 0, 25000, 50000,
#     75000 of the held-out text; stories: 2 from offsets 0 and 16384), each decoded as one window:
#     dense, stream:4:123 and stream:0:127 (a query sees L keys either way); a sink model's streams
#     start with byte 0 (eval --bos 0), as StreamingLLM's start with BOS.
# Needs ../shared/data for stories (shakespeare: the shipped data/corpora). Models train side by side, one thread each.
set -eu
mode=$1
out=$2
seed=${3:-1}
data=${PELAB_SHARED_DATA:-../shared/data}
pelab=${PELAB:-./pelab}
mkdir -p "$out"
case $mode in
shakespeare)
    train_data="data/corpora/tinyshakespeare.txt"
    layers=3
    kinds="sink plain"
    offsets="0 25000 50000 75000"
    python3 -c "
import sys
t = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(t[int(len(t) * 0.9):])" "$train_data" "$out/heldout_$mode.txt"
    ;;
stories)
    train_data="synth:stories --synth-bytes 4000000"
    layers=4
    kinds="sink"
    offsets="0 16384"
    $pelab synth stories --seed 99 --bytes 40000 > "$out/heldout_$mode.txt"
    ;;
*) echo "usage: sinks.sh shakespeare|stories OUTDIR [SEED]" >&2; exit 2 ;;
esac
k=0
for off in $offsets; do
    python3 -c "
import sys
h = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(h[int(sys.argv[3]):int(sys.argv[3]) + 8192])" "$out/heldout_$mode.txt" \
        "$out/stream_${mode}_$k.txt" "$off"
    k=$((k + 1))
done
for kind in $kinds; do
    flag=""
    [ "$kind" = sink ] && flag="--sink-token 0"
    ckpt="$out/${mode}_${kind}_s$seed.safetensors"
    # shellcheck disable=SC2086 # train_data holds a flag for synth:stories
    [ -f "$ckpt" ] || $pelab train --data $train_data --pos rope --seq-len 128 --dim 96 --layers $layers \
        --heads 4 --batch 16 --steps 2000 --seed "$seed" --threads 1 --eval-every 500 --ckpt-every 0 \
        --out "$ckpt" $flag > "$out/${mode}_${kind}_s$seed.log" 2>&1 &
done
wait
for kind in $kinds; do
    flag=""
    bos=""
    [ "$kind" = sink ] && flag="--sink-token 0" && bos="--bos 0"
    ckpt="$out/${mode}_${kind}_s$seed.safetensors"
    $pelab probe "$ckpt" sinks --text "$out/heldout_$mode.txt" --windows 64 --threads 1 $flag \
        > "$out/probe_${mode}_${kind}_s$seed.txt"
    k=0
    for off in $offsets; do
        $pelab eval "$ckpt" --data "$out/stream_${mode}_$k.txt" --lengths 8192 --max-tokens 0 \
            --scale none,stream:4:123,stream:0:127 --buckets 16 --threads 1 $bos \
            --csv "$out/eval_${mode}_${kind}_s${seed}_$k.csv" > "$out/eval_${mode}_${kind}_s${seed}_$k.txt"
        k=$((k + 1))
    done
done
