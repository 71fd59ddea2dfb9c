#!/usr/bin/env bash
# Instructions per second of this machine on a rooms gateway's own work, for the Pi estimate of
# docs/rooms-scale.md: a small site (GATEWAYS=3 gateways, BEACONS=60 beacons, DURATION=60 s, the generator of
# scripts/rooms-scale.sh) replayed twice at speed 1 through one mosquitto; the last gateway (silent: the highest
# id) runs once natively (its CPU seconds: user + system of the finished process, by GNU time) and once under
# `valgrind --tool=callgrind` (every instruction it executes, all
# threads). Same captures, same peers: the same work. Prints both, their ratio (instructions per CPU second
# here) and the instructions per room report (its telemetry's rooms_own_sightings + rooms_peer_sightings).
# CPU-heavy for a minute or two: under the build lock on a shared machine.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
GATEWAYS=${GATEWAYS:-3} BEACONS=${BEACONS:-60} DURATION=${DURATION:-60}
BIN=${BIN:-$REPO/.build/release/beaconbridge}
[ -x "$BIN" ] || { echo "rooms-scale-instructions: build first (or BIN=...)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-rooms-instr.XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
# valgrind gives up on the release build's debug information: every process runs a stripped copy (same code).
strip -o "$WORK/beaconbridge" "$BIN"
BIN=$WORK/beaconbridge
python3 "$REPO/scripts/rooms-scale-scenario.py" "$GATEWAYS" "$BEACONS" "$DURATION" >"$WORK/scenario.json"
"$BIN" simulate --scenario "$WORK/scenario.json" --capture "$WORK/{gateway}.btsnoop" >/dev/null 2>&1
. "$REPO/scripts/rooms-scale-lib.sh"
ids=$(scale_ids "$WORK/scenario.json")
rooms=$(scale_rooms "$WORK/scenario.json")
last=${ids##* }

run() { # LABEL WRAPPER...: one replay of the whole site, the last gateway under the wrapper
    local label=$1
    shift
    scale_broker "$WORK/m.conf"
    local port=$PORT broker=$BROKER
    PIDS+=("$broker")
    mosquitto_sub -p "$port" -t "beaconbridge/$last/telemetry" >"$WORK/$label.telemetry" &
    local sub=$!
    PIDS+=("$sub")
    local pids=()
    for id in $ids; do
        rm -f "$WORK/$id.sqlite"*
        cat >"$WORK/$id.yaml" <<YAML
gateway: {id: $id}
logging: {level: notice}
telemetry: {enabled: true, interval_s: 5}
tracking: {publish: {sighting_interval_s: 1}}
mqtt: {host: 127.0.0.1, port: $port}
outbox: {path: $WORK/$id.sqlite}
rooms: {enabled: true, gateways: {$rooms}, replay_wait_for_gateways: $GATEWAYS, calibration: {enabled: false}}
YAML
        if [ "$id" = "$last" ]; then
            /usr/bin/time -f "%U %S" -o "$WORK/$label.time" "$@" "$BIN" replay "$WORK/$id.btsnoop" --config "$WORK/$id.yaml" \
                --speed 1 >/dev/null 2>"$WORK/$label.err" &
        else
            "$BIN" replay "$WORK/$id.btsnoop" --config "$WORK/$id.yaml" --speed 1 >/dev/null 2>&1 &
        fi
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    sleep 0.5
    kill "$sub" "$broker" 2>/dev/null || true
}
run native
run callgrind valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out"
python3 - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
user, system = map(float, open(work + "/native.time").read().split()[-2:])
instructions = int(re.search(r"Collected : (\d+)", open(work + "/callgrind.err").read()).group(1))

def reports(label):
    last = [json.loads(l) for l in open(work + "/%s.telemetry" % label) if l.startswith("{")][-1]["counters"]
    return last.get("rooms_own_sightings", 0) + last.get("rooms_peer_sightings", 0)

print("native: %.2f s CPU (user %.2f, system %.2f), %d room reports" % (user + system, user, system, reports("native")))
print("callgrind: %d instructions, %d room reports (its last telemetry)" % (instructions, reports("callgrind")))
print("instructions per CPU second here: %.0f M; per room report (start-up included): %.0f" % (
    instructions / (user + system) / 1e6, instructions / max(1, reports("callgrind"))))
PY
