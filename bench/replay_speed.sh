#!/usr/bin/env bash
# The replay's cost (issue 36): user time of `gpuwatch analyze --brief` on generated traces of
# EVENTS events, host-only and with GPU records (--gpu), for several binaries in the same run,
# interleaved (binary after binary, REPEATS rounds) so that a machine busy with other work
# slows them alike; prints each binary's median and its ratio to the first one's. Run at the
# lowest priority (nice 19) beside other work: user time, not wall time, is what it compares.
#   bash bench/replay_speed.sh [-n EVENTS] [-r REPEATS] [-d TRACE_DIR] GPUWATCH...
# TRACE_DIR (default: a temporary one) keeps big-host.gwt and big-gpu.gwt between runs; they
# are written with the last binary's build's gen_big_trace when missing (the newest, as a
# rule: b25e4ba's defines no CUPTI stream, so none of its GPU records meets a call and the
# replay's matching goes unmeasured).
set -euo pipefail
events=20000000 repeats=3 dir=""
while getopts n:r:d: opt; do
    case $opt in
    n) events=$OPTARG ;;
    r) repeats=$OPTARG ;;
    d) dir=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: replay_speed.sh [-n EVENTS] [-r REPEATS] [-d DIR] GPUWATCH..." >&2; exit 2; }
if [ -z "$dir" ]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/replay_speed.XXXXXX")
    made=$dir
fi
gen=$(dirname "$(dirname "$(realpath "${!#}")")")/bench/gen_big_trace
[ -s "$dir/big-host.gwt" ] || nice -n 19 "$gen" "$dir/big-host.gwt" "$events" >/dev/null
[ -s "$dir/big-gpu.gwt" ] || nice -n 19 "$gen" "$dir/big-gpu.gwt" "$events" --gpu >/dev/null

timing=$(mktemp "${TMPDIR:-/tmp}/replay_speed_time.XXXXXX")
trap 'rm -f "$timing"; [ -z "${made:-}" ] || rm -rf "$made"' EXIT
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for mode in host gpu; do
    declare -A times=()
    for ((r = 0; r < repeats; r++)); do
        for b in "$@"; do
            /usr/bin/time -o "$timing" -f "%U" nice -n 19 "$b" analyze --brief \
                "$dir/big-$mode.gwt" >/dev/null
            u=$(tail -1 "$timing")
            times[$b]+="$u "
        done
    done
    first=""
    for b in "$@"; do
        m=$(tr ' ' '\n' <<<"${times[$b]}" | grep . | median)
        [ -n "$first" ] || first=$m
        awk -v mode="$mode" -v b="$b" -v m="$m" -v f="$first" -v all="${times[$b]}" \
            'BEGIN { printf "%-4s %-50s %5.2f s user (median of %s)  x%.2f of the first\n", mode, b, m, all, m / f }'
    done
    unset times
done
