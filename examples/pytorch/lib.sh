# What run_all.sh and overhead.sh share; sourced after setting `prog` (the script's name for
# its messages).
#   pt_setup "$@": from the arguments [GPUWATCH] [-- ARGS for every script], sets here (this
#   folder), gw (default ./build/tools/gpuwatch), py (PYTHON, default python3) and pt_args
#   (the ARGS); stops with status 2 unless gw runs and that interpreter's torch sees a GPU.
#   step_time_ms LOG: the steady-state step time a script printed last in LOG (empty: none).

die() { echo "$prog: $*" >&2; exit 2; }

pt_setup() {
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    gw=./build/tools/gpuwatch
    if [ $# -gt 0 ] && [ "$1" != "--" ]; then gw=$1; shift; fi
    [ "${1:-}" = "--" ] && shift
    pt_args=("$@")
    py=${PYTHON:-python3}
    [ -x "$gw" ] || die "no gpuwatch at $gw (build it with bash scripts/build.sh, or pass its path)"
    "$py" - "$prog" <<'PY' || die "no usable CUDA device (PYTHON=$py must import a CUDA build of torch that sees a GPU)"
import sys
prog = sys.argv[1]
try:
    import torch
except ImportError as e:
    sys.exit(f"{prog}: cannot import torch: {e}")
if not torch.cuda.is_available():
    sys.exit(f"{prog}: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no CUDA device")
print(f"{prog}: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}",
      file=sys.stderr)
PY
}

step_time_ms() { grep -o 'step_time_ms=[0-9.]*' "$1" | tail -n 1 | cut -d= -f2; }
