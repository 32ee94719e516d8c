#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan
# (or $ASAN_BUILD_DIR) and runs the tests there, the shim preloaded after libasan.so
# (GW_TEST_PRELOAD_FIRST, read by tests/e2e/harness.c). Leak checks are off: the shim keeps
# a forked child's copy of its parent's rings on purpose. The tests that time the examples
# (calibration, random loops, examples, diff) run in the plain build only: their timings
# mean nothing under the sanitizers, and they preload the shim without libasan first.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ASAN_BUILD_DIR:-build-asan}
cuda=${CUDA_HOME:-/usr/local/cuda}
cmake -S . -B "$build" -DCUDAToolkit_ROOT="$cuda" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
libasan=$(${CC:-cc} -print-file-name=libasan.so)
cd "$build"
# (test_wheel too: pip builds the wheel from the sources with its own flags, unsanitized,
# and the build above has no part in it)
GW_TEST_PRELOAD_FIRST=$libasan ASAN_OPTIONS=detect_leaks=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j2 -E 'analyze_calibration|analyze_random_loops|analyze_random_fixes|analyze_examples|analyze_diff|analyze_ranks|test_wheel'
