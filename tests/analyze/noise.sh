# The run-to-run noise of the timing checks (issue 34), sourced by lib_examples.sh and
# test_noise.sh. A check compares the median wall time of interleaved runs of two variants
# (planted, fixed, planted, fixed ...); what one run of a program costs on a busy 2-core
# machine varies by a few per cent, and by far more when another process takes a CPU. So
# every order or ratio is asserted only beyond the noise the repeats themselves show:
#   - a variant's spread gives its sigma: from 5 runs on, 1.4826 times the median absolute
#     deviation (an outlier, a run another process preempted, moves the median little and
#     this little); from fewer, range / d2(n), the expected range of n normal draws (an
#     outlier widens it: with 3 runs it moves the median too);
#   - the standard error of its median is 1.2533 sigma / sqrt(n); from 5 runs on, at least
#     what the median's own confidence interval says, the order statistics v[k]..v[n+1-k]
#     (k from 2, about one error each side): its half width over the normal quantile of its
#     coverage. Runs in two modes (per_sample_copies' fixed runs: four at 495-510 ms, one at
#     545; its planted runs three at 546-548, two at 563) leave the median deviation small
#     while the median itself jumps between the modes from one set of runs to the next;
#     the interval spans them, and it leaves out one outlier each side;
#   - the noise of a difference of two medians is 3 standard errors of that difference.
# A difference within its noise is a tie.

# noise_se WALLS: the standard error (ns) of the median of the runs WALLS (space-separated)
noise_se() {
    awk -v w="$1" 'BEGIN {
        n = split(w, v, " "); if (n < 2) { print 0; exit }
        for (i = 1; i <= n; i++) v[i] += 0
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        if (n >= 5) {
            med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            for (i = 1; i <= n; i++) dev[i] = v[i] > med ? v[i] - med : med - v[i]
            for (i = 2; i <= n; i++) for (j = i; j > 1 && dev[j] < dev[j - 1]; j--) { t = dev[j]; dev[j] = dev[j - 1]; dev[j - 1] = t }
            sigma = 1.4826 * (n % 2 ? dev[(n + 1) / 2] : (dev[n / 2] + dev[n / 2 + 1]) / 2)
            se = 1.2533 * sigma / sqrt(n)
            k = int(n / 2 - sqrt(n) / 2 + 0.5); if (k < 2) k = 2
            outside = 0; c = 1  # P(fewer than k of n runs below the median), c = C(n, j)
            for (j = 0; j < k; j++) { outside += c; c = c * (n - j) / (j + 1) }
            z = probit(1 - outside / 2 ^ n)  # (the interval misses it as often above)
            if ((v[n + 1 - k] - v[k]) / (2 * z) > se) se = (v[n + 1 - k] - v[k]) / (2 * z)
        } else {
            split("0 1.128 1.693 2.059", d2, " ")
            se = 1.2533 * (v[n] - v[1]) / d2[n] / sqrt(n)
        }
        printf "%.0f\n", se }
    # the standard normal distribution (Abramowitz and Stegun 26.2.17, to 7.5e-8) and its
    # quantile, by bisection
    function phi(x,  t, y) {
        t = 1 / (1 + 0.2316419 * (x < 0 ? -x : x))
        y = t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))
        y = 1 - exp(-x * x / 2) / 2.5066282746 * t * (0.319381530 + t * (-0.356563782 + y))
        return x < 0 ? 1 - y : y
    }
    function probit(p,  lo, hi, mid, i) {
        lo = -8; hi = 8
        for (i = 0; i < 60; i++) { mid = (lo + hi) / 2; if (phi(mid) < p) lo = mid; else hi = mid }
        return mid
    }'
}

# noise_of "WALLS_A" "WALLS_B": the noise (ns) of median(A) - median(B)
noise_of() {
    local a b
    a=$(noise_se "$1") b=$(noise_se "$2")
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f\n", 3 * sqrt(a * a + b * b) }'
}

# noise_settled NOISE GAIN PRED: succeeds when the noise is at most a quarter of the larger of
# the gain and the prediction: enough runs to judge. Short of that a check runs 2 more of
# each variant (from 5 the median absolute deviation sets the noise: an outlier then counts
# for little), whatever the verdict would be.
noise_settled() {
    awk -v e="$1" -v g="$2" -v p="$3" 'BEGIN { g = (g < 0 ? -g : g); m = (g > p ? g : p); exit !(e <= m / 4) }'
}

# noise_within PRED GAIN NOISE LO HI: succeeds when PRED lies within [LO, HI] times some gain
# the measurement cannot tell from GAIN (GAIN - NOISE .. GAIN + NOISE)
noise_within() {
    awk -v p="$1" -v g="$2" -v n="$3" -v lo="$4" -v hi="$5" \
        'BEGIN { exit !(p + 0 >= lo * (g - n) && p + 0 <= hi * (g + n)) }'
}

# noise_beats GAIN_X GAIN_Y NOISE: succeeds unless Y gains more than X beyond the noise (X
# is the better or tied)
noise_beats() {
    awk -v x="$1" -v y="$2" -v n="$3" 'BEGIN { exit !(y - x <= n + 0) }'
}

# noise_note LABEL NOISE GAIN: remembers the largest noise relative to its gain seen so far
NOISE_WORST="" NOISE_WORST_SHARE=-1
noise_note() {
    local share
    share=$(awk -v n="$2" -v g="$3" 'BEGIN { g = (g < 0 ? -g : g); printf "%.4f\n", (g > 0 ? n / g : 0) }')
    if awk -v s="$share" -v w="$NOISE_WORST_SHARE" 'BEGIN { exit !(s + 0 > w + 0) }'; then
        NOISE_WORST_SHARE=$share
        NOISE_WORST=$(awk -v n="$2" -v g="$3" -v l="$1" \
            'BEGIN { a = (g < 0 ? -g : g); printf "%.2f ms on a gain of %.1f ms (%.0f%%) in %s", n / 1e6, g / 1e6, (a > 0 ? 100 * n / a : 0), l }')
    fi
}

# noise_report NAME: the line scripts/test.sh collects ("noise: NAME: largest ...")
noise_report() {
    echo "noise: $1: largest ${NOISE_WORST:-none measured}"
}
