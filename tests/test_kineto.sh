#!/usr/bin/env bash
# Real PyTorch profiler (Kineto) traces (KINETO_DIR, shared/data/kineto: A100 runs and two
# ranks of an NCCL job) read through the reader: per file, the kernel, copy and memset
# counts equal what the JSON holds, the GPU busy time per device equals the union of the
# GPU records' intervals within 0.5 %, every runtime launch, copy and memset reads as a call,
# and analyze runs and prints its summary (its replay of the unchanged run within 5 % of
# the trace's span, no finding over the GPU's idle time); the two sampled ranks analyzed
# together line up their collectives. The counts and unions are computed here, from the JSON, by Python.
# A trace of 40 copies of one rank's events (bench/kineto_big.py) is past one sort window:
# its runs spilled and merged give every record, in time order.
# usage: test_kineto.sh GPUWATCH KINETO_DIR
set -euo pipefail
gpuwatch=$1 dir=$2
if [ ! -d "$dir" ] || ! ls "$dir"/*.json.gz >/dev/null 2>&1; then
    echo "FAIL: no Kineto traces in $dir (shared/data/kineto beside the source tree;" \
         "set -DGW_KINETO_DATA=...)"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 checked=0
for trace in "$dir"/*.json.gz; do
    name=$(basename "$trace")
    "$gpuwatch" stats --json "$trace" >"$work/stats.json" || {
        echo "FAIL: $name: stats exited $?"; failures=$((failures + 1)); continue; }
    verdict=$(python3 - "$trace" "$work/stats.json" <<'PY'
import collections, gzip, json, sys
events = json.load(gzip.open(sys.argv[1]))["traceEvents"]
stats = json.load(open(sys.argv[2]))
t = stats["traces"][0]
problems = []
def ns(v):
    return int(round(float(v) * 1000))
gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
want = collections.Counter(e["cat"] for e in gpu)
got = {"kernel": t["gpu"]["kernels"], "gpu_memcpy": t["gpu"]["memcpys"], "gpu_memset": t["gpu"]["memsets"]}
for cat in got:
    if got[cat] != want.get(cat, 0):
        problems.append("%s: read %d, the file holds %d" % (cat, got[cat], want.get(cat, 0)))
by_device = collections.defaultdict(list)
for e in gpu:
    s = ns(e["ts"])
    by_device[int(e["args"]["device"])].append((s, s + ns(e.get("dur", 0))))
devices = {d["device"]: d["busy_ns"] for d in t["gpu"]["devices"]}
for dev, spans in by_device.items():
    spans.sort()
    union, end = 0, None
    start = None
    for a, b in spans:
        if end is None or a > end:
            if end is not None:
                union += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if end is not None:
        union += end - start
    busy = devices.get(dev)
    if busy is None:
        problems.append("device %d: no busy time read, the records' union is %d ns" % (dev, union))
    elif abs(busy - union) > 0.005 * union:
        problems.append("device %d: busy %d ns, the records' union %d ns (over 0.5 %%)" % (dev, busy, union))
mapped = {"cuLaunchKernel": ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel"),
          "cuMemcpyAsync": ("cudaMemcpyAsync", "cudaMemcpy"),
          "cuMemsetD8Async": ("cudaMemsetAsync", "cudaMemset"),
          "cuStreamSynchronize": ("cudaStreamSynchronize",),
          "cuCtxSynchronize": ("cudaDeviceSynchronize",),
          "cuStreamWaitEvent": ("cudaStreamWaitEvent",)}
calls = 0
for api, names in mapped.items():
    n = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("name") in names)
    r = stats["apis"].get(api, {}).get("count", 0)
    calls += n
    if n != r:
        problems.append("%s: read %d calls, the file holds %d of %s" % (api, r, n, "/".join(names)))
print("; ".join(problems) if problems else "ok %d kernels %d copies %d memsets %d calls" % (
    got["kernel"], got["gpu_memcpy"], got["gpu_memset"], calls))
PY
)
    case "$verdict" in
    ok*) echo "ok: $name: $verdict" ;;
    *) echo "FAIL: $name: $verdict"; failures=$((failures + 1)) ;;
    esac
    rc=0
    "$gpuwatch" analyze "$trace" >"$work/report.txt" 2>"$work/err.txt" || rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q '^Summary' "$work/report.txt" ||
       ! grep -qE '^  findings +(none|[0-9]+)' "$work/report.txt"; then
        echo "FAIL: $name: analyze exited $rc without its summary"; cat "$work/err.txt"
        failures=$((failures + 1))
    fi
    checked=$((checked + 1))
done
# the two ranks of one job, one process per file, collectives lined up
mkdir "$work/ranks"
cp "$dir"/sampled_rank-0.json.gz "$dir"/sampled_rank-1.json.gz "$work/ranks/"
"$gpuwatch" analyze "$work/ranks" >"$work/ranks.txt"
if ! grep -qE '^  ranks +2 lined up on 10 collectives' "$work/ranks.txt" ||
   ! grep -qE '^  0 +4037 ' "$work/ranks.txt" || ! grep -qE '^  1 +4045 ' "$work/ranks.txt"; then
    echo "FAIL: sampled_rank-0/1: not analyzed as two ranks with their 10 collectives lined up"
    sed -n 1,20p "$work/ranks.txt"
    failures=$((failures + 1))
else
    echo "ok: sampled_rank-0/1: two ranks, 10 collectives lined up"
fi
# what the trace lacks: said once, and beside the findings that rest on it
"$gpuwatch" analyze --json "$work/ranks" >"$work/ranks.json"
lacks=$(python3 - "$work/ranks.txt" "$work/ranks.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
report = json.load(open(sys.argv[2]))
problems = []
if "Source: a PyTorch profiler (Kineto) trace" not in text or "no CPU samples" not in text:
    problems.append("no Source line saying what the trace lacks")
conf = {f["id"]: f.get("confidence") for f in report["findings"]}
if conf.get("input_pipeline") != "lowered" or "caveat:   confidence lowered" not in text:
    problems.append("input_pipeline (resting on the window and no CPU samples) not lowered: %r" % conf)
if conf.get("exposed_communication") != "measured":
    problems.append("exposed_communication (kernels only) not measured: %r" % conf)
print("; ".join(problems) if problems else "ok")
PY
)
if [ "$lacks" = ok ]; then
    echo "ok: sampled_rank-0/1: the report says what the trace lacks; confidence lowered where it matters"
else
    echo "FAIL: sampled_rank-0/1: $lacks"; failures=$((failures + 1))
fi
checked=$((checked + 1))
# the model on each trace: the unchanged run replayed ends within 5 % of the trace's own
# span, and no finding claims more than the GPU sat idle (plus, for a change that pins
# copies, the GPU time of the copies from pageable memory: all it can shorten on the GPU)
for trace in "$dir"/*.json.gz; do
    name=$(basename "$trace")
    "$gpuwatch" analyze --json "$trace" >"$work/model.json" 2>/dev/null
    verdict=$(python3 - "$work/model.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
problems = []
for p in d["processes"]:
    r = p.get("replay")
    if r and r["replay_error"] > 0.05:
        problems.append("pid %d: replayed %d ns, %.1f %% off the span" % (p["pid"], r["replayed_ns"], 100 * r["replay_error"]))
    idle = sum(v["run_ns"] for v in (p.get("idle") or {}).values())
    pageable = sum(t["gpu_ns"] for t in p.get("transfers") or [] if t["memory"] == "pageable")
    for f in d["findings"]:
        if f["pid"] != p["pid"] or f["risk"]:
            continue
        cap = idle + (pageable if f["id"] in ("pageable_h2d", "small_copies") else 0)
        if f["saving_ns"] > cap:
            problems.append("%s claims %d ns, the GPU idled %d" % (f["id"], f["saving_ns"], cap))
print("; ".join(problems) if problems else "ok %d findings" % len([f for f in d["findings"] if not f["risk"]]))
PY
)
    if [[ $verdict == ok* ]]; then
        echo "ok: $name: replay within 5 % of the span, ${verdict#ok }, none over the idle"
    else
        echo "FAIL: $name: $verdict"; failures=$((failures + 1))
    fi
    checked=$((checked + 1))
done
# past one sort window (64 Ki records): runs spilled to a temporary file and merged
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/../bench/kineto_big.py" "$dir/sampled_rank-0.json.gz" "$work/big.json" 70 >/dev/null
copies=$(python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "kernel"))' "$work/big.json")
"$gpuwatch" dump "$work/big.json" | awk -v want="$copies" '
    /^#/ || $1 == "-" { next }
    { if (seen && $1 + 0 < last) back++; last = $1 + 0; seen = 1 }
    $3 == "gpu_kernel" { kernels++ }
    END { if (back || kernels != want || kernels < 65536 / 3) {
              printf "FAIL: spilled runs: %d kernels of %d, %d times back in time\n", kernels, want, back; exit 1 }
          printf "ok: spilled runs merged: %d kernels, in time order\n", kernels }' ||
    failures=$((failures + 1))
checked=$((checked + 1))
echo "$((checked + 1 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
