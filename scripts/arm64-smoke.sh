#!/usr/bin/env bash
# Tests the arm64 package's binary under qemu-user (docs/install.md, "Building the packages"; docs/testing.md):
# the decoder over the published reference frames and the captures (output compared byte for byte with the amd64
# binary's), a simulated capture (compared with the amd64 binary's), a replay of that capture and of the bundled
# Android capture through a real mosquitto on a free loopback port with the events checked, check-config on the
# example configuration and on a broken one, and the exit codes 64, 65, 66 and 78.
# Usage: scripts/arm64-smoke.sh [PACKAGE.deb]   (default: .build/deb/trixie/beaconbridge_*_arm64.deb)
# Environment:
#   REF_BIN   the amd64 binary to compare with (default .build/release/beaconbridge, else .build/debug/...,
#             else the trixie amd64 build .build/trixie-amd64/release/beaconbridge, run with its root's ld.so)
#   BB_ROOTS  where scripts/cross-roots.sh keeps the roots; the arm64 sysroot is qemu's library prefix (-L)
# Prints one PASS/FAIL line per check and exits non-zero on any failure. Where qemu-user cannot run at all (no
# binfmt_misc and no qemu-aarch64-static) it prints SKIP with the reason and exits 0.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BB_ROOTS=${BB_ROOTS:-/var/cache/beaconbridge/roots}
SYSROOT="$BB_ROOTS/trixie-arm64-sysroot"
DEB=${1:-$(ls -t "$REPO"/.build/deb/trixie/beaconbridge_*_arm64.deb 2>/dev/null | head -n 1)}
REF_BIN=${REF_BIN:-}
if [ -z "$REF_BIN" ]; then
    for candidate in "$REPO/.build/release/beaconbridge" "$REPO/.build/debug/beaconbridge"; do
        [ -x "$candidate" ] && { REF_BIN=$candidate; break; }
    done
