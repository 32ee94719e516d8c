#!/usr/bin/env bash
# Is the top finding the fix a user would be best served by (issue 36)? For each seed,
# examples/random_loop --extras 1 draws a loop (checkpoints, small uploads and per-step
# downloads among its knobs); every fix a user would try on it (from its knobs, not from the
# analysis) is run RUNS times, interleaved with the planted loop, and timed; the analysis of
# the planted loop, host-only and with CUPTI, names its top finding's fix and saving. Per
# draw and mode it prints the gains, the best fix, and whether
#   - the top finding's fix is the best one (or ties it: within the noise, or 20 %), or no
#     finding where no fix gains 5 % of the run beyond the noise (either, where the best
#     gains 5 % only within its noise);
#   - its prediction is within 25 % of the best fix's gain (or its noise);
#   - host-only, a saving said unproven ("up to", issue 36 E12) that names the best fix,
#     with a bound above the top's saving (or no finding), counts as the top, apart; and as
#     right when its bound holds 75 % of the gain.
# A fix's gain is its best variant's (the workers at 1, 2, 4 and 8).
# Then the counts. By hand, on a quiet machine (RUNS x fixes runs a draw):
#   bash bench/best_fix.sh [-s FIRST-LAST] [-r RUNS] BUILD_DIR
set -u
seeds=1-12 runs=3
while getopts s:r: opt; do
    case $opt in
    s) seeds=$OPTARG ;;
    r) runs=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
# shellcheck disable=SC2034  # (lib_examples.sh reads it)
BUILD=$(realpath "${1:?usage: best_fix.sh [-s FIRST-LAST] [-r RUNS] BUILD_DIR}")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/best_fix.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "run failed: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$(realpath "$0")")/../tests/analyze/lib_examples.sh"

# fixes_of KNOBS: the fixes a user would try on the loop its knobs line describes
fixes_of() {
    local k=$1 f=""
    num() { grep -o "$1" <<<"$k" | grep -o '[0-9]*' | head -1; }
    [ "$(num 'load [0-9]* us')" -gt 0 ] && f+=" input_workers"
    [ "$(num 'sync every [0-9]*')" -gt 0 ] && f+=" no_sync"
    if grep -q 'download [1-9]' <<<"$k" ||
        { [ "$(num 'copy [0-9]* KiB')" -gt 0 ] && grep -qE 'KiB (pageable|pinned sync)' <<<"$k"; }; then
        f+=" pinned_async"
    fi
    [ "$(num '[0-9]* kernels')" -ge 8 ] && f+=" cuda_graphs"
    grep -q 'churn 1' <<<"$k" && f+=" no_churn"
    grep -q 'checkpoint every [1-9]' <<<"$k" && f+=" async_checkpoint"
    grep -q ' [1-9][0-9]* small copies' <<<"$k" && f+=" coalesced"
    echo "$f"
}

# fix_for ID JSON: random_loop's fix for a finding (ex_fix's, and the two fixes only
# --extras draws need: small uploads gathered, checkpoints saved in the background)
fix_for() {
    case $1 in
    small_copies) echo coalesced ;;
    pauses) echo async_checkpoint ;;
    *) ex_fix "$1" "$2" ;;
    esac
}

# unproven_first JSON: "FIX UP_TO_NS" of the first saving the analysis said it could not
# prove (its JSON "unproven"), nothing when none
unproven_first() {
    python3 -c 'import json, sys
u = json.load(open(sys.argv[1])).get("unproven") or []
if u: print(u[0]["whatif"], u[0]["up_to_ns"])' "$1"
}
fix_id_of() { case $1 in input_workers) echo input_pipeline ;; *) echo "$1" ;; esac; }

# variants_of FIX: the ways users write it, each measured; the fix gains what the best one
# does. Workers: the counts users pick (1, 2, 4, 8, as test_calibration.sh tries them), not
# the count the analysis names, nor only the one the seed drew.
variants_of() {
    case $1 in
    input_workers) echo input_workers@1 input_workers@2 input_workers@4 input_workers@8 ;;
    *) echo "$1" ;;
    esac
}
variant_args() {  # variant_args VARIANT: random_loop's arguments for it
    case $1 in
    *@*) echo "$(ex_fix_args "${1%@*}") --workers ${1#*@}" ;;
    *) ex_fix_args "$1" ;;
    esac
}

