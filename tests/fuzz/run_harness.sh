#!/bin/sh
# run_harness.sh NAME SECONDS MAX_LEN [DICT]: one harness of tests/fuzz (called by fuzz.mk).
# First every committed regression input of tests/fuzz/regress/NAME once, then SECONDS of fuzzing
# from a fresh working corpus (build-fuzz/corpus/NAME) seeded with build-fuzz/seeds/NAME. Writes the
# log to build-fuzz/logs/NAME.log, one summary line to build-fuzz/summary/NAME, crash inputs to
# build-fuzz/findings/NAME/; exit status 1 on any crash, leak, timeout, OOM or sanitizer report.
set -u
NAME=$1
SECONDS_=$2
MAX_LEN=$3
DICT=${4:-}
DIR=${FUZZ_DIR:-build-fuzz}
BIN=$DIR/fuzz_$NAME
LOG=$DIR/logs/$NAME.log
FIND=$DIR/findings/$NAME
rm -rf "$FIND"
mkdir -p "$DIR/logs" "$DIR/summary" "$FIND"
rm -rf "$DIR/corpus/$NAME"
mkdir -p "$DIR/corpus/$NAME" "$DIR/seeds/$NAME"
: >"$LOG"
export OMP_NUM_THREADS=1
# libFuzzer reports leaks itself (-detect_leaks=1); a sanitizer error must end the run
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:symbolize=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=ok
regress=0
if [ -d "tests/fuzz/regress/$NAME" ]; then
    files=$(find "tests/fuzz/regress/$NAME" -type f ! -name '*.md' ! -name '.*' | sort)
    if [ -n "$files" ]; then
        regress=$(printf '%s\n' "$files" | wc -l)
        # shellcheck disable=SC2086 # one argument per file (no spaces in committed names)
        if ! "$BIN" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$FIND/" $files >>"$LOG" 2>&1; then
            status=REGRESSION
        fi
    fi
fi

start=$(date +%s)
if [ "$status" = ok ]; then
    set -- -max_total_time="$SECONDS_" -rss_limit_mb=2048 -timeout=10 -max_len="$MAX_LEN" -print_final_stats=1 \
        -artifact_prefix="$FIND/" -fork=0
    if [ -n "$DICT" ]; then set -- "$@" -dict="$DICT"; fi
    if ! "$BIN" "$@" "$DIR/corpus/$NAME" "$DIR/seeds/$NAME" >>"$LOG" 2>&1; then
        status=FAILED
    fi
fi
secs=$(($(date +%s) - start))

# libFuzzer's final stats: the last status line (cov, ft, corp) and the stat:: lines
last=$(grep -a -E '^#[0-9]+' "$LOG" | grep -a ' cov: ' | tail -n 1)
field() { printf '%s\n' "$last" | sed -n "s/.* $1: \([0-9A-Za-z/]*\).*/\1/p"; }
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG" | tail -n 1)
kind=
for pat in 'ERROR: AddressSanitizer' 'ERROR: LeakSanitizer' 'runtime error:' 'ERROR: libFuzzer: timeout' \
    'out-of-memory' 'ERROR: libFuzzer: deadly signal' 'fuzz check failed'; do
    if grep -a -q "$pat" "$LOG"; then kind="$kind${kind:+, }$pat"; fi
done
nfind=$(find "$FIND" -type f | wc -l)
if [ "$status" != ok ] && [ "$nfind" -eq 0 ]; then nfind=1; fi
line=$(printf 'fuzz %-18s %-6s execs %9s  exec/s %6s  cov %5s  ft %6s  corpus %5s  %4ss  regress %d  findings %d%s' \
    "$NAME" "$status" "${execs:-?}" "${rate:-?}" "$(field cov)" "$(field ft)" "$(field corp)" "$secs" "$regress" \
    "$nfind" "${kind:+ ($kind)}")
printf '%s\n' "$line" >"$DIR/summary/$NAME"
if [ "$status" != ok ]; then
    echo "$line"
    echo "fuzz $NAME: see $LOG; inputs in $FIND/ (reproduce: $BIN FILE)"
    grep -a -E 'ERROR:|SUMMARY:|runtime error:|fuzz check failed|Test unit written' "$LOG" | head -n 20
    exit 1
fi
exit 0
