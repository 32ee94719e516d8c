#!/usr/bin/env bash
# gpuwatch top: in plain mode (stdout a file) during a traced run, one block a second until
# the process exits, the last block's figures exactly those of `gpuwatch analyze --json` on
# the same traces; on a terminal (tmux: capture-pane) the view is drawn and `q` ends it
# while the run goes on.
#   test_top.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_top.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_top.XXXXXX")
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
. "$(dirname "$0")/lib_live.sh"
TMUX_SOCKET=gwtop$$
cleanup() {
    tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null
    live_cleanup
}
trap cleanup EXIT

# plain mode: top started before the run, ends by itself once the process has exited
timeout 120 "$GPUWATCH" top --gpu-price 2 "$WORK/plain" >"$WORK/top.txt" 2>"$WORK/top.err" &
top_pid=$!
PIDS+=("$top_pid")
live_example "$WORK/plain" dataloader_bound --steps 500
wait "$EXAMPLE_PID" || fail "the example did not run: $(tail -3 "$WORK/plain.log")"
wait "$top_pid"
rc=$?
[ "$rc" -eq 0 ] || fail "top (plain) exit status $rc: $(tail -3 "$WORK/top.err")"
"$GPUWATCH" analyze --json --gpu-price 2 "$WORK/plain" >"$WORK/analyze.json" 2>/dev/null ||
    fail "analyze failed"
blocks=$(grep -c '^== gpuwatch top' "$WORK/top.txt")
[ "$blocks" -ge 2 ] || fail "top printed $blocks blocks"
grep -q '  running  wall' "$WORK/top.txt" || fail "top never showed the process running"
# the last block
awk '/^== gpuwatch top/ { block = "" } { block = block $0 "\n" } END { printf "%s", block }' \
    "$WORK/top.txt" >"$WORK/last.txt"
python3 - "$WORK" <<'PY' || { fail "top's final figures differ from analyze's"; cat "$WORK/last.txt" >&2; }
import json, sys
work = sys.argv[1]
a = json.load(open(f"{work}/analyze.json"))
last = open(f"{work}/last.txt").read()
p = a["processes"][0]
expect = [
    "1 processes, 0 running, 1 with GPU work",
    f"pid {p['pid']}  rank none  exited  wall {p['wall_ns'] / 1e9:.6f} s",
    f"GPU busy {100 * p['gpu_busy_ns'] / p['wall_ns']:5.1f} %  {p['gpu_busy_ns'] / 1e9:.6f} s",
    f"peak 34.0 MiB ({p['memory']['peak_bytes']} B) of 1.0 GiB",
    "memory  in use 0 B,",
    "H2D     pageable 0 B  pinned ",
]
for cause, fig in p["idle"].items():
    expect.append(f"{cause:<15} ")
    expect.append(f"{100 * fig['run_ns'] / p['wall_ns']:5.1f} %  {fig['run_ns'] / 1e9:.6f} s\n")
# (which finding ranks first is the analysis's affair, on a loaded machine too)
top = next((f for f in a["findings"] if f["pid"] == p["pid"]), None)
if top:
    expect.append(f"top finding  {top['id']}: saves {top['saving_ns'] / 1e6:.3f} ms "
                  f"({100 * top['saving_share']:.1f} % of wall), ${top['saving_usd']:.4f}")
else:
    expect.append("top finding  none so far")
bad = [e for e in expect if e not in last]
for e in bad:
    print(f"  not in top's last block: {e!r}")
print(f"  plain: {last.count(chr(10))} lines in the last block, {len(expect)} figures as analyze's")
sys.exit(1 if bad else 0)
PY

# on a terminal: tmux runs top; q ends it while the traced program still runs
live_example "$WORK/tty" dataloader_bound --steps 3000
tmux -L "$TMUX_SOCKET" new-session -d -x 100 -y 45 \
    "'$GPUWATCH' top '$WORK/tty'; echo \$? >'$WORK/tty.rc'" ||
    fail "tmux did not start"
# a capture can land while top redraws (beside a CPU hog it once held the header and the
# running line but not yet the rest): wait for a whole view, then check each part of it
WANT=('  running  wall' 'GPU busy' 'input_pipeline' 'top finding' '(q quits)' 'H2D')
pane_whole() {
    tmux -L "$TMUX_SOCKET" capture-pane -p >"$WORK/pane.txt" 2>/dev/null || return 1
    local want
    for want in "${WANT[@]}"; do grep -qF -- "$want" "$WORK/pane.txt" || return 1; done
}
until_ok 60 "top to draw its whole view of the running process in tmux" pane_whole
for want in "${WANT[@]}"; do
    grep -qF -- "$want" "$WORK/pane.txt" || fail "tmux pane lacks '$want'"
done
[ "$(grep -c '^== gpuwatch top' "$WORK/pane.txt")" -eq 1 ] ||
    fail "the terminal view is not redrawn in place: $(grep -c '^== gpuwatch top' "$WORK/pane.txt") headers"
tmux -L "$TMUX_SOCKET" send-keys q
until_ok 20 "top to end on q" test -s "$WORK/tty.rc"
[ "$(cat "$WORK/tty.rc" 2>/dev/null)" == 0 ] || fail "top (tmux) exit status $(cat "$WORK/tty.rc" 2>/dev/null)"
kill -0 "$EXAMPLE_PID" 2>/dev/null || fail "the example had ended before q: the test did not test q"
kill "$EXAMPLE_PID" 2>/dev/null

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all passed"
