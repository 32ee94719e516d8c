#!/usr/bin/env bash
# The model on loops nobody tuned it to (issue 17): examples/random_loop draws a training
# loop from a seed (loading, kernels, copy size/memory/sync-ness, sync frequency and logging,
# streams, allocator churn); fixed seeds here, and four of them again with the backward
# half of the kernels on a second thread. Each draw, host-only and with CUPTI:
#   - replaying the run as measured gives its wall time back within 5 %;
#   - a draw whose GPU was busy 95 % of the time or more gets no time finding;
#   - the top finding's change, applied (--fix) and run, gains at least half the predicted,
#     less the noise of 3 interleaved runs each way (noise.sh).
# Then loops with two wastes: the top finding is the change whose fix gains most, measured.
# Then a loop beside CPU hogs: contention, never the input pipeline, and what the quiet
# machine gains. Then one loop analyzed
# from 5 runs: the same top finding, savings within +-10 % of their median (or the spread
# of the runs' own wall times).
#   test_random_loops.sh BUILD_DIR [SEEDS]
set -u
BUILD=${1:?usage: test_random_loops.sh BUILD_DIR [SEEDS]}
SEEDS=${2:-12}
# Steps per draw: 150 make a run of 35-750 ms here. A draw whose run is shorter than
# MIN_WALL_MS runs more steps, as many times more as make it that long: a process's start
# beside a CPU hog was seen to take 8 ms longer, one run in two, and the first steps 3-4 ms
# (a time slice) each; on a 36 ms run with a 7 ms gain, 4 of 5 fixed runs lost it so
# (issue 34). The start's jitter must be small beside a saving of min_share (5 %).
STEPS=150
MIN_WALL_MS=150
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_random_loops.XXXXXX")
trap 'ex_keep_or_remove "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_examples.sh"

checked=0 fixes=0
# check_draw LABEL ARGS...: the draw random_loop makes with ARGS (--seed N, knobs after it)
check_draw() {
    local label=$1
    shift
    local mode steps=$STEPS wall
    for mode in host cupti; do
        local p="$WORK/$label-$mode"
        ex_run "$p" "$mode" random_loop "$@" --steps "$steps"
        wall=$(ex_wall "$p.json")
        if [ "$mode" == host ] && [ -n "$wall" ] && [ "$wall" -gt 0 ] &&
            [ "$wall" -lt $((MIN_WALL_MS * 1000000)) ]; then
            steps=$((STEPS * ((MIN_WALL_MS * 1000000 + wall - 1) / wall)))
            ex_run "$p" "$mode" random_loop "$@" --steps "$steps"
        fi
        [ -s "$p.json" ] || continue
        local knobs err id pred util fix
        knobs=$(head -1 "$p.log" | cut -d: -f2-)
        err=$(ex_field "$p.json" replay_error)
        # (a run that breaks it stays for a look, with the work directory a failure keeps
        # (ex_keep_or_remove): it came once in ~40 fresh-clone runs)
        awk -v e="$err" 'BEGIN { exit !(e != "" && e <= 0.05) }' ||
            fail "$label ($mode): replay error $err > 5 % ($knobs); trace in $p"
        read -r id pred <<<"$(ex_top "$p.json")"
        util=$(ex_field "$p.json" gpu_util)
        if [ "$mode" == cupti ] && awk -v u="$util" 'BEGIN { exit !(u >= 0.95) }'; then
            [ -z "${id:-}" ] || fail "$label: GPU $util busy, yet finding $id ($knobs)"
        fi
        checked=$((checked + 1))
        fix=$(ex_fix "${id:-}" "$p.json")
        if [ -z "$fix" ]; then
            echo "  $label ($mode): top ${id:-none}, util $util ($knobs)"
            continue
        fi
        fixes=$((fixes + 1))
        # One run of a loop varies by a few % of its wall time here: 3 runs each way,
        # interleaved (the planted run above first), 5 when their noise is over a quarter
        # of what is checked, and the medians' gain checked against half the prediction
        # less the noise the runs show (noise.sh)
        local walls_p walls_f="" i f wp wf noise
        walls_p="$(ex_wall "$p.json")"
        for i in 1 2 3 4 5; do
            if [ "$i" -gt 1 ]; then
                ex_run "$p-again$i" "$mode" random_loop "$@" --steps "$steps"
                walls_p+=" $(ex_wall "$p-again$i.json")"
            fi
            f="$WORK/$label-$mode-fixed$i"
            # shellcheck disable=SC2046  # (one word per --fix)
            ex_run "$f" "$mode" random_loop "$@" --steps "$steps" $(ex_fix_args "$fix")
            walls_f+=" $(ex_wall "$f.json")"
            [ "$i" -ge 3 ] || continue
            wp=$(tr ' ' '\n' <<<"$walls_p" | grep . | median)
            wf=$(tr ' ' '\n' <<<"$walls_f" | grep . | median)
            noise=$(noise_of "$walls_p" "$walls_f")
            noise_settled "$noise" "$((wp - wf))" "$pred" && break
        done
        noise_note "$label ($mode)" "$noise" "$((wp - wf))"
        # The prediction is the analyzed run's, the gain the typical run's: where the run
        # analyzed was slower than its repeats' median, the waste it alone had (a first
        # run's slow allocations beside a CPU hog: 182 ms against 150, fragmentation
        # predicted 21.7 ms, the fix gained 1.3 on the typical run) is no gain to expect.
        local excess
        excess=$(awk -v a="$(ex_wall "$p.json")" -v m="$wp" 'BEGIN { printf "%.0f\n", (a > m ? a - m : 0) }')
        awk -v p="$pred" -v m="$((wp - wf))" -v e="$noise" -v n="$label ($mode)" -v id="$id" \
            -v runs="$(wc -w <<<"$walls_f")" -v x="$excess" 'BEGIN {
            printf "  %s: %s predicted %.1f ms, measured %.1f ms +- %.1f (%.2f, %d runs each%s)\n", n, id,
                p / 1e6, m / 1e6, e / 1e6, (p > 0 ? m / p : 0), runs,
                (x > e ? sprintf("; the run analyzed %.1f ms slower than their median", x / 1e6) : "") }'
        awk -v p="$pred" -v m="$((wp - wf))" -v e="$noise" -v x="$excess" \
            'BEGIN { exit !(m + e >= 0.5 * (p > x ? p - x : 0)) }' ||
            fail "$label ($mode): $id's fix ($fix) gained less than half the prediction beyond the noise ($knobs)"
    done
}
for seed in $(seq 1 "$SEEDS"); do
    check_draw "seed $seed" --seed "$seed"
