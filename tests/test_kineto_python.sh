#!/usr/bin/env bash
# python_function stacks of a PyTorch profiler trace as the Python lines of the calls they
# enclose: a synthetic trace (tests/kineto/make_fixture.py python) with stacks around
# cudaLaunchKernel, cudaMemcpyAsync and cudaStreamSynchronize. gpuwatch dump gives every call
# the stack of the frames with a line that enclose it on its thread (computed here from the
# JSON, innermost first; builtins without a line left out), and analyze's findings name the
# innermost user line exactly (torch's and site-packages' frames skipped): the sync's
# train.py:19 log_loss, the pageable copy's data.py:21 load_batch; every line any finding
# names is one of the trace's. A trace without python_function events has no Python lines.
# usage: test_kineto_python.sh GPUWATCH KINETO_DIR
set -euo pipefail
gpuwatch=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/kineto/make_fixture.py" python "$work/py.json"
"$gpuwatch" dump "$work/py.json" >"$work/dump.txt"
"$gpuwatch" analyze --json "$work/py.json" >"$work/analyze.json"
"$gpuwatch" analyze --json "$dir/sampled_rank-0.json.gz" >"$work/plain.json"
python3 - "$work/py.json" "$work/dump.txt" "$work/analyze.json" "$work/plain.json" <<'PY'
import json, re, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
dump = open(sys.argv[2]).read().splitlines()
analysis = json.load(open(sys.argv[3]))
plain = json.load(open(sys.argv[4]))
problems = []
FRAME = re.compile(r"^(.+)\((\d+)\): (.+)$")
frames = [e for e in events if e["cat"] == "python_function" and FRAME.match(e["name"])]
# the stack of each runtime call, innermost first, from the JSON
driver = {"cudaLaunchKernel": "cuLaunchKernel", "cudaMemcpyAsync": "cuMemcpyAsync",
          "cudaStreamSynchronize": "cuStreamSynchronize"}
want = []
for c in sorted((e for e in events if e["cat"] == "cuda_runtime"), key=lambda e: e["ts"]):
    enclosing = [f for f in frames if f["tid"] == c["tid"] and f["ts"] <= c["ts"] and
                 c["ts"] + c["dur"] <= f["ts"] + f["dur"]]
    enclosing.sort(key=lambda f: (f["ts"], -f["dur"]))
    stack = ["%s:%s %s" % FRAME.match(f["name"]).groups() for f in reversed(enclosing)]
    want.append((driver[c["name"]], stack))
# what dump says: each call, then its pysite's frames
got, last = [], None
for line in dump:
    m = re.match(r"^\d+ \d+ call (\S+) ", line)
    if m:
        got.append([m.group(1), None])
    elif " pysite " in line and got:
        got[-1][1] = re.findall(r'pyframe\d+="([^"]*)"', line)
if len(got) != len(want):
    problems.append("dump has %d calls, the trace %d" % (len(got), len(want)))
mismatch = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if w[0] != g[0] or w[1] != (g[1] or [])]
if mismatch:
    i, w, g = mismatch[0]
    problems.append("%d calls' stacks differ; the first, call %d: trace %s, dump %s" % (len(mismatch), i, w, g))
def innermost_user(stack):
    for f in stack:
        path = f.split(":")[0]
        if "/site-packages/" not in path and not path.startswith("torch/"):
            return f
expected_user = {"cuLaunchKernel": "model.py:8 forward", "cuMemcpyAsync": "data.py:21 load_batch",
                 "cuStreamSynchronize": "train.py:19 log_loss"}
counts = {}
for name, stack in want:
    if innermost_user(stack) != expected_user[name]:
        problems.append("%s: the trace's innermost user frame is %s" % (name, innermost_user(stack)))
    counts[name] = counts.get(name, 0) + 1
if counts != {"cuLaunchKernel": 360, "cuMemcpyAsync": 12, "cuStreamSynchronize": 120}:
    problems.append("the fixture's calls changed: %s" % counts)
# the findings' lines
in_trace = {(m.group(1), int(m.group(2)), m.group(3)) for m in (FRAME.match(f["name"]) for f in frames)}
by_rule = {f["id"]: f for f in analysis["findings"]}
for rule, line in (("sync_bubble", ("train.py", 19, "log_loss", 120)),
                   ("pageable_h2d", ("data.py", 21, "load_batch", 12))):
    f = by_rule.get(rule)
    lines = f.get("python_lines", {}).get("lines", []) if f else []
    top = (lines[0]["file"], lines[0]["line"], lines[0]["function"], lines[0]["calls"]) if lines else None
    if top != line:
        problems.append("%s: names %s, expected %s" % (rule, top, line))
    elif f["python_lines"]["without_python"] != 0:
        problems.append("%s: %d without Python frames" % (rule, f["python_lines"]["without_python"]))
for f in analysis["findings"]:
    for l in f.get("python_lines", {}).get("lines", []):
        if (l["file"], l["line"], l["function"]) not in in_trace:
            problems.append("%s names %s:%d, not in the trace" % (f["id"], l["file"], l["line"]))
if not analysis["processes"][0].get("python"):
    problems.append("the process is not said to run Python")
if plain["processes"][0].get("python") or any("python_lines" in f for f in plain["findings"]):
    problems.append("sampled_rank-0 (no python_function events) has Python lines")
for p in problems:
    print("FAIL: " + p)
if not problems:
    print("ok: %d calls' stacks as the trace's frames; sync_bubble names train.py:19 log_loss "
          "(120 calls), pageable_h2d data.py:21 load_batch (12); launches model.py:8 forward"
          % len(want))
sys.exit(1 if problems else 0)
PY
