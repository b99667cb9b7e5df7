#!/bin/sh
# make_corpus.sh [OUT]: seed corpora for the fuzz harnesses (tests/fuzz/README.md), one directory
# per harness under OUT (default build-fuzz/seeds), made fresh by ./pelab from tiny training runs,
# plus the real files of ../shared/data when it exists. Run from the repository root; builds
# ./pelab with make when it is missing. Deterministic: one thread, fixed seeds.
set -eu

OUT=${1:-build-fuzz/seeds}
PELAB=${PELAB:-./pelab}
SHARED=${SHARED:-../shared/data}

if [ ! -x "$PELAB" ]; then
    echo "make_corpus: $PELAB missing, building it with make"
    make -s pelab
fi

rm -rf "$OUT"
for h in checkpoint llama2c_model llama2c_tokenizer bpe json pos_spec text_data task_spec hf_tokenizer hf_index results claims gguf curve; do mkdir -p "$OUT/$h"; done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pelab-corpus.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

# tiny models: 1 layer, dim 8 (head_dim 4), L = 16, 2 steps: checkpoints of 15-40 KB
train() { # NAME FLAGS...: a checkpoint $WORK/NAME.st
    name=$1
    shift
    "$PELAB" train --steps 2 --dim 8 --layers 1 --heads 2 --seq-len 16 --batch 2 --synth-bytes 20000 --quiet \
        --threads 1 --eval-windows 2 --out "$WORK/$name.st" "$@" >/dev/null
}

# header seed of a checkpoint (fuzz_checkpoint's header form): the JSON header, a NUL, then the
# tokenizer tensor's bytes (the end of the file) when there is one
header_seed() { # CKPT OUT
    hlen=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    tail -c +9 "$1" | head -c "$hlen" >"$2"
    tlen=$(tail -c +9 "$1" | head -c "$hlen" | sed -n 's/.*"tokenizer":{"dtype":"U8","shape":\[\([0-9]*\)\].*/\1/p')
    if [ -n "$tlen" ]; then
        printf '\000' >>"$2"
        tail -c "$tlen" "$1" >>"$2"
    fi
}

# --- text: the synthetic corpus, and what tokenizers are trained on ---
"$PELAB" synth stories --seed 1 --bytes 20000 >"$WORK/stories.txt"
"$PELAB" tokenizer train --vocab 300 "$WORK/stories.txt" --out "$WORK/bpe300.tok" >/dev/null
"$PELAB" tokenizer train --vocab 512 "$WORK/stories.txt" --out "$WORK/bpe512.tok" >/dev/null
"$PELAB" tokenizer train --vocab 256 "$WORK/stories.txt" --out "$WORK/bpe256.tok" >/dev/null

# --- checkpoints: every scheme, options, every scaling rule, tokenizers, optimizer state ---
for s in nope learned sinusoidal rope alibi t5 kerple xpos fope; do
    train "$s" --pos "$s"
    cp "$WORK/$s.st" "$OUT/checkpoint/raw-$s.st" # training checkpoints carry the AdamW moments
    header_seed "$WORK/$s.st" "$OUT/checkpoint/hdr-$s"
done
i=0
for spec in "rope:layout=half,fraction=0.5,base=500" "learned:max_len=32" "sinusoidal:base=500,scale=1" \
    "t5:buckets=8,max_distance=32" "kerple:layers=separate" "xpos:scale_base=64,layout=half" \
    "fope:sigma=0.1,sigma_mode=std,pad=official,seed=3" "fope:layout=interleaved,base=100"; do
    i=$((i + 1))
    train "opt$i" --pos "$spec"
    header_seed "$WORK/opt$i.st" "$OUT/checkpoint/hdr-opt$i"
done
for rule in pi:4 ntk:4 dynamic-ntk dynamic-ntk:2 yarn:4 llama3:8 dynatan dynatan:32 dynatan-a dynatan-a:32; do
    f=$(printf '%s' "$rule" | tr : _)
    train "rule-$f" --pos rope --scale "$rule"
    header_seed "$WORK/rule-$f.st" "$OUT/checkpoint/hdr-rope-$f"
