#!/usr/bin/env bash
# Four ranks of a data-parallel job (examples/ranks.c) run on the simulated GPU under the
# shim with the timeline on; their all-reduces end together across the processes
# (FAKECUDA_COLLECTIVE_FILE), as NCCL's do. Checks, on the analysis of the run directory:
#   - rank 2 loads 4x slower: the straggler finding names rank 2 and its own cause
#     (input_pipeline), it arrived last at three collectives of the steady state in four at
#     least (the first waits for the processes to start; 4 processes share 2 CPUs, and a
#     fast rank preempted at a collective can arrive after it), and the others' exposed
#     communication is their wait for it, not an exposed_communication finding;
#   - four alike: no straggler, the ranks arrive within 0.5 ms of each other;
#   - four healthy ranks (batches ready, the loss read two steps late): no finding at all
#     (one rank preempted once is no loader: rule_input_pipeline.c, one_incident), the
#     median rank's GPU 95 % busy or more;
#   - the all-reduce after backward with nothing beside it: exposed_communication, with its
#     share of the wall time, and about the 40 x 800 us the collectives lasted (-5 %, +25 %);
#   - the savings predicted (the median of 5 runs) are within +-20 % of the wall time the fix
#     gave: the planted runs' median minus the four-alike runs', widened by the noise
#     those runs show (noise.sh);
#   - gpuwatch diff from each planted run to the four-alike one: the finding is gone, the
#     realized gain printed: the difference of the two runs' walls, whatever its sign;
#   - the straggler run with each rank's timeline sampled in windows (GPUWATCH_TIMELINE=
#     sampled past its rate): not lined up, no straggler claimed, and the report says the
#     whole timeline is needed.
#   test_ranks.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_ranks.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_ranks.XXXXXX")
trap 'ex_keep_or_remove "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_examples.sh"
RANKS=4

# run_ranks DIR [ARGS...]: the four ranks at once, traced into DIR; analysis in DIR.json.
# The whole timeline (lining the ranks up needs it), unless TIMELINE holds other settings.
ex_timeline full
run_ranks() {
    local dir=$1 pids=() r
    shift
    rm -rf "$dir" "$dir.collective"
    mkdir -p "$dir"
    # (waits sleep: four ranks on 2 CPUs spinning in their waits, as CUDA's default schedule
    # does while a process has fewer contexts than CPUs, would take each other's CPUs; a
    # job with more ranks than cores runs with cudaDeviceScheduleBlockingSync or yield)
    for ((r = 0; r < RANKS; r++)); do
        env "${TIMELINE[@]}" RANK=$r LOCAL_RANK=$r WORLD_SIZE=$RANKS FAKECUDA_COLLECTIVE_FILE="$dir.collective" \
            FAKECUDA_SPIN_WAIT=0 FAKECUDA_MOVE_BYTES=0 LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$CUPTI" \
            LD_PRELOAD="$SHIM" GPUWATCH_OUTPUT="$dir" "$BUILD/examples/example_ranks" "$@" \
            >"$dir.log$r" 2>&1 &
        pids+=($!)
    done
    for r in "${pids[@]}"; do
        wait "$r" || fail "a rank of example_ranks $* exited $?: $(cat "$dir".log*)"
    done
    [ "$(ls "$dir"/*.gwt | wc -l)" == $RANKS ] || fail "example_ranks $*: not $RANKS traces"
    "$GPUWATCH" analyze --json "$dir" >"$dir.json" 2>"$dir.err" ||
        fail "analyze of example_ranks $*: $(head -2 "$dir.err")"
}

