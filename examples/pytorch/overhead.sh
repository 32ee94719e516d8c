#!/usr/bin/env bash
# What gpuwatch costs a PyTorch program on a real GPU: every example (planted) run without
# gpuwatch, then under `gpuwatch run` host-only (GPUWATCH_TIMELINE=off), with the default
# sampled timeline, and with the full one. Prints the steady-state step time each run printed
# (the median of REPEATS runs, interleaved) and its cost over no gpuwatch. The goal: the
# default within 2 % of no gpuwatch on every script, launch-bound included.
#
#   examples/pytorch/overhead.sh [GPUWATCH] [-- ARGS for every script]
#
# Environment: PYTHON (an interpreter with a CUDA build of torch; default python3), OUT
# (default ./gpuwatch-pytorch-overhead: per run NAME-MODE-N/ and its .log), SCRIPTS (a
# subset), REPEATS (default 3). Exit status 1 when a run failed.
set -u
prog=overhead.sh
. "$(dirname "$0")/lib.sh"
pt_setup "$@"
out=${OUT:-./gpuwatch-pytorch-overhead}
scripts=${SCRIPTS:-"dataloader_bound pageable_h2d per_step_sync launch_bound healthy"}
repeats=${REPEATS:-3}
modes=(none off sampled full)

mkdir -p "$out" || die "cannot create $out"

# step_ms SCRIPT MODE N: runs it once, prints the step time it printed (empty: failed)
step_ms() {
    local s=$1 mode=$2 n=$3 dir="$out/$1-$2-$3"
    rm -rf -- "$dir"
    if [ "$mode" = none ]; then
        "$py" "$here/$s.py" "${pt_args[@]}" >"$dir.stdout" 2>"$dir.log"
    else
        GPUWATCH_TIMELINE=$mode "$gw" run --no-analyze --output "$dir" -- \
            "$py" "$here/$s.py" "${pt_args[@]}" >"$dir.stdout" 2>"$dir.log"
    fi || return 0
    step_time_ms "$dir.log"
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }

failed=0
printf '%-17s %10s %18s %18s %18s\n' script "no shim ms" "host-only" "sampled (default)" "full timeline"
for s in $scripts; do
    [ -f "$here/$s.py" ] || die "no script $here/$s.py"
    declare -A runs=()
    for ((n = 1; n <= repeats; n++)); do
        for mode in "${modes[@]}"; do
            echo "overhead.sh: $s $mode ($n of $repeats) ..." >&2
            ms=$(step_ms "$s" "$mode" "$n")
            if [ -z "$ms" ]; then
                echo "overhead.sh: $s $mode failed; see $out/$s-$mode-$n.log" >&2
                failed=1
            fi
            runs[$mode]+="$ms "
        done
    done
    declare -A med=()
    for mode in "${modes[@]}"; do
        med[$mode]=$(tr ' ' '\n' <<<"${runs[$mode]}" | grep . | median)
    done
    awk -v s="$s" -v b="${med[none]:-0}" -v h="${med[off]:-0}" -v d="${med[sampled]:-0}" \
        -v f="${med[full]:-0}" '
        function cost(x) { return (b > 0 && x > 0) ? sprintf("%.2f (%+.1f%%)", x, 100 * (x - b) / b) : "FAILED" }
        BEGIN { base = (b > 0) ? sprintf("%.2f", b) : "FAILED"
                printf "%-17s %10s %18s %18s %18s\n", s, base, cost(h), cost(d), cost(f) }'
    unset runs med
done
echo "(steady-state step time, median of $repeats runs each; logs and traces in $out)"
exit $failed
