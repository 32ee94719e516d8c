#!/usr/bin/env bash
# gpuwatch report on planted-waste examples (simulated GPU timeline): the page is
# self-contained (no script, nothing fetched), holds the plots with their data (bars of
# idle by cause, of the longest intervals and of the kernels with most GPU time, the memory
# line), and every finding of the run; then headless Chromium renders it: the DOM it builds
# has the plots, no console error is logged, and the screenshot is an image of the page.
# usage: test_report.sh GPUWATCH SHIM FAKE_DIR CUPTI EXAMPLE...
set -euo pipefail
gpuwatch=$1 shim=$2 fake_dir=$3 cupti=$4
shift 4
preload=${GW_TEST_PRELOAD_FIRST:+$GW_TEST_PRELOAD_FIRST:}$shim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 stepped=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || fail "no chromium: scripts/deps.sh installs it"
for example in "$@"; do
    name=$(basename "$example")
    GPUWATCH_CUPTI="$cupti" GPUWATCH_OUTPUT="$work/$name" LD_LIBRARY_PATH="$fake_dir" \
        LD_PRELOAD="$preload" "$example" --steps 20 >/dev/null 2>&1 || { fail "$name: the example failed"; continue; }
    "$gpuwatch" report -o "$work/$name.html" "$work/$name" || { fail "$name: report exited $?"; continue; }
    "$gpuwatch" analyze --json "$work/$name" >"$work/$name.json" || true
    verdict=$(python3 - "$work/$name.html" "$work/$name.json" <<'PY'
import json, sys
from html.parser import HTMLParser
class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.external, self.svgs, self.bars, self.points, self.findings = [], [], [], {}, 0, []
        self.svg = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for k in ("src", "href"):
            if k in a and (a[k].startswith("http") or a[k].startswith("//")):
                self.external.append(a[k])
        if tag == "svg":
            self.svg = a.get("id")
            self.svgs.append(self.svg)
        if tag == "rect" and a.get("class") == "bar":
            self.bars[self.svg] = self.bars.get(self.svg, 0) + 1
        if tag == "polyline" and a.get("class") == "series":
            self.points += len(a.get("points", "").split())
        if tag == "div" and "finding" in a.get("class", ""):
            self.findings.append(a.get("data-id"))
page = Page()
page.feed(open(sys.argv[1]).read())
report = json.load(open(sys.argv[2]))
problems = []
if "script" in page.tags or "link" in page.tags or "img" in page.tags:
    problems.append("the page loads something (script, link or img)")
if page.external:
    problems.append("external references: %s" % page.external[:3])
# the step plot shows a steady step: a run whose steps the analysis could not tell apart
# (a machine busy beside it can make them so irregular) has none, and must have none
steady = sum(p["steps"]["steady"] for p in report["processes"])
stepped = ("step",) if steady else ()
for plot in ("idle", "over_time", "memory", "intervals", "copies") + stepped:
    if plot not in page.svgs:
        problems.append("no %s plot" % plot)
if not steady and "step" in page.svgs:
    problems.append("a step plot, with no steady step in the analysis")
if any(page.bars.get(p, 0) < 1 for p in ("idle", "over_time", "intervals", "copies") + stepped):
    problems.append("plots without data: %s" % page.bars)
# the kernels with most GPU time: one bar for each the analysis lists, none left out
kernels = [k for p in report["processes"] for k in p["kernels"]]
if not kernels:
    problems.append("the analysis lists no kernels by GPU time")
elif page.bars.get("kernels", 0) != len(kernels):
    problems.append("%d kernel bars for %d kernels" % (page.bars.get("kernels", 0), len(kernels)))
if page.points < 4:
    problems.append("the memory line has %d points" % page.points)
want = sorted(f["id"] for f in report["risks"] + report["findings"])
if sorted(page.findings) != want:
    problems.append("findings %s, the analysis has %s" % (sorted(page.findings), want))
print("; ".join(problems) if problems else "ok %d findings, bars %s, %d line points%s" % (
    len(want), page.bars, page.points, "" if steady else " (no steady step: no step plot)"))
PY
)
    [[ $verdict == ok* ]] && echo "ok: $name: ${verdict#ok }" || fail "$name: $verdict"
    [[ $verdict == *"no steady step"* ]] || stepped=$((stepped + 1))
    [ -n "$chromium" ] || continue
    # headless Chromium: the DOM it builds, its console, and a screenshot
    (cd "$work" && timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
        --enable-logging=stderr --v=0 --dump-dom "file://$work/$name.html" \
        >"$work/$name.dom" 2>"$work/$name.console") || fail "$name: chromium --dump-dom failed"
    # every plot the page holds (7 with a steady step, 6 without), and no fewer than 6
    n=$(grep -o '<svg id="[a-z_]*"' "$work/$name.dom" | wc -l)
    want=$(grep -o '<svg id="[a-z_]*"' "$work/$name.html" | wc -l)
    [ "$n" -ge "$want" ] && [ "$n" -ge 6 ] ||
        fail "$name: chromium's DOM has $n plots, the page $want (6 or more)"
    if grep -q 'CONSOLE' "$work/$name.console"; then
        fail "$name: console messages: $(grep CONSOLE "$work/$name.console" | head -2)"
    fi
    (cd "$work" && timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
        --hide-scrollbars --window-size=1000,1600 --screenshot="$work/$name.png" \
        "file://$work/$name.html" >/dev/null 2>&1) || fail "$name: chromium --screenshot failed"
    python3 - "$work/$name.png" <<'PY' || fail "$name: the screenshot is not a 1000x1600 PNG"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000, len(data)
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (1000, 1600), (w, h)
PY
    [ -n "${GW_REPORT_SCREENSHOT:-}" ] && cp "$work/$name.png" "$GW_REPORT_SCREENSHOT-$name.png"
done
# (the step plot drawn at least once: of the three examples' runs, one had steady steps)
[ "$stepped" -ge 1 ] || fail "no example's run had a steady step: the step plot went unchecked"
# gpuwatch run --report writes DIR/report.html beside the traces (not in the sanitizer
# build: run puts the shim first in LD_PRELOAD, before the sanitizer runtime must be)
if [ -z "${GW_TEST_PRELOAD_FIRST:-}" ]; then
    GPUWATCH_LIB="$shim" LD_LIBRARY_PATH="$fake_dir" "$gpuwatch" run --report \
        --output "$work/run" -- "$1" --steps 10 >/dev/null 2>"$work/run.err" || fail "run --report exited $?"
    grep -q "(report: $work/run/report.html)" "$work/run.err" || fail "run --report did not say where the report is"
    grep -q '<svg id="idle"' "$work/run/report.html" || fail "run --report: no report.html with plots"
fi
[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all report checks passed"
