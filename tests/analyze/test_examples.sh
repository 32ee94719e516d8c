#!/usr/bin/env bash
# The planted-waste examples under the shim and the simulated driver, with and without the
# simulated CUPTI: each one's top finding must be the planted cause, its estimated saving in
# a sensible range; the healthy example gets no finding. Three timelines: host-only, the
# whole CUPTI timeline, and a sampled one whose windows (10 ms every 30 ms, past a record
# rate of 0) leave gaps, the default's shape on a program that records fast. Then `gpuwatch run` prints the
# analysis (and does not with --no-analyze).
#   test_examples.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_examples.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_examples.XXXXXX")
trap 'ex_keep_or_remove "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_examples.sh"

# example NAME MODE EXPECTED_ID MIN_SHARE MAX_SHARE [ENV...]
example() {
    local name=$1 mode=$2 want=$3 lo=$4 hi=$5
    shift 5
    local out="$WORK/$name-$mode" cupti=0
    [ "$mode" != host ] && cupti=$CUPTI
    ex_timeline "$mode"
    if ! env "$@" "${TIMELINE[@]}" LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$cupti" LD_PRELOAD="$SHIM" \
        GPUWATCH_OUTPUT="$out" "$BUILD/examples/example_$name" >"$out.log" 2>&1; then
        fail "$name ($mode) did not run: $(tail -3 "$out.log")"
        return
    fi
    "$GPUWATCH" analyze --json "$out" >"$out.json" 2>"$out.err"
    "$GPUWATCH" analyze "$out" >"$out.txt" 2>&1
    if [ "$mode" == sampled ]; then
        local windows
        windows=$(grep -m1 -o '"gpu_windows": {"count": [0-9]*' "$out.json" | grep -o '[0-9]*$')
        [ "${windows:-0}" -ge 2 ] || fail "$name (sampled): ${windows:-no} windows with gaps"
    fi
    local top id share key=rank
    case $want in leak | oom_retry) key=risk_rank ;; esac  # risks: listed first, apart
    top=$(grep -m1 "^  {\"$key\": 1, \"id\": " "$out.json")
    id=$(sed -n "s/^  {\"$key\": 1, \"id\": \"\([a-z_0-9]*\)\".*/\1/p" <<<"$top")
    share=$(sed -n 's/.*"saving_share": \([0-9.e-]*\),.*/\1/p' <<<"$top")
    if [ "$want" == none ]; then
        [ -z "$top" ] || fail "$name ($mode): expected no finding, got $id"
        grep -q "^No findings" "$out.txt" || fail "$name ($mode): 'No findings' not said"
        echo "  $name ($mode): no finding"
        return
    fi
    # Another process holding a CPU (0.5 or more beside the run) takes it from the workers a
    # fix would start, not from a loop that stops waiting for the GPU: the example's other
    # waste (WHEN_CPUS_TAKEN, its loss read every step) may then give back more, as
    # test_calibration.sh measures under such load. Said, and its share checked.
    local others
    others=$(grep -m1 -o '"other_processes_cpus": [0-9.e+-]*' "$out.json" | sed 's/.*: //')
    if [ "$id" != "$want" ] && [ -n "${WHEN_CPUS_TAKEN:-}" ] && [ "$id" == "$WHEN_CPUS_TAKEN" ] &&
        awk -v o="${others:-0}" 'BEGIN { exit !(o >= 0.5) }'; then
        echo "  $name ($mode): other processes kept $others CPUs busy: $id first"
        want=$id
    fi
    # A saving said "up to" (host-only launch_bound's: its kernels' lengths unknown) ranks
    # behind a proven one (findings.c, issue 36 C9). A run whose training thread was
    # runnable without a CPU min_share (5 %) of its time or more (the machine busy: ctest's
    # other test, a CPU hog; a fresh-clone run's 70 ms loop lost 6.3 ms so, 9.5 %) is rightly
    # told contention first, its proven share. The planted finding must then come second,
    # its share checked as ever, and the preemption is said.
    if [ "$id" == contention ] && [ "$id" != "$want" ] && [ -n "${WHEN_PREEMPTED:-}" ]; then
        local preempted second
        preempted=$(grep -m1 -o '"preempted_share": [0-9.e+-]*' "$out.json" | sed 's/.*: //')
        second=$(grep -m1 "^  {\"$key\": 2, \"id\": \"$want\"" "$out.json")
        if [ -n "$second" ] && awk -v p="${preempted:-0}" 'BEGIN { exit !(p >= 0.05) }'; then
            echo "  $name ($mode): the training thread waited for a CPU $preempted of the time: contention first, $want second"
            id=$want
            share=$(sed -n 's/.*"saving_share": \([0-9.e-]*\),.*/\1/p' <<<"$second")
        fi
    fi
    if [ "$id" != "$want" ]; then
        fail "$name ($mode): top finding '$id', expected '$want'"
        sed -n '/^Findings/,/^Details/p' "$out.txt" | head -30 >&2
        return
    fi
    if ! awk -v s="$share" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(s >= lo && s <= hi) }'; then
        fail "$name ($mode): saving share $share outside [$lo, $hi]"
    fi
    echo "  $name ($mode): $id, saves up to $(awk -v s="$share" 'BEGIN{printf "%.0f%%", s*100}') of wall"
}

