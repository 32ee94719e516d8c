#!/usr/bin/env bash
# Findings name the user's Python lines: tests/python/train_ctypes.py reaches the simulated
# driver through ctypes under the shim, with each waste on a line marked `# LINE:<name>`;
# the report (--json) must name those lines, and name no line for calls made on a thread
# without Python frames. Each interpreter found here is tried: one whose C API comes from a
# shared libpython is followed across GIL releases (ctypes.CDLL, like PyTorch's bindings);
# a statically linked one only while the GIL is held (ctypes.PyDLL), and must then name no
# line at all for the released calls rather than a wrong one. Where the shim knows the
# version's frame layout (3.10-3.13) it reads a GIL-released call's frames itself, static or
# not; with GPUWATCH_PY_FRAMES=hooks it follows the releases, the first shared interpreter is
# tried that way too. The pyenv interpreters found are tried beside the one on PATH and the
# system's. A C program gets no Python columns.
# usage: test_python_lines.sh GPUWATCH SHIM FAKE_DIR NATIVE_HELPER C_EXAMPLE
set -euo pipefail
gpuwatch=$1 shim=$2 fake_dir=$3 native=$4 c_example=$5
here=$(cd "$(dirname "$0")" && pwd)
script=$here/train_ctypes.py
# (a sanitizer build's shim is preloaded after its runtime: scripts/sanitize.sh)
preload=${GW_TEST_PRELOAD_FIRST:+$GW_TEST_PRELOAD_FIRST:}$shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

line_of() { grep -n "# LINE:$1\$" "$script" | cut -d: -f1; }
sync_line=$(line_of sync) h2d_line=$(line_of h2d) leak_line=$(line_of leak) oom_line=$(line_of oom)
loop_line=$(line_of loop)

# The interpreters to try: the one on PATH, the system's and pyenv's, each once, by real path.
interpreters=()
pyenv_root=$(pyenv root 2>/dev/null || true)
for candidate in python3 /usr/bin/python3 ${pyenv_root:+"$pyenv_root"/versions/3.1[0-9]*/bin/python3}; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    real=$("$path" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null) || continue
    [[ " ${interpreters[*]-} " == *" $real "* ]] || interpreters+=("$real")
