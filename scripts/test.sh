#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
status=0
ctest --output-on-failure -j2 || status=$?
cd - >/dev/null
bash scripts/timing_summary.sh "${BUILD_DIR:-build}" || true
[ "$status" -eq 0 ] || exit "$status"
# the shim and the tools built with AddressSanitizer + UBSan, their tests run with the
# sanitizer runtime first in LD_PRELOAD as a sanitized program's must be (the timing-sensitive
# analysis suites are left to the build above)
bash scripts/sanitize.sh
# the fuzz harnesses, built and run briefly (scripts/fuzz.sh says how, and how to run longer)
bash scripts/fuzz.sh 10
