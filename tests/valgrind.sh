#!/usr/bin/env bash
# tests/valgrind.sh: valgrind memcheck over every main pelab command on tiny inputs.
#
#   tests/valgrind.sh            (from anywhere; works from the repository root)
#
# Builds a separate, valgrind-friendly copy (-O1 -g, no -march=native: valgrind does not
# decode AVX-512) in build-vg/ (./pelab and build/ are not touched), makes its inputs in a
# temporary directory, runs each command under memcheck and prints one line per command:
# name, exit status, valgrind errors, definitely / indirectly lost bytes, wall seconds,
# verdict and the command. Exits 1 if any command had a valgrind error, a definite or
# indirect leak, an unexpected exit status, or (error paths) not exactly one line on stderr.
#
# Environment: OMP_NUM_THREADS (default 1: one thread, no thread pool; valgrind serializes
# threads anyway), PELAB_SHARED (default ../shared/data: the stories260K parts are skipped
# with a message when it is absent), KEEP=1 keeps the temporary directory and its logs.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BIN=$ROOT/build-vg/pelab
SHARED=${PELAB_SHARED:-$ROOT/../shared/data}
S260=$SHARED/stories260K
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed" >&2; exit 2; }
if ! make -j2 OPTFLAGS="-O1 -g" BUILD=build-vg BIN=build-vg/pelab >/tmp/pelab-vg-build.$$.log 2>&1; then
    tail -20 /tmp/pelab-vg-build.$$.log >&2; rm -f /tmp/pelab-vg-build.$$.log
    echo "valgrind.sh: build of build-vg/pelab failed" >&2; exit 2
fi
rm -f /tmp/pelab-vg-build.$$.log

TMP=$(mktemp -d /tmp/pelab-vg.XXXXXX) || exit 2
if [ "${KEEP:-0}" = 1 ]; then echo "valgrind.sh: logs kept in $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
cd "$TMP" || exit 2

VG=(valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --track-origins=yes)
[ -f "$ROOT/tests/valgrind.supp" ] && VG+=(--suppressions="$ROOT/tests/valgrind.supp")

echo "$(valgrind --version), OMP_NUM_THREADS=$OMP_NUM_THREADS, binary build-vg/pelab (-O1 -g)"
printf '%-20s %4s %6s %9s %9s %7s  %-4s %s\n' name rc errors definite indirect seconds ok command
FAILED=0
N=0

# vg NAME EXPECT ARGS...: run build-vg/pelab ARGS under memcheck in $TMP.
# EXPECT: ok (exit 0) or err (exit 1 with exactly one line on stderr).
# stdout -> NAME.out, stderr -> NAME.err, valgrind's report -> NAME.vg.
# VG_TIMEOUT (seconds, default 900) bounds the run.
vg() {
    local name=$1 expect=$2; shift 2
    local t0 t1 rc errs def ind lines verdict=ok why=""
    t0=$(date +%s.%N)
    timeout "${VG_TIMEOUT:-900}" "${VG[@]}" --log-file="$name.vg" "$BIN" "$@" >"$name.out" 2>"$name.err"
    rc=$?
    t1=$(date +%s.%N)
    errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$name.vg" | tr -d , | tail -1)
    def=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$name.vg" | tr -d , | tail -1)
    ind=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$name.vg" | tr -d , | tail -1)
    # no LEAK SUMMARY: valgrind printed "All heap blocks were freed -- no leaks are possible"
    def=${def:-0}; ind=${ind:-0}
    if [ -z "$errs" ]; then errs="?"; verdict=FAIL; why="no valgrind summary (killed or timed out?)"; fi
    [ "$errs" != "?" ] && [ "$errs" -ne 0 ] && { verdict=FAIL; why="valgrind errors"; }
    [ "$def" -ne 0 ] || [ "$ind" -ne 0 ] && { verdict=FAIL; why="leak"; }
    if [ "$expect" = ok ]; then
        [ "$rc" -ne 0 ] && { verdict=FAIL; why="${why:-exit status $rc}"; }
    else
        lines=$(wc -l <"$name.err")
        [ "$rc" -ne 1 ] && { verdict=FAIL; why="${why:-exit status $rc, expected 1}"; }
        [ "$lines" -ne 1 ] && { verdict=FAIL; why="${why:-$lines lines on stderr, expected 1}"; }
    fi
    printf '%-20s %4s %6s %9s %9s %7.1f  %-4s pelab %s\n' "$name" "$rc" "$errs" "$def" "$ind" \
        "$(awk "BEGIN{print $t1 - $t0}")" "$verdict" "$*"
    N=$((N + 1))
    if [ "$verdict" != ok ]; then
        FAILED=$((FAILED + 1))
        echo "  -> $why; stderr: $(tail -1 "$name.err"); valgrind log:"
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|[0-9,]+ bytes in|   (at|by) 0x)' \
            "$name.vg" | head -40 | sed 's/^/     /'
    fi
}

