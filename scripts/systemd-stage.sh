#!/usr/bin/env bash
# The systemd stage (docs/e2e.md, "The systemd stage"): the Debian package installed in a Debian 12 guest that
# boots with systemd as PID 1 in QEMU, checked as a user would (scripts/systemd-stage/guest.sh lists the
# scenarios). Each scenario prints PASS or FAIL; exit 0 only when every one passed.
# Usage: scripts/systemd-stage.sh [--start|--finish]
# Environment: SYSTEMD_STAGE_CACHE (root file system cache, default ~/.cache/beaconbridge), E2E_CACHE (kernel,
# shared with scripts/e2e.sh, default .build/e2e-cache), SYSTEMD_STAGE_ACCEL (kvm|tcg), SYSTEMD_STAGE_TIMEOUT
# (seconds for the guest, default 1200 under TCG, 600 under KVM: a hang guard; quiet it needs about 215 s under TCG,
# under `stress-ng --cpu 2` more than 420), SYSTEMD_STAGE_DEB (an already built package),
# SYSTEMD_STAGE_KEEP=1 (keep the run directory).
# Prints "SKIP systemd-stage: <reason>" and exits 0 only where QEMU cannot run at all.
# In `make test` the stage runs beside the e2e stage (each guest is one TCG vCPU, so the two take a core each):
#   scripts/systemd-stage.sh --start    install the harness's packages (foreground, so that the e2e stage's own
#                                       install finds nothing to do), then start the stage in the background
#                                       (output to .build/systemd-stage.log) and return at once
#   scripts/systemd-stage.sh --finish   wait for it (at most SYSTEMD_STAGE_WAIT_S, default 1800 s), print its
#                                       output and exit with its status; without a background run, the same as
#                                       no option
# A run left by an interrupted `make test` is stopped by the next --start (its process group).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
HERE="$REPO/scripts/systemd-stage"
# shellcheck source=e2e/host-lib.sh
. "$REPO/scripts/e2e/host-lib.sh"
BG_STATE="$REPO/.build/systemd-stage.background"
BG_LOG="$REPO/.build/systemd-stage.log"
bg_stop_stale() {
    local pid
    pid=$(sed -n 's/^pid=//p' "$BG_STATE/info" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -- "-$pid" 2>/dev/null || true; fi
    rm -rf "$BG_STATE"
}
case "${1:-}" in
--start)
    bg_stop_stale
    if e2e_can_run_qemu > /dev/null && [ "$(id -u)" = 0 ]; then
        E2E_PACKAGES="$E2E_PACKAGES debootstrap" e2e_install_deps || echo "systemd stage: could not install the harness packages (the stage will say why)"
    fi
    mkdir -p "$BG_STATE"
    setsid bash -c '"$1" > "$2" 2>&1; echo $? > "$3.tmp"; mv "$3.tmp" "$3"' _ "$0" "$BG_LOG" "$BG_STATE/status" \
        < /dev/null > /dev/null 2>&1 &
    printf 'pid=%s\nstarted=%s\n' "$!" "$(date +%s)" > "$BG_STATE/info"
    echo "systemd stage: started in the background (pid $!, log .build/systemd-stage.log)"
    exit 0 ;;
--finish)
    if [ -f "$BG_STATE/info" ]; then
        bg_started=$(sed -n 's/^started=//p' "$BG_STATE/info")
        pid=$(sed -n 's/^pid=//p' "$BG_STATE/info")
        limit=${SYSTEMD_STAGE_WAIT_S:-1800}
        waited_from=$SECONDS
        while [ ! -f "$BG_STATE/status" ]; do
            if ! kill -0 "$pid" 2>/dev/null; then
                sleep 1
                [ -f "$BG_STATE/status" ] && break
                cat "$BG_LOG"; rm -rf "$BG_STATE"
                echo "FAIL systemd-stage: the background run (pid $pid) ended without a status"
                exit 1
            fi
            if [ $((SECONDS - waited_from)) -ge "$limit" ]; then
                bg_stop_stale
                cat "$BG_LOG"
                echo "FAIL systemd-stage: the background run did not end within $limit s of the wait (stopped)"
                exit 1
            fi
            sleep 2
        done
        status=$(cat "$BG_STATE/status")
        ended=$(stat -c %Y "$BG_STATE/status")
        rm -rf "$BG_STATE"
        cat "$BG_LOG"
        echo "systemd stage: the background run took $((ended - bg_started)) s; waited $((SECONDS - waited_from)) s for it here"
        exit "$status"
    fi
    shift ;;