fi
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
[ -n "$QEMU" ] || { echo "SKIP: arm64 smoke: no qemu-aarch64 (Debian package qemu-user-static)"; exit 0; }
[ -n "$DEB" ] && [ -f "$DEB" ] || { echo "FAIL: arm64 smoke: no arm64 package (make deb-arm64)"; exit 1; }
[ -f "$SYSROOT/.beaconbridge-root" ] || { echo "FAIL: arm64 smoke: no arm64 root at $SYSROOT"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-arm64-smoke.XXXXXX")
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
dpkg-deb -x "$DEB" "$WORK/pkg" || { echo "FAIL: arm64 smoke: cannot unpack $DEB"; exit 1; }
BIN="$WORK/pkg/usr/bin/beaconbridge"

passed=0 failed=0
pass() { echo "PASS: arm64 $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: arm64 $*"; failed=$((failed + 1)); }
# The packaged arm64 binary under qemu-user, trixie's arm64 libraries from the root (glibc 2.41, libmosquitto...).
arm() { timeout 300 "$QEMU" -L "$SYSROOT" "$BIN" "$@"; }
REF_LOADER=()
if [ -z "$REF_BIN" ] && [ -x "$REPO/.build/trixie-amd64/release/beaconbridge" ] && [ -d "$BB_ROOTS/trixie-amd64" ]; then
    # Built against glibc 2.41: run with the trixie root's dynamic loader and libraries, natively.
    REF_BIN="$REPO/.build/trixie-amd64/release/beaconbridge"
    REF_LOADER=("$BB_ROOTS/trixie-amd64/usr/lib64/ld-linux-x86-64.so.2" --library-path
        "$BB_ROOTS/trixie-amd64/usr/lib/x86_64-linux-gnu")
fi
ref() { timeout 300 "${REF_LOADER[@]}" "$REF_BIN" "$@"; }
expect_status() { # NAME WANT COMMAND...
    local name=$1 want=$2 got; shift 2
    "$@" >"$WORK/status.out" 2>&1; got=$?
    if [ "$got" = "$want" ]; then pass "$name: exit $got"; else fail "$name: exit $got, want $want ($(head -c 300 "$WORK/status.out"))"; fi
}
# Runs the same arguments on both binaries; the outputs and exit codes must be the same.
same_as_amd64() { # NAME ARGS...
    local name=$1 a r; shift
    arm "$@" >"$WORK/arm.out" 2>"$WORK/arm.err"; a=$?
    if [ -z "$REF_BIN" ]; then
        if [ -s "$WORK/arm.out" ]; then pass "$name: exit $a, $(wc -l <"$WORK/arm.out") lines (no amd64 binary to compare)"
        else fail "$name: exit $a, no output ($(head -c 300 "$WORK/arm.err"))"; fi
        return
    fi
    ref "$@" >"$WORK/ref.out" 2>/dev/null; r=$?
    if [ "$a" = "$r" ] && [ -s "$WORK/arm.out" ] && cmp -s "$WORK/arm.out" "$WORK/ref.out"; then
        pass "$name: exit $a, $(wc -l <"$WORK/arm.out") lines identical to amd64"
    else
        fail "$name: exit $a (amd64 $r), $(diff "$WORK/arm.out" "$WORK/ref.out" | grep -c '^[<>]') differing lines; first: $(diff "$WORK/arm.out" "$WORK/ref.out" | head -n 3 | tr '\n' ' ') $(head -c 200 "$WORK/arm.err")"
    fi
}

echo "arm64 smoke: $(basename "$DEB"), $(file -b "$BIN" | cut -d, -f1-2), qemu $("$QEMU" --version | head -n 1 | awk '{print $3}'), amd64 reference: ${REF_BIN:-none}"
started=$SECONDS

# 1. It runs, and says the same version.
same_as_amd64 "--version" --version

# 2. The decoder over the published reference frames (Tests/Reference/published-frames.json: BTHome, Govee,
#    Ruuvi as the reference decoders' own test suites give them), as the AD bytes a scanner receives.
python3 - "$REPO/Tests/Reference/published-frames.json" >"$WORK/vectors.txt" <<'PY'
import json, sys
for frame in json.load(open(sys.argv[1]))["frames"]:
    out = bytearray()
    name = (frame.get("name") or "").encode()
    if name:
        out += bytes([len(name) + 1, 0x09]) + name
    for company, data in (frame.get("manufacturer_data") or {}).items():
        data = bytes.fromhex(data); company = int(company)
        out += bytes([len(data) + 3, 0xFF, company & 0xFF, company >> 8]) + data
    if frame.get("service_data"):
        data = bytes.fromhex(frame["service_data"])
        out += bytes([len(data) + 3, 0x16, 0xD2, 0xFC]) + data
    if len(out) <= 31:
        print(out.hex())
PY
mapfile -t vectors <"$WORK/vectors.txt"
same_as_amd64 "decode: ${#vectors[@]} reference frames" decode "${vectors[@]}"
same_as_amd64 "decode --hci: an LE Advertising Report event" decode --hci \
    043e2a02010001abcdef1234561e0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010001c5b0

# 3. The captures: the bundled one, and the shared one when it is there.
same_as_amd64 "decode --btsnoop Tests/Fixtures/android-horizon74-btsnoop.log" \
    decode --btsnoop "$REPO/Tests/Fixtures/android-horizon74-btsnoop.log"
shared=""
for candidate in "$REPO/../shared/captures/android-horizon74-btsnoop.log" /work/shared/captures/android-horizon74-btsnoop.log; do
    [ -f "$candidate" ] && { shared=$candidate; break; }
done
if [ -n "$shared" ]; then
    same_as_amd64 "decode --btsnoop shared/captures/android-horizon74-btsnoop.log" decode --btsnoop "$shared"
else
    echo "SKIP: arm64 decode of shared/captures/android-horizon74-btsnoop.log: no shared/ beside the repository"
fi

# 4. The simulator: the demo story's capture, byte for byte the same on both architectures.
arm simulate --scenario "$REPO/config/scenarios/demo.json" --summary-only --capture "$WORK/demo-arm.btsnoop" \
    >/dev/null 2>"$WORK/sim.err"
if [ ! -s "$WORK/demo-arm.btsnoop" ]; then
    fail "simulate --capture: no capture ($(head -c 300 "$WORK/sim.err"))"
elif [ -n "$REF_BIN" ]; then
    ref simulate --scenario "$REPO/config/scenarios/demo.json" --summary-only --capture "$WORK/demo-ref.btsnoop" \
        >/dev/null 2>&1
    if cmp -s "$WORK/demo-arm.btsnoop" "$WORK/demo-ref.btsnoop"; then
        pass "simulate --capture: $(stat -c %s "$WORK/demo-arm.btsnoop") bytes identical to amd64"
    else fail "simulate --capture: differs from amd64"; fi
else pass "simulate --capture: $(stat -c %s "$WORK/demo-arm.btsnoop") bytes"; fi

# 5. check-config and the exit codes.
sed "s#^  path: /var/lib/beaconbridge/outbox.sqlite\$#  path: $WORK/outbox-check.sqlite#" \
    "$REPO/config/beaconbridge.yaml" >"$WORK/example.yaml"
expect_status "check-config config/beaconbridge.yaml" 0 arm check-config --config "$WORK/example.yaml"
expect_status "check-config Tests/Fixtures/config/wrong-values.yaml (78)" 78 \
    arm check-config --config "$REPO/Tests/Fixtures/config/wrong-values.yaml"
expect_status "check-config of a missing file (66)" 66 arm check-config --config "$WORK/missing.yaml"
expect_status "usage error (64)" 64 arm decode --no-such-option
expect_status "malformed advertising bytes (65)" 65 arm decode 02ff
expect_status "decode --btsnoop of a missing capture (66)" 66 arm decode --btsnoop "$WORK/missing.btsnoop"

# 6. Replays through a real mosquitto on a free loopback port, events checked.
MOSQUITTO=$(command -v mosquitto || echo /usr/sbin/mosquitto)
if [ ! -x "$MOSQUITTO" ] || ! command -v mosquitto_sub >/dev/null; then
    fail "replay: mosquitto or mosquitto_sub missing (apt packages mosquitto mosquitto-clients)"
else
    port=""
    for _ in $(seq 50); do
        candidate=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null || { port=$candidate; break; }
    done
    printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest file %s\n' \
        "$(id -un)" "$port" "$WORK/mosquitto.log" >"$WORK/mosquitto.conf"
    "$MOSQUITTO" -c "$WORK/mosquitto.conf" >/dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    replay_check() { # NAME CAPTURE CONFIG-EXTRA: replays CAPTURE with the arm64 binary, prints the subscriber's log
        local name=$1 capture=$2 status
        cat >"$WORK/$name.yaml" <<YAML
gateway:
  id: smoke-$name
  room: lab
regions:
  - name: desk
    match: {format: ibeacon, uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 1, minor: 1}
    enter: {rssi_above: -70}
    exit_period_s: 15
mqtt:
  host: 127.0.0.1
  port: $port
topics:
  home_assistant:
    enabled: true
outbox:
  path: $WORK/$name-outbox.sqlite
YAML
        stdbuf -oL mosquitto_sub -h 127.0.0.1 -p "$port" -v -t "beaconbridge/smoke-$name/#" -t 'homeassistant/#' \
            >"$WORK/$name.mqtt" 2>&1 &
        local sub=$!
        sleep 0.5
        arm replay "$capture" --config "$WORK/$name.yaml" --speed 0 2>"$WORK/$name.log"; status=$?
        sleep 1
        kill "$sub" 2>/dev/null; wait "$sub" 2>/dev/null
        return $status
    }
    if replay_check demo "$WORK/demo-arm.btsnoop"; then
        events=$(grep -c '"kind":"' "$WORK/demo.mqtt"); regions=$(grep -c '"kind":"region"' "$WORK/demo.mqtt")
        if [ "$regions" -gt 0 ]; then pass "replay of the demo story through mosquitto: $events events, $regions region events"
        else fail "replay of the demo story: no region event ($events events; $(tail -n 3 "$WORK/demo.log" | tr '\n' ' '))"; fi
    else fail "replay of the demo story: exit $? ($(tail -n 3 "$WORK/demo.log" | tr '\n' ' '))"; fi
    if replay_check android "$REPO/Tests/Fixtures/android-horizon74-btsnoop.log"; then
        events=$(grep -c '"kind":"' "$WORK/android.mqtt"); discovery=$(grep -c '^homeassistant/' "$WORK/android.mqtt")
        if [ "$events" -gt 0 ]; then pass "replay of Tests/Fixtures/android-horizon74-btsnoop.log: $events events, $discovery discovery messages"
        else fail "replay of the Android capture: no event ($(tail -n 3 "$WORK/android.log" | tr '\n' ' '))"; fi
    else fail "replay of the Android capture: exit $? ($(tail -n 3 "$WORK/android.log" | tr '\n' ' '))"; fi
fi

echo "arm64 smoke: $passed checks passed, $failed failed, in $((SECONDS - started)) s"
[ "$failed" = 0 ]
