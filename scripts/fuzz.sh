#!/usr/bin/env bash
# Builds the fuzz harnesses (the trace reader on any bytes; the analyzer on any bytes; the
# model and rules on well-formed random runs, against their invariants) and runs each for
# SECONDS (default 10): with clang's libFuzzer, ASan and UBSan when present, else a plain
# driver on pseudo-random inputs. A crash or a broken invariant fails. The corpora persist
# in BUILD_DIR/fuzz, so longer runs by hand (scripts/fuzz.sh 600) start where CI stopped;
# the traces in tests/fuzz/seeds (real ones: a Python program's stacks and sites; GPU records
# on several streams naming their calls) seed the reader's and the analyzer's, and the plain
# driver replays them first.
#   bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
out="${BUILD_DIR:-build}/fuzz"
mkdir -p "$out"
# (the Kineto reader with yajl and zlib: kineto_absent.c stands in for it only without them)
kineto_src=(tools/reader/kineto/kineto_[!a]*.c)
reader_src=(tools/reader/trace_*.c tools/reader/gw_map.c "${kineto_src[@]}")
analyze_src=(tools/analyze/*/[a-z]*.c tools/reader/[a-z]*.c "${kineto_src[@]}")  # (each stage a folder)
common=(-g -O1 -std=c11 -D_GNU_SOURCE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -Iinclude
        -Itools/reader -Itools/analyze -Itests/analyze)
for stage in tools/analyze/*/; do common+=("-I${stage%/}"); done
libfuzzer=0  # (GW_FUZZ_PLAIN=1: the plain driver even where libFuzzer is)
if [ -z "${GW_FUZZ_PLAIN:-}" ] && command -v clang >/dev/null &&
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer - -o "$out/probe" 2>/dev/null; then
    libfuzzer=1
fi
build() {  # build NAME HARNESS SOURCES...
    local name=$1 harness=$2
    shift 2
    if [ "$libfuzzer" -eq 1 ]; then
        clang "${common[@]}" -fsanitize=fuzzer,address,undefined "$harness" "$@" -lm \
            $(pkg-config --libs yajl zlib) -o "$out/$name"
    else
        cc "${common[@]}" "$harness" tests/fuzz/replay_main.c "$@" -lm $(pkg-config --libs yajl zlib) \
            -o "$out/$name"
    fi
}
build fuzz_reader tests/fuzz/fuzz_reader.c "${reader_src[@]}"
build fuzz_analyze tests/analyze/fuzz_analyze.c "${analyze_src[@]}"
build fuzz_model tests/analyze/fuzz_model.c "${analyze_src[@]}"
for name in fuzz_reader fuzz_analyze fuzz_model; do
    mkdir -p "$out/corpus_$name"
    if [ "$libfuzzer" -eq 1 ]; then
        # the model's runs grow with the input: keep them short enough to run many
        max=8192
        [ "$name" == fuzz_model ] && max=4096
        seeds=()
        [ "$name" != fuzz_model ] && seeds=(tests/fuzz/seeds)
        "$out/$name" -max_len="$max" -max_total_time="$secs" -print_final_stats=1 \
            -artifact_prefix="$out/$name-" "$out/corpus_$name" "${seeds[@]}" \
            2>"$out/$name.log" || {
            tail -30 "$out/$name.log" >&2
            echo "fuzz.sh: $name failed (artifact in $out)" >&2
            exit 1
        }
        echo "fuzz.sh: $name: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
            "$out/$name.log" | grep -o '[0-9]*$') executions in ${secs} s, no crash"
    else
        seeds=()
        [ "$name" != fuzz_model ] && seeds=(tests/fuzz/seeds/*.gwt tests/fuzz/seeds/*.json tests/fuzz/seeds/*.json.gz)
        echo "fuzz.sh: $name (no libFuzzer: plain driver): $("$out/$name" --random 2000 "${seeds[@]}")"
    fi
done
