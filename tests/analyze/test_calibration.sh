#!/usr/bin/env bash
# Calibration against reality (issue 17): each planted-waste example runs planted and with
# its --fixed variant (random_loop: with its knobs set, and --fix) on the simulated GPU, in
# timeline and host-only mode (single wastes also with a sampled timeline, in windows with
# gaps: lib_examples.sh); the predicted saving of the top finding (the what-if
# replay's) must be within +-20 % of the measured wall-time difference, and the top finding
# must be the planted one; with two wastes in one loop, the one whose fix gains most. Every
# order and ratio allows for the noise the interleaved runs show (noise.sh, issue 34).
#   test_calibration.sh BUILD_DIR
# CALIBRATE_ONLY="name1 name2" runs only the classes of those labels (a class being
# developed); unset, all of them.
set -u
BUILD=${1:?usage: test_calibration.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_calibration.XXXXXX")
trap 'ex_keep_or_remove "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_examples.sh"

run() {  # run LABEL MODE TAG EXAMPLE [ARGS...]: the JSON analysis in $WORK/LABEL-MODE-TAG.json
    local label=$1 mode=$2 tag=$3 example=$4
    shift 4
    ex_run "$WORK/$label-$mode-$tag" "$mode" "$example" "$@"
}

# The median of 3 runs each way, interleaved (planted, fixed, planted ...), 5 when their noise
# is over a quarter of what is checked: one run of the same program varies by 10 % and more
# on a busy 2-core VM. The planted finding's prediction must lie within +-20 % of a gain the
# runs cannot tell from the measured one (noise.sh). It must rank first, or tie with the
# first: a finding that predicts no more than 20 % over it (the calibration's own bound: two
# predictions that close are not ordered; dataloader_bound's sync is one, its load overlaps
# the GPU's work once the host no longer waits). Contention ranked first is the machine's
# (another process took a CPU), not the program's: said, and the ranking read below it.
# FIX_ARGS may name several fixes a user would write, "A | B" (the worker counts users
# start: 1, 2, 4, 8, picked without the analyzer's advice): each is run, and the prediction
# is checked against the one that gains most.
# chosen NAME: whether CALIBRATE_ONLY (unset: every class) names this class
chosen() { [ -z "${CALIBRATE_ONLY:-}" ] || [[ " $CALIBRATE_ONLY " == *" $1 "* ]]; }

# A fix that removes another waste of the same loop is tagged with its finding, "ID: ARGS"
# (the per-step read of a loop that also loads its batches: sync_bubble: --read-every 50).
# Which fix gains most is what the runs measure, not what the class was written for: with
# another process holding a CPU, workers gain little and the read's fix as much as ever.
# The finding of the fix that gains most is the one checked (WANT below); where no fix gains
# beyond the noise, no finding may claim more than 20 % over what the runs can tell from
# nothing. Every tagged finding's prediction is bounded by what its own fixes gained.
calibrate() {  # calibrate LABEL EXPECTED_ID EXAMPLE FIX_ARGS [ARGS...] (FIX_ARGS: one or more words)
    chosen "$1" || return 0
    local name=$1 want0=$2 example=$3 fix=$4 mode i k
    shift 4
    local skip=contention
    local -a alts ids
    IFS='|' read -ra alts <<<"$fix"
    for k in "${!alts[@]}"; do
        ids[k]=$want0
        if [[ ${alts[k]} =~ ^[[:space:]]*([a-z_]+):(.*)$ ]]; then
            ids[k]=${BASH_REMATCH[1]} alts[k]=${BASH_REMATCH[2]}
        fi
    done
    [ "$want0" == contention ] && skip=""
    for mode in ${CAL_MODES:-host cupti sampled}; do
        local walls_p="" busy=0 ties="" wall_p wall_f pred noise want=$want0 best=0 gain
        local -a walls_alt=()
        for i in 1 2 3 4 5; do
            local p="$WORK/$name-$mode-planted$i.json" f
            run "$name" "$mode" "planted$i" "$example" "$@"
            for k in "${!alts[@]}"; do
                f="$WORK/$name-$mode-fixed$k-$i.json"
                # shellcheck disable=SC2086  # (FIX_ARGS: one or more words)
                run "$name" "$mode" "fixed$k-$i" "$example" "$@" ${alts[$k]}
                walls_alt[k]+="$(ex_wall "$f") "
            done
            [ -z "$skip" ] || [ "$(ex_top "$p" | cut -d' ' -f1)" != contention ] || busy=$((busy + 1))
            walls_p+="$(ex_wall "$p") "
            [ "$i" -ge 3 ] || continue
            wall_p=$(tr ' ' '\n' <<<"$walls_p" | grep . | median)
            wall_f=""
            for k in "${!alts[@]}"; do  # the fix that gains most
                local wk
                wk=$(tr ' ' '\n' <<<"${walls_alt[k]}" | grep . | median)
                if [ -z "$wall_f" ] || [ "$wk" -lt "$wall_f" ]; then
                    wall_f=$wk best=$k
                fi
            done
            want=${ids[best]}
            local preds_want
            preds_want=$(for ((j = 1; j <= i; j++)); do
                       read -r _ run_pred <<<"$(ex_finding "$WORK/$name-$mode-planted$j.json" "$want")"
                       echo "${run_pred:-0}"
                   done | tr '\n' ' ')
            pred=$(tr ' ' '\n' <<<"$preds_want" | grep . | median)
            # the gain's noise, and the predictions' own: another process busy during some
            # planted runs leaves their budgets fewer CPUs, while the fixed runs it missed
            # gain as much as ever (input_backward_thread: 86 ms predicted, 117 measured,
            # two planted runs of three with a CPU in other hands)
            noise=$(awk -v g="$(noise_of "$walls_p" "${walls_alt[best]}")" -v p="$(noise_se "$preds_want")" \
                        'BEGIN { printf "%.0f\n", sqrt(g * g + 9 * p * p) }')
            noise_settled "$noise" "$((wall_p - wall_f))" "$pred" && break
        done
        gain=$((wall_p - wall_f))
        # a fix gains beyond the noise and the findings' floor (min_share, thresholds.h: 5 %
        # of the loop; below it a run of the same program differs by as much): its finding
        # is there in every run, first or tied. Under the floor none need be.
        # (and beyond the bar's own 20 %: a prediction 20 % under a gain that barely clears
        # the floor is right and under it; beside a CPU hog input_off_cpu's workers gained
        # 18.4 +- 4.8 ms of 250, 7 %, and the runs predicted 0 to 18 ms as the budget read
        # the hog)
        local helps=0
        awk -v g="$gain" -v n="$noise" -v w="$wall_p" 'BEGIN { exit !(0.8 * (g - n) > 0.05 * w) }' && helps=1
        # each tagged finding's best fix, measured: a top finding whose own fix gained within
        # 20 % of the best (or within the noise of it) is a tie, as the issue's bar has it
        local -A gain_of=() noise_of_id=()
        for k in "${!alts[@]}"; do
            local wk
            wk=$(tr ' ' '\n' <<<"${walls_alt[k]}" | grep . | median)
            if [ -z "${gain_of[${ids[k]}]:-}" ] || [ $((wall_p - wk)) -gt "${gain_of[${ids[k]}]}" ]; then
                gain_of[${ids[k]}]=$((wall_p - wk))
                noise_of_id[${ids[k]}]=$(noise_of "${walls_alt[best]}" "${walls_alt[k]}")
            fi
        done
        # A planted run during which other processes held half a CPU or more beyond what they
        # held in the median run ran on another machine than its fixed runs: its budget
        # rightly gave the workers less (dataloader_bound: 52 ms predicted in the one run of
        # five where a neighbour took 0.96 CPUs, 190-197 ms in the others, and sync_bubble
        # ranked above it). Its ranking is the machine's, said and not checked; its
        # prediction stays in the median.
        local others_runs others_med shifted=""
        others_runs=$(for ((j = 1; j <= i; j++)); do
                          o=$(ex_field "$WORK/$name-$mode-planted$j.json" other_processes_cpus)
                          echo "${o:-0}"
                      done | tr '\n' ' ')
        others_med=$(tr ' ' '\n' <<<"$others_runs" | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
        for ((j = 1; j <= i; j++)); do
            local top_id top_pred run_id run_pred
            read -r top_id top_pred <<<"$(ex_top "$WORK/$name-$mode-planted$j.json" "$skip")"
            read -r run_id run_pred <<<"$(ex_finding "$WORK/$name-$mode-planted$j.json" "$want")"
            [ "$helps" -eq 1 ] || continue
            if awk -v o="$(cut -d' ' -f"$j" <<<"$others_runs")" -v m="$others_med" 'BEGIN { exit !(o - m >= 0.5) }'; then
                shifted+="$j "
                continue
            fi
            if [ -z "${run_id:-}" ]; then
                fail "$name ($mode): no $want finding in run $j (top: ${top_id:-none})"
            elif [ "$top_id" != "$want" ]; then
                if [ -n "${gain_of[$top_id]:-}" ] &&
                    { noise_beats "${gain_of[$top_id]}" "$gain" "${noise_of_id[$top_id]}" ||
                      awk -v x="${gain_of[$top_id]}" -v y="$gain" 'BEGIN { exit !(x >= 0.8 * y) }'; }; then
                    ties+="$top_id(its fix gained $((gain_of[$top_id] / 1000000)) ms) "
                    continue
                fi
                awk -v t="$top_pred" -v w="$run_pred" 'BEGIN { exit !(t <= 1.2 * w) }' ||
                    fail "$name ($mode): top finding '$top_id' predicts $((top_pred / 1000)) us, over 20 % more than $want's $((run_pred / 1000)) us (run $j)"
                ties+="$top_id "
            fi
        done
        [ "$busy" -eq 0 ] || echo "  $name ($mode): contention first in $busy of $i planted runs (the machine's)"
        [ -z "$shifted" ] || echo "  $name ($mode): other processes held half a CPU more than in the median run in planted run(s) $shifted(the machine's: ranking not checked)"
        [ -z "$ties" ] || echo "  $name ($mode): tied with $want, ranked above it: $ties"
        [ "$helps" -eq 1 ] || echo "  $name ($mode): no fix gains 5 % of the run beyond the noise and the 20 % bar here"
        noise_note "$name ($mode)" "$noise" "$gain"
        local check=1
        [[ " ${SAVING_MODES:-host cupti sampled} " == *" $mode "* ]] || check=0
        awk -v p="$pred" -v a="$wall_p" -v b="$wall_f" -v n="$name ($mode)" -v e="$noise" -v check="$check" \
            -v runs="$i" -v fix="${alts[best]# }" -v alts="${#alts[@]}" -v want="$want" 'BEGIN {
            m = a - b; printf "  %s: %s predicted %.1f ms, measured %.1f ms +- %.1f (%.2f, %d runs each%s%s)\n", n,
                want, p / 1e6, m / 1e6, e / 1e6, (m > 0 ? p / m : 0), runs, check ? "" : ", ranking only",
                (alts > 1 ? ", best of " alts " fixes: " fix : "") }'
        local lo=0.8
        [ "$helps" -eq 1 ] || [ "$pred" != 0 ] || lo=0  # (no finding, none due)
        # A saving the report says is a floor ("saving_at_least": sleeping waits' wake-ups
        # taken at the machine's measured latency, where a CPU that idled a whole step woke
        # later) holds when the gain is not below it: checked at its upper side only, and
        # said (the planted runs that said it: all, for the check to loosen)
        local floors
        floors=$(for ((j = 1; j <= i; j++)); do
                     grep -m1 "^  {\"rank\": [0-9]*, \"id\": \"$want\"" "$WORK/$name-$mode-planted$j.json" |
                         grep -c '"saving_at_least": true'
                 done | grep -c '^1$')
        if [ "$floors" -eq "$i" ] && [ "$pred" != 0 ]; then
            lo=0
            echo "  $name ($mode): the report says its saving is a lower bound (sleeping waits' wake-ups at the machine's measured floor): checked not to exceed the gain"
        fi
        [ "$check" -eq 0 ] || noise_within "$pred" "$gain" "$noise" "$lo" 1.2 ||
            fail "$name ($mode): prediction outside +-20 % of the measured gain, beyond its noise"
        # the other tagged findings claim no more than their own fixes gave back
        local id
        for id in $(printf '%s\n' "${ids[@]}" | sort -u); do
            [ "$id" != "$want" ] && [ "$check" -eq 1 ] || continue
            local wid="" walls_id=""
            for k in "${!alts[@]}"; do
                [ "${ids[k]}" == "$id" ] || continue
                local wk
                wk=$(tr ' ' '\n' <<<"${walls_alt[k]}" | grep . | median)
                [ -n "$wid" ] && [ "$wk" -ge "$wid" ] || wid=$wk walls_id=${walls_alt[k]}
            done
            local idpred idnoise
            idpred=$(for ((j = 1; j <= i; j++)); do
                         read -r _ run_pred <<<"$(ex_finding "$WORK/$name-$mode-planted$j.json" "$id")"
                         echo "${run_pred:-0}"
                     done | median)
            idnoise=$(noise_of "$walls_p" "$walls_id")
            echo "  $name ($mode): $id predicted $((idpred / 1000000)) ms, its fix gained $(((wall_p - wid) / 1000000)) ms +- $((idnoise / 1000000))"
            noise_within "$idpred" "$((wall_p - wid))" "$idnoise" 0 1.2 ||
                fail "$name ($mode): $id predicts over 20 % more than its fix gained, beyond its noise"
        done
    done
}

# A loop whose copies are not worth fixing: none of the copy findings in any mode, 3 runs
# each (another finding, such as a sync bubble that the machine's preemption makes, is said).
quiet() {  # quiet LABEL EXAMPLE [ARGS...]
    chosen "$1" || return 0
    local name=$1 example=$2 mode i id others
    shift 2
    for mode in host cupti sampled; do
        others=""
        for i in 1 2 3; do
            local j="$WORK/$name-$mode-planted$i.json"
            run "$name" "$mode" "planted$i" "$example" "$@"
            for id in small_copies pageable_h2d; do
                [ -z "$(ex_finding "$j" "$id")" ] || fail "$name ($mode): $id found (run $i)"
            done
            id=$(ex_top "$j" contention | cut -d' ' -f1)
            others+="${id:-none} "
        done
        echo "  $name ($mode): no copy finding in 3 runs (top finding: $others)"
    done
}

# Two wastes in one program: each fix applied alone, and both, 7 runs each way interleaved
# (two gains to tell apart, each noisier than one; contention first is the machine's, as
# above). Each planted run's top finding names a
# fix (the pair for changes_together); that fix must gain as much as the better of the two
# alone, or tie with it within the noise or 20 % of its gain (the pair too: it is worth ranking first only if
# made whole it gains no less than the better fix alone). Its saving: the median of each
# run's prediction over its own gain (the run of its fix made right after it: a run that
# issued its launches slower waited less, and predicts less) within +-20 %, widened by
# the noise of that fix's gain.
calibrate_pair() {  # calibrate_pair LABEL FIX_A FIX_B EXAMPLE [ARGS...] (random_loop's --fix)
    chosen "$1" || return 0
    local name=$1 a=$2 b=$3 example=$4 mode i
    shift 4
    for mode in host cupti; do
        local walls_p="" walls_a="" walls_b="" walls_ab="" preds="" fixes="" busy=0 fix
        for i in 1 2 3 4 5 6 7; do
            local p="$WORK/$name-$mode-planted$i.json" id run_pred
            run "$name" "$mode" "planted$i" "$example" "$@"
            run "$name" "$mode" "fixa$i" "$example" "$@" --fix="$a"
            run "$name" "$mode" "fixb$i" "$example" "$@" --fix="$b"
            run "$name" "$mode" "fixab$i" "$example" "$@" --fix="$a" --fix="$b"
            [ "$(ex_top "$p" | cut -d' ' -f1)" != contention ] || busy=$((busy + 1))
            read -r id run_pred <<<"$(ex_top "$p" contention)"
            walls_p+="$(ex_wall "$p") "
            walls_a+="$(ex_wall "$WORK/$name-$mode-fixa$i.json") "
            walls_b+="$(ex_wall "$WORK/$name-$mode-fixb$i.json") "
            walls_ab+="$(ex_wall "$WORK/$name-$mode-fixab$i.json") "
            preds+="${run_pred:-0} "
            fix=$(ex_fix "${id:-none}" "$p" | sed "s/^$b+$a\$/$a+$b/")
            fixes+="${fix:-${id:-none}} "
        done
        # A planted run 15 % or more slower than their median ran on another machine than
        # its fixes (a stall of the VM: one run in about 17 of sync_and_launch host-only with
        # 500 ns kernels, its launches 1.5 us apart for five steps, 117 ms against 84, and
        # the graphs' bound of those steps first): its ranking is the machine's, said and not checked; its
        # prediction stays in the median.
        local wmed slow="" ranked="" j
        wmed=$(tr ' ' '\n' <<<"$walls_p" | grep . | median)
        for j in 1 2 3 4 5 6 7; do
            if awk -v w="$(cut -d' ' -f"$j" <<<"$walls_p")" -v m="$wmed" 'BEGIN { exit !(w >= 1.15 * m) }'; then
                slow+="$j "
            else
                ranked+="$(cut -d' ' -f"$j" <<<"$fixes") "
            fi
        done
        [ -z "$slow" ] || echo "  $name ($mode): planted run(s) ${slow}15 % or more slower than their median (the machine's: ranking not checked)"
        [ "$busy" -eq 0 ] || echo "  $name ($mode): contention first in $busy of 7 planted runs (the machine's)"
        local wp wa wb wab
        wp=$(tr ' ' '\n' <<<"$walls_p" | grep . | median)
        wa=$(tr ' ' '\n' <<<"$walls_a" | grep . | median)
        wb=$(tr ' ' '\n' <<<"$walls_b" | grep . | median)
        wab=$(tr ' ' '\n' <<<"$walls_ab" | grep . | median)
        # the better fix alone, and each fix's walls and gain
        local best=$a wbest=$wa walls_best=$walls_a
        [ $((wp - wb)) -gt $((wp - wa)) ] && best=$b wbest=$wb walls_best=$walls_b
        declare -A wall_of=([$a]=$wa [$b]=$wb [$a+$b]=$wab)
        declare -A walls_of=([$a]=$walls_a [$b]=$walls_b [$a+$b]=$walls_ab)
        local top="" tops ok=1
        tops=$(tr ' ' '\n' <<<"$ranked" | grep . | sort | uniq -c | sort -rn)
        top=$(awk 'NR == 1 { print $2 }' <<<"$tops")
        for fix in $(awk '{ print $2 }' <<<"$tops"); do
            if [ -z "${wall_of[$fix]:-}" ]; then
                fail "$name ($mode): top finding's fix '$fix' is neither $a, $b nor both"
                ok=0
                continue
            fi
            [ "$fix" == "$best" ] && continue
            local tie
            tie=$(noise_of "${walls_of[$fix]}" "$walls_best")
            noise_note "$name ($mode): $fix against $best" "$tie" "$((wp - wbest))"
            # (gains within 20 % of each other are a tie, as the issue's bar has it: the
            # top must be the better fix where the gains differ by 20 % or more)
            noise_beats "$((wp - ${wall_of[$fix]}))" "$((wp - wbest))" "$tie" ||
                awk -v x="$((wp - ${wall_of[$fix]}))" -v y="$((wp - wbest))" 'BEGIN { exit !(x >= 0.8 * y) }' ||
                fail "$name ($mode): top finding's fix '$fix' gains $(((wp - ${wall_of[$fix]}) / 1000)) us, $best alone $(((wp - wbest) / 1000)) us (noise $((tie / 1000)) us)"
        done
        [ "$ok" -eq 1 ] || continue
        # each planted run's prediction against its own gain, by the fix its top finding named
        local ratio noise gain
        ratio=$(paste <(tr ' ' '\n' <<<"$preds" | grep .) <(tr ' ' '\n' <<<"$walls_p" | grep .) \
                    <(tr ' ' '\n' <<<"$fixes" | grep .) <(tr ' ' '\n' <<<"$walls_a" | grep .) \
                    <(tr ' ' '\n' <<<"$walls_b" | grep .) <(tr ' ' '\n' <<<"$walls_ab" | grep .) |
                awk -v a="$a" -v b="$b" '{ w = ($3 == a ? $4 : $3 == b ? $5 : $6); g = $2 - w
                    print (g > 0 ? $1 / g : 0) }' | median)
        gain=$((wp - ${wall_of[$top]}))
        noise=$(noise_of "$walls_p" "${walls_of[$top]}")
        noise_note "$name ($mode)" "$noise" "$gain"
        local check=1
        [[ " ${SAVING_MODES:-host cupti} " == *" $mode "* ]] || check=0
        awk -v p="$(tr ' ' '\n' <<<"$preds" | grep . | median)" -v ga="$((wp - wa))" -v gb="$((wp - wb))" \
            -v gab="$((wp - wab))" -v top="$top" -v a="$a" -v b="$b" -v e="$noise" \
            -v r="$ratio" -v n="$name ($mode)" -v check="$check" 'BEGIN {
            printf "  %s: %s gains %.1f ms, %s %.1f ms, both %.1f ms; the top (%s) predicts %.1f ms (%.2f run by run, +- %.1f ms%s)\n",
                n, a, ga / 1e6, b, gb / 1e6, gab / 1e6, top, p / 1e6, r, e / 1e6, check ? "" : ", ranking only" }'
        [ "$check" -eq 0 ] ||
            noise_within "$(awk -v r="$ratio" -v g="$gain" 'BEGIN { printf "%.0f", r * g }')" "$gain" "$noise" 0.8 1.2 ||
            fail "$name ($mode): prediction outside +-20 % of its fix's gain, beyond its noise"
        unset wall_of walls_of
    done
}

