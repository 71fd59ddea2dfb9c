#!/usr/bin/env bash
# Creates and caches a small Debian 13 (trixie) root whose only purpose is its Python (3.13, with venv and
# ensurepip): the Home Assistant stage's second run (scripts/ha-stage-trixie.sh) installs the newest Home Assistant
# Core that supports Python 3.13 into a virtual environment and runs it chrooted in this root. A root of its own,
# beside the cross build's (scripts/cross-roots.sh), so that neither package list re-creates the other.
#   ROOTS/trixie-python    debootstrap --variant=minbase trixie, then apt in a chroot: the packages below.
# Usage: scripts/python-root.sh          prints the root's path (creates it first when missing or out of date)
# Environment:
#   BB_ROOTS    where the roots live (default /var/cache/beaconbridge/roots)
#   BB_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
# Idempotent: the root is re-created only when its package list changes or a previous creation did not finish;
# creation is serialised by flock on ROOTS/trixie-python.lock, and a new root is made in a scratch directory and
# renamed into place, so a reader never sees half a root. Needs root (debootstrap, chroot) and debootstrap (installed
# here when missing).
set -euo pipefail
BB_ROOTS=${BB_ROOTS:-/var/cache/beaconbridge/roots}
BB_MIRROR=${BB_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
# ca-certificates: pip's HTTPS inside the root; tzdata: Home Assistant's time zones (zoneinfo); gcc and
# python3-dev: the pinned packages without a cp313 wheel (lru-dict 1.3.0, which Core 2026.2.3 pins) build from source.
PKGS="python3 python3-venv python3-dev gcc libc6-dev ca-certificates tzdata"
DEST="$BB_ROOTS/$SUITE-python"
STAMP_TEXT="$SUITE amd64: $PKGS"

log() { printf '[python-root %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
[ "$(dpkg --print-architecture)" = amd64 ] || die "made for an amd64 host"
if [ -f "$DEST/.beaconbridge-root" ] && [ "$(cat "$DEST/.beaconbridge-root")" = "$STAMP_TEXT" ]; then
    echo "$DEST"; exit 0
fi
if ! command -v debootstrap > /dev/null; then
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends debootstrap \
        > /dev/null || die "could not install debootstrap"
fi
mkdir -p "$BB_ROOTS"
exec {lock}> "$DEST.lock"
flock -w 1800 "$lock" || die "timed out waiting for $DEST.lock"
if [ -f "$DEST/.beaconbridge-root" ] && [ "$(cat "$DEST/.beaconbridge-root")" = "$STAMP_TEXT" ]; then
    echo "$DEST"; exit 0   # made by the run we waited for
fi
log "creating $DEST (packages: $PKGS)"
t0=$SECONDS
tmp="$BB_ROOTS/.new-$SUITE-python"
rm -rf "$tmp"
debootstrap --arch=amd64 --variant=minbase "$SUITE" "$tmp" "$BB_MIRROR" > "$DEST.log" 2>&1 \
    || { tail -20 "$DEST.log" >&2; die "debootstrap failed (log above)"; }
# apt in the root, with /proc and /dev from the host in a private mount namespace (gone when it exits).
unshare -m --propagation private bash -c '
    set -e
    mount -t proc proc "$1/proc"; mount --bind /dev "$1/dev"
    cp /etc/resolv.conf "$1/etc/resolv.conf"
    chroot "$1" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
        bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $2 && apt-get clean"
' _ "$tmp" "$PKGS" >> "$DEST.log" 2>&1 \
    || { tail -20 "$DEST.log" >&2; die "apt-get install in the root failed (log above)"; }
chroot "$tmp" python3 -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info[:2] == (3, 13) else 1)' \
    || die "the root's python3 is not a usable Python 3.13"
echo "$STAMP_TEXT" > "$tmp/.beaconbridge-root"
rm -rf "$DEST.old"
[ -d "$DEST" ] && mv "$DEST" "$DEST.old"
mv "$tmp" "$DEST"
rm -rf "$DEST.old"
log "created $DEST in $((SECONDS - t0)) s ($(du -sh "$DEST" | cut -f1))"
echo "$DEST"
