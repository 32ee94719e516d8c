#!/usr/bin/env bash
# Loading PyTorch profiler (Kineto) traces, by hand: gpuwatch stats (every event read
# through the reader: parse, sort, join) against HTA's TraceAnalysis load (when pip can
# install HolisticTraceAnalysis into BUILD_DIR/hta-venv) or, without it, Python's own
# json.load(gzip.open(...)) of the same file; wall time and peak memory (/usr/bin/time -v)
# on a real trace (shared/data/kineto/sampled_rank-0) and on a generated one of MB
# megabytes and one of 100 (bench/kineto_big.py: that trace's events repeated).
#   bash bench/kineto_load.sh [BUILD_DIR] [MB] [KINETO_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
megabytes=${2:-1000}
here=$(cd "$(dirname "$0")" && pwd)
data=${3:-$here/../../shared/data/kineto}
gpuwatch=$build/tools/gpuwatch
venv=$build/hta-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q HolisticTraceAnalysis || true
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kineto_load.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 "$here/kineto_big.py" "$data/sampled_rank-0.json.gz" "$work/big.json" "$megabytes"
python3 "$here/kineto_big.py" "$data/sampled_rank-0.json.gz" "$work/mid.json" 100
gzip -1 -c "$work/big.json" >"$work/big.json.gz"
# measure NAME COMMAND...: "NAME  wall s  peak MB"
measure() {
    local name=$1
    shift
    /usr/bin/time -v "$@" >/dev/null 2>"$work/time" || { echo "$name: failed"; tail -3 "$work/time"; return; }
    awk -v n="$name" '/Elapsed \(wall/ {split($NF, t, ":"); w = t[1] * 60 + t[2]}
        /Maximum resident/ {m = $NF / 1024} END {printf "%-44s %8.2f s %8.1f MB\n", n, w, m}' "$work/time"
}
for trace in "$data/sampled_rank-0.json.gz" "$work/mid.json" "$work/big.json" "$work/big.json.gz"; do
    echo "== $(basename "$trace"): $(du -m "$trace" | cut -f1) MB on disk"
    measure "gpuwatch stats" "$gpuwatch" stats "$trace"
    measure "gpuwatch analyze" "$gpuwatch" analyze "$trace"
    case "$trace" in
    *.gz) measure "python3 json.load(gzip.open(...))" python3 -c \
              'import gzip, json, sys; json.load(gzip.open(sys.argv[1]))' "$trace" ;;
    *) measure "python3 json.load(open(...))" python3 -c \
              'import json, sys; json.load(open(sys.argv[1]))' "$trace" ;;
    esac
    # (HTA holds a trace in pandas frames: several GB for the 1 GB file, past this
    # machine's share; it loads the real and the 100 MB ones)
    if [ "$(stat -c %s "$trace")" -lt 200000000 ] && "$venv/bin/python" -c "import hta" 2>/dev/null; then
        base=${trace##*/}
        mkdir -p "$work/hta" && rm -f "$work/hta"/* && ln -s "$trace" "$work/hta/rank-0.${base#*.}"
        measure "HTA TraceAnalysis load" "$venv/bin/python" -c \
            'import sys; from hta.trace_analysis import TraceAnalysis; TraceAnalysis(trace_dir=sys.argv[1])' \
            "$work/hta"
    fi
done