calibrate per_step_sync sync_bubble per_step_sync --fixed
calibrate pageable_h2d pageable_h2d pageable_h2d --fixed
# (its loss is read every step: reading it every 50 is the other fix a user would write)
calibrate dataloader_bound input_pipeline dataloader_bound \
    "--fixed --workers 1 | --fixed --workers 2 | --fixed --workers 4 | --fixed --workers 8 | sync_bubble: --read-every 50"
# a 300 ms checkpoint write every 50 steps, made asynchronous: each write outlasts the
# 100 ms of steps before the next save, so the fix gains those 100 ms a save, not the pause
calibrate checkpoint_pauses pauses checkpoint_pauses --fixed
# 2000 launches a step of kernels shorter than a launch. With CUPTI only the ranking is
# checked: the fixed run's graphs make no records here (lib_examples.sh), so it also sheds
# what the simulated CUPTI's worker and the shim's writer took from the launching thread
# on 2 cores (stalls of 1 ms and more: 10-25 ms of the gain); a GPU's CUPTI records graph
# nodes too. Host-only too only the ranking is checked: the kernels ran as fast as they
# were launched, so no wait times them, and the graphs world takes them as nil where the
# fixed run's GPU still spends 20 ns on each (40 us a step): 28.7 ms predicted against 22.4
# measured on a quiet run (1.28, noise 1.1 ms), inside the noise of busier runs only
# (issue 36 E12: kernel time host-only between nil and everything, left open).
SAVING_MODES="sampled" calibrate launch_bound launch_bound launch_bound --fixed
# More classes, as random_loop with its knobs set (--fix applies the advice):
# a loss read every 4th step, then logging
calibrate sync_every_4 sync_bubble random_loop --fix=no_sync --load-us 0 --kernels 8 \
    --kernel-ns 250000 --copy-kb 0 --sync-every 4 --log-us 900 --streams 1 --churn 0 --nvtx 1
