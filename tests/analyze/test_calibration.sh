#!/usr/bin/env bash
# Calibration against reality (issue 17): each planted-waste example runs planted and with
# its --fixed variant on the simulated GPU, in timeline and host-only mode; the predicted
# saving of the top finding (the what-if replay's) must be within +-20 % of the measured
# wall-time difference, and the top finding must be the planted one.
#   test_calibration.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_calibration.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_calibration.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_examples.sh"

run() {  # run NAME MODE TAG [ARGS...]: the trace's JSON analysis in $WORK/NAME-MODE-TAG.json
    local name=$1 mode=$2 tag=$3
    shift 3
    ex_run "$WORK/$name-$mode-$tag" "$mode" "$name" "$@"
}

# The median of 3 runs each way: the machines are noisy (one run of the same program varies
# by 10 % and more on a busy 2-core VM).
calibrate() {  # calibrate NAME EXPECTED_ID
    local name=$1 want=$2 mode i
    for mode in host cupti; do
        local walls_p="" walls_f="" preds="" ids=""
        for i in 1 2 3; do
            run "$name" "$mode" "planted$i"
            run "$name" "$mode" "fixed$i" --fixed
            local p="$WORK/$name-$mode-planted$i.json" f="$WORK/$name-$mode-fixed$i.json" id pred
            walls_p+="$(ex_wall "$p") " walls_f+="$(ex_wall "$f") "
            read -r id pred <<<"$(ex_top "$p")"
            ids+="${id:-none} " preds+="${pred:-0} "
        done
        local id
        for id in $ids; do
            [ "$id" == "$want" ] || fail "$name ($mode): top finding '$id', expected '$want'"
        done
        local wall_p wall_f pred
        wall_p=$(tr ' ' '\n' <<<"$walls_p" | grep . | median)
        wall_f=$(tr ' ' '\n' <<<"$walls_f" | grep . | median)
        pred=$(tr ' ' '\n' <<<"$preds" | grep . | median)
        awk -v p="$pred" -v a="$wall_p" -v b="$wall_f" -v n="$name ($mode)" 'BEGIN {
            m = a - b; r = m > 0 ? p / m : 0;
            printf "  %s: predicted %.1f ms, measured %.1f ms (%.2f)\n", n, p / 1e6, m / 1e6, r;
            exit !(m > 0 && r >= 0.8 && r <= 1.2) }' ||
            fail "$name ($mode): prediction outside +-20 % of the measured gain"
    done
}

calibrate per_step_sync sync_bubble
calibrate pageable_h2d pageable_h2d
calibrate dataloader_bound input_pipeline
[ "$failures" -eq 0 ] || { echo "test_calibration: $failures failed" >&2; exit 1; }
echo "test_calibration: all checks passed"
