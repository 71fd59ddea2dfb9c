#!/usr/bin/env bash
# Builds (once) the Debian 12 root file system of the systemd stage with debootstrap from Debian's archive and
# packs it as an initramfs archive: the guest kernel unpacks it into its rootfs and runs systemd from it as PID 1
# (no /etc/initrd-release, so systemd runs as the system manager, not as an initrd).
# Usage: rootfs.sh CACHE_DIR   -> prints the path of CACHE_DIR/systemd-rootfs-<key>.cpio
# The key is a hash of this script (which holds the package list) and the mirror: change either and it rebuilds.
set -euo pipefail
CACHE=$1
MIRROR=${SYSTEMD_STAGE_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# avahi-daemon, avahi-utils and iproute2 for the mdns scenario (the ESPHome proxy's announcement).
# The .deb's runtime libraries are preinstalled: the guest has no network, `apt install ./beaconbridge.deb`
# resolves its Depends from what is installed.
PACKAGES="systemd systemd-sysv dbus init-system-helpers kmod procps mosquitto mosquitto-clients sqlite3 \
libbluetooth3 libmosquitto1 libsqlite3-0 libyaml-0-2 libcurl4 libglib2.0-0 libreadline8 libudev1 \
avahi-daemon avahi-utils iproute2"

key=$( { cat "$0"; echo "$MIRROR $SUITE $PACKAGES"; } | md5sum | cut -c1-16)
out="$CACHE/systemd-rootfs-$key.cpio"
if [ -f "$out" ]; then echo "$out"; exit 0; fi

log() { printf '[systemd-stage %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
mkdir -p "$CACHE"
exec 9> "$CACHE/systemd-rootfs.lock"
flock 9
if [ -f "$out" ]; then echo "$out"; exit 0; fi
command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends debootstrap cpio >/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends debootstrap cpio >/dev/null; }
}
root="$CACHE/systemd-rootfs.build"
rm -rf "$root"
start=$(date +%s)
log "debootstrap $SUITE (minbase + $(echo $PACKAGES | wc -w) packages) from $MIRROR into $root"
debootstrap --variant=minbase --include="$(echo $PACKAGES | tr ' ' ,)" "$SUITE" "$root" "$MIRROR" \
    > "$CACHE/systemd-rootfs.log" 2>&1 || { tail -n 30 "$CACHE/systemd-rootfs.log" >&2; log "debootstrap failed"; exit 1; }

# A quiet, fast boot on the serial console: no gettys (the stage's own unit owns ttyS0), no timers, no apt.
for unit in getty@tty1.service serial-getty@ttyS0.service apt-daily.timer apt-daily-upgrade.timer \
    systemd-timesyncd.service e2scrub_all.timer fstrim.timer man-db.timer systemd-tmpfiles-clean.timer \
    systemd-networkd-wait-online.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
echo beaconbridge-stage > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 beaconbridge-stage\n' > "$root/etc/hosts"
: > "$root/etc/machine-id"
# Smaller archive: package caches, lists, documentation and locales are not needed in the guest.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/usr/share/info/*
( cd "$root" && find . -print0 | cpio --null -o -H newc --quiet ) > "$out.tmp"
mv "$out.tmp" "$out"
rm -f "$CACHE"/systemd-rootfs-*.cpio.old
# Other keys' archives go once a day old (not at once: branches with different package lists share the cache).
find "$CACHE" -maxdepth 1 -name 'systemd-rootfs-*.cpio' ! -path "$out" -mtime +0 -delete
rm -rf "$root"
log "root file system ready in $(( $(date +%s) - start )) s: $out ($(du -h "$out" | cut -f1))"
echo "$out"