# loss.item() every step, then logging before the step's range ends, on a loop that uploads
# its batch (the host work is the step's own: removing the sync hides it, workers cannot)
calibrate item_logging sync_bubble random_loop --fix=no_sync --load-us 0 --kernels 4 \
    --kernel-ns 500000 --copy-kb 2048 --pageable 0 --sync-copy 0 --sync-every 1 --log-us 1000 \
    --streams 1 --churn 0 --nvtx 1
# the read on a loop that runs every other kernel on a second stream
calibrate sync_two_streams sync_bubble random_loop --fix=no_sync --load-us 0 --kernels 10 \
    --kernel-ns 200000 --copy-kb 0 --sync-every 1 --log-us 500 --streams 2 --churn 0 --nvtx 1
# batch loading on the training thread, the backward half of the kernels launched by an
# "autograd" thread while the training thread waits (PyTorch's loss.backward()): each
# thread's stretch during the other's launches is a wait for it, not a batch load
calibrate input_backward_thread input_pipeline random_loop \
    "--fix=input_workers --workers 1 | --fix=input_workers --workers 2 | --fix=input_workers --workers 4 | --fix=input_workers --workers 8 | sync_bubble: --fix=no_sync" \
    --load-us 2000 \
    --kernels 20 --kernel-ns 100000 --copy-kb 0 --sync-every 1 --log-us 0 --streams 1 \
    --churn 0 --nvtx 1 --backward-thread 1
