#!/usr/bin/env bash
# The shipped alert rules and dashboard (deploy/): promtool check rules and promtool test
# rules (each alert on synthetic series, firing and quiet); every metric the rules and the
# dashboard's panels name is one gpuwatch serve exports. (That each panel's query returns
# data from a Prometheus scraping a run: test_serve_prometheus.sh.)
#   test_rules.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?usage: test_rules.sh BUILD_DIR SOURCE_DIR}
SRC=${2:?usage: test_rules.sh BUILD_DIR SOURCE_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_rules.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
RULES=$SRC/deploy/prometheus/gpuwatch.rules.yml
DASHBOARD=$SRC/deploy/grafana/gpuwatch-dashboard.json

promtool check rules "$RULES" >"$WORK/check.out" 2>&1 || fail "promtool check rules: $(cat "$WORK/check.out")"
grep -q 'SUCCESS: 4 rules found' "$WORK/check.out" || fail "expected 4 rules: $(cat "$WORK/check.out")"
# promtool reads the rule files a test names relative to the test file
(cd "$(dirname "$RULES")" && promtool test rules gpuwatch.rules.test.yml) >"$WORK/test.out" 2>&1 ||
    fail "promtool test rules: $(head -30 "$WORK/test.out")"
grep -q SUCCESS "$WORK/test.out" || fail "promtool test rules did not succeed"
for alert in GpuwatchGpuIdle GpuwatchMemoryNearCapacity GpuwatchOomRetries GpuwatchRankSlower; do
    grep -q "alertname: $alert$" "$(dirname "$RULES")/gpuwatch.rules.test.yml" ||
        fail "no unit test of $alert"
done

# the metric names gpuwatch serve exports (its families, written even with no process)
"$BUILD/tools/gpuwatch" serve --print --gpu-price 1 "$WORK/none" |
    sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' | sort >"$WORK/served.txt"
[ "$(wc -l <"$WORK/served.txt")" -eq 19 ] || fail "serve --print lists $(wc -l <"$WORK/served.txt") families"
python3 - "$DASHBOARD" "$RULES" "$WORK/served.txt" <<'PY' || fail "the rules or the dashboard name metrics serve does not export"
import json, re, sys
dashboard, rules, served = sys.argv[1], sys.argv[2], set(open(sys.argv[3]).read().split())
d = json.load(open(dashboard))
exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
assert len(d["panels"]) >= 8 and all(p["targets"] for p in d["panels"]), "panels without queries"
bad = 0
for where, text in [("dashboard", "\n".join(exprs)), ("rules", open(rules).read())]:
    names = set(re.findall(r"\bgpuwatch_[a-z_]+", text))
    for n in sorted(names - served):
        print(f"  {where} names {n}, which gpuwatch serve does not export")
        bad += 1
    if not names - served:
        print(f"  {where}: {len(names)} metrics, all exported")
sys.exit(1 if bad else 0)
PY
[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all passed"
