#!/usr/bin/env bash
# Interop with HTA (HolisticTraceAnalysis, PyPI), by hand: installs it into a venv (once,
# in BUILD_DIR/hta-venv), runs an example under the shim with the simulated GPU timeline,
# exports it with --format kineto, loads it with hta.trace_analysis.TraceAnalysis and
# compares HTA's temporal breakdown with gpuwatch's figures over the same span: HTA's idle
# time is the GPU's idle time between the first kernel and the end of the last one
# launched before the last ProfilerStep (it drops the last step); gpuwatch's is the same
# span's idle from its own GPU records (the busy time it reports, merged over streams).
# Then TensorBoard's profiler plugin (torch-tb-profiler, PyPI, same venv) parses the same
# file: its steps, its views, and its kernel table against gpuwatch's kernels by GPU time.
#   bash bench/interop_hta.sh [BUILD_DIR] [EXAMPLE] [STEPS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
example=${2:-per_step_sync}
steps=${3:-60}
venv=$build/hta-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q HolisticTraceAnalysis
fi
"$venv/bin/python" -c "import torch_tb_profiler" 2>/dev/null ||
    "$venv/bin/pip" install -q torch-tb-profiler
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GPUWATCH_CUPTI=$build/tests/fakecupti/libcupti.so.13 GPUWATCH_OUTPUT=$work/traces \
    LD_LIBRARY_PATH=$build/tests/fakecuda LD_PRELOAD=$build/libintercept/libgpuwatch.so \
    "$build/examples/example_$example" --steps "$steps" >/dev/null 2>&1
mkdir -p "$work/kineto"
"$build/tools/gpuwatch" export --format kineto -o "$work/kineto/rank-0.json" "$work"/traces/*.gwt
"$build/tools/gpuwatch" export -o "$work/chrome.json" "$work"/traces/*.gwt
# HTA by default rounds every GPU record inward to whole microseconds (start up, end down;
# its warning cites pytorch/pytorch#122425), which on sub-microsecond gaps and short kernels
# adds up to a microsecond of idle per record; HTA_DISABLE_NS_ROUNDING=1 keeps the
# nanoseconds the export carries. Both are printed; the goal is on the unrounded one.
compare() {
HTA_DISABLE_NS_ROUNDING=$1 "$venv/bin/python" - "$work/kineto" "$work/chrome.json" "$2" <<'PY' 2>&1 | grep -v -i -e warning -e '^Parsed' -e '^Rounding' -e 'distributedInfo' -e '^leaving' -e '^entering' -e 'Overall parsing' 
import json, sys
from hta.trace_analysis import TraceAnalysis
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
hta = analyzer.get_temporal_breakdown(visualize=False).iloc[0]
hta_idle, hta_span = float(hta["idle_time(us)"]), float(hta["kernel_time(us)"])
label = sys.argv[3]
# gpuwatch's GPU records over HTA's span: the kernels launched before the last step began
events = json.load(open(sys.argv[2]))["traceEvents"]
steps = [e for e in events if e.get("cat") == "user_annotation"]
last_step = max(e["ts"] for e in steps)
calls = {e["bind_id"]: e["ts"] for e in events if e.get("cat") == "cuda_driver" and e.get("flow_out")}
gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
kept = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu if calls.get(e.get("bind_id"), 1e30) < last_step)
busy, cur_s, cur_e = 0.0, None, None
for s, e in kept:
    if cur_e is None or s > cur_e:
        if cur_e is not None:
            busy += cur_e - cur_s
        cur_s, cur_e = s, e
    else:
        cur_e = max(cur_e, e)
busy += cur_e - cur_s
span = max(e for _, e in kept) - kept[0][0]
ours = span - busy
print("HTA temporal breakdown (%s): idle %.1f us of a %.1f us kernel span (%.2f%%)" % (label, hta_idle, hta_span, 100 * hta_idle / hta_span))
print("gpuwatch, same span:     idle %.1f us of a %.1f us kernel span (%.2f%%)" % (ours, span, 100 * ours / span))
print("ratio HTA (%s) / gpuwatch idle: %.4f" % (label, hta_idle / ours if ours else float("nan")))
PY
}
compare 1 "ns timestamps" | sed '$s/$/ (goal: within 2%)/'
# With sub-microsecond kernels the rounding makes durations negative and HTA's own
# assertion (idle <= span) fails; that is said, not hidden.
compare 0 "HTA default, whole-us rounding" | grep -v '^gpuwatch' | tail -3 ||
    echo "HTA with its default rounding failed on this trace (see above)"
# TensorBoard's profiler plugin reads files named WORKER.pt.trace.json
cp "$work/kineto/rank-0.json" "$work/kineto/worker0.pt.trace.json"
"$build/tools/gpuwatch" analyze --json "$work"/traces/*.gwt >"$work/analysis.json"
"$venv/bin/python" - "$work/kineto/worker0.pt.trace.json" "$work/analysis.json" "$work/tbcache" <<'PY' 2>&1 | grep -v -i -e warning -e 'should not intersect'
import json, sys
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.run_generator import RunGenerator
data = RunProfileData.parse("worker0", None, sys.argv[1], sys.argv[3])
profile = RunGenerator("worker0", None, data).generate_run_profile()
rows = {r[0]: (r[2], r[3]) for r in profile.kernel_table["data"]["rows"]}
ours = [k for p in json.load(open(sys.argv[2]))["processes"] for k in p["kernels"]]
same = sum(1 for k in ours if rows.get(k["name"]) == (k["records"], round(k["gpu_ns"] / 1e3, 3)))
print("torch-tb-profiler: %d steps, views %s; kernel table: %d of gpuwatch's %d top kernels "
      "with the same calls and total duration" % (len(data.steps_costs),
      ", ".join(v.name for v in profile.views), same, len(ours)))
PY