# batch loading on the training thread of a loop that never syncs (it waits off the CPU
# for an event two steps back), in ProfilerStep-like NVTX steps: once loading leaves it
# the thread needs almost no CPU, and both CPUs load (issue 36 A1; test_examples.sh has
# the same loop without NVTX)
# Host-only it is not calibrated: a loop that never waits proves nothing of its kernels, and
# one whose kernels run as long as its loads looks the same (random_loops seed 10): the
# saving stays what drains prove, none here, and the replay's is said apart as what the
# trace cannot prove (issue 36 E12; test_examples.sh, slow_input_host)
CAL_MODES="cupti sampled" calibrate input_off_cpu input_pipeline random_loop \
    "--fix=input_workers --workers 1 | --fix=input_workers --workers 2 | --fix=input_workers --workers 4 | --fix=input_workers --workers 8" \
    --steps 60 --load-us 4000 --kernels 10 --kernel-ns 150000 --copy-kb 1024 --pageable 0 \
    --sync-copy 0 --sync-every 0 --log-us 0 --streams 1 --churn 0 --nvtx 1
# a scratch buffer allocated and freed each step (cudaFree waits for the device)
calibrate alloc_churn fragmentation random_loop --fix=no_churn --load-us 600 --kernels 6 \
    --kernel-ns 300000 --copy-kb 0 --sync-every 0 --streams 1 --churn 1 --nvtx 1