done
train xpos-yarn --pos xpos --scale yarn:2
header_seed "$WORK/xpos-yarn.st" "$OUT/checkpoint/hdr-xpos-yarn"
train gqa --pos rope --heads 4 --kv-heads 1 --untied --hidden 12 --layers 2
cp "$WORK/gqa.st" "$OUT/checkpoint/raw-gqa-untied.st"
header_seed "$WORK/gqa.st" "$OUT/checkpoint/hdr-gqa-untied"
train bpe --pos rope --tokenizer "$WORK/bpe300.tok"
cp "$WORK/bpe.st" "$OUT/checkpoint/raw-bpe.st"
header_seed "$WORK/bpe.st" "$OUT/checkpoint/hdr-bpe"

# --- llama2.c: export a rope model (tied and untied) and import it back (a checkpoint with a
# llama2c tokenizer and no optimizer state) ---
"$PELAB" export "$WORK/rope.st" --llama2c "$WORK/l2c.bin" --tokenizer-out "$WORK/l2ctok.bin" >/dev/null
train rope-untied --pos rope --untied --heads 4 --kv-heads 2
"$PELAB" export "$WORK/rope-untied.st" --llama2c "$WORK/l2c-untied.bin" --tokenizer-out "$WORK/l2ctok2.bin" >/dev/null
"$PELAB" import --llama2c "$WORK/l2c.bin" --tokenizer "$WORK/l2ctok.bin" --out "$WORK/imported.st" >/dev/null
cp "$WORK/imported.st" "$OUT/checkpoint/raw-imported-llama2c.st"
header_seed "$WORK/imported.st" "$OUT/checkpoint/hdr-imported-llama2c"
cp "$WORK/l2c.bin" "$OUT/llama2c_model/export-tied.bin"
cp "$WORK/l2c-untied.bin" "$OUT/llama2c_model/export-untied.bin"
# the header form (64 bytes or fewer): header plus a fill pattern
head -c 28 "$WORK/l2c.bin" >"$OUT/llama2c_model/hdr-tied"
head -c 28 "$WORK/l2c-untied.bin" >"$OUT/llama2c_model/hdr-untied"
{ head -c 28 "$WORK/l2c.bin"; printf '\315\314\314\075'; } >"$OUT/llama2c_model/hdr-tied-fill"
cp "$WORK/l2ctok.bin" "$OUT/llama2c_tokenizer/export-byte.bin"

# --- GGUF: exports of the byte, BPE and llama2.c-tokenized models, every rule GGUF carries, GQA
# untied, each matrix type (rows of 32 for Q8_0) ---
gguf() { # CKPT NAME [FLAGS]
    ck=$1 name=$2
    shift 2
    "$PELAB" export "$WORK/$ck.st" --gguf "$OUT/gguf/$name.gguf" "$@" >/dev/null
}
gguf rope rope-f32
gguf rope rope-f16 --gguf-type f16
gguf rope rope-bf16 --gguf-type bf16
gguf gqa gqa-untied
gguf bpe bpe
gguf imported llama2c
for rule in pi_4 ntk_4 yarn_4 llama3_8; do gguf "rule-$rule" "rule-$rule"; done
train q8 --pos rope:layout=half --dim 32 --heads 2 --hidden 32
gguf q8 half-q8_0 --gguf-type q8_0

# --- BPE files followed by text ---
for v in 256 300 512; do
    { cat "$WORK/bpe$v.tok"; head -c 600 "$WORK/stories.txt"; } >"$OUT/bpe/bpe$v-stories"
done
{ cat "$WORK/bpe300.tok"; printf 'caf\303\251 \342\202\254 \360\237\231\202 \000\001\377 123.45   x\n\n'; } >"$OUT/bpe/bpe300-utf8"
cp "$WORK/bpe512.tok" "$OUT/bpe/bpe512-alone"

# --- JSON: checkpoint headers and hand-written values ---
for s in rope t5 bpe imported; do
    hlen=$(od -An -tu8 -N8 "$WORK/$s.st" | tr -d ' ')
    tail -c +9 "$WORK/$s.st" | head -c "$hlen" >"$OUT/json/header-$s.json"
