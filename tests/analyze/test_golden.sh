#!/usr/bin/env bash
# Golden-file tests of `gpuwatch analyze` and `gpuwatch diff`: text and JSON reports of
# traces written by make_analyze_trace (deterministic), compared with tests/analyze/golden/.
# Also --fail-if exit statuses, damaged traces and directories.
#   test_golden.sh GPUWATCH MAKE_ANALYZE_TRACE GOLDEN_DIR [--update]
set -u
GPUWATCH=$(realpath "${1:?usage: test_golden.sh GPUWATCH MAKE_ANALYZE_TRACE GOLDEN_DIR [--update]}")
MAKE=$(realpath "${2:?}")
GOLDEN=$(realpath "${3:?}")
UPDATE=${4:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_golden.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# golden NAME STATUS ARGS...: runs analyze in $WORK (relative paths), checks its exit
# status (and, when 0, that it said nothing on stderr), and compares stdout; --update
# writes only output that passed those checks and is not empty
golden() {
    local name=$1 want=$2
    shift 2
    (cd "$WORK" && "$GPUWATCH" "${COMMAND:-analyze}" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err")
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "$name: exit status $rc, expected $want: $(head -3 "$WORK/$name.err")"
        return
    fi
    if [ "$want" == 0 ] && [ -s "$WORK/$name.err" ]; then
        fail "$name: stderr not empty: $(head -3 "$WORK/$name.err")"
        return
    fi
    if [ ! -s "$WORK/$name.out" ]; then
        fail "$name: no output"
        return
    fi
    if [ -n "$UPDATE" ]; then
        cp "$WORK/$name.out" "$GOLDEN/$name"
    elif ! diff -u "$GOLDEN/$name" "$WORK/$name.out" >"$WORK/$name.diff"; then
        fail "$name differs from $GOLDEN/$name:"
        head -40 "$WORK/$name.diff" >&2
    fi
}

# expect_rc WHAT STATUS ARGS...
expect_rc() {
    local what=$1 want=$2
    shift 2
    (cd "$WORK" && "$GPUWATCH" "${COMMAND:-analyze}" "$@" >/dev/null 2>"$WORK/rc.err")
    local rc=$?
    [ "$rc" == "$want" ] || fail "$what: exit status $rc, expected $want"
}

"$MAKE" "$WORK/input.gwt" || fail "make_analyze_trace input"
"$MAKE" "$WORK/input-gpu.gwt" --gpu || fail "make_analyze_trace --gpu"
"$MAKE" "$WORK/input-fixed.gwt" --gpu --input-us 500 || fail "make_analyze_trace --input-us"
"$MAKE" "$WORK/damaged.gwt" --damage || fail "make_analyze_trace --damage"
mkdir -p "$WORK/run"
"$MAKE" "$WORK/run/rank0.gwt" --gpu --rank 0 || fail "rank 0"
"$MAKE" "$WORK/run/rank1.gwt" --gpu --rank 1 --leak || fail "rank 1"

golden input.txt 0 --cpus 8 input.gwt
golden input.json 0 --cpus 8 --json input.gwt
golden input-gpu.txt 0 --cpus 8 --gpu-price 2.50 input-gpu.gwt
golden input-gpu.json 0 --cpus 8 --gpu-price 2.50 --json input-gpu.gwt
golden damaged.txt 1 --cpus 8 damaged.gwt
golden damaged.json 1 --cpus 8 --json damaged.gwt
golden run.txt 0 --cpus 8 run
golden run.json 0 --cpus 8 --json run
# a finding that holds on some ranks only: the ranks it holds on, as runs
mkdir -p "$WORK/ranks"
for r in 0 1 2 5; do "$MAKE" "$WORK/ranks/rank$r.gwt" --gpu --rank "$r" --leak || fail "rank $r"; done
"$MAKE" "$WORK/ranks/rank3.gwt" --gpu --rank 3 || fail "rank 3"
seen=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 ranks | grep -A12 '^R1. leak' | grep -m1 'seen in')
[ "$seen" == "    seen in:  4 of 5 processes, ranks 0-2, 5 (evidence from rank 0, pid 4242)" ] ||
    fail "leak on ranks 0, 1, 2 and 5: '$seen'"
ranks=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json ranks | python3 -c '
import json, sys
print([f["ranks"] for f in json.load(sys.stdin)["risks"] if f["id"] == "leak"])')
[ "$ranks" == "[[0, 1, 2, 5]]" ] || fail "leak's ranks in JSON: $ranks"

# an all-reduce each step, 1.5 ms of which 1 ms beside the backward kernel: 0.5 ms exposed
"$MAKE" "$WORK/comm.gwt" --gpu --comm || fail "make_analyze_trace --comm"
comm=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json comm.gwt | grep -o '"communication": {[^}]*}')
[ "$comm" == '"communication": {"kernels": 24, "gpu_ns": 36000000, "exposed_ns": 12000000, "waited_ns": 0, "waited_steady_ns": 0, "last_arrivals": 0, "clock_offset_ns": 0, "overlap": 0.666667}' ] ||
    fail "collectives: $comm"
