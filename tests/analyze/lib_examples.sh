# Shared by the tests that run examples under the shim on the simulated GPU and read the
# analysis (test_calibration.sh, test_random_loops.sh, test_ranks.sh, test_diff.sh). Source it
# after setting BUILD and WORK, and defining fail(). The timing checks' noise: noise.sh.
. "$(dirname "${BASH_SOURCE[0]}")/noise.sh"

# The timing runs are measured at a raised priority, as benchmarks are: a process elsewhere on
# the machine (a build, a CPU hog) then takes little CPU from the example under measurement,
# rather than half of one of the 2 CPUs; what it still takes shows in the runs' spread. The
# hogs the contention check starts inherit the priority, and preempt as before. Without the
# privilege to raise it the runs go on at the priority they have.
renice -n -10 -p $$ >/dev/null 2>&1 || true

# ex_keep_or_remove WORK: at exit, the work directory goes unless a check failed: then its
# traces and analyses stay for the failure to be read again (a timing check beside other
# work fails where a rerun may not), and where they are is said.
ex_keep_or_remove() {
    if [ "${failures:-0}" -eq 0 ]; then
        rm -rf "$1"
    else
        echo "the failed run's traces and analyses are kept in $1" >&2
    fi
}

GPUWATCH=$BUILD/tools/gpuwatch
SHIM=$BUILD/libintercept/libgpuwatch.so
FAKE=$BUILD/tests/fakecuda
CUPTI=$BUILD/tests/fakecupti/libcupti.so.13
# The host's memcpy rate and a sleeping thread's wake-up latency, timed once here as
# `gpuwatch run` times them before it execs a program (never inside the program: its CPUs
# and caches are the program's); the examples are preloaded by hand, so they are handed
# them as gpuwatch run would. (Once, not before each run as gpuwatch run does: ~40 ms a run
# took the timing suites past their limits, and the wake-up in a run follows the machine's
# load more than any figure timed beside it: 70 to 300 us here where it measured 40 to 70,
# a floor the report says.)
[ -n "${GPUWATCH_HOST_COPY_BPS:-}" ] || eval "export $("$GPUWATCH" machine --env)"

# ex_timeline MODE: TIMELINE, the shim's timeline settings for MODE: the whole timeline,
# or (sampled) windows of 10 ms every 30 ms whatever the record rate.
ex_timeline() {
    TIMELINE=(GPUWATCH_TIMELINE=full)
    [ "$1" == sampled ] && TIMELINE=(GPUWATCH_TIMELINE=sampled GPUWATCH_TIMELINE_FULL_RATE=0
        GPUWATCH_TIMELINE_WINDOW_MS=10 GPUWATCH_TIMELINE_EVERY_MS=30 GPUWATCH_FLUSH_MS=5)
    return 0
}

# ex_run OUT MODE EXAMPLE [ARGS...]: runs the example traced into OUT and writes the JSON
# analysis to OUT.json. MODE: host (no CUPTI), cupti (the whole timeline), sampled (CUPTI
# in windows of 10 ms every 30 ms, whatever the record rate: the default's shape on a
# program that records fast, with gaps in every run). The simulated driver's waits spin, as
# CUDA's default scheduling does; EX_SPIN_WAIT=0: they sleep (cudaDeviceScheduleBlockingSync).
ex_run() {
    local out=$1 mode=$2 name=$3 cupti=0
    shift 3
    [ "$mode" != host ] && cupti=$CUPTI
    ex_timeline "$mode"
    rm -rf "$out"
    # The simulated GPU spins in its synchronising calls, as CUDA's default schedule does when
    # a process has fewer contexts than CPUs; sleeping there adds a wake-up to each sync that
    # a host-only trace cannot tell from GPU time: the replay takes it from the machine's
    # wake-up latency (GPUWATCH_WAKE_NS) where the thread's CPU samples say its waits sleep.
    # Its copies move no bytes: a GPU's DMA costs the host no CPU, the fake's memcpy of 16 MiB
    # a step would take a core from the program on this 2-core machine (no example reads its
    # data back). Its graph launches report no node records: a GPU's CUPTI stamps them off
    # the launching thread, the fake's would cost it ~140 ns a node (only --fix/--fixed runs
    # launch graphs, and only their wall time is read).
    env "${TIMELINE[@]}" FAKECUDA_SPIN_WAIT="${EX_SPIN_WAIT:-1}" FAKECUDA_MOVE_BYTES=0 FAKECUDA_GRAPH_RECORDS=0 LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$cupti" LD_PRELOAD="$SHIM" \
        GPUWATCH_OUTPUT="$out" "$BUILD/examples/example_$name" "$@" >"$out.log" 2>&1 ||
        fail "$name $* ($mode) did not run: $(tail -2 "$out.log")"
    "$GPUWATCH" analyze --json "$out" >"$out.json" 2>"$out.err" ||
        fail "$name $* ($mode): analyze failed: $(tail -2 "$out.err")"
}

