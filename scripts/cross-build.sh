#!/usr/bin/env bash
# Builds the Debian 13 (trixie) packages of BeaconBridge, arm64 (Raspberry Pi OS 64-bit) and amd64, with Debian
# trixie's own Swift (swiftlang 6.0.3) in the cached roots of scripts/cross-roots.sh. docs/install.md,
# "Building the packages".
# Usage: scripts/cross-build.sh arm64|amd64
#   arm64: cross-compiles in the trixie amd64 root against the trixie arm64 sysroot (native speed, the Swift
#          runtime linked statically from the arm64 swiftlang's swift_static), then packages in the amd64 root too,
#          natively: aarch64-linux-gnu-strip, and dpkg-shlibdeps for arm64 (DEB_HOST_ARCH=arm64) reading the
#          sysroot's dpkg database (--admindir) with the sysroot's arm64 libraries bind-mounted where it looks for
#          them (/usr/lib/aarch64-linux-gnu), so Depends names trixie's arm64 library packages as a native build
#          would. Only the binary's own runs (--version, check-config, help2man) are emulated (qemu-user through
#          binfmt_misc, QEMU_LD_PREFIX=/sysroot): about 3 s, where packaging in the arm64 root under qemu-user took
#          6.5 min (dpkg-shlibdeps' perl alone about 4).
#   amd64: builds and packages natively in the trixie amd64 root.
# Both package with scripts/deb.sh (its DEB_* knobs), then lintian runs on the host. The package lands in
# .build/deb/trixie/beaconbridge_VERSION_ARCH.deb (the bookworm amd64 one of `make deb` stays in .build/deb/); the
# build directory is .build/trixie-ARCH, so a repeated build is incremental.
# Environment: BB_ROOTS (scripts/cross-roots.sh), DEB_LINTIAN=0 skips lintian.
# Prints the package's path as its last line.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ARCH=${1:-arm64}
DEB_LINTIAN=${DEB_LINTIAN:-1}
log() { printf '[cross %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
case $ARCH in amd64 | arm64) ;; *) die "usage: $0 arm64|amd64" ;; esac
[ "$(id -u)" = 0 ] || die "needs root (chroot into the cached roots)"

# One manifest for both toolchains (Package.swift, tools version 6.0, which trixie's swiftlang 6.0.3 reads).
t0=$SECONDS
AMD=$("$REPO/scripts/cross-roots.sh" amd64 | tail -n 1)
ARM=""
[ "$ARCH" = arm64 ] && ARM=$("$REPO/scripts/cross-roots.sh" arm64 | tail -n 1)
log "roots ready in $((SECONDS - t0)) s"

# Runs a command in ROOT (chroot) with the repository at /src, the arm64 sysroot at /sysroot (read-only) and /proc,
# /dev from the host, all in a private mount namespace that goes away with the command. With IN_ROOT_LIBS=1 the
# sysroot's /usr/lib/aarch64-linux-gnu is also bind-mounted (read-only) over the root's, for dpkg-shlibdeps.
in_root() {
    local root=$1; shift
    unshare -m --propagation private bash -c '
        set -e
        root=$1 repo=$2 sysroot=$3 libs=$4; shift 4
        mount -t proc proc "$root/proc"; mount --bind /dev "$root/dev"
        mkdir -p "$root/src" "$root/sysroot"
        mount --bind "$repo" "$root/src"
        if [ -n "$sysroot" ]; then mount --bind "$sysroot" "$root/sysroot"; mount -o remount,bind,ro "$root/sysroot"; fi
        if [ -n "$sysroot" ] && [ "$libs" = 1 ]; then
            mkdir -p "$root/usr/lib/aarch64-linux-gnu"
            mount --bind "$sysroot/usr/lib/aarch64-linux-gnu" "$root/usr/lib/aarch64-linux-gnu"
            mount -o remount,bind,ro "$root/usr/lib/aarch64-linux-gnu"
        fi
        exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
            TERM=dumb "$@"
    ' _ "$root" "$REPO" "$ARM" "${IN_ROOT_LIBS:-0}" "$@"
}

FLAGS=(--package-path /src -c release --product beaconbridge --static-swift-stdlib --scratch-path "/src/.build/trixie-$ARCH"
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now)
if [ "$ARCH" = arm64 ]; then
    FLAGS+=(--triple aarch64-unknown-linux-gnu --sdk /sysroot -Xswiftc -sdk -Xswiftc /sysroot
        -Xswiftc -resource-dir -Xswiftc /sysroot/usr/libexec/swift/lib/swift_static -Xswiftc -use-ld=lld)
    PC=(PKG_CONFIG_PATH=/sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:/sysroot/usr/share/pkgconfig
        PKG_CONFIG_SYSROOT_DIR=/sysroot)
else
    PC=(PKG_CONFIG_PATH=/usr/lib/x86_64-linux-gnu/pkgconfig)
fi
t1=$SECONDS
log "building for $ARCH with $(in_root "$AMD" swift --version 2>/dev/null | head -n 1)"
# CPU-heavy: one heavy build at a time on this machine (/tmp/bb-build.lock, as the other build steps).
exec {lock}> /tmp/bb-build.lock
flock "$lock"
[ $((SECONDS - t1)) -gt 1 ] && log "waited $((SECONDS - t1)) s for /tmp/bb-build.lock"
t1=$SECONDS
in_root "$AMD" env "${PC[@]}" swift build "${FLAGS[@]}" >&2 || die "swift build ($ARCH) failed"
exec {lock}>&-
# (A cross build's products are under the target triple's directory, not .build/trixie-ARCH/release.)
BIN="$(in_root "$AMD" env "${PC[@]}" swift build "${FLAGS[@]}" --show-bin-path)/beaconbridge"
log "built $BIN in $((SECONDS - t1)) s"

# Package in the amd64 root, natively for both architectures (see the top). lintian runs on the host afterwards.
t2=$SECONDS
COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
EPOCH=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)
CROSS=()
if [ "$ARCH" = arm64 ]; then
    CROSS=(DEB_ARCH=arm64 DEB_HOST_ARCH=arm64 DEB_STRIP=aarch64-linux-gnu-strip QEMU_LD_PREFIX=/sysroot
        DEB_SHLIBDEPS_ARGS=--admindir=/sysroot/var/lib/dpkg)
fi
DEB=$(IN_ROOT_LIBS=1 in_root "$AMD" env "${CROSS[@]}" DEB_BIN="$BIN" DEB_OUT=/src/.build/deb/trixie DEB_LINTIAN=0 \
    DEB_COMMIT="$COMMIT" SOURCE_DATE_EPOCH="$EPOCH" bash /src/scripts/deb.sh | tail -n 1) \
    || die "scripts/deb.sh ($ARCH) failed"
DEB="$REPO/${DEB#/src/}"
[ -f "$DEB" ] || die "no package at $DEB"
log "packaged in $((SECONDS - t2)) s"
if [ "$DEB_LINTIAN" = 1 ]; then
    command -v lintian >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        -o DPkg::Lock::Timeout=600 --no-install-recommends lintian >/dev/null; }
    # Errors fail; warnings are shown. Known: trixie's Swift 6.0.3 links without a PT_GNU_RELRO segment although
    # -z relro is passed (hardening-no-relro; BIND_NOW is there), which bookworm's 6.3 build does not show.
    lintian --fail-on error --display-info "$DEB" >&2 || die "lintian reported errors (above)"
    log "lintian: no errors"
fi
log "$ARCH package in $((SECONDS - t0)) s: $DEB"
echo "$DEB"