line=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 comm.gwt | grep '^  collectives')
[ "$line" == "  collectives   24 NCCL kernels, 36.00 ms on the GPU; 12.00 ms of it exposed (no compute kernel beside it: the step waits), 67% overlapped" ] ||
    fail "collectives line: $line"
saving=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json comm.gwt | python3 -c '
import json, sys
print([f["saving_ns"] for f in json.load(sys.stdin)["findings"] if f["id"] == "exposed_communication"])')
[ "$saving" == "[12000000]" ] || fail "exposed_communication on comm.gwt: $saving"
COMMAND=analyze expect_rc "finding=exposed_communication holds" 3 --fail-if 'finding=exposed_communication' comm.gwt
COMMAND=analyze expect_rc "finding=exposed_communication, none" 0 --fail-if 'finding=exposed_communication' input-gpu.gwt

# straggler (rule_straggler.c): four ranks meet in an all-reduce each step; rank 2 loads its
# input slower, and the others wait for it in each all-reduce: rank 0 3 ms, rank 1 1 ms,
# rank 3 2 ms (over the 23 all-reduces of the steady state, the first step being start-up:
# 69, 23 and 46 ms; 138 ms in all, 46 ms the median). Were rank 2 to arrive with the
# next-latest (rank 1), each all-reduce would end 1 ms sooner: 23 ms. With all four alike,
# no straggler
mkdir -p "$WORK/strag" "$WORK/even"
for rw in 0:3000 1:1000 3:2000; do
    "$MAKE" "$WORK/strag/rank${rw%:*}.gwt" --gpu --rank "${rw%:*}" --comm --comm-wait-us "${rw#*:}" ||
        fail "strag $rw"
done
"$MAKE" "$WORK/strag/rank2.gwt" --gpu --rank 2 --comm --input-us 7000 || fail "strag 2"
for r in 0 1 2 3; do "$MAKE" "$WORK/even/rank$r.gwt" --gpu --rank "$r" --comm || fail "even $r"; done
strag=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json strag | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if f["id"] == "straggler":
        print(f["process_rank"], f["ranks"], f["saving_ns"], f["figures"]["wait_total_ns"],
              f["figures"]["wait_per_rank_ns"], "input_pipeline" in f["evidence"])')
[ "$strag" == "2 [0, 1, 2, 3] 23000000 138000000 46000000 True" ] || fail "straggler: '$strag'"
(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 strag | tr -s ' \n' ' ' |
    grep -q 'arrived last at 23 of the 23 collectives of the steady state; the other 3 ranks each waited 46.00 ms for the last rank inside them (median; 138.00 ms in all') ||
    fail "straggler: the evidence's waits"
(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 strag | grep -q '^ [0-9]*\. straggler: Rank 2 is the straggler') ||
    fail "straggler: not in the text report"
even=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json even | grep -c '"id": "straggler"')
[ "$even" == 0 ] || fail "four even ranks: a straggler was found"
COMMAND=analyze expect_rc "finding=straggler holds" 3 --fail-if 'finding=straggler' strag
COMMAND=analyze expect_rc "finding=straggler, none" 0 --fail-if 'finding=straggler' even

