#!/usr/bin/env bash
# Figures for a Raspberry Pi (docs/daemon-bench.md, "arm64"): the trixie arm64 and amd64 builds (same compiler,
# swiftlang 6.0.3, same sources) replaying a generated capture of the daemon bench's load (500 iBeacons, 10
# reports/s each, RSSI -55...-94 dBm with +-4 dB of noise, two regions) at speed 0 through a real mosquitto on a
# free loopback port.
#   - instructions: every instruction the process executes (all threads), counted by QEMU's own TCG in
#     single-step mode (`-singlestep -d nochain,exec`: one logged translation block per executed guest
#     instruction), qemu-aarch64 for the arm64 build and qemu-x86_64 for the amd64 build, so both are counted the
#     same way; per report = (count for N2 reports - count for N1 reports) / (N2 - N1), which removes start-up.
#   - RSS: VmHWM of the arm64 build under qemu-user (qemu's own memory included) and of the amd64 build native, for
#     the N3-report replay; and of `--version` under the same conditions as a baseline.
# Usage: scripts/arm64-figures.sh   (after make deb-arm64 deb-trixie); N1, N2, N3 in the environment.
# CPU-heavy: run it under flock /tmp/bb-build.lock on a shared machine.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BB_ROOTS=${BB_ROOTS:-/var/cache/beaconbridge/roots}
N1=${N1:-1000} N2=${N2:-3000} N3=${N3:-100000}
ARM_BIN="$REPO/.build/trixie-arm64/aarch64-unknown-linux-gnu/release/beaconbridge"
AMD_BIN="$REPO/.build/trixie-amd64/release/beaconbridge"
[ -x "$ARM_BIN" ] && [ -x "$AMD_BIN" ] || { echo "build first: make deb-arm64 deb-trixie" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-arm64-figures.XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT

# The capture: H4 LE Advertising Report events in a btsnoop file, 500 iBeacons round-robin, 0.2 ms apart
# (5,000 reports/s of capture time).
capture() { # FILE REPORTS
    python3 - "$1" "$2" <<'PY'
import random, struct, sys
path, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(33)
uuid = bytes.fromhex("e2c56db5dffb48d2b060d0f5a71096e0")
base = 63_840_000_000_000_000  # microseconds since 0000-01-01 (btsnoop), late 2023
with open(path, "wb") as f:
    f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    for i in range(count):
        beacon = i % 500
        major, minor = beacon // 100, beacon % 100
        rssi = -55 - (beacon * 39) // 499 + rng.randint(-4, 4)
        ad = bytes([2, 1, 6, 26, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + uuid + struct.pack(">HHb", major, minor, -59)
        addr = bytes([beacon & 0xFF, beacon >> 8, 0x33, 0x33, 0x33, 0xC3])
        params = bytes([0x02, 1, 0x00, 0x01]) + addr + bytes([len(ad)]) + ad + struct.pack("b", rssi)
        pkt = bytes([0x04, 0x3E, len(params)]) + params
        f.write(struct.pack(">IIIIq", len(pkt), len(pkt), 3, 0, base + i * 200) + pkt)
PY
}
capture "$WORK/n1.btsnoop" "$N1"; capture "$WORK/n2.btsnoop" "$N2"; capture "$WORK/n3.btsnoop" "$N3"

port=""
for _ in $(seq 50); do
    candidate=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null || { port=$candidate; break; }
done
printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$(id -un)" "$port" >"$WORK/m.conf"
mosquitto -c "$WORK/m.conf" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
config() { # NAME
    cat <<YAML
gateway:
  id: figures-$1
regions:
  - name: near
    match: {format: ibeacon, major: 0}
    enter: {rssi_above: -65}
  - name: heard
    match: {format: ibeacon}
    enter: {rssi_above: -90}
mqtt:
  host: 127.0.0.1
  port: $port
outbox:
  path: $WORK/$1.sqlite
YAML
}

arm_q=(qemu-aarch64-static -L "$BB_ROOTS/trixie-arm64-sysroot")
amd_q=(qemu-x86_64-static -L "$BB_ROOTS/trixie-amd64")
amd_native=("$BB_ROOTS/trixie-amd64/usr/lib64/ld-linux-x86-64.so.2" --library-path
    "$BB_ROOTS/trixie-amd64/usr/lib/x86_64-linux-gnu")

count_insns() { # NAME QEMU... -- BIN CAPTURE: instructions of one replay
    local name=$1; shift
    config "$name" >"$WORK/$name.yaml"
    rm -f "$WORK/$name.sqlite"*
    "$@" -singlestep -d nochain,exec -D /dev/stdout "$BIN" replay "$CAPTURE" --config "$WORK/$name.yaml" --speed 0 \
        2>"$WORK/$name.log" | grep -c '^Trace'
}
for arch in arm64 amd64; do
    if [ $arch = arm64 ]; then BIN=$ARM_BIN; q=("${arm_q[@]}"); else BIN=$AMD_BIN; q=("${amd_q[@]}"); fi
    CAPTURE="$WORK/n1.btsnoop"; c1=$(count_insns "$arch-n1" "${q[@]}")
    CAPTURE="$WORK/n2.btsnoop"; c2=$(count_insns "$arch-n2" "${q[@]}")
    echo "$arch instructions: $c1 for $N1 reports, $c2 for $N2 reports: $(( (c2 - c1) / (N2 - N1) )) per report"
done

hwm() { # NAME CMD...: runs CMD, prints its peak RSS in kB (GNU time: the kernel's ru_maxrss at exit)
    local name=$1; shift
    /usr/bin/time -f '%M %e' -o "$WORK/$name.time" "$@" >/dev/null 2>"$WORK/$name.hwm.log" \
        || echo "($name exited non-zero: $(tail -n 2 "$WORK/$name.hwm.log"))" >&2
    cat "$WORK/$name.time"
}
config arm64-n3 >"$WORK/arm64-n3.yaml"; config amd64-n3 >"$WORK/amd64-n3.yaml"
read -r arm arm_s < <(hwm arm64-n3 "${arm_q[@]}" "$ARM_BIN" replay "$WORK/n3.btsnoop" --config "$WORK/arm64-n3.yaml" --speed 0)
read -r amd amd_s < <(hwm amd64-n3 "${amd_native[@]}" "$AMD_BIN" replay "$WORK/n3.btsnoop" --config "$WORK/amd64-n3.yaml" --speed 0)
read -r armq amdq_s < <(hwm amd64-n3q "${amd_q[@]}" "$AMD_BIN" replay "$WORK/n3.btsnoop" --config "$WORK/amd64-n3.yaml" --speed 0)
read -r arm_v _ < <(hwm arm64-v "${arm_q[@]}" "$ARM_BIN" --version)
read -r amd_v _ < <(hwm amd64-v "${amd_native[@]}" "$AMD_BIN" --version)
read -r amdq_v _ < <(hwm amd64-vq "${amd_q[@]}" "$AMD_BIN" --version)
echo "peak RSS, replay of $N3 reports at speed 0: arm64 under qemu-aarch64 $arm kB ($arm_s s); amd64 native $amd kB ($amd_s s); amd64 under qemu-x86_64 $armq kB ($amdq_s s)"
echo "peak RSS of --version: arm64 under qemu-aarch64 $arm_v kB; amd64 native $amd_v kB; amd64 under qemu-x86_64 $amdq_v kB"
grep -h 'replayed\|stopped' "$WORK"/*-n3.hwm.log | head -n 4 || true