for mode in host cupti sampled; do
    example healthy "$mode" none 0 0
    WHEN_CPUS_TAKEN=sync_bubble example dataloader_bound "$mode" input_pipeline 0.25 0.85
    example pageable_h2d "$mode" pageable_h2d 0.25 0.75
    example per_step_sync "$mode" sync_bubble 0.10 0.50
    # host-only no record times its kernels: the replay takes them from its waits, and a
    # wait the thread spent preempted inside its spin looks like GPU work (a quiet
    # fresh-clone run waited 21 % of the time and saved 25 %, where others save 70-80 %):
    # there the finding and some saving are checked, not how much (issue 36 E12, open)
    lb_low=0.30
    [ "$mode" == host ] && lb_low=0.05
    WHEN_PREEMPTED=1 example launch_bound "$mode" launch_bound "$lb_low" 1.00
    example oom_retry "$mode" oom_retry 0 0 FAKECUDA_MEM_MB=256
    example leak "$mode" leak 0 0
    # (an async save hides the writes behind the 50 steps that follow each, but the last
    # one's: the two early 300 ms writes at most, of a wall of three writes and 150 steps,
    # 600 / 1200 ms; 100 ms each, 0.17, where a step takes its 2 ms, more where the machine
    # is slower: 0.308 in a fresh-clone run)
    example checkpoint_pauses "$mode" pauses 0.10 0.50
done
grep -q '"growth_per_step_bytes": 4194304' "$WORK/leak-host.json" ||
    fail "leak: growth per step is not the planted 4 MiB"
# where the leaked memory was allocated: the example's leak_step, called from main
for mode in host cupti; do
    grep -q '"where": "leak_step ← main (example_leak)", "bytes": 419430400, "blocks": 100}' \
        "$WORK/leak-$mode.json" || fail "leak ($mode): the allocation site leak_step not named"
    tr -s ' \n' ' ' <"$WORK/leak-$mode.txt" | grep -q 'Allocated at leak_step ← main (example_leak): 400.0 MiB in 100 blocks' ||
        fail "leak ($mode): the text report does not name leak_step"
done
# input-bound on 2 CPUs: each batch takes 4 ms of CPU to load and the GPU 1.5 ms to use, the
# loop waits off the CPU (no sync). One worker only moves the loads (as slow as the thread
# was); the CPU samples show the thread needs almost none once it no longer loads, so the
# 2 CPUs load two batches at once: the finding names 2 workers (calibrated against the
# workers users start in test_calibration.sh, where 2 gained 48 % here)
LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$CUPTI" LD_PRELOAD="$SHIM" GPUWATCH_OUTPUT="$WORK/slow_input" \
    "$BUILD/examples/example_random_loop" --steps 60 --load-us 4000 --kernels 10 \
    --kernel-ns 150000 --copy-kb 1024 --pageable 0 --sync-copy 0 --sync-every 0 --log-us 0 \
    --streams 1 --churn 0 --nvtx 0 >/dev/null 2>&1 || fail "slow_input did not run"
