#!/usr/bin/env bash
# Fails when a library's files call each other the wrong way, read from the objects' own
# symbols (nm), so a call hidden in a header's inline function counts where it is inlined:
#   - with stages (tools/analyze: input replay model rules run report, earliest first), a
#     file that calls a function defined in a later stage's file;
#   - in any library, files that call each other round in a circle (tsort finds it).
# A stage is the folder an object was built from (CMake keeps the sources' folders).
#   bash tests/check_layers.sh NM "STAGE..." OBJECT...   ("-": one stage, circles only)
set -euo pipefail
nm=$1 stages=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

file_of() {  # the object's source, from the library's folder: model/drains.c.o -> model/drains
    local o=${1%.c.o} dir
    dir=$(basename "$(dirname "$o")")
    if [ "$stages" = - ]; then echo "$(basename "$o")"; else echo "$dir/$(basename "$o")"; fi
}

for o in "$@"; do
    f=$(file_of "$o")
    "$nm" --defined-only "$o" | awk -v f="$f" '$2 ~ /^[TDBRCV]$/ {print $3, f}' >>"$tmp/defs"
    "$nm" --undefined-only "$o" | awk -v f="$f" '{print $2, f}' >>"$tmp/uses"
done
sort -u -o "$tmp/defs" "$tmp/defs"
sort -u -o "$tmp/uses" "$tmp/uses"
# caller callee symbol, one line per call from one file into another
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 {print $2, $3, $1}' >"$tmp/calls"
[ -s "$tmp/calls" ] || { echo "no calls between files: wrong objects?" >&2; exit 1; }

fail=0
if [ "$stages" != - ]; then
    bad=$(awk -v order="$stages" '
        BEGIN { n = split(order, s, " "); for (i = 1; i <= n; i++) rank[s[i]] = i }
        {
            split($1, a, "/"); split($2, b, "/")
            if (!(a[1] in rank)) { print $1 ": not in a stage (" order ")"; next }
            if (!(b[1] in rank)) { print $2 ": not in a stage (" order ")"; next }
            if (rank[b[1]] > rank[a[1]])
                print $1 " calls " $3 " of " $2 ", a later stage"
        }' "$tmp/calls")
    if [ -n "$bad" ]; then
        echo "$bad" >&2
        fail=1
    fi
fi
if ! awk '{print $1, $2}' "$tmp/calls" | sort -u | tsort >/dev/null 2>"$tmp/loops"; then
    # (tsort names every loop it breaks, the same circle from several files: the first few)
    sed 's/^tsort: -: input contains a loop:$/files that call each other in a circle:/;
         s/^tsort: /    /' "$tmp/loops" | head -n 30 >&2
    fail=1
fi
[ "$fail" -eq 0 ] && echo "$(sort -u -k1,2 "$tmp/calls" | wc -l) calls between files, all" \
    "toward earlier stages or within one, no circles"
exit "$fail"