# ---- inputs -----------------------------------------------------------------------------
vg synth ok synth stories --seed 2 --bytes 6000
cp synth.out text.txt
mkdir -p adir
# tiny models: 16 wide, 2 heads, L = 16; every run validates (eval-every) and checkpoints
TR=(--data synth:stories --synth-bytes 20000 --dim 16 --layers 2 --heads 2 --seq-len 16 --batch 2
    --eval-every 2 --eval-windows 2 --ckpt-every 2 --log-every 1)

# ---- train ------------------------------------------------------------------------------
vg train-rope        ok train "${TR[@]}" --pos rope --kv-heads 1 --steps 6 --stop-after 3 --out rope.safetensors
vg train-resume      ok train "${TR[@]}" --pos rope --kv-heads 1 --steps 6 --out rope.safetensors --resume
vg train-t5          ok train "${TR[@]}" --pos t5 --steps 3 --out t5.safetensors
vg train-alibi       ok train "${TR[@]}" --pos alibi --steps 3 --out alibi.safetensors
vg train-learned     ok train "${TR[@]}" --pos learned --untied --steps 3 --out learned.safetensors
vg train-kerple      ok train "${TR[@]}" --pos kerple --steps 3 --out kerple.safetensors
vg train-sinusoidal  ok train "${TR[@]}" --pos sinusoidal --steps 3 --out sinusoidal.safetensors
vg train-xpos        ok train "${TR[@]}" --pos xpos --steps 3 --out xpos.safetensors
vg train-fope        ok train "${TR[@]}" --pos fope --steps 3 --out fope.safetensors
vg train-nope        ok train "${TR[@]}" --pos nope --steps 3 --out nope.safetensors
vg train-finetune-pi ok train "${TR[@]}" --init rope.safetensors --scale pi:2 --seq-len 32 --steps 2 \
    --out rope-pi2.safetensors

# ---- info -------------------------------------------------------------------------------
vg info-rope    ok info rope.safetensors
vg info-t5      ok info t5.safetensors
vg info-learned ok info learned.safetensors

# ---- export / import --------------------------------------------------------------------
mkdir -p rt
vg export-rope  ok export rope.safetensors --llama2c rt/model.bin
vg import-rt    ok import --llama2c rt/model.bin --tokenizer rt/tokenizer.bin --out rt.safetensors
vg info-rt      ok info rt.safetensors
HAVE_S260=0
if [ -f "$S260/stories260K.bin" ] && [ -f "$S260/tok512.bin" ]; then
    HAVE_S260=1
    vg import-s260 ok import --llama2c "$S260/stories260K.bin" --tokenizer "$S260/tok512.bin" --out s260.safetensors
    vg info-s260   ok info s260.safetensors
else
    echo "skip: $S260 absent: import / info / sample / eval of stories260K skipped"
fi