# a loss read every step followed by logging, and a scratch buffer freed each step: each
# drain keeps the other's wait, the two fixes pay only together (changes_together)
calibrate item_and_churn changes_together random_loop "--fix=no_sync --fix=no_churn" \
    --load-us 0 --kernels 4 --kernel-ns 500000 --copy-kb 0 --sync-every 1 --log-us 1000 \
    --streams 1 --churn 1 --nvtx 1
# Eager ops (issue 36 E12): 30 us of Python before each of 60 launches, the loss read every
# step, then 1.5 ms of logging. Kernels of 60 us: the GPU falls behind the Python, the read
# waits, and without it the logging overlaps the GPU's work
calibrate eager_behind sync_bubble random_loop --fix=no_sync --steps 80 --load-us 0 \
    --kernels 60 --kernel-ns 60000 --copy-kb 0 --sync-every 1 --log-us 1500 --streams 1 \
    --churn 0 --nvtx 1 --python-us 30
# Kernels of 20 us: the GPU keeps pace with the Python, and a graph (which replays the ops
# without it) gains what the GPU idled. The read returns within a kernel of the last launch:
# host-only that cannot tell kernels that short from the GPU busy all along, and the saving
# (the kernels taken as nil: 145 ms against 54) is an upper bound, its ranking checked; a
# sampled timeline's windows say how long each kernel runs (52 ms predicted)
SAVING_MODES="cupti sampled" calibrate eager_keeps_pace launch_bound random_loop \
    --fix=cuda_graphs --steps 80 --load-us 0 --kernels 60 --kernel-ns 20000 --copy-kb 0 \
    --sync-every 1 --log-us 1500 --streams 1 --churn 0 --nvtx 1 --python-us 30
