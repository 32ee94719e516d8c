#!/usr/bin/env bash
# Installs the build and test dependencies that are missing (Debian/Ubuntu), quietly.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(gcc)
command -v pkg-config >/dev/null || need+=(pkg-config)
# (chromium: tests/test_report.sh renders the HTML report headless)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
# (prometheus, which brings promtool, curl and tmux: tests/live/ scrape gpuwatch serve with a
# real Prometheus and drive gpuwatch top in a terminal; python3 reads the JSON answers)
command -v prometheus >/dev/null && command -v promtool >/dev/null || need+=(prometheus)

command -v curl >/dev/null || need+=(curl)
command -v tmux >/dev/null || need+=(tmux)
command -v python3 >/dev/null || need+=(python3)
# (python3-venv: tests/mcp/ installs the MCP SDK, gpuwatch mcp's test client, into a venv)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
for pkg in libcmocka-dev libunwind-dev libyajl-dev zlib1g-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda.h" ]; then
  echo "the CUDA toolkit was not found at ${CUDA_HOME:-/usr/local/cuda}; set CUDA_HOME" >&2
  exit 1
fi
