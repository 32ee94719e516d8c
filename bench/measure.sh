# Sourced by the benchmarks (measure: after setting dir, a scratch directory).
# median N...: the median of the numbers given (the lower one of an even count's middle two).
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure COMMAND...: runs it under /usr/bin/time -v (its stdout to $dir/out) and prints
# its wall seconds, peak RSS (KiB) and CPU seconds (user + system, over its threads).
measure() {
    /usr/bin/time -v "$@" >"$dir/out" 2>"$dir/time" || { cat "$dir/time" >&2; exit 1; }
    local secs rss cpu
    secs=$(awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$dir/time")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$dir/time")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$dir/time")
    echo "$secs $rss $cpu"
}
