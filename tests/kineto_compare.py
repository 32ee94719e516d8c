"""Compares two `gpuwatch analyze --json` reports of one run: the .gwt's and the Kineto
export's read back. Same finding ids, each saving within 5 % of the .gwt's (or 1 % of the
wall), GPU idle by cause within 5 % of each cause (or 1 % of the wall).
Findings that rest on CPU samples (contention), which a Kineto trace never holds, are left
out of the .gwt's list (the test analyzes it --without-cpu-samples, so there are none); were
one there, the slack grows by its preempted time, no more.
usage: kineto_compare.py GWT_REPORT KINETO_REPORT -> prints 'ok ...' or the differences."""
import json
import sys

gwt, kin = (json.load(open(p)) for p in sys.argv[1:3])
problems = []
wall = gwt["run"]["wall_ns"]
slack = 0.01 * wall


def close(a, b):
    return abs(a - b) <= max(0.05 * abs(a), slack)


NOT_IN_KINETO = {"contention"}
for f in gwt["findings"]:
    if f["id"] == "contention":
        slack = max(slack, f["figures"].get("preempted_run_ns", 0))
for report in (gwt, kin):
    report["findings"] = [f for f in report["findings"] if f["id"] not in NOT_IN_KINETO]
ids = lambda r: sorted(f["id"] for f in r["findings"])
if ids(gwt) != ids(kin):
    problems.append("findings %s, read back %s" % (ids(gwt), ids(kin)))
else:
    for a, b in zip(sorted(gwt["findings"], key=lambda f: f["id"]),
                    sorted(kin["findings"], key=lambda f: f["id"])):
        if not close(a["saving_ns"], b["saving_ns"]):
            problems.append("%s saves %d ns, read back %d ns" % (a["id"], a["saving_ns"], b["saving_ns"]))
pa, pb = gwt["processes"][0], kin["processes"][0]
for cause, v in pa["idle"].items():
    w = pb["idle"].get(cause, {}).get("run_ns", 0)
    if not close(v["run_ns"], w):
        problems.append("idle %s %d ns, read back %d ns" % (cause, v["run_ns"], w))
if not close(gwt["run"]["gpu_busy_ns"], kin["run"]["gpu_busy_ns"]):
    problems.append("GPU busy %d ns, read back %d ns" % (gwt["run"]["gpu_busy_ns"], kin["run"]["gpu_busy_ns"]))
print("; ".join(problems) if problems else "ok %d findings %s" % (len(gwt["findings"]), ids(gwt)))
