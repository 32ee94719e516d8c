#!/usr/bin/env bash
# After ctest: how long each timing test took and the largest noise it measured (the
# "noise: NAME: largest ..." line each prints, tests/analyze/noise.sh), read from ctest's log.
#   timing_summary.sh BUILD_DIR
set -u
log=${1:?usage: timing_summary.sh BUILD_DIR}/Testing/Temporary/LastTest.log
[ -r "$log" ] || { echo "timing_summary.sh: no ctest log at $log" >&2; exit 1; }
echo "Timing tests (wall time; the largest noise of a gain each measured):"
awk '
    / Testing: / { name = $3; noise[name] = "" }
    /^noise: / { sub(/^noise: [^:]*: /, ""); noise[name] = $0 }
    /^Test time = / { time[name] = $4 }
    /^Test (Passed|Failed)/ || /^Test Failed/ { result[name] = $2 }
    END {
        for (n in time) if (n ~ /^analyze_(examples|calibration|random_loops|random_fixes|ranks|diff)$/)
            printf "  %-22s %7.1f s  %s\n", n, time[n], (noise[n] != "" ? noise[n] : "(single runs: no noise measured)")
    }' "$log" | sort
