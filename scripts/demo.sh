#!/usr/bin/env bash
# `make demo`: replays a simulated story (config/scenarios/demo.json: beacons arriving, moving between near and
# far, one leaving for good, packet loss and a dropout) through the release `beaconbridge` to a private
# mosquitto on a free loopback port, shows every MQTT event as it arrives, then stops everything it started
# and prints a summary. Everything lives in a temp dir that is removed at exit. See docs/demo.md.
#
# Environment: DEMO_SPEED (capture seconds per real second, default 8: the 300 s story takes about 40 s),
# BEACONBRIDGE (the binary, default .build/release/beaconbridge), DEMO_KEEP=1 keeps the temp dir.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BEACONBRIDGE:-$ROOT/.build/release/beaconbridge}"
SCENARIO="$ROOT/config/scenarios/demo.json"
SPEED="${DEMO_SPEED:-8}"
# shellcheck source=demo-config.sh
. "$ROOT/scripts/demo-config.sh"
MOSQUITTO="${MOSQUITTO:-$(command -v mosquitto || echo /usr/sbin/mosquitto)}"

for tool in "$BIN" "$MOSQUITTO" "$(command -v mosquitto_sub || true)"; do
    if [[ -z "$tool" || ! -x "$tool" ]]; then
        echo "demo: missing ${tool:-mosquitto_sub}; run 'make demo' (it builds the binary and installs mosquitto)" >&2
        exit 69
    fi
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/beaconbridge-demo.XXXXXX")"
PIDS=()
# SIGTERM, then SIGKILL after 3 s (a parent may have left SIGTERM blocked in the mask children inherit).
stop_pid() {
    kill "$1" 2>/dev/null || return 0
    for _ in $(seq 30); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
    if [[ "${DEMO_KEEP:-0}" == 1 ]]; then echo "demo: files kept in $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A free loopback port: bind port 0, read what the kernel handed out (bash has no bind, so ask for a random
# high port that nothing listens on, up to 50 tries).
free_port() {
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
PORT="$(free_port)" || { echo "demo: no free loopback port" >&2; exit 69; }

# 1. The broker: loopback only, anonymous, no persistence, logs in the temp dir.
cat >"$WORK/mosquitto.conf" <<CONF
user $(id -un)
listener $PORT 127.0.0.1
allow_anonymous true
persistence false
log_dest file $WORK/mosquitto.log
CONF
"$MOSQUITTO" -c "$WORK/mosquitto.conf" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || { echo "demo: mosquitto did not start" >&2; cat "$WORK/mosquitto.log" >&2; exit 69; }
echo "demo: mosquitto on 127.0.0.1:$PORT (pid ${PIDS[0]})"

# 2. The capture: the scenario's radio traffic as HCI LE Advertising Reports in a btsnoop file.
"$BIN" simulate --scenario "$SCENARIO" --summary-only --capture "$WORK/demo.btsnoop" 2>"$WORK/simulate.txt" >/dev/null
echo "demo: $(grep '^capture:' "$WORK/simulate.txt" | sed "s|$WORK/||")"

# 3. The gateway configuration: the story's regions and named beacons, this broker, a temp outbox
#    (scripts/demo-config.sh, shared with the container stage).
demo_config "$PORT" "$WORK/outbox.sqlite" >"$WORK/beaconbridge.yaml"
if ! "$BIN" check-config --config "$WORK/beaconbridge.yaml" >"$WORK/check-config.txt" 2>&1; then
    echo "demo: the generated configuration is invalid:" >&2
    cat "$WORK/check-config.txt" >&2
    exit 78
fi
sed -n 's/^  - id: \(.*\)$/\1/p; s/^    name: \(.*\)$/\1/p' "$WORK/beaconbridge.yaml" | paste -d ' ' - - >"$WORK/names.txt"

# 4. The subscriber, and a formatter that follows its output until the subscriber exits.
stdbuf -oL mosquitto_sub -h 127.0.0.1 -p "$PORT" -v -t 'beaconbridge/#' -t 'homeassistant/#' >"$WORK/mqtt.log" 2>&1 &
SUB=$!
PIDS+=("$SUB")
AWK=(awk)
awk -W version 2>&1 | grep -qi mawk && AWK=(awk -W interactive)
START="$(awk '/"start_time"/ { gsub(/[^0-9.]/, "", $2); print $2 }' "$SCENARIO")"
tail -n +1 -f --pid="$SUB" "$WORK/mqtt.log" | "${AWK[@]}" -v names="$WORK/names.txt" -v start="${START:-1700000000}" \
    -f "$ROOT/scripts/demo-events.awk" &
FORMATTER=$!
PIDS+=("$FORMATTER")
sleep 0.5

# 5. The gateway: replay the story at DEMO_SPEED through the whole pipeline to the broker.
echo "demo: replaying the 300 s story at speed $SPEED (about $((300 / SPEED)) s); events as they arrive (t = story time):"
began=$SECONDS
"$BIN" replay "$WORK/demo.btsnoop" --config "$WORK/beaconbridge.yaml" --speed "$SPEED" 2>"$WORK/beaconbridge.log" &
GATEWAY=$!
PIDS+=("$GATEWAY")
status=0
wait "$GATEWAY" || status=$?
took=$((SECONDS - began))
sleep 1   # the last messages reach the subscriber

# 6. Stop the subscriber; the formatter sees the end of its output and prints the summary.
stop_pid "$SUB"
wait "$FORMATTER" 2>/dev/null || true
echo "demo: the gateway ran ${took} s and exited with $status"
grep -E 'msg=(stopped|"?capture replayed)' "$WORK/beaconbridge.log" | sed 's/^/  /' || true
if [[ $status -ne 0 ]]; then
    echo "demo: beaconbridge failed; its log:" >&2
    cat "$WORK/beaconbridge.log" >&2
    exit "$status"
fi
if ! grep -q '"kind":"region"' "$WORK/mqtt.log"; then
    echo "demo: no region event arrived; gateway log:" >&2
    cat "$WORK/beaconbridge.log" >&2
    exit 1
fi