done
# a few draws again with the backward half of each step's kernels launched by a second
# thread while the training thread waits (PyTorch's autograd engine), on one stream
for seed in 1 2 3 4; do
    check_draw "seed $seed, backward thread" --seed "$seed" --streams 1 --backward-thread 1
done
echo "  $checked draws checked, $fixes fixes applied"

# Contention: the loop of input+sync, loaded only 3 ms a step without a sync, run beside
# twice as many CPU hogs as there are CPUs, and without them, 3 times each way interleaved:
# the training thread is preempted; the busy runs' top finding is contention (never the
# input pipeline), and the runs without the hogs gain at least half what the busy runs'
# contention predicts beyond the quiet runs' own (a machine busy with something else
# preempts those too), less the noise.
hogs_start() {  # hogs_start N: N busy loops, their pids in HOGS
    local i
    HOGS=()
    for i in $(seq 1 "$1"); do
        sh -c 'while :; do :; done' &
        HOGS+=($!)
    done
}
hogs_running() {  # waits until every hog has had a CPU (a clock tick of user time), not a
    # pause that guesses how long a busy machine takes to schedule them; 60 s bounds a hang
    local pid ticks i
    for pid in "${HOGS[@]}"; do
        for ((i = 0; i < 1200; i++)); do
            ticks=$(awk '{print $14}' "/proc/$pid/stat" 2>/dev/null || echo 0)
            [ "${ticks:-0}" -gt 0 ] && break
            sleep 0.05
        done
    done
}
contention_of() {  # contention_of JSON: the saving of its contention finding (0: none)
    local id saving
    read -r id saving <<<"$(ex_finding "$1" contention)"
    echo "${saving:-0}"
}
cpus=$(nproc)
for mode in host cupti; do
    knobs=(--load-us 3000 --kernels 4 --kernel-ns 500000 --copy-kb 0 --sync-every 0
           --streams 1 --churn 0 --nvtx 1)
    walls_busy="" walls_quiet="" preds_busy="" preds_quiet=""
    for i in 1 2 3; do
        hogs_start $((2 * cpus))
        hogs_running
        ex_run "$WORK/busy-$mode$i" "$mode" random_loop "${knobs[@]}"
        kill "${HOGS[@]}" 2>/dev/null
        wait "${HOGS[@]}" 2>/dev/null
        ex_run "$WORK/quiet-$mode$i" "$mode" random_loop "${knobs[@]}"
        read -r id pred <<<"$(ex_top "$WORK/busy-$mode$i.json")"
        [ "${id:-}" == contention ] || fail "contention ($mode, run $i): top finding ${id:-none}"
        grep -q '"id": "input_pipeline"' "$WORK/busy-$mode$i.json" &&
            fail "contention ($mode, run $i): preemption read as the input pipeline"
        walls_busy+="$(ex_wall "$WORK/busy-$mode$i.json") " walls_quiet+="$(ex_wall "$WORK/quiet-$mode$i.json") "
        preds_busy+="$(contention_of "$WORK/busy-$mode$i.json") "
        preds_quiet+="$(contention_of "$WORK/quiet-$mode$i.json") "
    done
    gain=$(($(tr ' ' '\n' <<<"$walls_busy" | grep . | median) - $(tr ' ' '\n' <<<"$walls_quiet" | grep . | median)))
    pred=$(($(tr ' ' '\n' <<<"$preds_busy" | grep . | median) - $(tr ' ' '\n' <<<"$preds_quiet" | grep . | median)))
    noise=$(noise_of "$walls_busy" "$walls_quiet")
    noise_note "contention ($mode)" "$noise" "$gain"
    echo "  contention ($mode): predicts $((pred / 1000000)) ms beyond the quiet runs' own, the quiet machine gains $((gain / 1000000)) ms +- $((noise / 1000000))"
    [ $((gain + noise)) -ge $((pred / 2)) ] ||
        fail "contention ($mode): the quiet runs gained $gain ns, under half of $pred beyond the noise ($noise)"
