#!/usr/bin/env bash
# The replay's speed-ups must not change a single figure: `gpuwatch analyze --json` of every
# trace of a corpus (bench/replay_corpus.sh) by an old and a new binary, byte for byte.
# Each entry is a .gwt or Kineto file, or a directory (one run of one or more processes);
# exit statuses and stderr are compared too; then, where both binaries are in a build
# with bench/replay_random, the replay's figures on 10000 random runs. Exits 1 when any
# output differs, naming it and showing the start of the diff.
#   bash bench/replay_same.sh OLD_GPUWATCH NEW_GPUWATCH CORPUS_DIR
set -uo pipefail
OLD=${1:?usage: replay_same.sh OLD_GPUWATCH NEW_GPUWATCH CORPUS_DIR}
NEW=${2:?}
CORPUS=${3:?}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay_same.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

entries=()
for e in "$CORPUS"/*; do
    case $e in
    *.log*) continue ;;
    */golden) entries+=("$e"/*.gwt "$e/run") ;;
    */kineto) entries+=("$e"/*.json.gz) ;;
    *) entries+=("$e") ;;
    esac
done

same=0 differ=0 failed=0
for e in "${entries[@]}"; do
    nice -n 19 "$OLD" analyze --json "$e" >"$WORK/old.json" 2>"$WORK/old.err"
    rc_old=$?
    nice -n 19 "$NEW" analyze --json "$e" >"$WORK/new.json" 2>"$WORK/new.err"
    rc_new=$?
    if [ "$rc_old" != "$rc_new" ] || ! cmp -s "$WORK/old.err" "$WORK/new.err"; then
        echo "DIFFERS: $e: exit $rc_old then $rc_new; stderr:" >&2
        diff "$WORK/old.err" "$WORK/new.err" | head -5 >&2
        differ=$((differ + 1))
    elif ! cmp -s "$WORK/old.json" "$WORK/new.json"; then
        echo "DIFFERS: $e" >&2
        diff "$WORK/old.json" "$WORK/new.json" | head -20 >&2
        differ=$((differ + 1))
    else
        same=$((same + 1))
        [ "$rc_old" == 0 ] || failed=$((failed + 1))
    fi
done
echo "$((same + differ)) analyses: $same identical ($failed of them failing alike), $differ differ"
# and the replay alone on random runs, where both binaries sit in a build with
# bench/replay_random (replay_random.c): the corpus holds few of the orders of events that
# a change to the replay's bookkeeping can get wrong
rand_old=$(dirname "$(dirname "$(realpath "$OLD")")")/bench/replay_random
rand_new=$(dirname "$(dirname "$(realpath "$NEW")")")/bench/replay_random
if [ -x "$rand_old" ] && [ -x "$rand_new" ]; then
    nice -n 19 "$rand_old" >"$WORK/old.rand"
    nice -n 19 "$rand_new" >"$WORK/new.rand"
    if cmp -s "$WORK/old.rand" "$WORK/new.rand"; then
        echo "$(wc -l <"$WORK/new.rand") random runs: identical"
    else
        echo "DIFFERS: random runs, $(diff "$WORK/old.rand" "$WORK/new.rand" | grep -c '^<') of $(wc -l <"$WORK/new.rand")" >&2
        diff "$WORK/old.rand" "$WORK/new.rand" | head -4 | cut -c1-300 >&2
        differ=$((differ + 1))
    fi
else
    echo "random runs: not compared (no bench/replay_random beside both binaries)"
fi
[ "$differ" == 0 ]
