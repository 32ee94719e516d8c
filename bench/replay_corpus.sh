#!/usr/bin/env bash
# Records the corpus bench/replay_same.sh analyzes with two builds: traces that exercise the
# what-if replay every way the tests do. Recorded once; the comparison then reads the same
# files with both binaries, so the examples' timing noise cannot differ between them.
#   - the golden traces (make_analyze_trace, as tests/analyze/test_golden.sh makes them);
#   - every example under the shim on the simulated driver, host-only, with the whole CUPTI
#     timeline and sampled (tests/analyze/lib_examples.sh, ex_run's environment);
#   - examples/random_loop: seeds 1-12, four with a backward thread on one stream, and the
#     contention and two-waste knob sets of tests/analyze/test_random_loops.sh;
#   - example_ranks, four ranks in one directory (tests/analyze/test_ranks.sh);
#   - the PyTorch profiler traces in shared/data/kineto;
#   - two generated traces of EVENTS events (bench/gen_big_trace), host-only and --gpu.
# Run at the lowest priority: the examples' timing does not matter here.
#   bash bench/replay_corpus.sh BUILD_DIR CORPUS_DIR [EVENTS]
set -uo pipefail
BUILD=$(realpath "${1:?usage: replay_corpus.sh BUILD_DIR CORPUS_DIR [EVENTS]}")
OUT=${2:?}
EVENTS=${3:-20000000}
KINETO=$(dirname "$0")/../../shared/data/kineto
[ -d "$KINETO" ] || KINETO=/work/shared/data/kineto
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
SHIM=$BUILD/libintercept/libgpuwatch.so
FAKE=$BUILD/tests/fakecuda
CUPTI=$BUILD/tests/fakecupti/libcupti.so.13

# record NAME MODE EXAMPLE [ARGS...]: one example run traced into $OUT/NAME-MODE
record() {
    local name=$1 mode=$2 example=$3 cupti=0
    shift 3
    local timeline=(GPUWATCH_TIMELINE=full)
    [ "$mode" != host ] && cupti=$CUPTI
    [ "$mode" == sampled ] && timeline=(GPUWATCH_TIMELINE=sampled GPUWATCH_TIMELINE_FULL_RATE=0
        GPUWATCH_TIMELINE_WINDOW_MS=10 GPUWATCH_TIMELINE_EVERY_MS=30 GPUWATCH_FLUSH_MS=5)
    local dir=$OUT/$name-$mode
    rm -rf "$dir"
    env "${timeline[@]}" FAKECUDA_SPIN_WAIT=1 FAKECUDA_MOVE_BYTES=0 FAKECUDA_GRAPH_RECORDS=0 \
        LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$cupti" LD_PRELOAD="$SHIM" GPUWATCH_OUTPUT="$dir" \
        nice -n 19 "$BUILD/examples/example_$example" "$@" >"$dir.log" 2>&1 ||
        echo "warning: $name ($mode) exited $?" >&2
}

for mode in host cupti sampled; do
    for ex in "$BUILD"/examples/example_*; do
        name=${ex##*/example_}
        [ "$name" == ranks ] && continue
        record "$name" "$mode" "$name"
    done
    for seed in $(seq 1 12); do
        record "random$seed" "$mode" random_loop --seed "$seed" --steps 150
    done
    for seed in 1 2 3 4; do
        record "random${seed}bw" "$mode" random_loop --seed "$seed" --streams 1 \
            --backward-thread 1 --steps 150
    done
    record random_busy "$mode" random_loop --load-us 3000 --kernels 4 --kernel-ns 500000 \
        --copy-kb 0 --sync-every 0 --steps 100
    record random_churn "$mode" random_loop --seed 5 --churn 1 --nvtx 1 --steps 150
done

# four ranks at once, the whole timeline, waits sleeping (test_ranks.sh)
dir=$OUT/ranks
rm -rf "$dir" "$dir.collective"
mkdir -p "$dir"
pids=()
for r in 0 1 2 3; do
    env GPUWATCH_TIMELINE=full RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 \
        FAKECUDA_COLLECTIVE_FILE="$dir.collective" FAKECUDA_SPIN_WAIT=0 FAKECUDA_MOVE_BYTES=0 \
        LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$CUPTI" LD_PRELOAD="$SHIM" GPUWATCH_OUTPUT="$dir" \
        nice -n 19 "$BUILD/examples/example_ranks" >"$dir.log$r" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "warning: a rank exited $?" >&2; done
rm -f "$dir.collective"

mkdir -p "$OUT/golden/run"
MAKE=$BUILD/tests/analyze/make_analyze_trace
nice -n 19 "$MAKE" "$OUT/golden/input.gwt"
nice -n 19 "$MAKE" "$OUT/golden/input-gpu.gwt" --gpu
nice -n 19 "$MAKE" "$OUT/golden/input-fixed.gwt" --gpu --input-us 500
nice -n 19 "$MAKE" "$OUT/golden/damaged.gwt" --damage
nice -n 19 "$MAKE" "$OUT/golden/run/rank0.gwt" --gpu --rank 0
nice -n 19 "$MAKE" "$OUT/golden/run/rank1.gwt" --gpu --rank 1 --leak

mkdir -p "$OUT/kineto"
cp "$KINETO"/*.json.gz "$OUT/kineto/"

nice -n 19 "$BUILD/bench/gen_big_trace" "$OUT/big-host.gwt" "$EVENTS"
nice -n 19 "$BUILD/bench/gen_big_trace" "$OUT/big-gpu.gwt" "$EVENTS" --gpu