"$GPUWATCH" analyze --cpus 2 "$WORK/slow_input" >"$WORK/slow_input.txt" 2>&1
# (with another process holding a CPU the workers have none to load on: no worker count
# gave back more than the runs' noise in test_calibration.sh's input_off_cpu; none named)
others=$("$GPUWATCH" analyze --cpus 2 --json "$WORK/slow_input" 2>/dev/null |
             grep -m1 -o '"other_processes_cpus": [0-9.e+-]*' | sed 's/.*: //')
if awk -v o="${others:-0}" 'BEGIN { exit !(o >= 0.5) }'; then
    # (how many the CPUs left can run depends on how much the others keep: 0.7 of a CPU
    # left two workers' worth; what they give back is test_calibration's to measure)
    echo "  slow_input: other processes kept $others CPUs busy: $(grep -m1 '^No findings\|^ 1\.' "$WORK/slow_input.txt" | cut -c1-60) $(tr -s ' \n' ' ' <"$WORK/slow_input.txt" | grep -o 'DataLoader(num_workers=[0-9]*' | head -1)"
else
    grep -q '^ 1\. input_pipeline: ' "$WORK/slow_input.txt" &&
        tr -s ' \n' ' ' <"$WORK/slow_input.txt" | grep -q 'DataLoader(num_workers=2, pin_memory=True' ||
        fail "slow_input: $(sed -n '/^No findings/,+2p;/^Findings/,+3p;/num_workers/p' "$WORK/slow_input.txt")"
fi
# The same loop host-only: no call of it waits for the GPU, so nothing proves the GPU idle
# while the thread loads, and kernels as long as the loads would look the same (issue 36
# E12): no finding, the workers' replay said apart as what the trace cannot prove
LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI=0 LD_PRELOAD="$SHIM" GPUWATCH_OUTPUT="$WORK/slow_input_host" \
    "$BUILD/examples/example_random_loop" --steps 60 --load-us 4000 --kernels 10 \
    --kernel-ns 150000 --copy-kb 1024 --pageable 0 --sync-copy 0 --sync-every 0 --log-us 0 \
    --streams 1 --churn 0 --nvtx 0 >/dev/null 2>&1 || fail "slow_input_host did not run"
"$GPUWATCH" analyze --cpus 2 "$WORK/slow_input_host" >"$WORK/slow_input_host.txt" 2>&1
"$GPUWATCH" analyze --cpus 2 --json "$WORK/slow_input_host" >"$WORK/slow_input_host.json" 2>&1
others=$(grep -m1 -o '"other_processes_cpus": [0-9.e+-]*' "$WORK/slow_input_host.json" | sed 's/.*: //')
unproven=$(grep -A1 '^"unproven": \[' "$WORK/slow_input_host.json" | tail -1)
grep -q '^"findings": \[$' -A1 "$WORK/slow_input_host.json" &&
    [ "$(grep -A1 '^"findings": \[$' "$WORK/slow_input_host.json" | tail -1)" == "]," ] ||
    fail "slow_input_host: a finding where nothing is proven: $(grep -m1 '^  {"rank": 1' "$WORK/slow_input_host.json" | cut -c1-80)"
if awk -v o="${others:-0}" 'BEGIN { exit !(o >= 0.5) }'; then
    echo "  slow_input_host: other processes kept $others CPUs busy: ${unproven:0:120}"
else
    share=$(grep -o '"share": [0-9.e-]*' <<<"$unproven" | sed 's/.*: //')
    grep -q '"id": "input_pipeline", "whatif": "input_workers"' <<<"$unproven" &&
        awk -v s="${share:-0}" 'BEGIN { exit !(s >= 0.3 && s <= 0.7) }' &&
        grep -q '^Not proven by this trace' "$WORK/slow_input_host.txt" &&
        tr -s ' \n' ' ' <"$WORK/slow_input_host.txt" |
        grep -q 'input_pipeline: to load batches in DataLoader workers (num_workers=2, pin_memory=True) gives back up to ' ||
        fail "slow_input_host: not said as unproven (share ${share:-none}): $(sed -n '/^No findings/,/^Details/p' "$WORK/slow_input_host.txt")"