done
printf '%s' '{"a":[1,-2.5e+3,0,-0,1E-7,123456789012345678901234567890],"b":{"c":null,"d":true,"e":false}}' >"$OUT/json/values.json"
printf '%s' '["\u00e9\ud83d\ude00\n\t\"\\\/","caf\u00e9",""]' >"$OUT/json/escapes.json"
printf '"caf\303\251 \342\202\254 \360\237\231\202"' >"$OUT/json/utf8.json"
printf '%s' '[[[[[[[[[[[[[[[[{"k":[{"k":[]}]}]]]]]]]]]]]]]]]]' >"$OUT/json/nested.json"
printf ' \n\t 9223372036854775807 ' >"$OUT/json/bigint.json"
printf '{"__metadata__":{"format":"pelab"},"x":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}' >"$OUT/json/tensor.json"

# --- position specs and scaling rules: SPEC, newline, RULE ---
n=0
seed_spec() {
    n=$((n + 1))
    printf '%s\n%s' "$1" "$2" >"$OUT/pos_spec/spec$n"
}
for s in nope learned sinusoidal rope alibi t5 kerple xpos fope; do seed_spec "$s" none; done
seed_spec "learned:max_len=128" pi:2
seed_spec "sinusoidal:base=10000,scale=0.02" none
seed_spec "rope:base=500000,layout=half,fraction=0.25,scale=yarn:8,orig_len=32" llama3:4
seed_spec "rope:scale=dynamic-ntk:2" dynatan:100
seed_spec "t5:buckets=32,max_distance=128" none
seed_spec "kerple:layers=shared" none
seed_spec "xpos:base=10000,layout=interleaved,fraction=1,scale=none,orig_len=64,scale_base=512" ntk:4
seed_spec "fope:sigma=0.3,sigma_mode=gain,pad=identity,seed=1,base=10000,layout=half" none
for r in none pi:4 ntk:4 dynamic-ntk dynamic-ntk:2 yarn:4 llama3:8 dynatan dynatan:256 dynatan-a dynatan-a:256; do
    seed_spec rope "$r"
    seed_spec "xpos:scale=$r" "$r"
done
for m in selfextend:4:16 rerope:32 leaky-rerope:16:3 stream:4:60 string string:21:4 dca dca:48:3; do
    seed_spec rope "$m"
    seed_spec "xpos:layout=half" "$m"
    seed_spec alibi "$m"
done
seed_spec fope rerope:8
seed_spec "rope+sinks:init=0.5" dca
seed_spec "fox:bias=2+nope@1" none
seed_spec "fox+sinks" stream:2:8
seed_spec "pope:base=500+sinks" string:12:2
printf 'rope:fraction=0.5\000pi:1.5\n\001' >"$OUT/pos_spec/shape1"
printf 'fope:seed=7\npi:2\n\002' >"$OUT/pos_spec/shape2"

# --- task specs, newline, a prompt: every task's own example prompt, and options ---
n=0
for t in copy reverse sort add parity selective_copy count flipflop mqar mqar_dense passkey niah_single niah_multikey \
    niah_multivalue niah_multiquery vt cwe fwe; do
    n=$((n + 1))
    # the example's prompt (task show writes a newline as \n and marks the answer with [[ ]])
    prompt=$("$PELAB" task show "$t" --n 1 --seed $n | sed -n 's/^   //p' | sed 's/\[\[.*//')
    printf '%s\n%b' "$t" "$prompt" >"$OUT/task_spec/$t"
done
for s in "copy:len=1-3,vocab=2" "add:len=3,rev=0" "selective_copy:keep=100" "flipflop:write=0" \
    "mqar:pairs=52,queries=52" "passkey:len=45,depth=0.5" "count:vocab=52" "sort:len=40-60" \
    "mqar_dense:pairs=1-52,queries=1-52,gap=0-5" "niah_single:hay=needle,value=uuid,depth=0.5" \
    "niah_multikey:keys=1-8,hay=noise" "niah_multivalue:values=1-6,len=24-300" "niah_multiquery:queries=2,hay=needle" \
    "vt:hops=1-3,chains=1-3,hay=essay,len=60-200" "cwe:top=1-4,freq=3-5,rare=1-2,len=60-300" "fwe:alpha=1.1-4,top=1-4"; do
    n=$((n + 1))
    printf '%s\n\200' "$s" >"$OUT/task_spec/spec$n"