# Two wastes in one loop:
# batch loading with a loss read every step, on a machine where one worker fits (the loop
# spins in its waits: of 1, 2, 4 or 8 workers one gains most on 2 CPUs, the others take the
# CPU from the loop)
calibrate_pair input_and_sync input_workers no_sync random_loop --workers 1 --load-us 2500 --kernels 4 \
    --kernel-ns 500000 --copy-kb 0 --sync-every 1 --log-us 300 --streams 1 --churn 0 --nvtx 1
# a loss read every step on a loop of 1500 short kernels (launch-bound where each launch
# costs more than its kernel runs: with the timeline's per-launch cost, not without it).
# Kernels of 350 ns: host-only, the launches of a run come 123-267 ns apart on average here,
# with CUPTI 436-957; at 230 ns, host-only runs were GPU-bound or kept pace by turns, and
# ranked the graphs' bound or the read first by turns.
# With CUPTI only the ranking is checked: the simulated CUPTI's record costs (each kernel's
# record made on the launching thread, 1500 a step converted beside it) are most of what
# the graph saves there, and no GPU's CUPTI costs the same (docs/analyze.md). There the two
# fixes pay together (each alone keeps the other's wait): changes_together comes right
# after the graphs' finding, with what the pair adds.
SAVING_MODES=host calibrate_pair sync_and_launch no_sync cuda_graphs random_loop --load-us 0 --kernels 1500 \
    --kernel-ns 350 --copy-kb 0 --sync-every 1 --log-us 600 --streams 1 --churn 0