fi
# Loads shorter than input_gap_ns (1 ms) in steps not much longer (random draw 37: 0.91 ms
# loads in 0.93 ms steps, two workers gained 37 %), the loss read every 4 steps and logged:
# the file is read again with a gap of a quarter step, and the loads are the top finding;
# the run is too short for the shim's CPU samples, and the thread, taken as on a CPU
# throughout, leaves two workers' worth of the 2 CPUs (cpus - 1 named one)
LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$CUPTI" LD_PRELOAD="$SHIM" GPUWATCH_OUTPUT="$WORK/short_loads" \
    "$BUILD/examples/example_random_loop" --steps 150 --load-us 900 --kernels 14 \
    --kernel-ns 17705 --copy-kb 0 --pageable 0 --sync-copy 0 --sync-every 4 --log-us 100 \
    --streams 1 --churn 0 --nvtx 1 >/dev/null 2>&1 || fail "short_loads did not run"
"$GPUWATCH" analyze --cpus 2 "$WORK/short_loads" >"$WORK/short_loads.txt" 2>&1
"$GPUWATCH" analyze --cpus 2 --json "$WORK/short_loads" >"$WORK/short_loads.json" 2>/dev/null
gap=$(tr -s ' \n' ' ' <"$WORK/short_loads.txt" | grep -o 'made no CUDA call for [0-9.]* us or more' | head -1)
# Beside another process that keeps a CPU busy (0.5 CPUs or more, as the run measured), the
# loads and the workers would share the one CPU left with the training thread: 2 or 4
# workers then gained nothing beyond the noise (three runs beside a spinning shell: 0, 2 and
# 4 workers took 173-271, 209-298 and 172-215 ms). There the loads must be named as the idle's
# cause with CPUs, not workers, as what would help, and no finding claimed; or, where the
# other process kept the training thread off its CPU long enough (6 % of the steps in a
# fresh-clone run beside stress-ng), the machine's contention first, which says more
# workers would make it worse, and no input finding.
others=$(grep -m1 -o '"other_processes_cpus": [0-9.e+-]*' "$WORK/short_loads.json" | sed 's/.*: //')
if awk -v o="${others:-0}" 'BEGIN { exit !(o >= 0.5) }' &&
    grep -q '^ 1\. contention: ' "$WORK/short_loads.txt"; then
    { tr -s ' \n' ' ' <"$WORK/short_loads.txt" | grep -q 'More DataLoader workers would make this worse' &&
        ! grep -q '^ [0-9]*\. input_pipeline: ' "$WORK/short_loads.txt"; } ||
        fail "short_loads (others kept $others CPUs busy): $(sed -n '/^Findings/,+12p' "$WORK/short_loads.txt")"
    echo "  short_loads: other processes kept $others CPUs busy: contention first, no workers claimed"
elif awk -v o="${others:-0}" 'BEGIN { exit !(o >= 0.5) }' &&
    grep -q '^No findings' "$WORK/short_loads.txt"; then
    tr -s ' \n' ' ' <"$WORK/short_loads.txt" |
        grep -q 'on input_pipeline: its change (input_workers) gives back .* more CPUs are what would' ||
        fail "short_loads (others kept $others CPUs busy): $(sed -n '/^No findings/,+2p' "$WORK/short_loads.txt")"
    echo "  short_loads: other processes kept $others CPUs busy: no finding, the loads' CPUs named"
else
    grep -q '^ 1\. input_pipeline: ' "$WORK/short_loads.txt" && [ -n "$gap" ] &&
        tr -s ' \n' ' ' <"$WORK/short_loads.txt" | grep -q 'DataLoader(num_workers=2, pin_memory=True' ||
        fail "short_loads: $(sed -n '/^No findings/,+2p;/^Findings/,+4p;/num_workers/p' "$WORK/short_loads.txt")"
fi
for mode in host cupti; do
    grep -q '"source": "nvtx", "marker": "NVTX train_step"' "$WORK/healthy-$mode.json" ||
        fail "healthy ($mode): steps not taken from its NVTX ranges"
done
# the shim preloaded by a relative path still takes the NVTX ranges (NVTX gets its absolute
# path: the program may change directory before its first range)
(cd "$(dirname "$SHIM")" && LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI=0 \
    LD_PRELOAD="./$(basename "$SHIM")" GPUWATCH_OUTPUT="$WORK/relative" \
    "$BUILD/examples/example_healthy" >/dev/null 2>&1) || fail "healthy (relative preload) did not run"
