#!/usr/bin/env bash
# gpuwatch mcp checked with the official Python MCP SDK (`mcp` on PyPI) as its client: the
# planted-waste examples run under the shim on the simulated driver, each into a run
# directory; client_check.py starts `gpuwatch mcp` over stdio on them, lists and calls
# every tool, reads the resources and the prompt, and checks the answers against
# `gpuwatch analyze --json` and `gpuwatch diff --json` on the same traces; then feeds the
# server raw bad lines (malformed JSON, unknown methods and tools, wrong argument types,
# a missing run, a huge limit) and checks each gets an error and the next request an answer.
# The SDK is installed into a virtual environment under the build directory, once (a
# rebuild reuses it); without it (no venv module, no PyPI) the test fails, saying why.
#   test_mcp.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_mcp.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
MCP_VERSION=1.30.0   # the SDK pinned (its latest protocol: 2025-11-25, the specification's current)
VENV=$BUILD/tests/mcp/venv
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_mcp.XXXXXX")
failures=0
trap '[ "$failures" -eq 0 ] && rm -rf "$WORK" || echo "kept for reading: $WORK" >&2' EXIT
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

GPUWATCH=$BUILD/tools/gpuwatch
SHIM=$BUILD/libintercept/libgpuwatch.so
FAKE=$BUILD/tests/fakecuda
CUPTI=$BUILD/tests/fakecupti/libcupti.so.13

# The SDK, once: a venv whose python imports mcp at the pinned version is kept.
if ! "$VENV/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'" 2>/dev/null; then
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" >"$WORK/venv.log" 2>&1; then
        echo "FAIL: python3 -m venv failed (install python3-venv: scripts/deps.sh): $(tail -2 "$WORK/venv.log")" >&2
        exit 1
    fi
    if ! "$VENV/bin/pip" install -q "mcp==$MCP_VERSION" >"$WORK/pip.log" 2>&1; then
        rm -rf "$VENV"
        echo "FAIL: pip install mcp==$MCP_VERSION failed (PyPI unreachable?): $(tail -3 "$WORK/pip.log")" >&2
        exit 1
    fi
fi
echo "client: the Python MCP SDK mcp==$MCP_VERSION ($VENV)"

# The examples, as tests/analyze/lib_examples.sh runs them: the shim preloaded, the
# simulated driver, the simulated CUPTI for the whole timeline (cupti) or none (host).
[ -n "${GPUWATCH_HOST_COPY_BPS:-}" ] || eval "export $("$GPUWATCH" machine --env)"
TRACES=$WORK/traces JSON=$WORK/json
mkdir -p "$TRACES" "$JSON"
run_example() {  # run_example RUN MODE EXAMPLE [ARGS...]
    local id=$1 mode=$2 name=$3 cupti=0
    shift 3
    [ "$mode" == cupti ] && cupti=$CUPTI
    env GPUWATCH_TIMELINE=full FAKECUDA_SPIN_WAIT=1 FAKECUDA_MOVE_BYTES=0 FAKECUDA_GRAPH_RECORDS=0 \
        LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$cupti" LD_PRELOAD="${GW_TEST_PRELOAD_FIRST:+$GW_TEST_PRELOAD_FIRST:}$SHIM" \
        GPUWATCH_OUTPUT="$TRACES/$id" "$BUILD/examples/example_$name" "$@" >"$JSON/$id.log" 2>&1 ||
        fail "$name $* ($mode) did not run: $(tail -2 "$JSON/$id.log")"
}
run_example pageable_h2d cupti pageable_h2d --steps 20
run_example per_step_sync host per_step_sync --steps 20
run_example per_step_sync_fixed host per_step_sync --steps 20 --fixed
run_example leak cupti leak
run_example healthy cupti healthy
# a trace still being written: a copy cut inside a chunk is read as far as it is intact
mkdir -p "$TRACES/being_written"
src=$(ls "$TRACES"/pageable_h2d/*.gwt | head -1)
head -c $(($(stat -c %s "$src") * 2 / 3)) "$src" >"$TRACES/being_written/$(basename "$src")"
# a run whose only trace is no trace: every call about it gets an error naming the file
mkdir -p "$WORK/bad/garbage"
printf 'this is not a trace\n%.0s' {1..40} >"$WORK/bad/garbage/bad.gwt"
for d in "$TRACES"/*/; do
    d=${d%/} id=$(basename "$d")
    "$GPUWATCH" analyze --json "$d" >"$JSON/$id.json" 2>"$JSON/$id.err"
    [ -s "$JSON/$id.json" ] || fail "analyze --json $id wrote nothing: $(tail -2 "$JSON/$id.err")"
done
"$GPUWATCH" diff --json "$TRACES/per_step_sync" "$TRACES/per_step_sync_fixed" >"$JSON/diff.json" 2>/dev/null
[ -s "$JSON/diff.json" ] || fail "diff --json wrote nothing"

if [ "$failures" -eq 0 ]; then
    timeout 300 "$VENV/bin/python" "$HERE/client_check.py" "$GPUWATCH" "$TRACES" "$JSON" "$WORK/bad" ||
        fail "client_check.py (exit $?)"
fi
[ "$failures" -eq 0 ] && echo "PASS: gpuwatch mcp" || echo "$failures failure(s)" >&2
[ "$failures" -eq 0 ]
