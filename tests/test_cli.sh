#!/usr/bin/env bash
# CLI test: gpuwatch dump / stats / run on traces written by make_sample_trace (the shim's
# own encoder). Usage: test_cli.sh PATH/TO/gpuwatch PATH/TO/make_sample_trace
# Exits non-zero on the first failed check.
set -u

GPUWATCH=${1:?usage: test_cli.sh GPUWATCH MAKE_SAMPLE_TRACE}
MAKE_SAMPLE=${2:?usage: test_cli.sh GPUWATCH MAKE_SAMPLE_TRACE}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
checks=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
    checks=$((checks + 1))
    [ "$2" == "$3" ] || fail "$1: expected '$3', got '$2'"
}

# expect_grep WHAT PATTERN FILE  (fixed string)
expect_grep() {
    checks=$((checks + 1))
    grep -qF -- "$2" "$3" || fail "$1: '$2' not found in $3"
}

# expect_rc WHAT EXPECTED COMMAND...
expect_rc() {
    local what=$1 want=$2
    shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    expect_eq "$what (exit status)" "$rc" "$want"
}

"$MAKE_SAMPLE" "$WORK/sample.gwt" || { echo "FAIL: make_sample_trace" >&2; exit 1; }

# ---- dump ----
expect_rc "dump sample" 0 "$GPUWATCH" dump "$WORK/sample.gwt"
cp "$WORK/out" "$WORK/dump.txt"
expect_eq "dump stderr is empty" "$(wc -c <"$WORK/err")" 0
expect_grep "header pid/host" "# pid 4242 ppid 1 host samplehost" "$WORK/dump.txt"
expect_grep "header cmdline" "# cmdline python train.py --epochs 1" "$WORK/dump.txt"
expect_grep "header rank" "# rank unset local_rank unset world_size unset" "$WORK/dump.txt"
expect_grep "header device" '# device 0 name "NVIDIA Simulated GPU" total_mem 85899345920 free_at_start 84000000000' "$WORK/dump.txt"
expect_grep "header clock" "# clock monotonic start_ns 1000000000 realtime_minus_trace_ns 1700000000000000000" "$WORK/dump.txt"
expect_grep "header cupti" "# cupti not_tried host-side tracing only" "$WORK/dump.txt"
expect_eq "cuLaunchKernel lines" "$(grep -c '^[0-9-]* [0-9]* call cuLaunchKernel ' "$WORK/dump.txt")" 1000
expect_eq "cuLaunchKernel_ptsz lines" "$(grep -c ' call cuLaunchKernel_ptsz ' "$WORK/dump.txt")" 500
expect_eq "cuLaunchKernelEx lines (tid 101)" "$(grep -c '^[0-9]* 101 call cuLaunchKernelEx ' "$WORK/dump.txt")" 200
expect_eq "all call lines" "$(grep -c '^[0-9-]* [0-9]* call ' "$WORK/dump.txt")" 1846
expect_eq "forward launches" "$(grep -c 'call cuLaunchKernel 4000 0 kernel=forward_300us grid=64,1,1 block=256,1,1 smem=0 stream=1 call=0x64[0-9a-f]\{8\}$' "$WORK/dump.txt")" 600
expect_eq "backward launches" "$(grep -c 'kernel=backward_600us grid=128,1,1 block=128,1,1 smem=4096 stream=1 call=0x64[0-9a-f]\{8\}$' "$WORK/dump.txt")" 400
expect_eq "quoted kernel name" "$(grep -c 'call cuLaunchKernel_ptsz 3000 0 kernel="optimizer step \\"adam\\"" grid=1,1,1 block=32,1,1 smem=0 stream=2 call=0x64[0-9a-f]\{8\}$' "$WORK/dump.txt")" 500
expect_eq "first line after the header" "$(grep -v '^#' "$WORK/dump.txt" | grep ' call ' | head -1)" "10000 100 call cuInit 100000 0 call=0x6400000000"
expect_grep "proc details" "20000 100 call cuGetProcAddress_v2 900 0 symbol=cuLaunchKernel version=12000 flags=0 outcome=substituted" "$WORK/dump.txt"
expect_grep "failed alloc" "150000 100 call cuMemAlloc_v2 20000 2 ptr=0x0 bytes=1099511627776 stream=0 error=CUDA_ERROR_OUT_OF_MEMORY" "$WORK/dump.txt"
expect_eq "pageable HtoD copies" "$(grep -c 'call cuMemcpyHtoDAsync_v2 2000 0 bytes=4096 dir=HtoD host=pageable stream=1 dst=0x7f0000000000 src=0x55' "$WORK/dump.txt")" 50
expect_eq "pinned DtoH copies" "$(grep -c 'call cuMemcpyDtoH_v2 100000 0 bytes=1048576 dir=DtoH host=pinned stream=0 dst=0x56000000 src=0x7f0000200000 call=0x64[0-9a-f]\{8\}$' "$WORK/dump.txt")" 50
expect_eq "lost line" "$(grep -c '^[0-9]* 100 lost - - - count=7$' "$WORK/dump.txt")" 1
expect_eq "shape definitions" "$(grep -c '^- 0 def shape - - id=' "$WORK/dump.txt")" 3
expect_grep "end line" "# end calls 1846 errors 1 lost_events 7 lost_chunks 0 damage 0" "$WORK/dump.txt"
# columns: every event line has at least 6 fields and numeric time/tid/dur/result for calls
expect_eq "malformed call lines" "$(awk '$3 == "call" && ($1 !~ /^-?[0-9]+$/ || $2 !~ /^[0-9]+$/ || $5 !~ /^[0-9]+$/ || $6 !~ /^[0-9]+$/)' "$WORK/dump.txt" | wc -l)" 0
# call ids: tid << 32 | number, numbered 0, 1, 2... per thread in file order
expect_grep "failed alloc call id" "error=CUDA_ERROR_OUT_OF_MEMORY call=0x640000000e" "$WORK/dump.txt"
expect_eq "call ids in sequence per thread" "$(awk '$3 == "call" { id = $NF; sub(/^call=/, "", id); want = sprintf("0x%x%08x", $2, n[$2]++); if (id != want) bad++ } END { print bad + 0, n[100], n[101] }' "$WORK/dump.txt")" "0 1645 201"
expect_eq "no GPU or NVTX lines in a host-only trace" "$(grep -c -E '^[^#][^ ]* [0-9]+ (gpu_|correlation|range_|mark)' "$WORK/dump.txt")" 0
expect_grep "end line GPU figures" "unknown_records 0 gpu_kernels 0 gpu_memcpys 0 gpu_memsets 0 gpu_lost 0 correlations 0 nvtx 0" "$WORK/dump.txt"
expect_rc "dump --no-defs" 0 "$GPUWATCH" dump --no-defs "$WORK/sample.gwt"
expect_eq "no def lines with --no-defs" "$(grep -c ' def ' "$WORK/out")" 0
expect_rc "dump --absolute" 0 "$GPUWATCH" dump --absolute "$WORK/sample.gwt"
expect_grep "absolute time" "1000010000 100 call cuInit 100000 0" "$WORK/out"