done
if [ ${#interpreters[@]} -eq 0 ]; then
    echo "FAIL: no python3 on this machine"
    exit 1
fi

# run NAME PYTHON ARGS...: the script under the shim, then its analysis as JSON in $work/NAME.json
run() {
    local name=$1 python=$2
    shift 2
    rm -rf "$work/$name"
    if ! GPUWATCH_PY_FRAMES=$frames GPUWATCH_OUTPUT="$work/$name" LD_LIBRARY_PATH="$fake_dir" LD_PRELOAD="$preload" \
        "$python" "$script" --native-helper "$native" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
        fail "$name: the program failed: $(tail -3 "$work/$name.err")"
        return 1
    fi
    "$gpuwatch" analyze --json "$work/$name" >"$work/$name.json"
}

# check NAME FINDING EXPECT: EXPECT is "line:N" (the finding's top line is the script's
# line N, and every line it names is in the script), or "none" (it names no line, and says
# how much had no Python frames). Also "without" (some of it on threads without Python).
check() {
    local name=$1 finding=$2 expect=$3 without=${4-}
    local verdict
    verdict=$(python3 - "$work/$name.json" "$finding" "$expect" "$script" "$without" <<'EOF'
import json, sys
path, finding, expect, script, without = sys.argv[1:6]
report = json.load(open(path))
found = [f for f in report["risks"] + report["findings"] if f["id"] == finding]
if not found:
    print("no %s finding (findings: %s)" % (finding, [f["id"] for f in report["risks"] + report["findings"]]))
    sys.exit()
lines = found[0].get("python_lines")
if lines is None:
    print("%s has no python_lines" % finding)
    sys.exit()
named = lines["lines"]
problems = []
units = {"sync_bubble": "ns", "pageable_h2d": "ns", "input_pipeline": "ns", "leak": "bytes",
         "oom_retry": "calls"}
if lines.get("unit") != units.get(finding, lines.get("unit")):
    problems.append("unit %s, expected %s" % (lines.get("unit"), units[finding]))
if expect == "none":
    if named:
        problems.append("names %s:%s, expected no line" % (named[0]["file"], named[0]["line"]))
    if not lines["without_python"]:
        problems.append("without_python is 0")
else:
    want = int(expect.split(":")[1])
    if not named:
        problems.append("names no line, expected %s" % want)
    else:
        top = named[0]
        if top["file"] != script or top["line"] != want:
            problems.append("top line %s:%s, expected %s:%d" % (top["file"], top["line"], script, want))
        if not top["stack"] or not top["stack"][0].startswith(script):
            problems.append("stack %s does not start in the script" % top["stack"][:1])
        for l in named:
            if l["file"] != script:
                problems.append("names a line outside the script: %s:%s" % (l["file"], l["line"]))
    if without and not lines["without_python"]:
        problems.append("without_python is 0, expected the native thread's share")
print("; ".join(problems) if problems else "ok")
EOF
)
    if [ "$verdict" = ok ]; then
        echo "ok: $name: $finding $expect${without:+ (+ without Python frames)}"
    else
        fail "$name: $finding: $verdict"
    fi
}

# Each interpreter as "PATH FRAMES"; the first shared one again with its releases followed
runs=()
hooked=""
for python in "${interpreters[@]}"; do
    runs+=("$python read")
    # (the whole of ldd's output first: grep -q quitting early would fail the pipe)
    deps=$(ldd "$python" 2>/dev/null || true)
    if [ -z "$hooked" ] && [[ $deps == *libpython* ]]; then
        runs+=("$python hooks")
        hooked=1
    fi
done
for entry in "${runs[@]}"; do
    read -r python frames <<<"$entry"
    deps=$(ldd "$python" 2>/dev/null || true)
    shared=0
    [[ $deps == *libpython* ]] && shared=1
    # GIL releases are followed where the libpython is shared (hooks), or where the shim
    # reads the frames of this version
    minor=$("$python" -c 'import sys; print(sys.version_info[1])')
    follows=$shared
    [ "$frames" = read ] && [ "$minor" -ge 10 ] && [ "$minor" -le 13 ] && follows=1
    tag=$(basename "$python")-$shared-$frames
    echo "== $python ($([ $shared = 1 ] && echo 'shared libpython' || echo 'static libpython'), GPUWATCH_PY_FRAMES=$frames)"
    for gil in hold release; do
        named=1
        [ $gil = release ] && [ $follows = 0 ] && named=0
        want() { if [ $named = 1 ]; then echo "line:$1"; else echo none; fi; }
        if run "$tag-$gil-pageable" "$python" --gil $gil --steps 30; then
            check "$tag-$gil-pageable" pageable_h2d "$(want "$h2d_line")"
            # the shim's own verdict on following GIL releases, in the trace
            said=$(python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["processes"][0]["python"]; print(int(p["follows_gil_releases"]))' "$work/$tag-$gil-pageable.json")
            [ "$said" = "$follows" ] || fail "$tag: the trace says follows_gil_releases=$said, expected $follows"
        fi
        if run "$tag-$gil-input" "$python" --gil $gil --steps 30 --load-ms 4 --leak 1 \
            --batch-bytes 65536; then
            check "$tag-$gil-input" input_pipeline "$(want "$h2d_line")"
            # the batch's fetch: the header of the loop around the line (read from the source)
            if [ $named = 1 ]; then
                got=$(python3 -c 'import json, sys
f = [f for f in json.load(open(sys.argv[1]))["findings"] if f["id"] == "input_pipeline"]
print(f[0]["python_lines"]["lines"][0].get("loop_line", "none") if f and "python_lines" in f[0] else "none")' \
                    "$work/$tag-$gil-input.json")
                [ "$got" = "$loop_line" ] ||
                    fail "$tag-$gil-input: input_pipeline's loop line $got, expected $loop_line"
            fi
            [ $named = 1 ] && check "$tag-$gil-input" leak "line:$leak_line"
        fi
        if run "$tag-$gil-oom" "$python" --gil $gil --steps 30 --batch-bytes 4096 --oom 1; then
            check "$tag-$gil-oom" oom_retry "$(want "$oom_line")"
        fi
        if run "$tag-$gil-sync" "$python" --gil $gil --steps 30 --batch-bytes 4096 \
            --load-ms 0.5 --native-reads 2; then
            check "$tag-$gil-sync" sync_bubble "$(want "$sync_line")" without
        fi
    done
done

# The sites in the trace itself: dump shows the stacks; GIL held, every sync is named.
python=${interpreters[0]} frames=read
run dump "$python" --gil hold --steps 5 --batch-bytes 4096
"$gpuwatch" dump "$work"/dump/*.gwt >"$work/dump.txt"
sites=$(grep -c " pysite .*pyframe0=\"$script:$sync_line read_loss\"" "$work/dump.txt" || true)
[ "$sites" = 5 ] || fail "dump: $sites pysite lines name $script:$sync_line, expected 5 (one per step)"
grep -q "def pystack .*pyframe0=\"$script:$sync_line read_loss\" pyframe1=\"$script:[0-9]* train\"" \
    "$work/dump.txt" || fail "dump: no pystack definition with read_loss <- train"

# GPUWATCH_PY_DEPTH=0 turns stacks off.
rm -rf "$work/off"
GPUWATCH_PY_DEPTH=0 GPUWATCH_OUTPUT="$work/off" LD_LIBRARY_PATH="$fake_dir" LD_PRELOAD="$preload" \
    "$python" "$script" --gil hold --steps 5 >/dev/null 2>&1 || fail "depth 0: the program failed"
n=$("$gpuwatch" dump "$work"/off/*.gwt | grep -c 'pysite\|def pystack' || true)
[ "$n" = 0 ] || fail "GPUWATCH_PY_DEPTH=0: $n Python stack records, expected 0"

# A C program: no Python records, no python_lines.
rm -rf "$work/c"
GPUWATCH_OUTPUT="$work/c" LD_LIBRARY_PATH="$fake_dir" LD_PRELOAD="$preload" "$c_example" >/dev/null 2>&1 ||
    fail "the C example failed"
n=$("$gpuwatch" dump "$work"/c/*.gwt | grep -c 'pysite\|def pystack' || true)
[ "$n" = 0 ] || fail "C program: $n Python stack records, expected 0"
"$gpuwatch" analyze --json "$work/c" >"$work/c.json"
if grep -q python_lines "$work/c.json"; then fail "C program: the report has python_lines"; fi
# ... and its sync finding names its native site: main, where the example synchronizes
where=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
f = [f for f in r["findings"] if f["id"] == "sync_bubble"]
print(f[0]["native_sites"]["sites"][0]["where"] if f and "native_sites" in f[0] else "(none)")' "$work/c.json")
example=$(basename "$c_example")
[ "$where" = "main ($example)" ] || fail "C program: sync_bubble native site '$where', expected 'main ($example)'"

if [ $failures -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "all Python-line checks passed"