# a 16 MiB pageable upload each step, as async as pageable memory allows, and 1500 kernels
calibrate_pair pageable_and_launch pinned_async cuda_graphs random_loop --load-us 0 \
    --kernels 1500 --kernel-ns 200 --copy-kb 16384 --pageable 1 --sync-copy 0 --sync-every 0 \
    --streams 1 --churn 0
# batch loading beside a blocking 12 MiB pageable upload that waits for the last step's
# kernels (the loading hides behind them: workers gain nothing, pinning does)
calibrate_pair input_and_pageable input_workers pinned_async random_loop --workers 1 --load-us 1500 \
    --kernels 4 --kernel-ns 400000 --copy-kb 12288 --pageable 1 --sync-copy 1 --sync-every 0 \
    --streams 1 --churn 0 --nvtx 1
# Copies (issue 36 C7, C8): 500 small blocking uploads an iteration, no steps marked (one
# pinned staging buffer and one async copy fix it); each of 96 samples uploaded on its own
# beside its own kernel, .item() a step (collated into one pinned buffer);
calibrate small_copies small_copies small_copies --fixed
# The coalescing world gathers a step's uploads first, at the host's memcpy rate the shim
# measured (GW_REC_HOST_COPY), the kernels after the one copy (replay.c, gather_of). 150
# steps: the fix's one-off pinned buffer (its allocation, first touch and free: ~5 ms here)
# is no part of what it saves a step, and on 40 steps it was half the gain. Host-only only
# its ranking is checked: the kernels between the copies are proven only by the copies'
# waits, lost once the coalesced copies no longer wait (22-36 ms against 13-16 on 40 steps;
# issue 36 E12)
SAVING_MODES="cupti sampled" calibrate per_sample_copies small_copies per_sample_copies --fixed \
    --steps 150