"$GPUWATCH" analyze --json "$WORK/relative" 2>/dev/null |
    grep -q '"source": "nvtx", "marker": "NVTX train_step"' ||
    fail "healthy (relative preload): steps not taken from its NVTX ranges"
# a sanitizer runtime first in LD_PRELOAD calls dlsym(RTLD_NEXT) from its initializer,
# before its own interceptors can serve: the shim answers without them, and traces
asan=$(cc -print-file-name=libasan.so 2>/dev/null)
if [ -n "$asan" ] && [ -e "$asan" ]; then
    ASAN_OPTIONS=verify_asan_link_order=0,detect_leaks=0 LD_PRELOAD="$asan:$SHIM" /bin/true ||
        fail "libasan first in LD_PRELOAD: /bin/true exited $?"
    ASAN_OPTIONS=verify_asan_link_order=0,detect_leaks=0 LD_LIBRARY_PATH="$FAKE" \
        GPUWATCH_CUPTI=0 LD_PRELOAD="$asan:$SHIM" GPUWATCH_OUTPUT="$WORK/asan" \
        "$BUILD/examples/example_per_step_sync" --steps 5 >/dev/null 2>&1 ||
        fail "libasan first in LD_PRELOAD: the example failed"
    "$GPUWATCH" stats "$WORK"/asan/*.gwt 2>/dev/null | grep -q '^cuLaunchKernel  *50 ' ||
        fail "libasan first in LD_PRELOAD: 50 launches not traced"
else
    echo "  (no libasan.so here: the sanitizer-first preload not tried)"
fi
# (the input finding is missing only where other processes took the CPUs: said above)
if [ -n "$(ex_finding "$WORK/dataloader_bound-host.json" input_pipeline)" ]; then
    grep -q '"suggested_workers"' "$WORK/dataloader_bound-host.json" ||
        fail "dataloader_bound: no suggested_workers figure"
fi

# The input pipeline's native site is the loop's, never the start-up: a C loop that
# allocates a buffer right after each batch's load (the allocation carries its stack in
# its own record) after a start-up stretch between cuInit and the context's creation (1.3
# ms, on a stack of its own): every load's time is named at main, none at ex_init.
ex_run "$WORK/alloc_after_load" host random_loop --load-us 2000 --kernels 4 --kernel-ns 50000 \
    --copy-kb 0 --sync-every 0 --streams 1 --churn 1 --nvtx 0 --steps 60
python3 - "$WORK/alloc_after_load.json" <<'PY' || fail "alloc_after_load: the input pipeline's site is not the loop's"
import json, sys
f = [f for f in json.load(open(sys.argv[1]))["findings"] if f["id"] == "input_pipeline"]
sites = f[0]["native_sites"]["sites"] if f and "native_sites" in f[0] else []
where = [(s["where"], s["calls"], round(s["weight"] / 1e6, 1)) for s in sites]
print(f"  alloc_after_load: input_pipeline's sites {where}")
# the 59 loads of 2 ms after the first launch, each on its own: the first is start-up
sys.exit(not (len(sites) == 1 and sites[0]["where"] == "main (example_random_loop)"
              and sites[0]["calls"] >= 59 and sites[0]["weight"] >= 59 * 2.0e6))
PY

# gpuwatch run: the analysis when the command ends, not with --no-analyze
LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI=0 "$GPUWATCH" run --output "$WORK/run1" -- \
    "$BUILD/examples/example_per_step_sync" --steps 40 >"$WORK/run1.out" 2>"$WORK/run1.err" ||
    fail "gpuwatch run failed"
grep -q "sync_bubble" "$WORK/run1.err" || fail "gpuwatch run: no analysis printed"
LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI=0 "$GPUWATCH" run --no-analyze --output "$WORK/run2" -- \
    "$BUILD/examples/example_per_step_sync" --steps 40 >"$WORK/run2.out" 2>"$WORK/run2.err" ||
    fail "gpuwatch run --no-analyze failed"
grep -q "Findings\|No findings" "$WORK/run2.err" && fail "gpuwatch run --no-analyze analyzed"

[ "$failures" == 0 ] && echo "test_examples: all checks passed" || echo "test_examples: $failures failed"
exit $((failures > 0))