# ---- stats --json ----
expect_rc "stats --json" 0 "$GPUWATCH" stats --json "$WORK/sample.gwt"
cp "$WORK/out" "$WORK/stats.json"
expect_grep "json cuLaunchKernel" '"cuLaunchKernel": {"count": 1000, "errors": 0, "total_ns": 4000000, "mean_ns": 4000}' "$WORK/stats.json"
expect_grep "json cuLaunchKernel_ptsz" '"cuLaunchKernel_ptsz": {"count": 500, "errors": 0, "total_ns": 1500000, "mean_ns": 3000}' "$WORK/stats.json"
expect_grep "json cuMemAlloc_v2" '"cuMemAlloc_v2": {"count": 10, "errors": 1, "total_ns": 200000, "mean_ns": 20000}' "$WORK/stats.json"
expect_grep "json totals" '"totals": {"traces": 1, "events": 1846, "errors": 1, "lost_events": 7, "lost_chunks": 0, "damage_reports": 0, "file_bytes": '"$(stat -c %s "$WORK/sample.gwt")" "$WORK/stats.json"
expect_grep "json wall span" '"wall_span_ns": 16450000,' "$WORK/stats.json"
expect_grep "json top kernel" '{"name": "forward_300us", "launches": 800, "total_ns": 3400000}' "$WORK/stats.json"
expect_grep "json escaped kernel" '{"name": "optimizer step \"adam\"", "launches": 500' "$WORK/stats.json"
expect_grep "json device" '"device": {"ordinal": 0, "name": "NVIDIA Simulated GPU", "total_mem": 85899345920, "free_at_start": 84000000000}' "$WORK/stats.json"
expect_grep "json rank null" '"rank": null' "$WORK/stats.json"
expect_eq "json api entries" "$(grep -c '^  "cu[A-Za-z0-9_]*": {"count": ' "$WORK/stats.json")" 14
expect_grep "json long name" '"cuDevicePrimaryCtxRetain": {"count": 1, "errors": 0, "total_ns": 3000, "mean_ns": 3000}' "$WORK/stats.json"
expect_grep "dump long name" "40000 100 call cuDevicePrimaryCtxRetain 3000 0 device=0 ctx=0xc7c8" "$WORK/dump.txt"
if command -v python3 >/dev/null; then
    checks=$((checks + 1))
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["apis"]["cuLaunchKernelEx"]["count"] == 200; assert d["totals"]["events"] == 1846' "$WORK/stats.json" || fail "stats --json is not valid JSON with the expected values"
fi
expect_grep "json host only (trace)" '"wall_span_ns": 16450000, "host_only": true, "gpu": {"kernels": 0, "memcpys": 0, "memsets": 0, "lost": 0, "correlations": 0, "busy_ns": 0, "sampled_windows": 0, "devices": []}, "nvtx": {"records": 0, "ranges": 0, "marks": 0}, "shim": null}' "$WORK/stats.json"
expect_grep "json host only (totals)" '"host_only": true, "gpu_kernels": 0, "gpu_memcpys": 0, "gpu_memsets": 0, "gpu_lost": 0, "gpu_busy_ns": 0, "nvtx_ranges": 0},' "$WORK/stats.json"
expect_grep "json no GPU kernels" '"top_gpu_kernels": [],' "$WORK/stats.json"
expect_grep "json no memcpy/memset" '"memcpy": [],
"memset": []
}' "$WORK/stats.json"