done

# --- text data: window, validation fraction, tokenizer byte (0 byte, 1 bpe, 2 llama2c), text ---
for tk in 0 1 2; do
    { printf "\\017\\031\\00$tk"; head -c 3000 "$WORK/stories.txt"; } >"$OUT/text_data/stories-tok$tk"
    { printf "\\003\\177\\00$tk"; printf 'Once upon a time.\n\n  She smiled. \n\n\ncaf\303\251 \342\202\254 \360\237\231\202\n\nThe end.\n\n'; } >"$OUT/text_data/docs-tok$tk"
done

# --- tokenizer.json, NUL, text: small files with the pipelines of the real families ---
hf_seed() { # NAME JSON: the file, then a NUL and a text with spaces, digits, accents, specials
    { printf '%s' "$2"; printf '\000Hello, my dog is 2024 caf\303\251  <s> </s> <|endoftext|>\n\n\t\342\226\201x \360\237\244\226'; } >"$OUT/hf_tokenizer/$1"
}
V='"vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x20>": 3, "<0x0A>": 4, "\u2581": 5, "H": 6, "e": 7, "l": 8, "o": 9, "\u2581H": 10, "ll": 11, "\u0120": 12, "2": 13, "0": 14, "\u0120H": 15, "He": 16}'
hf_seed llama2 '{"added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true}, {"id": 2, "content": "</s>", "special": true}], "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}, "pre_tokenizer": null, "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}, "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, '"$V"', "merges": ["\u2581 H", "l l", "H e"]}}'
hf_seed gpt2 '{"added_tokens": [{"id": 2, "content": "</s>", "special": true, "normalized": true}], "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}, "post_processor": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", '"$V"', "merges": ["\u0120 H", "H e"]}}'
hf_seed smollm2 '{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}]}, "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", '"$V"', "merges": [["\u0120", "H"], ["H", "e"]]}}'
hf_seed llama3 '{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]}, "post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}]}, "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "ignore_merges": true, '"$V"', "merges": ["\u0120 H", "H e"]}}'
hf_seed qwen2 '{"normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\p{N}| ?\\p{L}+|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]}, "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", '"$V"', "merges": ["\u0120 H"]}}'
hf_seed mistral '{"added_tokens": [{"id": 1, "content": "<s>", "special": true}], "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": false}, "decoder": {"type": "Sequence", "decoders": [{"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": false}, {"type": "ByteFallback"}, {"type": "Fuse"}]}, "model": {"type": "BPE", "byte_fallback": true, '"$V"', "merges": ["\u2581 H"]}}'
hf_seed split-behaviors '{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"String": "l"}, "behavior": "MergedWithNext", "invert": false}, {"type": "Split", "pattern": {"Regex": "e+"}, "behavior": "MergedWithPrevious", "invert": true}, {"type": "Split", "pattern": {"String": " "}, "behavior": "Contiguous", "invert": false}, {"type": "Split", "pattern": {"String": "o"}, "behavior": "Removed", "invert": false}]}, "model": {"type": "BPE", '"$V"', "merges": []}}'
printf '{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}' >"$OUT/hf_tokenizer/unigram"

# --- model.safetensors.index.json: pelab's own sharded export, and small hand-made ones ---
"$PELAB" train --steps 1 --dim 8 --layers 2 --heads 2 --seq-len 16 --batch 2 --synth-bytes 20000 --quiet --threads 1 \
    --eval-windows 1 --out "$WORK/shard.st" >/dev/null
"$PELAB" export "$WORK/shard.st" --hf "$WORK/shard-hf" --shard-mb 0.002 >/dev/null
cp "$WORK/shard-hf/model.safetensors.index.json" "$OUT/hf_index/pelab-export.json"
printf '{"metadata": {"total_size": 8}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00002-of-00002.safetensors"}}' >"$OUT/hf_index/two.json"
printf '{"weight_map": {"x": "../escape.safetensors"}}' >"$OUT/hf_index/escape.json"
printf '{"weight_map": {"x": "a.safetensors", "y": "a.safetensors", "z": ".."}}' >"$OUT/hf_index/dots.json"

