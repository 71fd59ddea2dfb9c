#!/usr/bin/env bash
# The ESPHome stage of `make test` (docs/home-assistant.md, "ESPHome Bluetooth proxy"): the built gateway as
# an ESPHome Bluetooth proxy, driven by the pinned aioesphomeapi (the client Home Assistant uses) in a cached
# virtual environment, against a private mosquitto on a free loopback port: plaintext and encrypted (right
# key, wrong key, no key, wrong password), device info with the proxy flags, every advertisement of the real
# capture Tests/Fixtures/android-horizon74-btsnoop.log with address, type, RSSI and bytes, two clients at
# once, a client that stops reading, malformed/oversized/out-of-order frames, the allow-list, and the proxy's
# counters in the MQTT telemetry (queue drops rising while a client does not read, refusals, bad-frame closes).
#
#   scripts/esphome-stage.sh [BEACONBRIDGE_BINARY]      (default .build/debug/beaconbridge)
#
# The environment lives in ~/.cache/beaconbridge/venv-esphome-<hash of Tests/ESPHome/esphome.txt>
# (scripts/reference-venv.sh; BEACONBRIDGE_CACHE overrides the directory). Without PyPI (and no cached
# environment) it prints a SKIP line and succeeds. Time: about 35 s once the environment exists (the first
# install about 20 s). ESPHOME_STAGE_KEEP=1 keeps the work directory.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/.build/debug/beaconbridge}"
START=$SECONDS
[[ -x "$BIN" ]] || { echo "esphome-stage: $BIN is not built (run swift build first)" >&2; exit 69; }
[[ -x /usr/sbin/mosquitto ]] || { echo "esphome-stage: /usr/sbin/mosquitto missing (make deps installs it)" >&2; exit 69; }

python=$("$ROOT/scripts/reference-venv.sh" "$ROOT/Tests/ESPHome/esphome.txt" | sed 's/^SKIP: esphome reference/SKIP: esphome-stage/')
if [[ "$python" == SKIP:* ]]; then
    echo "$python"
    exit 0
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/beaconbridge-esphome-stage.XXXXXX")"
cleanup() {
    local status=$?
    if [[ "${ESPHOME_STAGE_KEEP:-0}" == 1 || $status -ne 0 ]]; then
        echo "esphome-stage: files kept in $WORK"
        if [[ $status -ne 0 ]]; then
            for f in "$WORK"/*.log; do [[ -f "$f" ]] && { echo "--- tail of $f"; tail -15 "$f"; }; done
        fi
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
echo "esphome-stage: aioesphomeapi $(grep '^aioesphomeapi==' "$ROOT/Tests/ESPHome/esphome.txt" | cut -d= -f3), gateway $BIN"
status=0
timeout 600 "$python" -u "$ROOT/Tests/ESPHome/esphome_stage.py" "$BIN" "$WORK" \
    "$ROOT/Tests/Fixtures/android-horizon74-btsnoop.log" || status=$?
echo "esphome-stage: finished in $((SECONDS - START)) s (status $status)"
exit $status
