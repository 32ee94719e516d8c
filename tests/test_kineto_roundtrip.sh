#!/usr/bin/env bash
# The round trip: a planted-waste example run under the shim with the simulated GPU
# timeline, exported with `gpuwatch export --format kineto`, read back as a PyTorch
# profiler trace, gives the same findings, each saving within 5 %, the same GPU busy time and
# the same GPU idle by cause (within 5 %, or 1 % of the wall) as the .gwt it came from,
# analyzed without its CPU samples (tests/kineto_compare.py). (Not example_healthy: on a
# loaded machine its .gwt's replay, which leaves one GPU record unmatched where the
# export's correlation links it, finds a sync_bubble at the 5 % threshold now and then.)
# usage: test_kineto_roundtrip.sh GPUWATCH SHIM FAKE_DIR CUPTI EXAMPLE...
set -euo pipefail
gpuwatch=$1 shim=$2 fake_dir=$3 cupti=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
preload=${GW_TEST_PRELOAD_FIRST:+$GW_TEST_PRELOAD_FIRST:}$shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 passed=0
for example in "$@"; do
    name=$(basename "$example")
    # The .gwt is analyzed without its CPU samples and CPU count (--without-cpu-samples), as
    # the Kineto copy has neither.
    rm -rf "${work:?}/$name"
    GPUWATCH_CUPTI="$cupti" GPUWATCH_OUTPUT="$work/$name" LD_LIBRARY_PATH="$fake_dir" \
        LD_PRELOAD="$preload" "$example" --steps 60 >/dev/null 2>&1 || {
        echo "FAIL: $name: the example failed"; failures=$((failures + 1)); continue; }
    "$gpuwatch" analyze --json --without-cpu-samples "$work/$name" >"$work/$name.gwt.report" || true
    "$gpuwatch" export --format kineto -o "$work/$name.json" "$work/$name"
    gzip -c "$work/$name.json" >"$work/$name.json.gz"
    for copy in "$name.json" "$name.json.gz"; do
        "$gpuwatch" analyze --json "$work/$copy" >"$work/$copy.report" || true
        verdict=$(python3 "$here/kineto_compare.py" "$work/$name.gwt.report" "$work/$copy.report")
        case "$verdict" in
        ok*) echo "ok: $copy: $verdict"; passed=$((passed + 1)) ;;
        *) echo "FAIL: $copy: $verdict"; failures=$((failures + 1)) ;;
        esac
    done
done
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
