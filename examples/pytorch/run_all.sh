#!/usr/bin/env bash
# Runs every PyTorch example twice under `gpuwatch run` — planted, then --fixed — and prints
# a table: the finding gpuwatch ranks first (`gpuwatch analyze --json`) and the steady-state
# step time each run printed. Needs a CUDA GPU; stops at once when PyTorch sees none.
#
#   examples/pytorch/run_all.sh [GPUWATCH] [-- ARGS for every script]
#
# GPUWATCH defaults to ./build/tools/gpuwatch. Environment: PYTHON (an interpreter with
# torch; default python3), OUT (default ./gpuwatch-pytorch-runs: per run a trace directory
# NAME-VARIANT/, NAME-VARIANT.log with the script's stderr and gpuwatch's analysis,
# NAME-VARIANT.json), SCRIPTS (a subset, e.g. "leak healthy"). Exit status 1 when a run failed.
set -u
prog=run_all.sh
. "$(dirname "$0")/lib.sh"
pt_setup "$@"
out=${OUT:-./gpuwatch-pytorch-runs}
scripts=${SCRIPTS:-"dataloader_bound pageable_h2d per_step_sync launch_bound fragmentation leak healthy"}

expected() {
    case $1 in
        dataloader_bound) echo input_pipeline ;;
        pageable_h2d) echo pageable_h2d ;;
        per_step_sync) echo sync_bubble ;;
        launch_bound) echo launch_bound ;;
        fragmentation) echo oom_retry ;;
        leak) echo leak ;;
        healthy) echo none ;;
    esac
}

# "ID SHARE% (+N)" of the top finding (SHARE: its saving as a share of the steps' time, which
# a short run's start-up does not dilute), or "none"; "no analysis" when there is no report.
top_finding() {
    "$py" - "$1" <<'PY' 2>/dev/null || echo "no analysis"
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
print(f"{f[0]['id']} {100 * f[0]['step_share']:.0f}%" + (f" (+{len(f) - 1})" if len(f) > 1 else "") if f else "none")
PY
}

mkdir -p "$out" || die "cannot create $out"
failed=0
rows=()
for s in $scripts; do
    [ -f "$here/$s.py" ] || die "no script $here/$s.py"
    row=("$s" "$(expected "$s")")
    times=()
    for v in planted fixed; do
        dir="$out/$s-$v"
        rm -rf -- "$dir"
        flag=()
        [ "$v" = fixed ] && flag=(--fixed)
        echo "run_all.sh: $s $v ..." >&2
        "$gw" run --output "$dir" -- "$py" "$here/$s.py" "${flag[@]}" "${pt_args[@]}" \
            >"$dir.stdout" 2>"$dir.log"
        rc=$?
        ms=$(step_time_ms "$dir.log")
        if [ $rc -ne 0 ] || [ -z "$ms" ]; then
            echo "run_all.sh: $s $v failed (exit $rc); see $dir.log" >&2
            failed=1
            ms="FAILED"
        fi
        "$gw" analyze --json "$dir" >"$dir.json" 2>>"$dir.log"
        row+=("$(top_finding "$dir.json")")
        times+=("$ms")
    done
    # the fixed run's measured gain as a share of the planted step time, beside the planted
    # run's top finding's predicted share (the replay's saving over the steps' time)
    gain=$(awk -v p="${times[0]}" -v f="${times[1]}" \
        'BEGIN { if (p + 0 > 0 && f + 0 > 0) printf "%.0f%%", 100 * (p - f) / p; else print "-" }')
    rows+=("$(printf '%-17s %-15s %-26s %-26s %11s %11s %9s' "${row[@]}" "${times[@]}" "$gain")")
done

printf '\n%-17s %-15s %-26s %-26s %11s %11s %9s\n' script expected "top finding (planted)" \
    "top finding (fixed)" "ms planted" "ms fixed" measured
printf '%s\n' "${rows[@]}"
echo "(finding: id, the replay's predicted saving as a share of the steps' time, (+N) more findings;"
echo " measured: (planted - fixed) / planted step time; logs in $out)"
exit $failed
