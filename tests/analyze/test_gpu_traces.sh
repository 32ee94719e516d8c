#!/usr/bin/env bash
# Traces recorded on a real GPU (tests/data/h200/, gzip'd), analyzed as a user would:
#   healthy.gwt.gz  examples/pytorch/healthy.py on an H200 (PyTorch 2.11, CUDA 13, the default
#                   sampled timeline: 6.8 s of start-up, then 200 steps of 22 ms with DataLoader
#                   workers, pinned memory and no per-step sync; the GPU 98.5 % busy in them).
#                   No finding: the host runs ahead of the GPU, its stretches without calls
#                   (the next batch, Python) keep nothing waiting. (It once got input_pipeline
#                   at 10-17 %: start-up stretches taken for batch loads, then a replay that
#                   inferred the kernels it had no record of as short.)
#   test_gpu_traces.sh GPUWATCH DATA_DIR
set -u
GPUWATCH=${1:?usage: test_gpu_traces.sh GPUWATCH DATA_DIR}
DATA=${2:?usage: test_gpu_traces.sh GPUWATCH DATA_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_gpu_traces.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

mkdir -p "$WORK/healthy"
gzip -dc "$DATA/h200/healthy.gwt.gz" >"$WORK/healthy/healthy.gwt" || fail "cannot unpack healthy.gwt.gz"
"$GPUWATCH" analyze --json "$WORK/healthy" >"$WORK/healthy.json" 2>"$WORK/healthy.err" ||
    fail "healthy: analyze exited $?: $(head -2 "$WORK/healthy.err")"
verdict=$(python3 - "$WORK/healthy.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
problems = []
steps = p["steps"]
if steps["source"] != "nvtx" or steps["count"] != 200:
    problems.append("steps %s %d, expected 200 from NVTX (200 train_step ranges)" % (steps["source"], steps["count"]))
if not p["steady_util"] >= 0.95:
    problems.append("steady GPU busy %.3f" % p["steady_util"])
if d["findings"]:
    problems.append("findings %s" % ["%s %.1f ms" % (f["id"], f["saving_ns"] / 1e6) for f in d["findings"]])
print("; ".join(problems) if problems else "ok %d steps, GPU %.1f %% busy, no finding" %
      (steps["count"], 100 * p["steady_util"]))
PY
)
[[ $verdict == ok* ]] && echo "  healthy (H200): ${verdict#ok }" || fail "healthy (H200): $verdict"
[ "$failures" -eq 0 ] || { echo "test_gpu_traces: $failures failed" >&2; exit 1; }
echo "test_gpu_traces: all checks passed"