# --- results files: byte 0 picks the form and layout (0 compare CSV, 2 eval CSV, 4 task CSV, 6 passkey
# CSV, 1 eval JSON, 3 task JSON), then the file: pelab eval's own, and hand-made rows of every kind ---
"$PELAB" eval "$WORK/rope.st" --data "$WORK/stories.txt" --max-tokens 300 --mult 0.5,1 --buckets 2 --keyppl-tokens 100 \
    --gen-tokens 24 --key-gain 0 --csv "$WORK/eval.csv" --json "$WORK/eval.json" --threads 1 >/dev/null 2>&1
{ printf '\002'; cat "$WORK/eval.csv"; } >"$OUT/results/eval-csv"
{ printf '\001'; cat "$WORK/eval.json"; } >"$OUT/results/eval-json"
"$PELAB" passkey "$WORK/rope.st" --lengths 16,48 --depths 10,90 --trials 1 --csv "$WORK/pk.csv" --threads 1 >/dev/null 2>&1
{ printf '\006'; cat "$WORK/pk.csv"; } >"$OUT/results/passkey-csv"
printf '\000kind,scheme,seed,rule,train_len,length,protocol,loss,status,bucket,pos_lo,pos_hi,n,accepted,computable,ci_lo,ci_hi
length,"rope:base=500,layout=half",1,none,16,32,nonoverlap,3.512345,ok,,,,999,-1,-1,3.5,3.52
length,learned,1,pi:2,16,64,sliding,,n/a (past table of 16),,,,0,16,-1,,
bucket,rope,1,none,16,32,nonoverlap,3.6,ok,3,6,7,124,-1,-1,,
passkey,rope,1,none,16,64,passkey,0.3333,ok,,,,30,-1,-1,0.166667,0.5
task,rope,2,none,16,40,exact,,n/a (longer than rand_pos 64),,,88,0,-1,-1,,
gate,rope,2,none,16,4,exact,0.900000,ok,,,12,100,-1,-1,0.8,1
gen,rope,1,none,16,128,rep4_data,0.125,ok,0,0,15,108,-1,-1,,
keyppl,rope,1,none,16,16,key,,n/a (no key tokens),,,,0,-1,-1,,
' >"$OUT/results/compare-csv"
printf '\000kind,scheme,seed,rule,train_len,length,protocol,loss,status,bucket,pos_lo,pos_hi,n,accepted,computable
length,rope,1,none,16,32,nonoverlap,3.5,ok,,,,1000,-1,-1
' >"$OUT/results/compare-old"
printf '\004task,depth,length,positions,n,exact_match,byte_accuracy,exact_ci_lo,exact_ci_hi,bytes_ci_lo,bytes_ci_hi
"passkey:len=64-128,depth=0-1",0.50,96,96,2,0.500000,0.750000,0.000000,1.000000,0.5,1
' >"$OUT/results/task-csv"
printf '\003{"command": "task eval", "cells": [\n    {"depth": null, "length": 4, "positions": 16, "past_train_len": false, "n": 5, "exact": 1, "exact_match": 0.200000, "answer_bytes": 20, "correct_bytes": 9, "byte_accuracy": 0.450000, "exact_ci95": [0.000000, 0.600000], "bytes_ci95": [null, 0.7]}\n  ]}\n' >"$OUT/results/task-json"

# --- real data from ../shared/data, when present ---
# claims: the suite's own file, and small ones that stop at each field's check
cp docs/claims.txt "$OUT/claims/claims.txt"
printf 'a | P | w | lm | 4L | rope+yarn:4 | better:rope+pi:4 |\n' >"$OUT/claims/better"
printf 'b | P | w | copy | 12 | nope | flat:5 |\r\nc | Q | w | - | - | - | - | why\n' >"$OUT/claims/flat"
printf 'e | P | w | mqar | 8 | alibi | learns:rope |\n' >"$OUT/claims/learns"
printf 'f | P | w | lm | 4L | rope+pi:4+ft | keygap:rope |\n' >"$OUT/claims/keygap"
printf 'g | P | w | lm | 4L | rope | better:t5 | | 5,8,12,18,24\nh | P | w | lm | 4L | t5 | better:rope | |\n' >"$OUT/claims/looks"
printf 'd | P | w | lm | 4L | rope | degrades:0.5 |\nd | P | w | lm | 4L | rope | flat:1 |\n' >"$OUT/claims/twice"

