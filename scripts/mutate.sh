#!/usr/bin/env bash
# Mutation testing by hand (issue 23): universalmutator (pip install universalmutator) makes
# one-line mutants of the files that decide correctness; each is built in a copy of the
# repository and the tests that matter for its file are run; a mutant that makes one fail is
# killed. Prints per file the mutants killed, survived and not compiling, the score
# (killed / (killed + survived)), and each survivor's line as it was and as mutated.
#   scripts/mutate.sh [--sample N] [--seed S] [FILE...]
# --sample N: N mutants drawn per file (seeded; default 25; 0 = all, hours per file).
set -euo pipefail
sample=25 seed=1
while [ $# -gt 0 ]; do
    case $1 in
    --sample) sample=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) break ;;
    esac
done
command -v mutate >/dev/null || { echo "mutate.sh: needs universalmutator (pip install universalmutator)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
# file -> the ctest names (regex) that matter for it
declare -A tests=(
    [libintercept/recorder.c]='^(test_recorder|test_shim_e2e|test_stacks_e2e|test_gpu_timeline)$'
    [libintercept/hooks_copy.c]='^(test_shim_e2e)$'
    [libintercept/ranges.c]='^(test_ranges|test_shim_e2e)$'
    [libintercept/cupti_timeline.c]='^(test_gpu_timeline)$'
    [tools/reader/trace_decode.c]='^(test_reader|analyze_golden)$'
    [tools/analyze/replay/replay.c]='^(analyze_test_(model|rerank|whatif_thresholds|properties)|test_rule_.*)$'
    [tools/analyze/replay/whatif.c]='^(analyze_test_(model|rerank|whatif_thresholds|properties)|test_rule_.*)$'
    [tools/analyze/rules/rule_pauses.c]='^(test_rule_pauses|analyze_golden)$'
    [libintercept/py_frames.c]='^(test_python_lines)$'
    [libintercept/call_sites.c]='^(test_python_lines|test_stacks_e2e)$'
    [tools/analyze/model/py_lines.c]='^(test_python_lines)$'
    [tools/export/json_writer.c]='^(test_json_writer|test_export)$'
    [tools/export/chrome_trace.c]='^(test_export)$'
    [tools/export/text_cache.c]='^(test_export)$'
    [tools/analyze/model/kernel_times.c]='^(analyze_test_kernel_times|analyze_golden|test_report)$'
    [tools/analyze/run/run_diff.c]='^(analyze_golden)$'
    [libintercept/writer.c]='^(test_recorder|test_gpu_timeline|test_shim_e2e)$'
    [tools/analyze/run/run_collectives.c]='^(analyze_test_run_collectives|analyze_golden)$'
    [tools/analyze/model/comm_samples.c]='^(analyze_test_run_collectives|analyze_golden)$'
    [tools/analyze/run/rule_straggler.c]='^(analyze_golden)$'
    [tools/analyze/rules/rule_memory_headroom.c]='^(test_rule_memory_headroom|analyze_golden)$'
    [tools/analyze/rules/rule_exposed_comm.c]='^(test_rule_exposed_comm|analyze_golden)$'
    [tools/analyze/rules/findings.c]='^(analyze_test_rerank|analyze_test_fail_if|analyze_golden)$'
    [tools/analyze/rules/rule_sync_bubble.c]='^(test_rule_sync_bubble|analyze_golden)$'
    [tools/analyze/rules/rule_input_pipeline.c]='^(test_rule_input_pipeline|test_rule_contention|analyze_golden)$'
    [tools/analyze/rules/rule_changes_together.c]='^(test_rule_changes_together|analyze_test_whatif_thresholds|analyze_golden)$'
    [tools/analyze/model/totals.c]='^(analyze_test_model|analyze_test_properties|analyze_golden)$'
    [tools/analyze/model/phases.c]='^(analyze_test_phases|analyze_cost)$'
    [tools/live/http_server.c]='^(live_units|live_serve_input)$'
    [tools/live/counter_floor.c]='^(live_units)$'
    [tools/live/metrics.c]='^(live_serve_input|live_rules|analyze_cost)$'
)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(libintercept/recorder.c libintercept/hooks_copy.c
    libintercept/cupti_timeline.c tools/reader/trace_decode.c tools/analyze/replay/replay.c
    tools/analyze/replay/whatif.c)
work=$(mktemp -d "${TMPDIR:-/tmp}/gw-mutate.XXXXXX")
trap 'rm -rf "$work"' EXIT
# a copy of the tracked tree: the mutants never touch the checkout
mkdir -p "$work/tree"
(cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$work/tree")
src=$work/tree build=$work/build
cmake -S "$src" -B "$build" -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
printf '%-34s %7s %8s %8s %7s\n' file killed survived invalid score
for file in "${files[@]}"; do
    regex=${tests[$file]:-}
    [ -n "$regex" ] || { echo "mutate.sh: no tests listed for $file" >&2; continue; }
    dir=$work/mutants/$(echo "$file" | tr / _)
    mkdir -p "$dir"
    (cd "$dir" && mutate "$src/$file" c --noCheck --mutantDir "$dir" >/dev/null 2>&1) || true
    mapfile -t all < <(ls "$dir"/*.mutant.*.c | sort -V)
    if [ "$sample" -gt 0 ] && [ "${#all[@]}" -gt "$sample" ]; then
        mapfile -t all < <(printf '%s\n' "${all[@]}" | shuf -n "$sample" --random-source=<(yes "$seed"))
    fi
    cp "$src/$file" "$work/original"
    killed=0 survived=0 invalid=0 survivors=""
    for m in "${all[@]}"; do
        cp "$m" "$src/$file"
        if ! cmake --build "$build" -j"$(nproc)" >/dev/null 2>&1; then
            invalid=$((invalid + 1))
        elif (cd "$build" && timeout 300 ctest -R "$regex" --timeout 120 >/dev/null 2>&1); then
            survived=$((survived + 1))
            local_diff=$(diff "$work/original" "$m" || true)
            at=$(head -1 <<<"$local_diff" | grep -o '^[0-9]*')
            was=$(grep -m1 '^<' <<<"$local_diff" | cut -c3- | sed 's/^ *//' || true)
            line=$(grep -m1 '^>' <<<"$local_diff" | cut -c3- | sed 's/^ *//' || true)
            survivors+="  $file:$at: ${was:-(nothing)} -> ${line:-(removed)}"$'\n'
        else
            killed=$((killed + 1))
        fi
        cp "$work/original" "$src/$file"
    done
    cmake --build "$build" -j"$(nproc)" >/dev/null 2>&1 || true
    total=$((killed + survived))
    score=$(awk -v k=$killed -v t=$total 'BEGIN { if (t) printf "%.0f%%", 100 * k / t; else print "-" }')
    printf '%-34s %7d %8d %8d %7s\n' "$file" "$killed" "$survived" "$invalid" "$score"
    [ -z "$survivors" ] || printf 'survivors:\n%s' "$survivors"
done
