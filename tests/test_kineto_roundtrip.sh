#!/usr/bin/env bash
# The round trip: a planted-waste example run under the shim with the simulated GPU
# timeline, exported with `gpuwatch export --format kineto`, read back as a PyTorch
# profiler trace, gives the same findings, each saving within 5 %, the same GPU busy time and
# the same GPU idle by cause (within 5 %, or 1 % of the wall) as the .gwt it came from
# (tests/kineto_compare.py).
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
    # A run preempted on a busy machine gets a contention finding, and the savings it
    # shifts, from CPU samples a Kineto trace cannot hold: such a run is made again (3 tries).
    for try in 1 2 3; do
        rm -rf "${work:?}/$name"
        GPUWATCH_CUPTI="$cupti" GPUWATCH_OUTPUT="$work/$name" LD_LIBRARY_PATH="$fake_dir" \
            LD_PRELOAD="$preload" "$example" --steps 20 >/dev/null 2>&1 || {
            echo "FAIL: $name: the example failed"; failures=$((failures + 1)); continue 2; }
        "$gpuwatch" analyze --json "$work/$name" >"$work/$name.gwt.report" || true
        grep -q '"id": "contention"' "$work/$name.gwt.report" || break
        echo "note: $name: run $try was preempted (contention found), running it again"
    done
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
