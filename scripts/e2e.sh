#!/usr/bin/env bash
# BeaconBridge end-to-end tests through the real Linux BlueZ stack in a QEMU guest (see docs/e2e.md).
# Usage: scripts/e2e.sh [scenario...]   (default: every directory under Tests/E2E/scenarios)
# Environment: E2E_BIN (beaconbridge binary, default .build/release/beaconbridge), E2E_TESTPEER (the test GATT
# peripheral, default beaconbridge-testpeer beside E2E_BIN), E2E_CACHE (default
# .build/e2e-cache), E2E_ACCEL (kvm|tcg|kvm:tcg), E2E_TIMEOUT (seconds per guest, default 300), E2E_KEEP=1,
# E2E_KERNEL_SUITE (the Debian suite whose kernel the guests boot: trixie, the default, or host).
# The guest deadlines are hang guards, not speed checks: under `stress-ng --cpu 2` a guest takes 2-3 times as long.
# Exits 0 when every scenario passed, 1 otherwise; prints "SKIP" and exits 0 only when QEMU cannot run here.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
HERE="$REPO/scripts/e2e"
SCENARIOS_DIR="$REPO/Tests/E2E/scenarios"
# shellcheck source=e2e/host-lib.sh
. "$HERE/host-lib.sh"

E2E_CACHE=${E2E_CACHE:-$REPO/.build/e2e-cache}
E2E_BIN=${E2E_BIN:-$REPO/.build/release/beaconbridge}
E2E_TESTPEER=${E2E_TESTPEER:-$(dirname "$E2E_BIN")/beaconbridge-testpeer}
E2E_TIMEOUT=${E2E_TIMEOUT:-300}
# The guests boot Debian 13's kernel (6.12, what Raspberry Pi OS ships today); the systemd stage boots Debian 12's
# own (6.1). 6.1's Bluetooth teardown can corrupt a list when an LE connect fails as its socket closes (seen once,
# under load: kernel BUG in hci_chan_del from l2cap_sock_release; docs/e2e.md).
export E2E_KERNEL_SUITE=${E2E_KERNEL_SUITE:-trixie}
stage_start=$(e2e_now)

if ! reason=$(e2e_can_run_qemu); then
    echo "SKIP e2e: this machine cannot run QEMU: $reason"
    exit 0
fi
mkdir -p "$E2E_CACHE"
e2e_install_deps || e2e_die "could not install the harness packages ($E2E_PACKAGES)"
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP e2e: qemu-system-x86_64 unavailable after install"; exit 0; }

if [ ! -x "$E2E_BIN" ]; then
    e2e_log "building $E2E_BIN"
    ( cd "$REPO" && swift build -c release --static-swift-stdlib --product beaconbridge -Xswiftc -warnings-as-errors ) || e2e_die "build failed"
fi
if [ ! -x "$E2E_TESTPEER" ]; then
    e2e_log "building $E2E_TESTPEER"
    ( cd "$REPO" && swift build -c release --static-swift-stdlib --product beaconbridge-testpeer -Xswiftc -warnings-as-errors ) \
        || e2e_die "build of the test peripheral failed"
fi

if [ $# -gt 0 ]; then scenarios=("$@"); else
    scenarios=(); for d in "$SCENARIOS_DIR"/*/; do scenarios+=("$(basename "$d")"); done
fi

e2e_fetch_kernel || e2e_die "could not fetch the Debian kernel"
e2e_build_base "$HERE" || e2e_die "could not build the base initramfs"
# Keep the logs of the last few runs only.
ls -dt "$E2E_CACHE"/run.* 2>/dev/null | tail -n +4 | xargs -r rm -rf
E2E_RUN=$(mktemp -d "$E2E_CACHE/run.XXXXXX")
cleanup() {
    # Only what this script started: the guest's QEMU and the test broker.
    if [ -n "${E2E_QEMU_PID:-}" ] && kill -0 "$E2E_QEMU_PID" 2>/dev/null; then kill "$E2E_QEMU_PID"; fi
    e2e_stop_broker
    [ -n "${E2E_KEEP:-}" ] || rm -rf "$E2E_RUN/overlay" "$E2E_RUN/initrd.cpio"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
e2e_build_overlay "$E2E_BIN" "$E2E_RUN/overlay.cpio" "$SCENARIOS_DIR" "$E2E_TESTPEER" || e2e_die "could not build the overlay"
cat "$E2E_BASE_CPIO" "$E2E_RUN/overlay.cpio" > "$E2E_RUN/initrd.cpio"
e2e_choose_accel "$E2E_RUN/initrd.cpio"
e2e_log "kernel $E2E_KVER ($(basename "$E2E_KERNEL")), accel $E2E_ACCEL, initramfs $(du -h "$E2E_RUN/initrd.cpio" | cut -f1), ready in $(e2e_elapsed "$stage_start") s"

failed=0; summary=()
for scenario in "${scenarios[@]}"; do
    dir="$SCENARIOS_DIR/$scenario"
    if [ ! -f "$dir/guest.sh" ]; then summary+=("FAIL $scenario (no such scenario)"); failed=1; continue; fi
    mkdir -p "$E2E_RUN/$scenario"
    : > "$E2E_RUN/mqtt.log"
    e2e_start_broker || e2e_die "could not start mosquitto"
    t0=$(e2e_now)
    e2e_boot "$scenario" "$E2E_RUN/initrd.cpio" "$E2E_TIMEOUT"; status=$?
    boot_seconds=$(e2e_elapsed "$t0")
    sleep 0.5
    e2e_stop_broker
    cp "$E2E_RUN/console.log" "$E2E_RUN/mqtt.log" "$E2E_RUN/$scenario/" 2>/dev/null
    console="$E2E_RUN/$scenario/console.log"
    echo "----- guest console, scenario $scenario (E2E lines) -----"
    tr -d '\r' < "$console" | grep -E '^(E2E|beaconbridge)' || true
    echo "-----"
    verdict=PASS
    if [ "$status" != 0 ]; then
        verdict=FAIL; e2e_log "$scenario: guest status $status (124 timeout, 125 no E2E-EXIT line); full console: $console"
        tail -n 40 "$console"
    elif [ -x "$dir/check.sh" ]; then
        CONSOLE_LOG="$console" MQTT_LOG="$E2E_RUN/$scenario/mqtt.log" "$dir/check.sh" || verdict=FAIL
    fi
    [ "$verdict" = PASS ] || failed=1
    summary+=("$verdict $scenario (guest ${boot_seconds} s)")
done
echo "===== e2e summary (stage $(e2e_elapsed "$stage_start") s, logs in $E2E_RUN) ====="
printf '%s\n' "${summary[@]}"
exit $failed