# per-layer attention configs (Gemma 3, gpt-oss, Llama 4 shapes): the json harness reads them as HF configs
for f in tests/configs/*.json; do cat "$f" >"$OUT/json/cfg-$(basename "$f")"; done
printf '5*window=512,base=10000:global,base=1000000' >"$OUT/pos_spec/pattern-gemma3"
printf '3*chunk=8192:global,nope' >"$OUT/pos_spec/pattern-irope"

if [ -d "$SHARED" ]; then
    if [ -f "$SHARED/stories260K/tok512.bin" ]; then
        cat "$SHARED/stories260K/tok512.bin" >"$OUT/llama2c_tokenizer/stories260K-tok512.bin"
    fi
    if [ -f "$SHARED/stories260K/stories260K.bin" ]; then
        # the real model is 1 MB, past -max_len: its header in the header form
        head -c 28 "$SHARED/stories260K/stories260K.bin" >"$OUT/llama2c_model/stories260K-hdr"
    fi
    if [ -f "$SHARED/stories260K/stories260K.bin" ] && [ -f "$SHARED/stories260K/tok512.bin" ]; then
        if "$PELAB" import --llama2c "$SHARED/stories260K/stories260K.bin" --tokenizer "$SHARED/stories260K/tok512.bin" \
            --out "$WORK/s260k.st" >/dev/null; then
            header_seed "$WORK/s260k.st" "$OUT/checkpoint/hdr-stories260K"
        fi
    fi
    for f in "$SHARED"/hf-configs/*.json; do
        if [ -f "$f" ]; then cat "$f" >"$OUT/json/hf-$(basename "$f")"; fi
    done
    if [ -f "$SHARED/tinyshakespeare/input.txt" ]; then
        { printf '\037\031\000'; head -c 4000 "$SHARED/tinyshakespeare/input.txt"; } >"$OUT/text_data/shakespeare-byte"
        { printf '\037\031\001'; head -c 4000 "$SHARED/tinyshakespeare/input.txt"; } >"$OUT/text_data/shakespeare-bpe"
        "$PELAB" tokenizer train --vocab 400 "$SHARED/tinyshakespeare/input.txt" --out "$WORK/shak.tok" >/dev/null
        { cat "$WORK/shak.tok"; head -c 2000 "$SHARED/tinyshakespeare/input.txt"; } >"$OUT/bpe/shakespeare400"
    fi
    if [ -f "$SHARED/tinystories/valid_prefix.txt" ]; then
        { printf '\037\031\002'; head -c 4000 "$SHARED/tinystories/valid_prefix.txt"; } >"$OUT/text_data/tinystories-l2c"
        { printf '\007\040\000'; head -c 2000 "$SHARED/tinystories/valid_prefix.txt"; } >"$OUT/text_data/tinystories-byte"
    fi
    echo "make_corpus: added the real files of $SHARED"
else
    echo "make_corpus: $SHARED not found: seeds from ./pelab only (no stories260K, tinyshakespeare, tinystories)"
fi

# --- loss curves a resume reads back: bytes 0-1 the step resumed at (little-endian, plus 1), then curve.csv
printf '\011\000step,tokens,lr,train_loss,val_loss\n1,64,0.0001,5.5,\n5,320,0.0005,4.9,5.01\n10,640,0.001,4.2,4.3\n15,960,0.0009,3.9,\n' >"$OUT/curve/resume-at-10"
printf '\377\000step,tokens,lr,train_loss,val_loss\n5,320,0.0005,4.9,5.010000\n10,640,0.001,4.2,4.300000\n11,704,0.001,4.1' >"$OUT/curve/cut-by-a-kill"
printf '\003\000step,tokens,lr,train_loss,val_loss\n' >"$OUT/curve/header-only"

for h in checkpoint llama2c_model llama2c_tokenizer bpe json pos_spec text_data task_spec hf_tokenizer hf_index results claims gguf curve; do
    printf 'make_corpus: %-18s %3d seeds, %7d bytes\n' "$h" "$(ls "$OUT/$h" | wc -l)" "$(cat "$OUT/$h"/* | wc -c)"
done
