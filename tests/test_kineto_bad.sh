#!/usr/bin/env bash
# Damaged and foreign input in place of a PyTorch profiler trace: a gzip file cut short, a
# JSON file cut short and one with a malformed byte are analyzed up to the damage (some but
# not all of the kernels, the summary printed) and exit 1 with a message naming the file and
# the offset; JSON that is not a Kineto trace (no "traceEvents") exits 2 and says so, in
# every command that reads traces (analyze, stats, dump, export, report, diff on either
# side), and export and report make no output file for it.
# usage: test_kineto_bad.sh GPUWATCH KINETO_DIR
set -euo pipefail
gpuwatch=$1 dir=$2
source=$dir/sampled_rank-0.json.gz
if [ ! -f "$source" ]; then
    echo "FAIL: $source is missing (shared/data/kineto beside the source tree)"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 passed=0
all=$(gzip -dc "$source" | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["traceEvents"] if e.get("cat") == "kernel"))')
# expect NAME FILE EXIT OFFSET_TEXT: exit status, the message, and part of the kernels read
expect() {
    local name=$1 file=$2 want=$3 where=$4 rc=0
    "$gpuwatch" analyze "$file" >"$work/out" 2>"$work/err" || rc=$?
    local kernels
    kernels=$("$gpuwatch" stats --json "$file" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["gpu_kernels"])' || true)
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $name: exit $rc, expected $want"; cat "$work/err"; failures=$((failures + 1))
    elif ! grep -qF "$file: $where" "$work/err"; then
        echo "FAIL: $name: no message naming the file and '$where':"; cat "$work/err"
        failures=$((failures + 1))
    elif [ "$want" -eq 1 ] && { [ "${kernels:-0}" -le 0 ] || [ "$kernels" -ge "$all" ] ||
                                ! grep -q '^Summary' "$work/out"; }; then
        echo "FAIL: $name: ${kernels:-no} of $all kernels read, expected part of them, and the summary"
        failures=$((failures + 1))
    else
        echo "ok: $name: exit $rc, ${kernels:-0} of $all kernels: $(head -1 "$work/err")"
        passed=$((passed + 1))
    fi
}
size=$(stat -c %s "$source")
head -c $((size / 2)) "$source" >"$work/cut.json.gz"
expect "gzip cut short" "$work/cut.json.gz" 1 "offset $((size / 2)) "
gzip -dc "$source" >"$work/full.json"
json_size=$(stat -c %s "$work/full.json")
head -c $((json_size * 3 / 4)) "$work/full.json" >"$work/cut.json"
expect "JSON cut short" "$work/cut.json" 1 "offset $((json_size * 3 / 4)):"
# a malformed byte three quarters in: the parse stops there
python3 - "$work/full.json" "$work/bad.json" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
at = data.index(b'"ph"', len(data) * 3 // 4)
data[at] = ord("#")
open(sys.argv[2], "wb").write(data)
print(at + 1, file=open(sys.argv[2] + ".at", "w"))  # (yajl stops past the bad byte)
PY
expect "malformed JSON" "$work/bad.json" 1 "offset $(cat "$work/bad.json.at"):"
echo '{"displayTimeUnit": "ms", "events": [1, 2, 3]}' >"$work/other.json"
expect "JSON without traceEvents" "$work/other.json" 2 "offset 0: is JSON but not a Kineto trace"
echo '[{"ph": "X", "name": "a", "ts": 1}]' >"$work/array.json"
expect "a JSON array" "$work/array.json" 2 "offset 0: is JSON but not a Kineto trace"
# refused NAME FILE OUTPUT COMMAND...: exit 2, "gpuwatch CMD: FILE: offset 0: is JSON but not
# a Kineto trace" on stderr, and OUTPUT (when not -) not made
refused() {
    local name=$1 file=$2 output=$3 rc=0
    shift 3
    rm -f "$work/made.json" "$work/made.html"
    "$gpuwatch" "$@" >"$work/out" 2>"$work/err" || rc=$?
    local said="gpuwatch $1: $file: offset 0: is JSON but not a Kineto trace"
    if [ "$rc" -ne 2 ]; then
        echo "FAIL: $name: exit $rc, expected 2"; cat "$work/err"; failures=$((failures + 1))
    elif ! grep -qF "$said" "$work/err"; then
        echo "FAIL: $name: no '$said':"; cat "$work/err"; failures=$((failures + 1))
    elif [ "$output" != - ] && [ -e "$output" ]; then
        echo "FAIL: $name: $output was made"; failures=$((failures + 1))
    else
        echo "ok: $name: exit 2: $(grep -F "$said" "$work/err" | head -1)"
        passed=$((passed + 1))
    fi
}
other=$work/other.json
refused "stats" "$other" - stats "$other"
refused "stats --json" "$other" - stats --json "$other"
refused "dump" "$other" - dump "$other"
refused "export" "$other" "$work/made.json" export -o "$work/made.json" "$other"
refused "export --format kineto" "$other" "$work/made.json" \
    export --format kineto -o "$work/made.json" "$other"
refused "export beside a trace" "$other" "$work/made.json" \
    export -o "$work/made.json" "$source" "$other"
refused "report" "$other" "$work/made.html" report -o "$work/made.html" "$other"
refused "diff, before" "$other" - diff "$other" "$source"
refused "diff, after" "$other" - diff "$source" "$other"
refused "diff --json, after" "$work/array.json" - diff --json "$source" "$work/array.json"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
