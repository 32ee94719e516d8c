#!/usr/bin/env bash
# [memory] instant events of a PyTorch profiler trace (profile_memory=True) as the memory the
# process holds: a synthetic trace (tests/kineto/make_fixture.py memory) whose device blocks
# grow and shrink, some held from before the trace and given back in it, beside host blocks
# of 1 GiB each. analyze's peak equals the largest "Total Allocated" of the device's events
# exactly, its reserved peak the largest "Total Reserved", what is held at the end the last
# "Total Allocated" (the host's blocks left out), and the blocks are counted; dump shows
# each device block once. The shared traces hold no [memory] events (checked: should one
# gain them, its peak must equal its largest "Total Allocated" too).
# usage: test_kineto_memory.sh GPUWATCH KINETO_DIR
set -euo pipefail
gpuwatch=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/kineto/make_fixture.py" memory "$work/mem.json"
failures=0
for trace in "$work/mem.json" "$dir"/*.json.gz; do
    "$gpuwatch" analyze --json "$trace" >"$work/analyze.json"
    "$gpuwatch" dump "$trace" >"$work/dump.txt"
    python3 - "$trace" "$work/analyze.json" "$work/dump.txt" <<'PY' || failures=$((failures + 1))
import gzip, json, os, sys
path = sys.argv[1]
events = json.load(gzip.open(path) if path.endswith(".gz") else open(path))["traceEvents"]
analysis = json.load(open(sys.argv[2]))
dumped = sum(1 for line in open(sys.argv[3]) if " mem_block " in line)
name = os.path.basename(path)
blocks = [e for e in events if e.get("ph") == "i" and e.get("name") == "[memory]" and
          e["args"].get("Device Type") == 1 and e["args"].get("Device Id", -1) >= 0 and
          e["args"].get("Bytes")]
mem = analysis["processes"][0]["memory"]
problems = []
if not blocks:
    if "caching_allocator" in mem or dumped:
        problems.append("no [memory] events, yet %d blocks dumped, %s" % (dumped, mem.get("caching_allocator")))
    if name == "mem.json":
        problems.append("the fixture has no device blocks")
else:
    blocks.sort(key=lambda e: e["ts"])
    want = {"blocks_taken": sum(1 for e in blocks if e["args"]["Bytes"] > 0),
            "blocks_given_back": sum(1 for e in blocks if e["args"]["Bytes"] < 0),
            "peak_allocated_bytes": max(e["args"]["Total Allocated"] for e in blocks),
            "peak_reserved_bytes": max(e["args"]["Total Reserved"] for e in blocks)}
    got = mem.get("caching_allocator")
    if got != want:
        problems.append("caching_allocator %s, the trace says %s" % (got, want))
    if mem["peak_bytes"] != want["peak_allocated_bytes"]:
        problems.append("peak %d, the largest Total Allocated %d" % (mem["peak_bytes"], want["peak_allocated_bytes"]))
    if mem["held_at_exit_bytes"] != blocks[-1]["args"]["Total Allocated"]:
        problems.append("held at the end %d, the last Total Allocated %d" % (mem["held_at_exit_bytes"], blocks[-1]["args"]["Total Allocated"]))
    if dumped != len(blocks):
        problems.append("dump shows %d blocks, the trace has %d device blocks" % (dumped, len(blocks)))
    if name == "mem.json" and not (len(blocks) == 360 and want["blocks_given_back"] == 124 and
                                   len(events) - len(blocks) > 360):
        problems.append("the fixture changed: %d device blocks, %d given back" % (len(blocks), want["blocks_given_back"]))
for p in problems:
    print("FAIL: %s: %s" % (name, p))
if not problems:
    print("ok: %s: %s" % (name, "peak %d = the largest Total Allocated, reserved %d, %d blocks"
                          % (want["peak_allocated_bytes"], want["peak_reserved_bytes"], len(blocks))
                          if blocks else "no [memory] events, no blocks"))
sys.exit(1 if problems else 0)
PY
done
[ "$failures" -eq 0 ]
