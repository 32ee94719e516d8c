#!/usr/bin/env bash
# gpuwatch serve scraped by a real Prometheus while a simulated training loop runs under the
# shim (examples/phases.c: two epochs of train / eval / checkpoint, ~5 s): at the end Prometheus's figures (busy, idle by cause, copy
# bytes, cost) are those of `gpuwatch analyze --json` on the same traces within 2 %; every
# series scraped during the run only went up, and went up while the run went on; the
# output is clean to `promtool check metrics`.
#   test_serve_prometheus.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_serve_prometheus.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_serve_prometheus.XXXXXX")
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_live.sh"
trap live_cleanup EXIT
STEPS=800
PRICE=3

finish() {
    [ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
    echo "all passed"
    exit 0
}

live_serve "$WORK/run" --gpu-price "$PRICE" || finish
live_prometheus "$SERVE_PORT" || finish
until_ok 60 "Prometheus to scrape gpuwatch serve" prom_target_up || finish

live_example "$WORK/run" phases --steps "$STEPS"
wait "$EXAMPLE_PID" || fail "the example did not run: $(tail -3 "$WORK/run.log")"
"$GPUWATCH" analyze --json --gpu-price "$PRICE" "$WORK/run" >"$WORK/analyze.json" 2>"$WORK/analyze.err" ||
    fail "analyze failed: $(tail -2 "$WORK/analyze.err")"
# serve analyzes the traces again once they changed, Prometheus scrapes it each second:
# wait until what it scraped is of the whole run (its wall time analyze's, to the ns)
final_wall=$(python3 -c 'import json, sys; print("%.9g" % (json.load(open(sys.argv[1]))["processes"][0]["wall_ns"] / 1e9))' "$WORK/analyze.json")
prom_wall_final() {
    local got
    got=$(prom_query 'gpuwatch_wall_seconds_total' | cut -d' ' -f2)
    [ -n "$got" ] && awk -v a="$got" -v b="$final_wall" 'BEGIN { exit !(a - b < 1e-9 && b - a < 1e-9) }'
}
until_ok 60 "Prometheus to scrape the whole run (wall $final_wall s)" prom_wall_final || finish

prom_query 'gpuwatch_gpu_busy_seconds_total' >"$WORK/busy.txt"
prom_query 'gpuwatch_gpu_idle_seconds_total' >"$WORK/idle.txt"
prom_query 'gpuwatch_copy_bytes_total' >"$WORK/copy.txt"
prom_query 'gpuwatch_wall_seconds_total' >"$WORK/wall.txt"
prom_query 'gpuwatch_cost_dollars_total' >"$WORK/cost.txt"
prom_query 'gpuwatch_driver_calls_total{api="cuLaunchKernel"}' >"$WORK/launches.txt"
prom_query 'gpuwatch_phase_cost_dollars_total' >"$WORK/phases.txt"
# reading the files while they grow (and their .rings) is no damage, at any scrape
errors=$(prom_query 'max_over_time(gpuwatch_trace_errors_total[10m])' | cut -d' ' -f2 | sort -u)
[ "$errors" == 0 ] || fail "trace errors while the run was read: $(prom_query 'gpuwatch_trace_errors_total[10m]'); now: $(grep -v '^#' "$WORK/serve.err")"
prom_query 'gpuwatch_finding_saving_ratio' >"$WORK/findings.txt"
# every sample of the run's counters, in scrape order
for name in wall_seconds gpu_busy_seconds gpu_idle_seconds copy_bytes driver_calls; do
    prom_query "gpuwatch_${name}_total[10m]" >"$WORK/series-$name.txt"
done

python3 - "$WORK" "$STEPS" "$PRICE" <<'PY' || fail "Prometheus's figures differ from analyze's (above)"
import json, sys
work, steps, price = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
a = json.load(open(f"{work}/analyze.json"))
procs = a["processes"]
assert len(procs) == 1, f"{len(procs)} processes analyzed"
p = procs[0]
bad = 0

def series(name):
    out = {}
    for line in open(f"{work}/{name}.txt"):
        labels, value = line.rsplit(" ", 1)
        out[labels] = float(value)
    return out

def close(what, got, want, tol=0.02):
    global bad
    ok = abs(got - want) <= tol * abs(want) + 1e-9
    print(f"  {what}: prometheus {got:.9g}, analyze {want:.9g}{'' if ok else '  <-- differs'}")
    bad += not ok

busy = series("busy")
assert len(busy) == 1, busy
close("GPU busy s", sum(busy.values()), p["gpu_busy_ns"] / 1e9)
close("wall s", sum(series("wall").values()), p["wall_ns"] / 1e9)
idle = {k.split("cause=")[1].split(",")[0]: v for k, v in series("idle").items()}
assert len(idle) == 6, idle
for cause, fig in p["idle"].items():
    # a cause with next to no idle time: 2 % of the run's idle time at most
    want = fig["run_ns"] / 1e9
    if want < 0.001:
        total = sum(f["run_ns"] for f in p["idle"].values()) / 1e9
        ok = abs(idle[cause] - want) <= 0.02 * total
        print(f"  idle {cause} s: prometheus {idle[cause]:.9g}, analyze {want:.9g}{'' if ok else '  <-- differs'}")
        bad += not ok
    else:
        close(f"idle {cause} s", idle[cause], want)
assert p["idle"]["input_pipeline"]["run_ns"] > 0.1 * p["wall_ns"], "the planted idle is missing"
copies = {}
for k, v in series("copy").items():
    f = dict(kv.split("=") for kv in k.split(","))
    copies[(f["direction"], f["memory"])] = v
assert len(copies) == 12, copies
names = {"HtoD": "htod", "DtoH": "dtoh", "DtoD": "dtod"}
want = {k: 0 for k in copies}
for x in p["transfers"]:
    if x["dir"] in names:
        want[(names[x["dir"]], x["memory"])] += x["bytes"]
for k in sorted(copies):
    if copies[k] != want[k]:
        print(f"  copy bytes {k}: prometheus {copies[k]}, analyze {want[k]}  <-- differs")
        bad += 1
print(f"  copy bytes htod pinned: {copies[('htod', 'pinned')]:.0f} (= analyze)")
assert copies[("htod", "pinned")] == 2 * steps * (1 << 20), copies
launches = series("launches")  # per epoch: 3 a train step, 1 an eval step (a quarter as many)
if list(launches.values()) != [2 * (3 * steps + steps // 4)]:
    print(f"  cuLaunchKernel calls: {launches}, expected {2 * (3 * steps + steps // 4)}  <-- differs")
    bad += 1
phases = {k.split("phase=")[1].split(",")[0]: v for k, v in series("phases").items()}
for ph in p["cost"]["phases"]:
    close(f"phase {ph['name']} $", phases.get(ph["name"], -1), ph["usd"])
if sorted(phases) != ["checkpoint", "eval", "train"]:
    print(f"  phases {sorted(phases)}  <-- expected checkpoint, eval, train")
    bad += 1
close("cost $", sum(series("cost").values()), p["wall_ns"] / 3.6e12 * price)
findings = {k.split("finding=")[1].split(",")[0]: v for k, v in series("findings").items()}
for f in a["findings"]:
    close(f"finding {f['id']} saving share", findings.get(f["id"], -1), f["saving_share"])

# the samples scraped during the run: never down, and up while the run went on
for name in ["wall_seconds", "gpu_busy_seconds", "gpu_idle_seconds", "copy_bytes", "driver_calls"]:
    for line in open(f"{work}/series-{name}.txt"):
        labels, *values = line.split()
        values = [float(v) for v in values]
        for i in range(1, len(values)):
            if values[i] < values[i - 1]:
                print(f"  {name} {labels}: went down from {values[i-1]} to {values[i]}  <-- not monotonic")
                bad += 1
                break
busy_samples = [float(v) for v in open(f"{work}/series-gpu_busy_seconds.txt").read().split()[1:]]
growing = sorted(set(v for v in busy_samples if 0 < v < busy_samples[-1]))
print(f"  busy scraped {len(busy_samples)} times, {len(growing)} distinct values mid-run")
if len(growing) < 2:
    print("  the run was not seen growing: fewer than 2 mid-run scrapes with new figures  <-- fail")
    bad += 1
sys.exit(1 if bad else 0)
PY

# every query of the shipped dashboard returns data from this Prometheus (Grafana's
# $__rate_interval as 1m: the run's samples are all in the last minute)
DASHBOARD=$(dirname "$0")/../../deploy/grafana/gpuwatch-dashboard.json
python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["panels"]:
    for t in p["targets"]:
        print(p["title"] + "\t" + t["expr"].replace("$__rate_interval", "1m"))' "$DASHBOARD" >"$WORK/panels.txt"
[ "$(wc -l <"$WORK/panels.txt")" -ge 11 ] || fail "dashboard queries: $(wc -l <"$WORK/panels.txt")"
# (the findings' panels: data when the analysis has findings, none when it has none)
findings=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$WORK/analyze.json")
while IFS=$'\t' read -r title expr; do
    n=$(prom_query "$expr" | wc -l)
    if [[ "$expr" == *gpuwatch_finding_* ]] && [ "$findings" -eq 0 ]; then
        [ "$n" -eq 0 ] || fail "dashboard panel '$title': data for $expr, but analyze has no finding"
    else
        [ "$n" -ge 1 ] || fail "dashboard panel '$title': no data for $expr"
    fi
done <"$WORK/panels.txt"
echo "  dashboard: $(wc -l <"$WORK/panels.txt") queries, each with data"

curl -sf "http://127.0.0.1:$SERVE_PORT/metrics" >"$WORK/metrics.txt" || fail "no /metrics"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 ||
    fail "promtool check metrics: $(head -5 "$WORK/promtool.out")"
[ -s "$WORK/promtool.out" ] && fail "promtool check metrics complains: $(head -5 "$WORK/promtool.out")"
curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' \
    -D "$WORK/om.head" "http://127.0.0.1:$SERVE_PORT/metrics" >"$WORK/metrics.om" || fail "no OpenMetrics"
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$WORK/om.head" ||
    fail "OpenMetrics asked, got $(grep -i content-type "$WORK/om.head")"
[ "$(tail -1 "$WORK/metrics.om")" == "# EOF" ] || fail "OpenMetrics text does not end with # EOF"
grep -q '^# TYPE gpuwatch_gpu_busy_seconds counter$' "$WORK/metrics.om" ||
    fail "OpenMetrics counter family not named without _total"
grep -qi '^Content-Type: text/plain; version=0.0.4' <(curl -sf -D- -o /dev/null "http://127.0.0.1:$SERVE_PORT/metrics") ||
    fail "text format not the default"
finish