# ---- stats (text), several traces ----
cp "$WORK/sample.gwt" "$WORK/sample2.gwt"
expect_rc "stats text, two traces" 0 "$GPUWATCH" stats "$WORK/sample.gwt" "$WORK/sample2.gwt"
expect_grep "text totals" "traces 2  events 3692  errors 2  lost events 14" "$WORK/out"
expect_eq "text long name row" "$(awk '$1 == "cuDevicePrimaryCtxRetain" {print $2}' "$WORK/out")" 2
expect_eq "text cuLaunchKernel row" "$(awk '$1 == "cuLaunchKernel" {print $2, $3, $4}' "$WORK/out")" "2000 0 8000000"
expect_grep "text host only line" "  host only: no GPU records  cupti not_tried (host-side tracing only)" "$WORK/out"
expect_grep "text totals host only" "host only: no GPU records" "$WORK/out"
expect_rc "stats --top 1" 0 "$GPUWATCH" stats --json --top 1 "$WORK/sample.gwt"
expect_eq "one top kernel" "$(grep -c '"launches": ' "$WORK/out")" 1

# ---- the GPU timeline (make_sample_trace --gpu; the figures are in its comment) ----
"$MAKE_SAMPLE" "$WORK/gpu.gwt" --gpu || fail "make_sample_trace --gpu"
expect_rc "dump gpu sample" 0 "$GPUWATCH" dump "$WORK/gpu.gwt"
cp "$WORK/out" "$WORK/gdump.txt"
expect_eq "dump gpu stderr is empty" "$(wc -c <"$WORK/err")" 0
expect_grep "gpu header" " features host_calls,gpu_activity,nvtx" "$WORK/gdump.txt"
expect_grep "gpu header cupti" "# cupti active" "$WORK/gdump.txt"
expect_eq "host calls unchanged" "$(grep -c '^[0-9-]* [0-9]* call ' "$WORK/gdump.txt")" 1846
count_kind() { awk -v k="$1" '$3 == k' "$WORK/gdump.txt" | wc -l; }
expect_eq "gpu_kernel lines" "$(count_kind gpu_kernel)" 1700
expect_eq "gpu_memcpy lines" "$(count_kind gpu_memcpy)" 100
expect_eq "gpu_memset lines" "$(count_kind gpu_memset)" 10
expect_eq "gpu_lost lines" "$(count_kind gpu_lost)" 1
expect_eq "correlation lines" "$(count_kind correlation)" 1800
expect_eq "range_push lines" "$(count_kind range_push)" 20
expect_eq "range_pop lines" "$(count_kind range_pop)" 20
expect_grep "stream definition with its CUPTI id" "- 0 def stream - - id=2 handle=0x6000 cupti_stream=14" "$WORK/gdump.txt"
expect_grep "GPU shape definition" "- 0 def shape - - id=12 kernel=backward_600us func=0x0 grid=128,1,1 block=128,1,1 smem=4096 regs=64 static_smem=0" "$WORK/gdump.txt"
expect_grep "first kernel line" "200000 102 gpu_kernel - 300000 - kernel=forward_300us grid=64,1,1 block=256,1,1 smem=0 regs=32 static_smem=1024 device=0 stream=1 cupti_stream=13 corr=1000 graph=0" "$WORK/gdump.txt"
expect_grep "first correlation line" "- 102 correlation - - - corr=1000 call=0x640000000f" "$WORK/gdump.txt"
expect_grep "the call it names" "160000 100 call cuLaunchKernel 4000 0 kernel=forward_300us grid=64,1,1 block=256,1,1 smem=0 stream=1 call=0x640000000f" "$WORK/gdump.txt"
expect_grep "pageable HtoD line" "479100000 102 gpu_memcpy - 2048 - bytes=4096 kind=HtoD src=pageable dst=device device=0 stream=1 cupti_stream=13 corr=2700 graph=0" "$WORK/gdump.txt"
expect_grep "legacy stream: no STREAM definition" "480200000 102 gpu_memcpy - 65536 - bytes=1048576 kind=DtoH src=device dst=pinned device=0 stream=- cupti_stream=7 corr=2750 graph=0" "$WORK/gdump.txt"
expect_grep "memset line" "200000 102 gpu_memset - 10000 - bytes=1048576 mem=device device=1 stream=- cupti_stream=21 corr=0 graph=0" "$WORK/gdump.txt"
expect_grep "gpu_lost line" "490200000 102 gpu_lost - - - count=3" "$WORK/gdump.txt"
expect_grep "range_push line" "160001 100 range_push - - - domain=- name=step" "$WORK/gdump.txt"
expect_grep "range_start line" "160001 100 range_start - - - domain=io name=load range=1" "$WORK/gdump.txt"
expect_grep "mark line" "5160001 100 mark - - - domain=- name=checkpoint" "$WORK/gdump.txt"
expect_grep "range_end line (other thread)" "2010006 101 range_end - - - range=1" "$WORK/gdump.txt"
expect_grep "gpu end line" "unknown_records 0 gpu_kernels 1700 gpu_memcpys 100 gpu_memsets 10 gpu_lost 3 correlations 1800 nvtx 43" "$WORK/gdump.txt"
# every GPU record with a correlation id leads to exactly the host call that issued it:
# kernels to launches on the same stream, copies to copies of the same direction
expect_eq "corr -> correlation -> call joins" "$(awk '
    function val(k,   i) { for (i = 7; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    $3 == "call" { api[val("call")] = $4; cstream[val("call")] = val("stream"); next }
    $3 == "correlation" { link[val("corr")] = val("call"); next }
    $3 == "gpu_kernel" || $3 == "gpu_memcpy" { g[++n] = $0 }
    END {
        for (i = 1; i <= n; i++) {
            $0 = g[i]; c = link[val("corr")]; a = api[c]
            if ($3 == "gpu_kernel" && a ~ /^cuLaunchKernel/ && cstream[c] == val("stream")) ok++
            else if ($3 == "gpu_memcpy" && val("kind") == "HtoD" && a == "cuMemcpyHtoDAsync_v2" && cstream[c] == val("stream")) ok++
            else if ($3 == "gpu_memcpy" && val("kind") == "DtoH" && a == "cuMemcpyDtoH_v2") ok++
            else bad++
        }
        print ok + 0, bad + 0
    }' "$WORK/gdump.txt")" "1800 0"

expect_rc "stats --json gpu" 0 "$GPUWATCH" stats --json "$WORK/gpu.gwt"
cp "$WORK/out" "$WORK/gstats.json"
expect_grep "json gpu trace figures" '"host_only": false, "gpu": {"kernels": 1700, "memcpys": 100, "memsets": 10, "lost": 3, "correlations": 1800, "busy_ns": 472606432, "sampled_windows": 0, "devices": [{"device": 0, "busy_ns": 472506432, "span_ns": 484965536, "kernels": 1700, "memcpys": 100, "memsets": 0, "kernel_ns": 530000000, "memcpy_ns": 3379200, "memset_ns": 0, "late": 0, "late_ns": 0}, {"device": 1, "busy_ns": 100000, "span_ns": 190000, "kernels": 0, "memcpys": 0, "memsets": 10, "kernel_ns": 0, "memcpy_ns": 0, "memset_ns": 100000, "late": 0, "late_ns": 0}]}, "nvtx": {"records": 43, "ranges": 21, "marks": 1}, "shim": null}' "$WORK/gstats.json"
expect_grep "json gpu cupti" '"cupti": "active", "cupti_reason": "", "events": 1846, "errors": 1, "lost_events": 7' "$WORK/gstats.json"
expect_grep "json gpu totals" '"host_only": false, "gpu_kernels": 1700, "gpu_memcpys": 100, "gpu_memsets": 10, "gpu_lost": 3, "gpu_busy_ns": 472606432, "nvtx_ranges": 21},' "$WORK/gstats.json"
expect_grep "json top gpu kernels" '"top_gpu_kernels": [
  {"name": "backward_600us", "count": 400, "total_ns": 240000000, "mean_ns": 600000},
  {"name": "forward_300us", "count": 800, "total_ns": 240000000, "mean_ns": 300000},
  {"name": "optimizer step \"adam\"", "count": 500, "total_ns": 50000000, "mean_ns": 100000}
],' "$WORK/gstats.json"
expect_grep "json memcpy pageable HtoD" '{"kind": "HtoD", "src": "pageable", "dst": "device", "count": 50, "bytes": 204800, "total_ns": 102400, "gb_per_s": 2.000}' "$WORK/gstats.json"
expect_grep "json memcpy pinned DtoH" '{"kind": "DtoH", "src": "device", "dst": "pinned", "count": 50, "bytes": 52428800, "total_ns": 3276800, "gb_per_s": 16.000}' "$WORK/gstats.json"
expect_grep "json memset" '{"memory": "device", "count": 10, "bytes": 10485760, "total_ns": 100000, "gb_per_s": 104.858}' "$WORK/gstats.json"
expect_grep "json host top kernels unchanged" '{"name": "forward_300us", "launches": 800, "total_ns": 3400000}' "$WORK/gstats.json"
if command -v python3 >/dev/null; then
    checks=$((checks + 1))
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["traces"][0]
assert t["host_only"] is False and d["totals"]["host_only"] is False
assert [x["busy_ns"] for x in t["gpu"]["devices"]] == [472506432, 100000]
assert d["memcpy"][0]["gb_per_s"] == 2.0 and d["memcpy"][1]["gb_per_s"] == 16.0
assert [k["name"] for k in d["top_gpu_kernels"]] == ["backward_600us", "forward_300us", "optimizer step \"adam\""]
assert d["totals"]["events"] == 1846 and d["apis"]["cuLaunchKernel"]["count"] == 1000
' "$WORK/gstats.json" || fail "stats --json (gpu) is not valid JSON with the expected values"
fi
expect_rc "stats text gpu" 0 "$GPUWATCH" stats "$WORK/gpu.gwt"
expect_grep "text gpu totals" "gpu kernels 1700  memcpys 100  memsets 10  gpu records lost 3  gpu busy 0.472606 s  nvtx ranges 21" "$WORK/out"
expect_grep "text gpu trace line" "  cupti active  gpu kernels 1700  memcpys 100  memsets 10  lost 3  correlations 1800  nvtx ranges 21  marks 1" "$WORK/out"
expect_grep "text device 0" "  gpu 0: busy 0.472506 s of 0.484966 s (97.4 %)  kernels 1700 (0.530000 s)  memcpys 100 (0.003379 s)  memsets 0 (0.000000 s)" "$WORK/out"
expect_eq "text top GPU kernel" "$(awk '/^top kernels by GPU time/ { getline; getline; print; exit }' "$WORK/out")" "       400      240000000       600000  backward_600us"
expect_eq "text memcpy rows" "$(awk '$1 == "HtoD" || $1 == "DtoH" {print $1, $2, $3, $4, $5, $6, $7}' "$WORK/out" | tr '\n' ';')" "HtoD pageable device 50 204800 102400 2.000;DtoH device pinned 50 52428800 3276800 16.000;"
expect_rc "stats gpu and host-only traces" 0 "$GPUWATCH" stats --json "$WORK/gpu.gwt" "$WORK/sample.gwt"
expect_grep "mixed totals: not host only" '"host_only": false, "gpu_kernels": 1700' "$WORK/out"
expect_eq "one host-only trace of two" "$(grep -c '"host_only": true' "$WORK/out")" 1

# the generator of large traces (for timing): 250 rounds of four calls, 16 of every 20
# rounds launches and 2 copies (12 whole cycles and 10 launch rounds: 808 launches, 96 copies)
"$MAKE_SAMPLE" "$WORK/big.gwt" --events 1000 --gpu || fail "make_sample_trace --events"
expect_rc "stats on a generated trace" 0 "$GPUWATCH" stats --json "$WORK/big.gwt"
expect_grep "generated trace counts" '"events": 1000, "errors": 0' "$WORK/out"
expect_grep "generated trace GPU counts" '"gpu": {"kernels": 808, "memcpys": 96, "memsets": 0, "lost": 0, "correlations": 904' "$WORK/out"

# ---- damage ----
damage=$("$MAKE_SAMPLE" "$WORK/damaged.gwt" --damage) || fail "make_sample_trace --damage"
read -r _ damaged_offset damaged_calls <<<"$damage"
expect_rc "dump damaged" 1 "$GPUWATCH" dump "$WORK/damaged.gwt"
expect_grep "crc damage report" "damaged.gwt: offset $damaged_offset: chunk (tid " "$WORK/err"
expect_grep "crc damage report says crc" "expected crc32 0x" "$WORK/err"
expect_grep "lost chunk report" "1 chunk of this thread lost" "$WORK/err"
expect_eq "intact calls still printed" "$(grep -c '^[0-9-]* [0-9]* call ' "$WORK/out")" "$((1846 - damaged_calls))"
expect_rc "stats damaged" 1 "$GPUWATCH" stats --json "$WORK/damaged.gwt"
expect_grep "stats damaged json" '"lost_chunks": 1, "damage_reports": 2' "$WORK/out"

head -c 17 "$WORK/sample.gwt" >"$WORK/short.gwt"
expect_rc "dump short file" 1 "$GPUWATCH" dump "$WORK/short.gwt"
expect_grep "short file message" "short.gwt: offset 0: expected a 1024-byte header, file has 17 bytes" "$WORK/err"
expect_eq "nothing on stdout for a rejected file" "$(wc -c <"$WORK/out")" 0
expect_rc "stats on a missing file" 1 "$GPUWATCH" stats "$WORK/missing.gwt"
expect_grep "missing file named" "missing.gwt" "$WORK/err"

# ---- usage ----
expect_rc "no command" 2 "$GPUWATCH"
expect_rc "unknown command" 2 "$GPUWATCH" frobnicate
expect_grep "unknown command message" "unknown command 'frobnicate'" "$WORK/err"
expect_rc "dump without trace" 2 "$GPUWATCH" dump
expect_rc "dump two traces" 2 "$GPUWATCH" dump "$WORK/sample.gwt" "$WORK/sample.gwt"
expect_rc "dump bad option" 2 "$GPUWATCH" dump --bogus "$WORK/sample.gwt"
expect_rc "stats without trace" 2 "$GPUWATCH" stats --json
expect_rc "stats bad --top" 2 "$GPUWATCH" stats --top x "$WORK/sample.gwt"
expect_rc "run without command" 2 "$GPUWATCH" run --output "$WORK/t"
for cmd in run dump stats; do
    expect_rc "$cmd --help" 0 "$GPUWATCH" "$cmd" --help
    expect_grep "$cmd --help text" "usage: gpuwatch $cmd" "$WORK/out"
done
expect_rc "top-level --help" 0 "$GPUWATCH" --help
expect_grep "command table" "stats" "$WORK/out"

# ---- run (mechanics; the shim itself is tested elsewhere) ----
# GPUWATCH_LIB names a file that does not exist: the loader warns and runs the program.
export GPUWATCH_LIB="$WORK/no-such-shim.so"
expect_rc "run exit status" 3 "$GPUWATCH" run --output "$WORK/traces" -- sh -c 'echo "$GPUWATCH_OUTPUT|$LD_PRELOAD"; exit 3'
expect_eq "run environment" "$(cat "$WORK/out")" "$(cd "$WORK" && pwd -P)/traces|$WORK/no-such-shim.so"
expect_eq "output directory created" "$([ -d "$WORK/traces" ] && echo yes)" yes
expect_grep "run says nothing was written" "no trace file was written" "$WORK/err"
LD_PRELOAD="/x/other.so" expect_rc "run keeps LD_PRELOAD" 0 "$GPUWATCH" run -o "$WORK/traces" -- sh -c 'echo "$LD_PRELOAD"'
expect_eq "preload order" "$(cat "$WORK/out")" "$WORK/no-such-shim.so:/x/other.so"
expect_rc "run lists new traces" 0 "$GPUWATCH" run --no-analyze --output "$WORK/traces" -- cp "$WORK/sample.gwt" "$WORK/traces/host-1.gwt"
expect_grep "listed trace" "$(cd "$WORK" && pwd -P)/traces/host-1.gwt  $(stat -c %s "$WORK/sample.gwt") bytes  1846 events  (lost: 7 events, 0 chunks)" "$WORK/err"
expect_rc "run lists only new traces" 0 "$GPUWATCH" run --output "$WORK/traces" -- cp "$WORK/sample.gwt" "$WORK/traces/host-2.gwt"
expect_eq "only the new file listed" "$(grep -c 'host-[12].gwt' "$WORK/err")" 1
expect_rc "run killed child" 143 "$GPUWATCH" run --output "$WORK/traces" -- sh -c 'kill -TERM $$'
expect_rc "run missing program" 127 "$GPUWATCH" run --output "$WORK/traces" -- "$WORK/no-such-program"
# SIGTERM to gpuwatch reaches the child
"$GPUWATCH" run --output "$WORK/traces" -- sleep 30 >/dev/null 2>&1 &
run_pid=$!
# the signal goes once the child runs (its handler is in place before the fork), not after
# a pause that guesses how long that takes; the deadline only bounds a hang
child=""
for ((i = 0; i < 600; i++)); do
    child=$(pgrep -P "$run_pid" -x sleep || true)
    [ -z "$child" ] || break
    sleep 0.05
done
checks=$((checks + 1))
[ -n "$child" ] || fail "SIGTERM forwarded: no child after 30 s"
kill -TERM "$run_pid"
wait "$run_pid"
rc=$?
expect_eq "SIGTERM forwarded (exit status)" "$rc" 143
checks=$((checks + 1))
! kill -0 "$child" 2>/dev/null || { fail "SIGTERM forwarded: the child kept running"; kill "$child"; }
unset GPUWATCH_LIB

echo "test_cli: $checks checks, $failures failures"
[ "$failures" -eq 0 ]
