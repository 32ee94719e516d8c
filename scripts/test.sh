#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j2
cd - >/dev/null
# the fuzz harnesses, built and run briefly (scripts/fuzz.sh says how, and how to run longer)
bash scripts/fuzz.sh 10