total=0 right_top=0 right_pred=0 with_gain=0 bounded=0
first=${seeds%-*} last=${seeds#*-}
for seed in $(seq "$first" "$last"); do
    args=(--seed "$seed" --extras 1 --steps 150)
    p="$WORK/s$seed"
    ex_run "$p-host" host random_loop "${args[@]}"
    ex_run "$p-cupti" cupti random_loop "${args[@]}"
    knobs=$(head -1 "$p-host.log" | cut -d: -f2-)
    read -r -a fixes <<<"$(fixes_of "$knobs")"
    for mode in host cupti; do  # a changes_together pair is tried too
        top=$(ex_top "$p-$mode.json" | cut -d' ' -f1)
        fix=$(fix_for "$top" "$p-$mode.json")
        [[ "$fix" == *+* ]] && [[ " ${fixes[*]} " != *" $fix "* ]] && fixes+=("$fix")
    done
    declare -A walls=()
    walls[none]=""
    for i in $(seq 1 "$runs"); do
        ex_run "$p-none$i" host random_loop "${args[@]}"
        walls[none]+=" $(ex_wall "$p-none$i.json")"
        for f in "${fixes[@]}"; do
            for v in $(variants_of "$f"); do
                # shellcheck disable=SC2046  # (one word per --fix)
                ex_run "$p-$v$i" host random_loop "${args[@]}" $(variant_args "$v")
                walls[$v]+=" $(ex_wall "$p-$v$i.json")"
            done
        done
    done
    wn=$(tr ' ' '\n' <<<"${walls[none]}" | grep . | median)
    best="" best_gain=0 best_noise=0 line=""
    declare -A gain=() noise=()
    for f in "${fixes[@]}"; do
        named=$f
        for v in $(variants_of "$f"); do  # (a fix's gain: its best variant's)
            wf=$(tr ' ' '\n' <<<"${walls[$v]}" | grep . | median)
            if [ -z "${gain[$f]+x}" ] || [ $((wn - wf)) -gt "${gain[$f]}" ]; then
                gain[$f]=$((wn - wf)) named=$v
                noise[$f]=$(noise_of "${walls[none]}" "${walls[$v]}")
            fi
        done
        line+=" $named $((gain[$f] / 1000000))+-$((noise[$f] / 1000000))"
        if [ -z "$best" ] || [ "${gain[$f]}" -gt "$best_gain" ]; then
            best=$f best_gain=${gain[$f]} best_noise=${noise[$f]}
        fi
    done
    echo "seed $seed:$knobs"
    echo "  measured (ms, median of $runs, planted $((wn / 1000000))):${line:- no fix to try}"
    for mode in host cupti; do
        total=$((total + 1))
        read -r top pred <<<"$(ex_top "$p-$mode.json")"
        fix=$(fix_for "${top:-}" "$p-$mode.json")
        # gains: 1 where the best fix gains 5 % of the run beyond its noise, 0 where not
        # even with it; within the noise of 5 %, a finding or none may be right
        gains=0
        [ -n "$best" ] && [ $((best_gain + best_noise)) -gt $((wn / 20)) ] && gains=maybe
        [ -n "$best" ] && [ $((best_gain - best_noise)) -gt $((wn / 20)) ] && gains=1
        ok_top=0 ok_pred=0
        if [ "$gains" == 0 ] || { [ "$gains" == maybe ] && [ -z "${top:-}" ]; }; then
            [ -z "${top:-}" ] && ok_top=1 ok_pred=1
        elif read -r ufix upto <<<"$(unproven_first "$p-$mode.json")" &&
            [ "${ufix:-}" == "$best" ] && [ "${upto:-0}" -gt "${pred:-0}" ]; then
            # The best fix said unproven, with a bound above the top's saving (or no
            # finding): host-only, where the trace cannot tell a GPU idle through the loads
            # from one busy through them (issue 36, E12: bound it and say the confidence),
            # the bound must hold the gain. Counted apart: the report does not lead with it.
            with_gain=$((with_gain + 1))
            ok_top=1 bounded=$((bounded + 1))
            pred=$upto fix=$ufix
            top="(unproven, above ${top:-no finding}) $(fix_id_of "$ufix")"
            awk -v p="$upto" -v b="$best_gain" -v e="$best_noise" \
                'BEGIN { exit !(p + e >= 0.75 * b) }' && ok_pred=1
        else
            with_gain=$((with_gain + 1))
            if [ -n "$fix" ] && [ -n "${gain[$fix]+x}" ]; then
                # a tie: within the two gains' noise, or within 20 % of the best
                awk -v b="$best_gain" -v g="${gain[$fix]}" -v e="${noise[$fix]}" -v eb="$best_noise" \
                    'BEGIN { exit !(b - g <= e + eb || g >= 0.8 * b) }' && ok_top=1
            fi
            awk -v p="${pred:-0}" -v b="$best_gain" -v e="$best_noise" \
                'BEGIN { d = p - b; if (d < 0) d = -d; exit !(d <= 0.25 * b + e) }' && ok_pred=1
        fi
        right_top=$((right_top + ok_top)) right_pred=$((right_pred + ok_pred))
        printf "  %-5s top %s (%s) predicts %d ms; best %s %d ms: top %s, prediction %s\n" "$mode" \
            "${top:-none}" "${fix:-no fix}" "$(( ${pred:-0} / 1000000 ))" "${best:-none}" \
            "$((best_gain / 1000000))" "$([ $ok_top = 1 ] && echo right || echo WRONG)" \
            "$([ $ok_pred = 1 ] && echo right || echo WRONG)"
    done
    unset walls gain noise
done
echo "top finding = the best measured fix: $right_top of $total ($bounded of them a bound said unproven, host-only); prediction within 25 %: $right_pred of $total ($with_gain with a fix that gains 5 % or more)"
[ "$failures" -eq 0 ]