# an optimizer step offloaded to the CPU through pageable memory, 16 MiB down and up (pinned
# and async both ways); a 64 MiB state read back into pageable memory every 10 steps
calibrate offload_optimizer pageable_h2d offload_optimizer --fixed
calibrate state_download pageable_h2d state_download --fixed
# 48 small uploads beside 10 ms of kernels a step: nothing worth gathering, no copy finding
quiet metadata_copies metadata_copies
# an upload that waits for its stream (x.cuda() without non_blocking=True: the copy, then a
# stream sync) beside a loss read every step: the read's fix keeps the upload's wait, the
# upload's fix (pinned, non_blocking=True) takes it away (issue 36 B4): 8 MiB read every
# step, one stream, NVTX steps (measured: no_sync gains 25 ms, pinning 73); 4 MiB, read every
# other step, two streams, no NVTX (10 and 37 ms)
calibrate_pair upload_and_sync no_sync pinned_async random_loop --load-us 0 --kernels 6 \
    --kernel-ns 300000 --copy-kb 8192 --pageable 1 --sync-copy 1 --sync-every 1 --log-us 200 \
    --streams 1 --churn 0 --nvtx 1
calibrate_pair upload_and_sync_2 no_sync pinned_async random_loop --load-us 0 --kernels 8 \
    --kernel-ns 200000 --copy-kb 4096 --pageable 1 --sync-copy 1 --sync-every 2 --log-us 400 \
    --streams 2 --churn 0 --nvtx 0
# The same programs with the waits sleeping (cudaDeviceScheduleBlockingSync) instead of
# spinning (CUDA's default): the training thread then needs no CPU while it waits, the
# loads get both CPUs, and a sync's wake-up costs more (issue 36 G)
EX_SPIN_WAIT=0 calibrate dataloader_bound_blocking input_pipeline dataloader_bound \
    "--fixed --workers 1 | --fixed --workers 2 | --fixed --workers 4 | --fixed --workers 8 | sync_bubble: --read-every 50"
EX_SPIN_WAIT=0 calibrate per_step_sync_blocking sync_bubble per_step_sync --fixed
noise_report analyze_calibration
[ "$failures" -eq 0 ] || { echo "test_calibration: $failures failed" >&2; exit 1; }
echo "test_calibration: all checks passed"