# ex_wall JSON: the first process's wall time (ns).
ex_wall() { grep -m1 -o '"wall_ns": [0-9]*' "$1" | grep -o '[0-9]*$'; }
# ex_top JSON [SKIP]: "ID SAVING_NS" of the top time finding (the first that is not SKIP),
# nothing when none. For changes_together, the saving of its two changes made together (its
# own saving_ns is what they add to each alone).
ex_top() {
    local line
    line=$(grep '^  {"rank": [0-9]*, "id": ' "$1" | grep -v "^  {\"rank\": [0-9]*, \"id\": \"${2:-(none)}\"" |
        head -1)
    ex_finding_line "$line"
}
# ex_finding JSON ID: "ID SAVING_NS" of the time finding ID, nothing when there is none
ex_finding() {
    ex_finding_line "$(grep -m1 "^  {\"rank\": [0-9]*, \"id\": \"$2\"" "$1")"
}
ex_finding_line() {
    [ -n "$1" ] || return 0
    local id saving
    id=$(sed -n 's/^  {"rank": [0-9]*, "id": "\([a-z_0-9]*\)".*/\1/p' <<<"$1")
    if [ "$id" == changes_together ]; then
        saving=$(grep -o '"saving_together_ns": [0-9]*' <<<"$1" | grep -o '[0-9]*$')
    else
        saving=$(sed -n 's/.*"saving_ns": \([0-9]*\),.*/\1/p' <<<"$1")
    fi
    echo "$id $saving"
}
# ex_field JSON KEY: the first number after "KEY": (replay_error, gpu_util ...).
ex_field() { grep -m1 -o "\"$2\": [0-9.e+-]*" "$1" | sed 's/.*: //'; }
# ex_fix ID [JSON]: the --fix of random_loop that makes the change a finding's saving
# replays; for changes_together (its two changes read from JSON's top finding), both,
# joined by "+".
ex_fix() {
    case $1 in
    input_pipeline) echo input_workers ;;
    sync_bubble) echo no_sync ;;
    pageable_h2d | small_copies) echo pinned_async ;;
    launch_bound) echo cuda_graphs ;;
    fragmentation) echo no_churn ;;
    changes_together)
        local names=(as_measured no_sync input_workers pinned_async cuda_graphs no_churn) line
        line=$(grep -m1 '^  {"rank": [0-9]*, "id": "changes_together"' "$2")
        echo "${names[$(grep -o '"change_a": [0-9]' <<<"$line" | grep -o '[0-9]$')]}+${names[$(grep -o '"change_b": [0-9]' <<<"$line" | grep -o '[0-9]$')]}"
        ;;
    esac
}
# ex_fix_args FIX: random_loop's arguments for a fix of ex_fix ("a+b": --fix=a --fix=b).
ex_fix_args() { tr '+' '\n' <<<"$1" | sed 's/^/--fix=/' | tr '\n' ' '; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
