#!/bin/sh
# run.sh OUTDIR: the stories260K study of docs/EXPERIMENTS.md section 4, from scratch.
# Needs ../shared/data (stories260K and tinystories/valid_prefix.txt); about 25 minutes on one core.
set -eu
out=${1:-runs/stories260K}
data=${PELAB_SHARED_DATA:-../shared/data}
pelab=${PELAB:-./pelab}
threads=${THREADS:-1}
mkdir -p "$out"
S=$data/stories260K
valid=$data/tinystories/valid_prefix.txt
$pelab import --llama2c "$S/stories260K.bin" --tokenizer "$S/tok512.bin" --out "$out/s260.safetensors"

# 1. post hoc: every rule at 256..2048 on the first 65,536 tokens of the validation stories
$pelab eval "$out/s260.safetensors" --data "$valid" --lengths 256,512,1024,2048 \
    --scale none,pi:4,ntk:4,dynamic-ntk,yarn:4,llama3:4,dynatan --max-tokens 65536 --buckets 16 \
    --csv "$out/posthoc.csv" --threads "$threads" > "$out/posthoc.txt"

# 2. fine-tuning: the first 90% of the stories (cut at a story boundary) to train, the rest held out
python3 - "$valid" "$out" <<'PY'
import sys
text = open(sys.argv[1], 'rb').read()
cut = text.index(b'\n\n', int(len(text) * 0.9)) + 2
open(sys.argv[2] + '/ft_train.txt', 'wb').write(text[:cut])
open(sys.argv[2] + '/ft_heldout.txt', 'wb').write(text[cut:])
PY
common="--data $out/ft_train.txt --val-frac 0.02 --steps 150 --lr 3e-4 --warmup 10 --log-every 50 --threads $threads"
# PI fine-tune at 1024 (8 x 1024 tokens a step) and a control: the same tokens at 512 without a rule
$pelab train --init "$out/s260.safetensors" --scale pi:2 --seq-len 1024 --batch 8 $common --out "$out/pi2_ft1024.safetensors"
$pelab train --init "$out/s260.safetensors" --seq-len 512 --batch 16 $common --out "$out/ctrl_ft512.safetensors"
ev="--data $out/ft_heldout.txt --lengths 256,512,1024,2048 --buckets 16 --threads $threads"
$pelab eval "$out/s260.safetensors" $ev --scale none,pi:2,ntk:2,yarn:2 --csv "$out/ft_orig.csv" > "$out/ft_orig.txt"
$pelab eval "$out/ctrl_ft512.safetensors" $ev --scale none,pi:2,ntk:2 --csv "$out/ft_ctrl.csv" > "$out/ft_ctrl.txt"
$pelab eval "$out/pi2_ft1024.safetensors" $ev --scale none,pi:4 --csv "$out/ft_pi2.csv" > "$out/ft_pi2.txt"

here=$(dirname "$0")
"$here/plot.sh" "$out/posthoc.csv" "$out"
