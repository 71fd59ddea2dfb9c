#!/usr/bin/env bash
# Creates and caches the Debian root file system the container image is made from (scripts/container-image.sh,
# docker/Containerfile): debootstrap --variant=minbase, then apt in a chroot: the runtime libraries the
# beaconbridge package's Depends name (dpkg-shlibdeps in scripts/deb.sh), libcurl (loaded with dlopen only by the
# webhook sink: a container cannot apt-get it later), ca-certificates (TLS to a broker or a webhook) and tini (the
# image's PID 1). Then the root is made small as Debian's own container images are: dpkg leaves out documentation,
# man pages and translations from now on (etc/dpkg/dpkg.cfg.d/beaconbridge-slim, so the package installed later
# keeps only its copyright), what debootstrap installed of them is deleted, and apt's lists and caches are emptied.
#   ROOTS/container-bookworm-amd64   the image of `make test`'s container stage: Debian 12, for the package of
#                                    `make deb` (bookworm's glibc and library names)
#   ROOTS/container-trixie-arm64     a Raspberry Pi's: Debian 13 arm64, for the package of `make deb-arm64` (its
#                                    binary needs trixie's glibc); on amd64 made through qemu-user (binfmt_misc)
#   (bookworm-arm64 and trixie-amd64 too, for packages built otherwise: `make deb-trixie`, or `make deb` on arm64.)
# Usage: scripts/container-root.sh [SUITE-ARCH]    prints the root's path (creates it first when missing or out of
#                                                  date); SUITE-ARCH is bookworm-amd64 (default), trixie-arm64,
#                                                  trixie-amd64 or bookworm-arm64
#        scripts/container-root.sh --background    `make test`'s first step: creates bookworm-amd64 in the background
#                                                  at the lowest CPU and I/O priority when it is missing or out of
#                                                  date (log: ROOTS/container-background.log) and returns at once;
#                                                  the container stage's own call waits for it on the root's lock.
#                                                  Not root, or no debootstrap to be had: says so and returns 0.
# Environment:
#   BB_ROOTS    where the roots live (default /var/cache/beaconbridge/roots)
#   BB_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
# Idempotent: a root is re-created only when its package list or its slimming (below) changes, or a previous
# creation did not finish; creation is serialised by flock on ROOTS/NAME.lock, and a new root is made in a scratch
# directory and renamed into place, so a reader never sees half a root. Needs root (debootstrap, chroot).
set -euo pipefail
BB_ROOTS=${BB_ROOTS:-/var/cache/beaconbridge/roots}
BB_MIRROR=${BB_MIRROR:-http://deb.debian.org/debian}

log() { printf '[container-root %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Each root's packages (the package's Depends under each suite's names, and tini, the image's PID 1: it hands
# SIGTERM on to the daemon, which as PID 1 itself would not get one sent before it handles it). Changing a list
# re-creates that root.
COMMON="libbluetooth3 libmosquitto1 libsqlite3-0 libyaml-0-2 ca-certificates init-system-helpers tini"
# shellcheck disable=SC2034 # read through ${!pkgs}
PKGS_bookworm="$COMMON libssl3 libcurl4"
# shellcheck disable=SC2034 # read through ${!pkgs}
PKGS_trixie="$COMMON libssl3t64 libcurl4t64"
# dpkg's exclusions, as in Debian's official images (debuerreotype's slimify): kept in the root, so every later
# install into the image (the beaconbridge package, a user's apt-get) leaves these out too.
SLIM='path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*'

if [ "${1:-}" = --background ]; then
    if [ "$(id -u)" != 0 ]; then
        log "not root: the container image's root is not created (the container stage will SKIP)"
        exit 0
    fi
    set -- bookworm-amd64
    background=1
fi
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
target=${1:-bookworm-amd64}
case $target in bookworm-amd64 | bookworm-arm64 | trixie-amd64 | trixie-arm64) ;;
*) die "unknown root '$target' (bookworm-amd64, bookworm-arm64, trixie-amd64 or trixie-arm64)" ;;
esac
suite=${target%-*}
arch=${target#*-}
pkgs="PKGS_$suite"
pkgs=${!pkgs}
DEST="$BB_ROOTS/container-$target"
STAMP_TEXT="$suite $arch: $pkgs; slim: $(echo "$SLIM" | md5sum | cut -c1-12)"
current() { [ -f "$DEST/.beaconbridge-root" ] && [ "$(cat "$DEST/.beaconbridge-root")" = "$STAMP_TEXT" ]; }

if current; then
    if [ -n "${background:-}" ]; then log "the container image's root is cached in $DEST"; else echo "$DEST"; fi
    exit 0
fi
missing=""
command -v debootstrap > /dev/null || missing="debootstrap"
[ "$arch" = "$(dpkg --print-architecture)" ] || command -v qemu-aarch64-static > /dev/null || missing="$missing qemu-user-static binfmt-support"
if [ -n "$missing" ]; then
    log "installing $missing"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        --no-install-recommends $missing > /dev/null; } || die "could not install $missing"
fi
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    # debootstrap's second stage and apt in the chroot run arm64 programs through binfmt_misc's qemu-aarch64.
    [ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2> /dev/null || true
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 > /dev/null 2>&1 || true
    grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2> /dev/null || die "binfmt_misc with qemu-aarch64 is not available"
fi
mkdir -p "$BB_ROOTS"
if [ -n "${background:-}" ]; then
    log "creating $DEST in the background (log: $BB_ROOTS/container-background.log)"
    nohup nice -n 19 ionice -c 3 "$0" "$target" > "$BB_ROOTS/container-background.log" 2>&1 < /dev/null &
    exit 0
fi

exec {lock}> "$DEST.lock"
t_lock=$SECONDS
flock -w 1800 "$lock" || die "timed out waiting for $DEST.lock"
[ $((SECONDS - t_lock)) -gt 1 ] && log "waited $((SECONDS - t_lock)) s for $DEST.lock (a creation in the background)"
if current; then echo "$DEST"; exit 0; fi   # made by the run we waited for

log "creating $DEST (packages: $pkgs)"
t0=$SECONDS
tmp="$BB_ROOTS/.new-container-$target"
rm -rf "$tmp"
debootstrap --arch="$arch" --variant=minbase "$suite" "$tmp" "$BB_MIRROR" > "$DEST.log" 2>&1 \
    || { tail -20 "$DEST.log" >&2; die "debootstrap failed (log above)"; }
mkdir -p "$tmp/etc/dpkg/dpkg.cfg.d"
echo "$SLIM" > "$tmp/etc/dpkg/dpkg.cfg.d/beaconbridge-slim"
# No recommended packages, and no package cache kept, in the root and in every image made from it.
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' > "$tmp/etc/apt/apt.conf.d/90beaconbridge"
# apt in the root, with /proc and /dev from the host in a private mount namespace (gone when it exits).
unshare -m --propagation private bash -c '
    set -e
    mount -t proc proc "$1/proc"; mount --bind /dev "$1/dev"
    cp /etc/resolv.conf "$1/etc/resolv.conf"
    # No fsync per unpacked file: the root is made in a scratch directory and renamed into place only when complete.
    echo force-unsafe-io > "$1/etc/dpkg/dpkg.cfg.d/beaconbridge-unsafe-io"
    chroot "$1" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
        bash -c "apt-get update -qq && apt-get install -y -qq $2 && apt-get clean"
    rm "$1/etc/dpkg/dpkg.cfg.d/beaconbridge-unsafe-io"
' _ "$tmp" "$pkgs" >> "$DEST.log" 2>&1 \
    || { tail -20 "$DEST.log" >&2; die "apt-get install in the root failed (log above)"; }
# What debootstrap installed before the exclusions were in place, and what a container does not need: apt's
# lists (an image user runs apt-get update first anyway), logs, the host's resolv.conf (podman mounts its own).
find "$tmp/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$tmp/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$tmp"/usr/share/{man,info,groff,lintian,locale}/* "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/*.bin \
    "$tmp"/var/cache/debconf/*-old "$tmp"/var/log/{apt,dpkg.log,bootstrap.log,alternatives.log} "$tmp"/tmp/* \
    "$tmp"/var/tmp/*
: > "$tmp/etc/resolv.conf"
: > "$tmp/etc/machine-id"
echo "$STAMP_TEXT" > "$tmp/.beaconbridge-root"
rm -rf "$DEST.old"
[ -d "$DEST" ] && mv "$DEST" "$DEST.old"
mv "$tmp" "$DEST"
rm -rf "$DEST.old"
log "created $DEST in $((SECONDS - t0)) s ($(du -sh --exclude=proc "$DEST" | cut -f1))"
echo "$DEST"