done

# Stability: five runs of one loop, each of 300 steps (~0.5 s: a 3 ms hiccup of this VM is
# 3 % of a 60-step run's 0.1 s, and was seen to move one run's saving 12 %).
# A saving is as steady as the runs are: each within 10 % of the median, or within the
# spread the runs' own wall times show (3 sigma of one run; noise.sh), or within 10 % plus
# how far that run's own wall is from the median wall: where another process preempted the
# training thread outside its waits, the saving loses that time (sync_bubble takes it off)
# and the wall gains it (beside a CPU hog, saving + wall held within 4 ms over 12 runs whose
# savings spanned 114-124 ms; one run in five came out 11 % under the median).
ids="" preds="" walls=""
for i in 1 2 3 4 5; do
    ex_run "$WORK/stable$i" host random_loop --seed 4 --steps 300
    read -r id pred <<<"$(ex_top "$WORK/stable$i.json")"
    ids+="${id:-none} " preds+="${pred:-0} " walls+="$(ex_wall "$WORK/stable$i.json") "
done
[ "$(tr ' ' '\n' <<<"$ids" | grep . | sort -u | wc -l)" -eq 1 ] ||
    fail "stability: top findings differ over 5 runs: $ids"
med=$(tr ' ' '\n' <<<"$preds" | grep . | median)
wall_med=$(tr ' ' '\n' <<<"$walls" | grep . | median)
spread=$(awk -v s="$(noise_se "$walls")" 'BEGIN { printf "%.0f", 3 * s }')
noise_note "stability" "$spread" "$med"
read -r -a wall_of <<<"$walls"
k=0
for p in $preds; do
    awk -v p="$p" -v m="$med" -v e="$spread" -v w="${wall_of[$k]}" -v wm="$wall_med" 'BEGIN {
        d = (p > m ? p - m : m - p); dw = (w > wm ? w - wm : wm - w)
        exit !(m > 0 && (d <= 0.1 * m || d <= e || d <= 0.1 * m + dw)) }' ||
        fail "stability: saving $p outside +-10 % of the median $med, the runs' spread $spread and its own wall's distance from the median wall ($preds; walls $walls)"
    k=$((k + 1))
done
echo "  stability: $ids/ $preds (the runs' spread $((spread / 1000000)) ms)"
noise_report analyze_random_loops
[ "$failures" -eq 0 ] || { echo "test_random_loops: $failures failed" >&2; exit 1; }
echo "test_random_loops: all checks passed"
