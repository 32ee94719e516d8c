# Shared by the tests of gpuwatch serve, the shipped rules and dashboard, and gpuwatch top:
# a traced example on the simulated GPU, gpuwatch serve on a free loopback port, a real
# Prometheus server scraping it. Source it after setting BUILD and WORK and defining
# fail(). Every wait has a deadline; none is a fixed sleep.

GPUWATCH=$BUILD/tools/gpuwatch
SHIM=$BUILD/libintercept/libgpuwatch.so
FAKE=$BUILD/tests/fakecuda
CUPTI=$BUILD/tests/fakecupti/libcupti.so.13
PIDS=()
live_cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$WORK"
}

# until_ok SECONDS WHAT CMD...: runs CMD every 0.1 s until it succeeds; fails after SECONDS.
until_ok() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            fail "timed out waiting for $what"
            return 1
        fi
        sleep 0.1
    done
}

# live_example OUT NAME ARGS...: starts the example traced into OUT (whole GPU timeline),
# in the background; EXAMPLE_PID.
live_example() {
    local out=$1 name=$2
    shift 2
    env GPUWATCH_TIMELINE=full FAKECUDA_SPIN_WAIT=1 FAKECUDA_MOVE_BYTES=0 \
        LD_LIBRARY_PATH="$FAKE" GPUWATCH_CUPTI="$CUPTI" LD_PRELOAD="${GW_TEST_PRELOAD_FIRST:+$GW_TEST_PRELOAD_FIRST:}$SHIM" \
        GPUWATCH_OUTPUT="$out" "$BUILD/examples/example_$name" "$@" >"$out.log" 2>&1 &
    EXAMPLE_PID=$!
    PIDS+=("$EXAMPLE_PID")
}

# live_serve DIR [OPTIONS...]: gpuwatch serve on a free loopback port (it picks, says
# which); SERVE_PORT.
live_serve() {
    local dir=$1
    shift
    "$GPUWATCH" serve --listen 127.0.0.1:0 "$@" "$dir" 2>"$WORK/serve.err" &
    PIDS+=("$!")
    until_ok 30 "gpuwatch serve to listen" grep -q 'listening on port' "$WORK/serve.err" ||
        return 1
    SERVE_PORT=$(grep -o 'listening on port [0-9]*' "$WORK/serve.err" | grep -o '[0-9]*$')
}

# A free loopback port (the kernel's pick, released: another program may take it before
# Prometheus does, so live_prometheus tries again).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# live_prometheus TARGET_PORT [RULES_FILE]: a Prometheus server (temporary data directory,
# scraping 127.0.0.1:TARGET_PORT every second), ready; PROM (its base URL).
live_prometheus() {
    local target=$1 rules=${2:-} try
    cat >"$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpuwatch
    static_configs:
      - targets: ['127.0.0.1:$target']
YML
    [ -n "$rules" ] && printf 'rule_files:\n  - %s\n' "$rules" >>"$WORK/prometheus.yml"
    for try in 1 2 3 4 5; do
        local port
        port=$(free_port)
        rm -rf "$WORK/prom-data"
        prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom-data" \
            --web.listen-address="127.0.0.1:$port" >"$WORK/prometheus.log" 2>&1 &
        local pid=$!
        PIDS+=("$pid")
        PROM=http://127.0.0.1:$port
        local deadline=$((SECONDS + 60))
        while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
            curl -sf "$PROM/-/ready" >/dev/null 2>&1 && return 0
            sleep 0.1
        done
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        grep -q 'address already in use' "$WORK/prometheus.log" || break
    done
    fail "prometheus did not start: $(tail -3 "$WORK/prometheus.log")"
    return 1
}

# prom_query EXPR: one line per series of an instant query, "LABELS VALUE" (labels
# k=v,... sorted, without __name__, instance and job).
prom_query() {
    curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
for r in d["data"]["result"]:
    m = {k: v for k, v in r["metric"].items() if k not in ("__name__", "instance", "job")}
    v = r["value"][1] if "value" in r else " ".join(x[1] for x in r["values"])
    print(",".join(f"{k}={m[k]}" for k in sorted(m)) or "-", v)'
}

# prom_target_up: 0 once Prometheus has scraped gpuwatch serve successfully.
prom_target_up() { [ "$(prom_query 'up{job="gpuwatch"}' | cut -d' ' -f2)" == 1 ]; }