"") ;;
*) echo "usage: $0 [--start|--finish]" >&2; exit 64 ;;
esac
E2E_CACHE=${E2E_CACHE:-$REPO/.build/e2e-cache}
SD_CACHE=${SYSTEMD_STAGE_CACHE:-$HOME/.cache/beaconbridge}
# The kernel modules the guest loads (with their dependencies): Bluetooth and btvirt's crypto needs; dummy (an
# interface with multicast for avahi-daemon in the mdns scenario).
E2E_MODULES="bluetooth hci_vhci af_alg algif_hash algif_skcipher ecb cmac dummy"
stage_start=$(e2e_now)
log() { printf '[systemd-stage %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; echo "FAIL systemd-stage: $*"; exit 1; }

if ! reason=$(e2e_can_run_qemu); then
    echo "SKIP systemd-stage: this machine cannot run QEMU: $reason"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    # debootstrap and packing a root file system with its owners need root.
    echo "SKIP systemd-stage: needs root (debootstrap) and this is $(id -un)"
    exit 0
fi
mkdir -p "$E2E_CACHE" "$SD_CACHE"
E2E_PACKAGES="$E2E_PACKAGES debootstrap"
e2e_install_deps || die "could not install the harness packages ($E2E_PACKAGES)"

# The two packages: the one `make deb` builds, and an upgrade (new version, changed unit) from the same binary.
RUN=$(mktemp -d "${TMPDIR:-/tmp}/bb-systemd-stage.XXXXXX")
cleanup() {
    if [ -n "${QEMU_PID:-}" ] && kill -0 "$QEMU_PID" 2>/dev/null; then kill "$QEMU_PID"; wait "$QEMU_PID" 2>/dev/null; fi
    if [ -n "${SYSTEMD_STAGE_KEEP:-}" ]; then log "kept $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t=$(e2e_now)
if [ -n "${SYSTEMD_STAGE_DEB:-}" ]; then deb1=$SYSTEMD_STAGE_DEB; else
    deb1=$(DEB_OUT="$REPO/.build/deb" "$REPO/scripts/deb.sh" | tail -1) || die "make deb failed"
fi
[ -f "$deb1" ] || die "no package at $deb1"
version1=$(dpkg-deb -f "$deb1" Version)
dpkg-deb -x "$deb1" "$RUN/deb1"
sed 's|^WatchdogSec=.*|&\n# Upgrade check of the systemd stage: this unit differs from the installed one.\nEnvironment=BEACONBRIDGE_UNIT_REVISION=2|' \
    "$REPO/config/beaconbridge.service" > "$RUN/upgrade.service"
deb2=$(DEB_OUT="$RUN/deb2-out" DEB_BIN="$RUN/deb1/usr/bin/beaconbridge" DEB_VERSION="$version1+stage2" \
    DEB_UNIT="$RUN/upgrade.service" DEB_LINTIAN=0 "$REPO/scripts/deb.sh" | tail -1) || die "building the upgrade package failed"
log "packages $(basename "$deb1") and $(basename "$deb2") in $(e2e_elapsed "$t") s"

t=$(e2e_now)
rootfs=$("$HERE/rootfs.sh" "$SD_CACHE") || die "could not build the Debian 12 root file system"
log "root file system $(basename "$rootfs") ready in $(e2e_elapsed "$t") s"
e2e_fetch_kernel || die "could not fetch the Debian kernel"

# Per-run overlay, appended to the cached root file system archive: modules, btvirt/hcitool/hciconfig (their
# only libraries, libc and libudev, are in the guest), the packages, the test script and the unit that runs it.
ov="$RUN/overlay"
# (Debian 12 has a merged /usr: /lib is a symlink to usr/lib. An archive entry for a directory where the root
# file system has a symlink would replace the symlink, so everything goes below usr/.)
kmods="$ov/usr/lib/modules/$E2E_KVER"
mkdir -p "$kmods" "$ov/usr/bin" "$ov/bbtest" "$ov/etc/systemd/system/multi-user.target.wants"
order=$(e2e_module_order) || die "kernel modules not found"
for rel in $order; do
    mkdir -p "$kmods/$(dirname "$rel")"
    cp "$E2E_KROOT/lib/modules/$E2E_KVER/$rel" "$kmods/$rel"
done
cp "$E2E_KROOT/lib/modules/$E2E_KVER"/modules.{builtin,builtin.modinfo,order} "$kmods/" 2>/dev/null
depmod -b "$ov/usr" "$E2E_KVER" || die "depmod failed"
for tool in btvirt hcitool hciconfig; do cp -L "/usr/bin/$tool" "$ov/usr/bin/"; done
cp "$deb1" "$ov/bbtest/beaconbridge-1.deb"
cp "$deb2" "$ov/bbtest/beaconbridge-2.deb"
cp "$HERE/guest.sh" "$HERE"/*.yaml "$ov/bbtest/"
cp "$REPO/scripts/e2e/guest-lib.sh" "$ov/bbtest/e2e-guest-lib.sh"
install -m 0644 "$HERE/bb-stage.service" "$ov/etc/systemd/system/bb-stage.service"
install -D -m 0644 "$HERE/mosquitto-stage.conf" "$ov/etc/mosquitto/conf.d/stage.conf"
ln -s ../bb-stage.service "$ov/etc/systemd/system/multi-user.target.wants/bb-stage.service"
( cd "$ov" && find . -print0 | cpio --null -o -H newc --quiet -R 0:0 ) > "$RUN/overlay.cpio" || die "cpio failed"
cat "$rootfs" "$RUN/overlay.cpio" > "$RUN/initrd.cpio"

# Accelerator: KVM when it works here (a short probe boot, cached per host kernel), else TCG.
accel=${SYSTEMD_STAGE_ACCEL:-}
if [ -z "$accel" ]; then
    accel=tcg
    probe="$SD_CACHE/kvm-probe-$(uname -r)"
    if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
        if [ ! -f "$probe" ]; then
            log "probing KVM (one boot of at most 20 s, cached in $probe)"
            timeout 20 qemu-system-x86_64 -accel kvm -machine pc -cpu max -m 512 -smp 1 -nodefaults -display none \
                -no-reboot -monitor none -serial "file:$RUN/kvm-probe.log" -kernel "$E2E_KERNEL" \
                -append "console=ttyS0 panic=-1 rdinit=/nonexistent" > "$RUN/kvm-probe.qemu.log" 2>&1
            if grep -q "Linux version" "$RUN/kvm-probe.log" && ! grep -q "KVM internal error" "$RUN/kvm-probe.qemu.log"; then
                echo kvm > "$probe"; else echo tcg > "$probe"; fi
        fi
        accel=$(cat "$probe")
    fi
fi
if [ "$accel" = kvm ]; then timeout=${SYSTEMD_STAGE_TIMEOUT:-600}; else timeout=${SYSTEMD_STAGE_TIMEOUT:-1200}; fi
log "kernel $E2E_KVER, accel $accel, initramfs $(du -h "$RUN/initrd.cpio" | cut -f1), ready in $(e2e_elapsed "$stage_start") s"

console="$RUN/console.log"
: > "$console"
t=$(e2e_now)
qemu-system-x86_64 -accel "$accel" -machine pc -cpu "${E2E_CPU:-max}" -m "${SYSTEMD_STAGE_MEM:-1536}" -smp 1 \
    -nodefaults -display none -no-reboot -monitor none -serial "file:$console" \
    -kernel "$E2E_KERNEL" -initrd "$RUN/initrd.cpio" \
    -append "console=ttyS0 loglevel=4 panic=-1 rdinit=/sbin/init systemd.show_status=error bbstage.accel=$accel" \
    > "$RUN/qemu.log" 2>&1 &
QEMU_PID=$!
status=""
while kill -0 "$QEMU_PID" 2>/dev/null; do
    sleep 1
    if [ "$(awk -v s="$t" -v n="$(e2e_now)" 'BEGIN { print int(n - s) }')" -ge "$timeout" ]; then
        log "guest timed out after ${timeout} s"; kill "$QEMU_PID"; status=timeout; break
    fi
done
wait "$QEMU_PID" 2>/dev/null
guest_seconds=$(e2e_elapsed "$t")
echo "----- systemd stage guest (SYSTEMD-STAGE lines; full console: $console) -----"
tr -d '\r' < "$console" | grep -a '^SYSTEMD-STAGE' || true
echo "-----"
exit_line=$(tr -d '\r' < "$console" | sed -n 's/^SYSTEMD-STAGE-EXIT=\([0-9]*\).*/\1/p' | tail -1)
passes=$(tr -d '\r' < "$console" | grep -ac '^SYSTEMD-STAGE: PASS ')
fails=$(tr -d '\r' < "$console" | grep -ac '^SYSTEMD-STAGE: FAIL ')
expected=$(grep -c '^scenario ' "$HERE/guest.sh")
verdict=PASS
if [ -n "$status" ] || [ -z "$exit_line" ] || [ "$exit_line" != 0 ] || [ "$fails" != 0 ] || [ "$passes" -lt "$expected" ]; then
    verdict=FAIL
    tr -d '\r' < "$console" | grep -av '^SYSTEMD-STAGE' | tail -n 60
    SYSTEMD_STAGE_KEEP=1
fi
echo "===== systemd stage: $verdict ($passes of $expected scenarios passed, $fails failed; guest ${guest_seconds} s under $accel, stage $(e2e_elapsed "$stage_start") s) ====="
[ "$verdict" = PASS ]