# two hosts (run_collectives.c): rank 1's monotonic clock reads 123.456789 s later than rank
# 0's and its wall clock 5 ms ahead; aligned on the all-reduces' ends, its offset is the 5 ms
# (residual 0: the ends agree), and the export starts both processes at the same time
mkdir -p "$WORK/hosts"
"$MAKE" "$WORK/hosts/rank0.gwt" --gpu --rank 0 --comm || fail "hosts 0"
"$MAKE" "$WORK/hosts/rank1.gwt" --gpu --rank 1 --comm --host otherhost --boot-ns 123456789000 \
    --clock-error-ns 5000000 || fail "hosts 1"
hosts=$(cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json hosts | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["run"]["collectives"]
print([p["communication"]["clock_offset_ns"] for p in d["processes"]], c["hosts"], c["clock_residual_ns"])')
[ "$hosts" == "[0, 5000000] 2 0" ] || fail "two hosts: offsets, hosts, residual: $hosts"
starts=$(cd "$WORK" && "$GPUWATCH" export hosts | grep -o '"name":"cuInit".*"ts":[0-9.]*' | sed 's/.*"ts"://' | tr '\n' ' ')
[ "$starts" == "0.000 0.000 " ] || fail "two hosts: the export's first calls at $starts"

# the same program with its input pipeline fixed: input_pipeline gone, the saving it
# predicted against the wall time given back
COMMAND=diff golden diff.txt 0 --cpus 8 input-gpu.gwt input-fixed.gwt
COMMAND=diff golden diff.json 0 --cpus 8 --json input-gpu.gwt input-fixed.gwt
COMMAND=diff expect_rc "diff: the step no longer" 0 --fail-if 'step_ms>+5%' input-gpu.gwt input-fixed.gwt
COMMAND=diff expect_rc "diff: the step grew" 3 --fail-if 'step_ms>+5%' input-fixed.gwt input-gpu.gwt
COMMAND=diff expect_rc "diff: utilization fell" 3 --fail-if 'gpu_util<-0.1' input-fixed.gwt input-gpu.gwt
COMMAND=diff expect_rc "diff: a new finding" 3 --fail-if 'finding=input_pipeline' input-fixed.gwt input-gpu.gwt
COMMAND=diff expect_rc "diff: a finding gone is not new" 0 --fail-if 'finding=input_pipeline' input-gpu.gwt input-fixed.gwt
COMMAND=diff expect_rc "diff: an unknown figure" 2 --fail-if 'speed>+5%' input-gpu.gwt input-fixed.gwt
COMMAND=diff expect_rc "diff: one run" 2 input-gpu.gwt
COMMAND=diff expect_rc "diff: a damaged run" 1 --cpus 8 damaged.gwt input-fixed.gwt
# the processes of a run read one at a time or all at once: the same report
if [ -z "$UPDATE" ]; then
    for jobs in 1 2 8; do
        (cd "$WORK" && "$GPUWATCH" analyze --cpus 8 --json --jobs "$jobs" run >"$WORK/jobs.out")
        cmp -s "$GOLDEN/run.json" "$WORK/jobs.out" || fail "run.json differs with --jobs $jobs"
    done
fi
expect_rc "--jobs 0" 2 --jobs 0 run

# the CI gate and usage errors
expect_rc "no condition" 0 --cpus 8 input.gwt
expect_rc "gpu_util<0.6 holds" 3 --fail-if 'gpu_util<0.6' input.gwt
expect_rc "gpu_util<0.1 does not" 0 --fail-if 'gpu_util<0.1' input.gwt
expect_rc "finding=input_pipeline" 3 --fail-if finding=input_pipeline input.gwt
expect_rc "finding=leak" 0 --fail-if finding=leak input.gwt
expect_rc "any of two" 3 --fail-if finding=leak --fail-if 'steps>=20' input.gwt
expect_rc "bad expression" 2 --fail-if 'gpu_util<<0.6' input.gwt
expect_rc "unknown finding" 2 --fail-if finding=nope input.gwt
expect_rc "no trace" 2
expect_rc "unknown option" 2 --bogus input.gwt
expect_rc "damaged: status 1" 1 damaged.gwt
expect_rc "damaged: condition wins" 3 --fail-if finding=input_pipeline damaged.gwt
expect_rc "missing file" 1 missing.gwt
grep -q "missing.gwt" "$WORK/rc.err" || fail "missing file: not named on stderr"
# the CPU count: --cpus, else the one the trace records (usable, not online), else none on
# another host (samplehost is not this one)
"$MAKE" "$WORK/cpus.gwt" --cpus 12 || fail "make_analyze_trace --cpus"
# worker_advice LABEL EXPECTED ARGS...: the JSON's cpus/cpus_source and the workers advised
worker_advice() {
    local label=$1 want=$2
    shift 2
    local got
    got=$(cd "$WORK" && "$GPUWATCH" analyze --json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
f = [x for x in d["findings"] if x["id"] == "input_pipeline"][0]
print(d["cpus"], d["cpus_source"], f["figures"]["suggested_workers"], "num_workers=%d," % f["figures"]["suggested_workers"] in f["change"])')
    [ "$got" == "$want" ] || fail "$label: got '$got', expected '$want'"
}
if [ "$(hostname)" != samplehost ]; then
    worker_advice "recorded in the trace" "12 trace 11 True" cpus.gwt
    worker_advice "--cpus wins" "8 option 7 True" --cpus 8 cpus.gwt
    worker_advice "not recorded" "None unknown 0 False" input.gwt
fi
(cd "$WORK" && "$GPUWATCH" dump cpus.gwt) | grep -q "^# cpus online 24 usable 12$" ||
    fail "dump: no '# cpus online 24 usable 12' line"
# a killed run's file ends inside a chunk: expected, not damage (status 0, said on stderr)
head -c 3000 "$WORK/input.gwt" >"$WORK/truncated.gwt"
expect_rc "killed tail: status 0" 0 truncated.gwt
grep -q "truncated.gwt: offset [0-9]*: ended abruptly" "$WORK/rc.err" ||
    fail "killed tail: no 'ended abruptly' on stderr: $(head -2 "$WORK/rc.err")"
(cd "$WORK" && "$GPUWATCH" analyze --json truncated.gwt 2>/dev/null) |
    grep -q '"ended_abruptly_at": [0-9]' || fail "killed tail: JSON has no ended_abruptly_at offset"
# two traces joined (cat a.gwt b.gwt): the second is never read as the first's process
cat "$WORK/input.gwt" "$WORK/input-gpu.gwt" >"$WORK/joined.gwt"
joined_at=$(stat -c %s "$WORK/input.gwt")
expect_rc "joined traces: status 1" 1 joined.gwt
grep -q "joined.gwt: offset $joined_at: expected a chunk, found another trace's file header" \
    "$WORK/rc.err" || fail "joined traces: no second-header error at $joined_at: $(head -2 "$WORK/rc.err")"
(cd "$WORK" && "$GPUWATCH" analyze --json joined.gwt 2>/dev/null) >"$WORK/joined.json"
(cd "$WORK" && "$GPUWATCH" analyze --json input.gwt 2>/dev/null) >"$WORK/alone.json"
[ "$(grep -o '"events": [0-9]*' "$WORK/joined.json" | head -1)" == \
  "$(grep -o '"events": [0-9]*' "$WORK/alone.json" | head -1)" ] ||
    fail "joined traces: the first process's calls changed (the second one's merged in)"
head -c 100 "$WORK/input.gwt" >"$WORK/short.gwt"
expect_rc "no header: status 1" 1 short.gwt

if [ -z "$UPDATE" ] && command -v python3 >/dev/null; then
    for f in input.json input-gpu.json damaged.json run.json; do
        python3 -m json.tool "$GOLDEN/$f" >/dev/null || fail "$f is not valid JSON"
    done
fi
[ "$failures" == 0 ] && echo "test_golden: all checks passed" || echo "test_golden: $failures failed"
exit $((failures > 0))
