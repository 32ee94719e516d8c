#!/usr/bin/env bash
# gpuwatch export --format chrome on the planted-waste examples, run under the shim with
# the simulated GPU timeline: the file parses as JSON; every GPU record of the trace is on
# its stream's track exactly once, with a flow from the call that issued it (which starts
# no later); the counter tracks are there; each finding of the run is on the findings
# track; names, process and thread metadata are present.
# usage: test_export.sh GPUWATCH SHIM FAKE_DIR CUPTI EXAMPLE...
set -euo pipefail
gpuwatch=$1 shim=$2 fake_dir=$3 cupti=$4
shift 4
preload=${GW_TEST_PRELOAD_FIRST:+$GW_TEST_PRELOAD_FIRST:}$shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
for example in "$@"; do
    name=$(basename "$example")
    GPUWATCH_CUPTI="$cupti" GPUWATCH_OUTPUT="$work/$name" LD_LIBRARY_PATH="$fake_dir" \
        LD_PRELOAD="$preload" "$example" --steps 20 >/dev/null 2>&1 || {
        echo "FAIL: $name: the example failed"
        failures=$((failures + 1))
        continue
    }
    "$gpuwatch" export -o "$work/$name.json" "$work/$name" || {
        echo "FAIL: $name: export exited $?"
        failures=$((failures + 1))
        continue
    }
    "$gpuwatch" stats --json "$work/$name"/*.gwt >"$work/$name.stats.json"
    "$gpuwatch" analyze --json "$work/$name" >"$work/$name.analyze.json" || true
    verdict=$(python3 - "$work/$name.json" "$work/$name.stats.json" "$work/$name.analyze.json" <<'PY'
import collections, json, sys
trace = json.load(open(sys.argv[1]))
stats = json.load(open(sys.argv[2]))
report = json.load(open(sys.argv[3]))
events = trace["traceEvents"]
problems = []
totals = stats["totals"]
gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
want = totals["gpu_kernels"] + totals["gpu_memcpys"] + totals["gpu_memsets"]
if want == 0:
    problems.append("the trace has no GPU records (is the simulated CUPTI loaded?)")
if len(gpu) != want:
    problems.append("%d GPU slices, the trace has %d GPU records" % (len(gpu), want))
seen = collections.Counter((e["tid"], e["ts"], e["args"]["correlation"]) for e in gpu)
if seen and max(seen.values()) > 1:
    problems.append("a GPU record is on its track more than once")
calls = {}
for e in events:
    if e.get("cat") == "cuda_driver" and e.get("flow_out"):
        calls[e["bind_id"]] = e
unflowed = [e for e in gpu if not e.get("flow_in") or e.get("bind_id") not in calls]
if unflowed:
    problems.append("%d GPU slices without a flow from their call" % len(unflowed))
late = [e for e in gpu if e.get("bind_id") in calls and calls[e["bind_id"]]["ts"] > e["ts"]]
if late:
    problems.append("%d GPU slices start before the call that issued them" % len(late))
tracks = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
for e in gpu:
    if not tracks.get(e["tid"], "").startswith("GPU "):
        problems.append("GPU slice on track %r, not a GPU stream's" % tracks.get(e["tid"]))
        break
if not any(e["ph"] == "M" and e["name"] == "process_name" for e in events):
    problems.append("no process_name")
counters = {(e["name"], k) for e in events if e["ph"] == "C" for k in e["args"]}
for want_counter in [("GPU busy", "share"), ("device memory", "held"), ("device memory", "capacity")]:
    if want_counter not in counters:
        problems.append("no %s/%s counter" % want_counter)
busy = [e["args"]["share"] for e in events if e["ph"] == "C" and e["name"] == "GPU busy"]
if any(not 0 <= b <= 1 for b in busy):
    problems.append("GPU busy share outside 0..1")
calls_total = sum(a["count"] for a in stats["apis"].values())
driver = [e for e in events if e.get("cat") == "cuda_driver"]
if len(driver) != calls_total:
    problems.append("%d call slices, the trace has %d calls" % (len(driver), calls_total))
findings = sorted(f["id"] for f in report["risks"] + report["findings"])
track = sorted(e["args"]["id"] for e in events if e.get("cat") == "gpuwatch_finding")
if findings != track:
    problems.append("findings track %s, the analysis found %s" % (track, findings))
print("; ".join(problems) if problems else "ok %d GPU slices, %d calls, %d findings" % (len(gpu), len(driver), len(track)))
PY
)
    if [[ $verdict == ok* ]]; then
        echo "ok: $name: ${verdict#ok }"
    else
        echo "FAIL: $name: $verdict"
        failures=$((failures + 1))
    fi
done
# --format kineto (what HTA reads) on the first example: a call and its GPU work share
# args.correlation; only GPU work has args.stream (HTA takes that for GPU work); GPU work
# under the device's pid; ProfilerStep#N one fewer than the analysis's step boundaries.
first=$(basename "$1")
if "$gpuwatch" export --format kineto -o "$work/$first.kineto.json" "$work/$first"/*.gwt; then
    verdict=$(python3 - "$work/$first.kineto.json" "$work/$first.analyze.json" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
events = trace["traceEvents"]
problems = []
if trace.get("distributedInfo", {}).get("rank") != 0 or trace.get("schemaVersion") != 1:
    problems.append("no distributedInfo.rank 0 / schemaVersion 1")
gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
calls = {e["args"]["correlation"] for e in events if e.get("cat") == "cuda_driver"}
if not gpu or any(e["args"]["correlation"] not in calls for e in gpu):
    problems.append("GPU work whose correlation names no call")
if any("stream" in e.get("args", {}) for e in events if e.get("cat") == "cuda_driver"):
    problems.append("a call carries args.stream")
if any(e["pid"] != e["args"]["device"] for e in gpu):
    problems.append("GPU work not under its device's pid")
steps = [e for e in events if e.get("cat") == "user_annotation"]
want = report["processes"][0]["steps"]["count"]
if len(steps) != want:
    problems.append("%d ProfilerStep spans, the analysis found %d steps" % (len(steps), want))
if [e["name"] for e in steps] != ["ProfilerStep#%d" % i for i in range(len(steps))]:
    problems.append("ProfilerStep spans not numbered 0, 1, ...")
print("; ".join(problems) if problems else "ok %d ProfilerStep spans" % len(steps))
PY
)
    if [[ $verdict == ok* ]]; then
        echo "ok: $first --format kineto: ${verdict#ok }"
    else
        echo "FAIL: $first --format kineto: $verdict"
        failures=$((failures + 1))
    fi
else
    echo "FAIL: $first --format kineto: export failed"
    failures=$((failures + 1))
fi
# kineto is one process per file: two traces need -o DIR (a usage error without), which
# gets one file each, named by pid when there is no rank, each of one process
second=$(basename "$2")
rc=0
"$gpuwatch" export --format kineto "$work/$first"/*.gwt "$work/$second"/*.gwt \
    >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || { echo "FAIL: --format kineto of two traces without -o DIR exited $rc, expected 2"; failures=$((failures + 1)); }
if "$gpuwatch" export --format kineto -o "$work/ranks" "$work/$first"/*.gwt "$work/$second"/*.gwt 2>/dev/null; then
    verdict=$(python3 - "$work/ranks" "$work/$first"/*.gwt "$work/$second"/*.gwt <<'PY'
import glob, json, os, re, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))
pids = sorted(int(re.search(r"-(\d+)\.gwt$", p).group(1)) for p in sys.argv[2:])
want = ["pid-%d.json" % p for p in pids]
got = sorted(os.path.basename(f) for f in files)
problems = []
if got != sorted(want):
    problems.append("files %s, expected %s" % (got, sorted(want)))
for f in files:
    events = json.load(open(f))["traceEvents"]
    hosts = {e["pid"] for e in events if e.get("cat") == "cuda_driver"}
    if len(hosts) != 1 or "pid-%d.json" % hosts.pop() != os.path.basename(f):
        problems.append("%s does not hold its one process" % os.path.basename(f))
print("; ".join(problems) if problems else "ok")
PY
)
    [ "$verdict" = ok ] && echo "ok: --format kineto -o DIR: one file per trace" ||
        { echo "FAIL: --format kineto -o DIR: $verdict"; failures=$((failures + 1)); }
else
    echo "FAIL: --format kineto -o DIR failed"; failures=$((failures + 1))
fi

[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all export checks passed"