# ---- sample -----------------------------------------------------------------------------
# -n 40 past L = 16 (rope is unbounded); dynamic-ntk past L makes the decoder recompute the prefix
vg sample-rope         ok sample rope.safetensors --prompt "Once" -n 40 --seed 1
vg sample-rope-nocache ok sample rope.safetensors --prompt "Once" -n 40 --seed 1 --no-cache
vg sample-rope-dynntk  ok sample rope.safetensors --prompt "Once" -n 40 --seed 1 --scale dynamic-ntk
vg sample-t5           ok sample t5.safetensors --prompt "Once" -n 20 --seed 1 --top-k 5
vg sample-learned      ok sample learned.safetensors --prompt "Once" -n 8 --seed 1 --temp 0
vg sample-rt           ok sample rt.safetensors --prompt "Once" -n 20 --seed 1
vg sample-rt-nocache   ok sample rt.safetensors --prompt "Once" -n 20 --seed 1 --no-cache
if [ "$HAVE_S260" = 1 ]; then
    vg sample-s260         ok sample s260.safetensors --temp 0 -n 64
    vg sample-s260-nocache ok sample s260.safetensors --temp 0 -n 32 --no-cache
    vg sample-s260-topp    ok sample s260.safetensors --temp 1.0 --top-p 0.9 --seed 133742 --steps 64 \
        --prompt "Once upon a time"
fi

# ---- score / eval -----------------------------------------------------------------------
vg score-rope      ok score rope.safetensors text.txt --per-token tokens.csv
vg score-rope-yarn ok score rope.safetensors text.txt --len 64 --scale yarn:4
vg eval-rope       ok eval rope.safetensors --data text.txt --mult 0.5,1,2,4 --scale none,yarn:4,dynamic-ntk \
    --buckets 4 --max-tokens 1024 --csv eval.csv --json eval.json
vg eval-learned    ok eval learned.safetensors --data text.txt --mult 0.5,1,2 --buckets 4 --max-tokens 512
vg eval-alibi      ok eval alibi.safetensors --data text.txt --lengths 8,32 --stride 4 --buckets 2 --max-tokens 256
if [ "$HAVE_S260" = 1 ]; then
    # one window of 600 tokens, past its L = 512 (memcheck runs this model at ~30 tokens/s)
    vg eval-s260   ok eval s260.safetensors --data text.txt --lengths 600 --scale yarn:4,dynamic-ntk \
        --stride 600 --buckets 4 --max-tokens 601
fi

# ---- error paths: exit 1, one line on stderr, and no valgrind error or leak -------------
SIZE=$(stat -c %s rope.safetensors)
head -c 100 rope.safetensors >trunc-header.safetensors
head -c $((SIZE - 100)) rope.safetensors >trunc-data.safetensors
head -c 1000 rt/model.bin >trunc-model.bin
vg err-trunc-header  err info trunc-header.safetensors
vg err-trunc-data    err info trunc-data.safetensors
vg err-trunc-sample  err sample trunc-data.safetensors -n 4
vg err-dir           err info adir
vg err-dir-eval      err eval rope.safetensors --data adir
vg err-missing       err info missing.safetensors
vg err-missing-score err score rope.safetensors missing.txt
vg err-import-trunc  err import --llama2c trunc-model.bin --tokenizer rt/tokenizer.bin --out bad.safetensors
vg err-learned-past  err sample learned.safetensors -n 40 --temp 0 --seed 1

# ---- FIFOs: refused at once, not a hang -------------------------------------------------
mkfifo x.fifo
t0=$(date +%s.%N); timeout 5 "$BIN" info x.fifo >fifo-native.out 2>fifo-native.err; rc=$?; t1=$(date +%s.%N)
verdict=ok; [ "$rc" -eq 1 ] && [ "$(wc -l <fifo-native.err)" -eq 1 ] || verdict=FAIL
printf '%-20s %4s %6s %9s %9s %7.1f  %-4s timeout 5 pelab info x.fifo (no valgrind)\n' fifo-native "$rc" - - - \
    "$(awk "BEGIN{print $t1 - $t0}")" "$verdict"
N=$((N + 1)); [ "$verdict" = ok ] || { FAILED=$((FAILED + 1)); echo "  -> stderr: $(cat fifo-native.err)"; }
VG_TIMEOUT=60 vg err-fifo-info   err info x.fifo
VG_TIMEOUT=60 vg err-fifo-sample err sample x.fifo -n 4

echo "valgrind.sh: $N commands, $FAILED failed"
[ "$FAILED" -eq 0 ]
