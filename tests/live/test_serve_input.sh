#!/usr/bin/env bash
# gpuwatch serve on bad input: a directory holding an intact trace, a damaged one and a
# foreign file serves what is intact (the intact process's figures are analyze's) and
# counts the errors in gpuwatch_trace_errors_total; a port in use is a clear error and
# exit status 2; an empty or missing directory serves no process and no error.
#   test_serve_input.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_serve_input.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_serve_input.XXXXXX")
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_live.sh"
trap live_cleanup EXIT

# two runs of the example into one directory (two processes), one trace then damaged
for i in 1 2; do
    live_example "$WORK/run" dataloader_bound --steps 30
    wait "$EXAMPLE_PID" || fail "the example did not run: $(tail -3 "$WORK/run.log")"
done
mapfile -t traces < <(ls "$WORK/run"/*.gwt)
[ "${#traces[@]}" -eq 2 ] || fail "expected 2 traces, got ${#traces[@]}"
intact=${traces[0]} damaged=${traces[1]}
size=$(stat -c %s "$damaged")
# 4 KiB of garbage in the middle of the second trace, and a file that is not a trace
head -c 4096 /dev/urandom | dd of="$damaged" bs=1 seek=$((size / 2)) conv=notrunc status=none
echo "not a gpuwatch trace, just a file named like one" >"$WORK/run/foreign.gwt"

"$GPUWATCH" serve --print "$WORK/run" >"$WORK/metrics.txt" 2>"$WORK/print.err" ||
    fail "serve --print failed: $(tail -2 "$WORK/print.err")"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 && [ ! -s "$WORK/promtool.out" ] ||
    fail "promtool check metrics: $(head -5 "$WORK/promtool.out")"
errors_of() {  # the errors counted for a file
    sed -n "s/^gpuwatch_trace_errors_total{.*file=\"$(basename "$1")\"} \([0-9]*\)$/\1/p" "$WORK/metrics.txt"
}
[ "$(errors_of "$intact")" == 0 ] || fail "intact trace: $(errors_of "$intact") errors, expected 0"
[ "$(errors_of "$WORK/run/foreign.gwt")" == 1 ] ||
    fail "foreign file: '$(errors_of "$WORK/run/foreign.gwt")' errors, expected 1"
d=$(errors_of "$damaged")
[ "${d:-0}" -ge 1 ] || fail "damaged trace: '${d}' errors, expected 1 or more"
"$GPUWATCH" analyze --json "$WORK/run" >"$WORK/analyze.json" 2>/dev/null
[ $? -eq 1 ] || fail "analyze of the damaged run: expected status 1"
python3 - "$WORK" "$(basename "$intact" .gwt)" "$d" <<'PY' || fail "served figures differ from analyze's"
import json, sys
work, intact, damage = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = json.load(open(f"{work}/analyze.json"))
reports = {t["path"].rsplit("/", 1)[1]: len(t.get("damage", [])) for t in a["traces"] if t["readable"]}
metrics = {}
for line in open(f"{work}/metrics.txt"):
    if not line.startswith("#"):
        key, value = line.rsplit(" ", 1)
        metrics[key] = float(value)
bad = 0
for p in a["processes"]:
    lab = f'host="{intact.rsplit("-", 1)[0]}",pid="{p["pid"]}",rank="none"'
    busy = metrics.get(f'gpuwatch_gpu_busy_seconds_total{{{lab},device="0"}}')
    idle = metrics.get(f'gpuwatch_gpu_idle_seconds_total{{{lab},cause="input_pipeline"}}')
    ok = busy == round(p["gpu_busy_ns"] / 1e9, 9) and abs(idle - p["idle"]["input_pipeline"]["run_ns"] / 1e9) < 1e-9
    print(f"  pid {p['pid']}: busy {busy} s, input idle {idle} s (analyze {p['gpu_busy_ns']} ns, "
          f"{p['idle']['input_pipeline']['run_ns']} ns){'' if ok else '  <-- differs'}")
    bad += not ok
assert len(a["processes"]) >= 1
print(f"  damage reports: metrics {damage}, analyze {reports}")
sys.exit(1 if bad else 0)
PY
[ "$(grep -c '^gpuwatch_wall_seconds_total{' "$WORK/metrics.txt")" -ge 1 ] || fail "no process served"

# a port in use: another gpuwatch serve holds it
live_serve "$WORK/run"
"$GPUWATCH" serve --listen "127.0.0.1:$SERVE_PORT" "$WORK/run" 2>"$WORK/inuse.err"
rc=$?
[ "$rc" -eq 2 ] || fail "port in use: exit status $rc, expected 2"
grep -q "cannot listen on 127.0.0.1:$SERVE_PORT: Address already in use" "$WORK/inuse.err" ||
    fail "port in use: unclear error: $(cat "$WORK/inuse.err")"
"$GPUWATCH" serve --listen nonsense "$WORK/run" 2>/dev/null
[ $? -eq 2 ] || fail "--listen nonsense: expected exit status 2"
# 404 and 405 from the running one
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/nothing")
[ "$code" == 404 ] || fail "GET /nothing: $code, expected 404"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$SERVE_PORT/metrics")
[ "$code" == 405 ] || fail "POST /metrics: $code, expected 405"

# nothing to read yet: no process, no error
"$GPUWATCH" serve --print "$WORK/missing" >"$WORK/empty.txt" 2>"$WORK/empty.err" ||
    fail "serve --print of a missing directory failed"
grep -q '^gpuwatch_processes{state="traced"} 0$' "$WORK/empty.txt" || fail "missing directory: processes not 0"
grep -q '^gpuwatch_trace_errors_total{' "$WORK/empty.txt" && fail "missing directory: errors served"
[ -s "$WORK/empty.err" ] && fail "missing directory: said $(cat "$WORK/empty.err")"
[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all passed"
