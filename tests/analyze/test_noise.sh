#!/usr/bin/env bash
# The timing checks' decisions (noise.sh) on fixed numbers: the noise grows with the runs'
# spread and shrinks with their count; a difference within it is a tie, beyond it an order;
# a prediction off by more than the noise fails.
set -u
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/noise.sh"

expect() {  # expect WANT GOT WHAT
    [ "$1" == "$2" ] || fail "$3: $2, expected $1"
}

# one run: no spread to measure; identical runs: none
expect 0 "$(noise_se "100")" "one run"
expect 0 "$(noise_se "100 100 100")" "identical runs"
# 3 runs spanning 1.693 ms: sigma 1 ms, the median's standard error 1.2533 / sqrt(3) ms
expect 723593 "$(noise_se "10000000 10500000 11693000")" "3 runs over 1.693 ms"
# 7 runs: sigma from their median absolute deviation (0.4 ms) gives 0.281 ms over sqrt(7);
# the median's interval v[2]..v[6] (0.9 ms, 87.5 % coverage: 1.534 errors each side) a
# little more, 0.293 ms
expect 293328 "$(noise_se "10000000 10100000 10200000 10500000 10600000 11000000 11693000")" \
    "7 runs over 1.693 ms"
# one run of 7 preempted for 50 ms: the error does not move (the median did not)
expect 293328 "$(noise_se "10000000 10100000 10200000 10500000 10600000 11000000 61693000")" \
    "7 runs, one preempted"
# in any order
expect 293328 "$(noise_se "61693000 10500000 10000000 11000000 10200000 10600000 10100000")" \
    "7 runs, shuffled"
# 7 runs close together: the median deviation decides (0.1 ms: 0.0702 ms), over the
# interval's 0.2 ms (0.0652 ms)
expect 70231 "$(noise_se "10000000 10100000 10150000 10200000 10300000 10300000 10400000")" \
    "7 runs close together"
# 5 runs in two modes (per_sample_copies planted, sampled timeline: three at 546-548 ms, two
# at 563): a median deviation of 2.4 ms would say 2.0 ms; the median's interval v[2]..v[4]
# (62.5 % coverage: 0.887 errors each side) spans the modes, 8.6 ms
expect 8608628 "$(noise_se "546098856 548481932 547968175 563242402 563538670")" \
    "5 runs in two modes"
# the noise of a difference: 3 errors of it
expect 3069945 "$(noise_of "10000000 10500000 11693000" "9000000 9500000 10693000")" \
    "two variants, 3 runs each"
expect 2170779 "$(noise_of "10000000 10500000 11693000" "9000000 9000000 9000000")" \
    "one variant without spread"

# a prediction within 20 % of a gain the noise allows
noise_within 120 100 0 0.8 1.2 || fail "120 within 0.8-1.2 of 100"
noise_within 121 100 0 0.8 1.2 && fail "121 within 0.8-1.2 of 100 without noise"
noise_within 121 100 5 0.8 1.2 || fail "121 within 0.8-1.2 of 100 +- 5"
noise_within 130 100 5 0.8 1.2 && fail "130 within 0.8-1.2 of 100 +- 5 (a wrong prediction passes)"
noise_within 77 100 5 0.8 1.2 || fail "77 within 0.8-1.2 of 100 +- 5"
noise_within 70 100 5 0.8 1.2 && fail "70 within 0.8-1.2 of 100 +- 5"
noise_within 0 2 3 0.8 1.2 || fail "no prediction for a gain within its noise"

# order: X beats Y unless Y gains more than X beyond the noise
noise_beats 4.5 2.0 1 || fail "4.5 beats 2.0"
noise_beats 2.0 4.5 1 && fail "2.0 beats 4.5 with noise 1"
noise_beats 2.0 4.5 3 || fail "2.0 and 4.5 tie with noise 3"

# the largest noise relative to its gain, reported
noise_note first 1000000 100000000
noise_note second 3000000 10000000
noise_note third 2000000 200000000
expect "noise: t: largest 3.00 ms on a gain of 10.0 ms (30%) in second" "$(noise_report t)" \
    "the worst noise"

[ "$failures" -eq 0 ] || { echo "test_noise: $failures failed" >&2; exit 1; }
echo "test_noise: all checks passed"