# check DIR SCENARIO: the properties above; prints "SAVING WALL" of the scenario's finding
check() {
    python3 - "$1.json" "$2" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
scenario = sys.argv[2]
problems = []
found = {f["id"]: f for f in d["findings"]}
procs = d["processes"]
coll = d["run"]["collectives"]
if len(procs) != 4 or sorted(p["rank"] for p in procs) != [0, 1, 2, 3]:
    problems.append("ranks %s" % [p["rank"] for p in procs])
for p in procs:
    if p["communication"]["kernels"] != 40:
        problems.append("rank %d: %d collectives" % (p["rank"], p["communication"]["kernels"]))
# lined up over the steady state: the first collective (or first few: warm-up) waits for
# the processes to be up. How many are warm-up is the steps' rule's (warmup_max_share,
# 34 % at most): 4 processes starting on 2 CPUs once took 5 (35 steady), where the bound
# here had been 4
if (not coll or coll["ranks"] != 4 or coll["collectives"] != 40 or coll["hosts"] != 1 or
        coll["compared"] != coll["steady"] or not 27 <= coll["steady"] <= 39):
    problems.append("collectives lined up: %s" % coll)
wall = procs[0]["wall_ns"]
saving = 0
if scenario == "straggler":
    f = found.get("straggler")
    if not f:
        problems.append("no straggler finding")
    else:
        saving = f["saving_ns"]
        if f["process_rank"] != 2 or f["figures"]["straggler_rank"] != 2 or f["ranks"] != [0, 1, 2, 3]:
            problems.append("straggler: rank %s, ranks %s" % (f["process_rank"], f["ranks"]))
        # last at three steady collectives in four at least: 4 processes share 2 CPUs, and
        # a fast rank preempted at a collective for a scheduler's slice (a few ms with four
        # runnable, as long as the planted 3 ms) arrives after the slow one (5 of 39 in a
        # run on a quiet machine, where one in ten had been the bound); any other rank last
        # as often would be one in four
        late = coll["steady"] - coll["steady"] // 4
        if f["figures"]["last_arrivals"] < late:
            problems.append("rank 2 arrived last at %d of %d" % (f["figures"]["last_arrivals"], coll["steady"]))
        # its own cause is one of the wastes its loop has: the slow loading, or the per-step
        # .item() that keeps the loads from overlapping the GPU's work (which one saves
        # more turns on the CPUs left for workers: beside a CPU hog the read's fix came
        # first, 122 ms against the unbudgeted workers' 160); or contention, the machine's
        # (as in the calibration: another process took the CPUs it loads on). Not another.
        own = re.search(r"its top finding is (\w+)", f["evidence"])
        own = own.group(1) if own else None
        if own not in ("input_pipeline", "sync_bubble", "contention"):
            problems.append("straggler's own cause: %s" % f["evidence"])
    if "exposed_communication" in found:
        problems.append("the fast ranks' wait was called exposed communication")
    # in the steady state rank 2 waits for nobody but at the collectives it did not arrive
    # last at (a fast rank preempted, above), and a few us of noise at the others: a small
    # part of what each other rank waits, a quarter at most. (Each such collective may cost
    # it a preempted rank's whole timeslice, more than the others' average wait at one: a
    # fresh-clone run, last at 38 of 39, waited 6.8 ms where the others waited 112.6 ms at
    # least, 2.9 a collective. Beside a CPU hog: last at 37 of 39, 1.49 ms, the others 110.)
    slow = [p for p in procs if p["rank"] == 2][0]["communication"]
    least = min(p["communication"]["waited_steady_ns"] for p in procs if p["rank"] != 2)
    if (slow["waited_steady_ns"] >= least / 4 or
            slow["last_arrivals"] < coll["steady"] - max(1, coll["steady"] // 10)):
        problems.append("rank 2 waited %d ns in the steady state (the others %d at least), "
                        "last at %d" % (slow["waited_steady_ns"], least, slow["last_arrivals"]))
    if not 2900000 <= coll["skew_median_ns"] <= 3600000:
        problems.append("skew %d ns, planted 3 ms" % coll["skew_median_ns"])
elif scenario == "even":
    if "straggler" in found:
        problems.append("a straggler among four alike: %s" % found["straggler"]["evidence"])
    # told apart from the planted straggler's 3 ms by three times at least: four processes
    # on 2 CPUs, beside ctest's other test, wake from their loads in turn (a fresh-clone run:
    # 506 us apart, the rule rightly naming no straggler); what the user is told is that
    # none is, checked above
    if coll["skew_median_ns"] > 1000000:
        problems.append("four alike arrive %d ns apart" % coll["skew_median_ns"])
elif scenario == "healthy":
    if d["findings"] or d["risks"]:
        problems.append("healthy ranks: %s" % [f["id"] for f in d["risks"] + d["findings"]])
    # (the median rank: 4 processes share 2 CPUs, beside other tests, and one of them
    # preempted for 8 ms once kept its GPU 92 % busy)
    busy = sorted(p["steady_util"] for p in procs)
    if busy[(len(busy) - 1) // 2] < 0.95:
        problems.append("healthy ranks' GPUs busy %s" % [p["steady_util"] for p in procs])
elif scenario == "serial":
    f = found.get("exposed_communication")
    if not f:
        problems.append("no exposed_communication finding")
    else:
        saving = f["saving_ns"]
        fig = f["figures"]
        if not 0.95 * 40 * 800000 <= fig["exposed_ns"] <= 1.25 * 40 * 800000:
            problems.append("exposed %d ns, the collectives lasted 40 x 800 us" % fig["exposed_ns"])
        if fig["collectives"] != 40 or saving != fig["exposed_ns"]:
            problems.append("figures %s, saving %d" % (fig, saving))
        rank_wall = [p["wall_ns"] for p in procs if p["rank"] == f["process_rank"]][0]
        if abs(fig["exposed_share"] - fig["exposed_ns"] / rank_wall) > 1e-5:
            problems.append("share %g of %d ns in %d ns" % (fig["exposed_share"], fig["exposed_ns"], rank_wall))
print("; ".join(problems) if problems else "ok %d %d" % (saving, wall))
PY
}

# each run's prediction and walls; the check is on their medians (each run's own ratio
# swung from 0.54 to 1.30 for the serial all-reduce: a gain of a few ms on a busy 2-core
# machine, measured as the difference of two runs)
declare -A preds walls
for run in 1 2 3 4 5; do
    declare -A wall saving
    for scenario in straggler even serial; do
        args=()
        [ $scenario == straggler ] && args=(--slow-rank 2)
        [ $scenario == serial ] && args=(--serial-comm)
        run_ranks "$WORK/$scenario" "${args[@]}"
        verdict=$(check "$WORK/$scenario" $scenario)
        if [[ $verdict != ok* ]]; then
            fail "$scenario (run $run): $verdict"
            continue
        fi
        read -r saving[$scenario] wall[$scenario] <<<"${verdict#ok }"
    done
    for scenario in straggler serial even; do
        [ -n "${wall[$scenario]:-}" ] || continue
        walls[$scenario]+="${wall[$scenario]} "
        [ $scenario == even ] || preds[$scenario]+="${saving[$scenario]} "
    done
    unset wall saving
done
run_ranks "$WORK/healthy" --healthy
verdict=$(check "$WORK/healthy" healthy)
[[ $verdict == ok* ]] && echo "ok: four healthy ranks, no finding" || fail "healthy: $verdict"

# gpuwatch diff of the last runs, planted against fixed: the planted finding is gone and
# the realized gain is the difference of rank 0's wall times
for pair in "straggler straggler" "serial exposed_communication"; do
    read -r scenario id <<<"$pair"
    "$GPUWATCH" diff --json "$WORK/$scenario" "$WORK/even" >"$WORK/diff.json" 2>"$WORK/diff.err" ||
        { fail "diff $scenario even: $(head -2 "$WORK/diff.err")"; continue; }
    verdict=$(python3 - "$WORK/diff.json" "$WORK/$scenario.json" "$WORK/even.json" "$id" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
before, after = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
status = {f["id"]: f["status"] for f in d["findings"]}
realized = before["processes"][0]["wall_ns"] - after["processes"][0]["wall_ns"]
problems = []
if status.get(sys.argv[4]) != "gone":
    problems.append("%s: %s" % (sys.argv[4], status.get(sys.argv[4])))
# (its sign is no check of one pair of runs: the serial all-reduce's fix gains 32 ms +- 33
# over medians of 5, and one pair came out -9.6 ms; the medians' check is above)
if d["change"]["realized_ns"] != realized:
    problems.append("realized %d ns, walls differ by %d" % (d["change"]["realized_ns"], realized))
print("; ".join(problems) if problems else "ok")
PY
)
    [ "$verdict" == ok ] && echo "ok: diff $scenario -> even: $id gone" || fail "diff $scenario even: $verdict"
done
ex_timeline sampled
run_ranks "$WORK/sampled" --slow-rank 2
"$GPUWATCH" analyze "$WORK/sampled" >"$WORK/sampled.txt" 2>&1
verdict=$(python3 - "$WORK/sampled.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
coll = d["run"]["collectives"]
problems = []
if not coll or coll["ranks"] != 0 or coll["sampled"] != 4:
    problems.append("collectives %s" % coll)
if any(f["id"] == "straggler" for f in d["findings"]):
    problems.append("a straggler claimed from sampled windows")
print("; ".join(problems) if problems else "ok")
PY
)
grep -q "^  ranks         not lined up: 4 ranks recorded the GPU timeline in windows .*GPUWATCH_TIMELINE=full$" \
    "$WORK/sampled.txt" || verdict+=" (text: $(grep '^  ranks' "$WORK/sampled.txt"))"
[ "$verdict" == ok ] && echo "ok: sampled ranks not lined up, the whole timeline asked for" ||
    fail "sampled: $verdict"
even_wall=$(echo ${walls[even]:-} | tr ' ' '\n' | grep . | median)
for scenario in straggler serial; do
    p=$(echo ${preds[$scenario]:-} | tr ' ' '\n' | grep . | median)
    w=$(echo ${walls[$scenario]:-} | tr ' ' '\n' | grep . | median)
    noise=$(noise_of "${walls[$scenario]:-}" "${walls[even]:-}")
    noise_note "$scenario" "$noise" "$((${w:-0} - ${even_wall:-0}))"
    echo "$scenario: predicted $(awk -v p="${p:-0}" 'BEGIN {printf "%.1f", p / 1e6}') ms," \
        "measured $(awk -v a="${w:-0}" -v b="${even_wall:-0}" -v e="$noise" 'BEGIN {printf "%.1f ms +- %.1f", (a - b) / 1e6, e / 1e6}')" \
        "(medians of 5 runs: $(awk -v p="${p:-0}" -v a="${w:-0}" -v b="${even_wall:-0}" 'BEGIN {printf "%.3f", (a > b ? p / (a - b) : 0)}'))"
    noise_within "${p:-0}" "$((${w:-0} - ${even_wall:-0}))" "$noise" 0.8 1.2 ||
        fail "$scenario: predicted gain outside 0.8-1.2 of the measured one, beyond its noise"
done
noise_report analyze_ranks
[ $failures == 0 ] && echo "test_ranks: all checks passed" || echo "test_ranks: $failures failed"
exit $((failures > 0))
