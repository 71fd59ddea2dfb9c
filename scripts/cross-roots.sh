#!/usr/bin/env bash
# Debootstraps and caches the two Debian 13 (trixie) roots the cross build uses (docs/install.md, "Building the
# packages"), outside the repository:
#   ROOTS/trixie-amd64  the build root: Debian's swiftlang 6.0.3 (the Swift Raspberry Pi OS users get from apt),
#                       the -dev packages, dpkg-dev, help2man; builds the trixie amd64 package natively and the
#                       arm64 one by cross-compiling against the arm64 root.
#   ROOTS/trixie-arm64  the arm64 sysroot: the same -dev packages, libstdc++-14-dev and swiftlang:arm64 (its
#                       static Swift runtime, usr/libexec/swift/lib/swift_static); runs under qemu-user for the
#                       package's dpkg-shlibdeps and for the smoke tests.
# Usage: scripts/cross-roots.sh [amd64|arm64]...   (default: both, created side by side). Prints each root's path.
#        scripts/cross-roots.sh tools               only installs the host's tools (debootstrap, qemu-user-static)
# Environment:
#   BB_ROOTS    where the roots live (default /var/cache/beaconbridge/roots)
#   BB_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
# Idempotent: a root is re-created only when its package list (below) changes, or when a previous creation did not
# finish; creation is serialised by flock on ROOTS/NAME.lock, so parallel runs wait for one another. A new root is
# made in a scratch directory and renamed into place, so a reader never sees half a root.
# Needs root (debootstrap, chroot), debootstrap, and for arm64 qemu-user-static with binfmt_misc (installed and
# mounted here when missing).
set -euo pipefail
BB_ROOTS=${BB_ROOTS:-/var/cache/beaconbridge/roots}
BB_MIRROR=${BB_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie

log() { printf '[roots %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Each root's packages. Changing a list re-creates that root on the next run.
DEV="libbluetooth-dev libmosquitto-dev libsqlite3-dev libyaml-dev libssl-dev libcurl4-openssl-dev libstdc++-14-dev"
PKGS_amd64="swiftlang $DEV pkg-config dpkg-dev help2man binutils binutils-aarch64-linux-gnu file"
PKGS_arm64="swiftlang $DEV dpkg-dev help2man binutils"

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"

host_tools() {
    local missing="" p
    for p in debootstrap qemu-user-static binfmt-support; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        log "installing:$missing"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
            >/dev/null || die "could not install$missing"
    fi
}

# binfmt_misc with qemu-aarch64 registered (flag F: the interpreter is opened at registration, so it works in a
# chroot that lacks it). Returns non-zero when it cannot be had (a container without the mount, say).
ensure_binfmt() {
    [ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null \
        || return 1
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null
}

make_root() {
    local arch=$1 pkgs dest stamp tmp
    pkgs="PKGS_$arch"; pkgs=${!pkgs}
    dest="$BB_ROOTS/$SUITE-$arch"; stamp="$dest/.beaconbridge-root"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$SUITE $arch: $pkgs" ]; then
        echo "$dest"; return 0
    fi
    log "creating $dest (packages: $pkgs)"
    local t0=$SECONDS
    tmp="$BB_ROOTS/.new-$SUITE-$arch"
    rm -rf "$tmp"
    # minbase, then apt inside: apt resolves the dependencies that debootstrap's --include would not.
    debootstrap --arch="$arch" --variant=minbase "$SUITE" "$tmp" "$BB_MIRROR" > "$BB_ROOTS/$SUITE-$arch.log" 2>&1 \
        || { tail -20 "$BB_ROOTS/$SUITE-$arch.log" >&2; die "debootstrap $arch failed (log above)"; }
    # apt in the root, with /proc and /dev from the host in a private mount namespace (gone when it exits).
    unshare -m --propagation private bash -c '
        set -e
        mount -t proc proc "$1/proc"; mount --bind /dev "$1/dev"
        cp /etc/resolv.conf "$1/etc/resolv.conf"
        chroot "$1" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
            bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $2 && apt-get clean"
    ' _ "$tmp" "$pkgs" >> "$BB_ROOTS/$SUITE-$arch.log" 2>&1 \
        || { tail -20 "$BB_ROOTS/$SUITE-$arch.log" >&2; die "apt-get install in the $arch root failed (log above)"; }
    echo "$SUITE $arch: $pkgs" > "$tmp/.beaconbridge-root"
    rm -rf "$dest.old"
    [ -d "$dest" ] && mv "$dest" "$dest.old"
    mv "$tmp" "$dest"
    rm -rf "$dest.old"
    log "created $dest in $((SECONDS - t0)) s ($(du -sh "$dest" | cut -f1))"
    echo "$dest"
}

host_tools
[ "${1:-}" = tools ] && exit 0
mkdir -p "$BB_ROOTS"
if [ $# = 0 ]; then
    # Both, side by side (the amd64 root is mostly downloads, the arm64 one mostly qemu-user): about the time of
    # the arm64 one alone.
    "$0" amd64 > "$BB_ROOTS/both-amd64.out" 2>&1 &
    amd=$!
    "$0" arm64 || { wait "$amd"; exit 1; }
    wait "$amd" || { cat "$BB_ROOTS/both-amd64.out" >&2; exit 1; }
    cat "$BB_ROOTS/both-amd64.out"
    exit 0
fi
for arch in "$@"; do
    case $arch in amd64 | arm64) ;; *) die "unknown root '$arch' (amd64 or arm64)" ;; esac
    [ "$arch" = arm64 ] && { ensure_binfmt || die "binfmt_misc with qemu-aarch64 is not available"; }
    # One creator at a time per root; a second run waits (at most 40 min), then finds the root made.
    exec {lock}> "$BB_ROOTS/$SUITE-$arch.lock"
    flock -w 2400 "$lock" || die "timed out waiting for $BB_ROOTS/$SUITE-$arch.lock"
    make_root "$arch"
    exec {lock}>&-
done
