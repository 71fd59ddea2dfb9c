#!/usr/bin/env bash
# Creates and caches the two Debian 13 (trixie) roots the cross build uses (docs/install.md, "Building the
# packages"), outside the repository:
#   ROOTS/trixie-amd64          the build root (debootstrap, then apt in a chroot): Debian's swiftlang 6.0.3 (the
#                               Swift Raspberry Pi OS users get from apt), the -dev packages, dpkg-dev, help2man,
#                               binutils for aarch64; builds the trixie amd64 package natively, cross-compiles the
#                               arm64 one against the sysroot below and packages both (natively: no qemu there).
#   ROOTS/trixie-arm64-sysroot  the arm64 sysroot: the same -dev packages, libstdc++-14-dev and swiftlang:arm64 (its
#                               static Swift runtime, usr/libexec/swift/lib/swift_static) with all their
#                               dependencies, resolved and downloaded by the host's apt for arm64 and unpacked with
#                               dpkg-deb, never configured (no maintainer script runs, so no qemu-user: it is only
#                               read, by the compiler and linker, by dpkg-shlibdeps and as qemu-user's library prefix
#                               in the smoke tests). Its var/lib/dpkg holds a status file, the file lists and the
#                               shlibs/symbols files of every package, so dpkg-shlibdeps --admindir can use it.
# Usage: scripts/cross-roots.sh [amd64|arm64]...   (default: both, created side by side). Prints each root's path.
#        scripts/cross-roots.sh tools               only installs the host's tools (debootstrap, qemu-user-static,
#                                                   lintian)
#        scripts/cross-roots.sh --background        `make test`'s first step: installs the host's tools, then, if a
#                                                   root is missing or out of date, creates both in the background
#                                                   (log: ROOTS/background.log) and returns at once, so the
#                                                   downloads overlap with the stages before the arm64 stage,
#                                                   whose own call waits for them on the roots' locks. Not root:
#                                                   says so and returns 0 (the arm64 stage will SKIP).
# Environment:
#   BB_ROOTS    where the roots live (default /var/cache/beaconbridge/roots)
#   BB_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
# Idempotent: a root is re-created only when its package list (below) changes, or when a previous creation did not
# finish; creation is serialised by flock on ROOTS/NAME.lock, so parallel runs wait for one another. A new root is
# made in a scratch directory and renamed into place, so a reader never sees half a root. A list that only gained
# packages the cached root already holds (as dependencies of others: zlib1g-dev came with libcurl4-openssl-dev)
# re-creates nothing: the root's stamp is brought up to date (current_root below).
# Needs root (debootstrap, chroot) and debootstrap; qemu-user-static with binfmt_misc is installed here too (the
# smoke tests and the packaging's help2man run the arm64 binary), but creating the roots does not use it.
set -euo pipefail
BB_ROOTS=${BB_ROOTS:-/var/cache/beaconbridge/roots}
BB_MIRROR=${BB_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie

log() { printf '[roots %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Each root's packages. Changing a list re-creates that root on the next run (unless it only adds packages the root
# already holds, above).
DEV="libbluetooth-dev libmosquitto-dev libsqlite3-dev libyaml-dev libssl-dev libcurl4-openssl-dev libstdc++-14-dev"
# zlib1g-dev for SecureDFU's CZlib; roots cached before it was named hold it already, through libcurl4-openssl-dev.
DEV="$DEV zlib1g-dev"
PKGS_amd64="swiftlang $DEV pkg-config dpkg-dev help2man binutils binutils-aarch64-linux-gnu file"
PKGS_arm64="swiftlang $DEV"

if [ "${1:-}" = --background ] && [ "$(id -u)" != 0 ]; then
    log "not root: the cross build's roots are not created (the arm64 stage will SKIP)"
    exit 0
fi
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"

host_tools() {
    local missing="" p
    # lintian is the cross build's (scripts/cross-build.sh checks the packages with it): installed here, in
    # `make test`'s first step, so the background build never runs apt-get while a foreground stage does (on a
    # fresh machine it once held the dpkg lock when the e2e stage installed its harness, which then failed).
    for p in debootstrap qemu-user-static binfmt-support file lintian; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        log "installing:$missing"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
            --no-install-recommends $missing >/dev/null || die "could not install$missing"
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

# The arm64 sysroot: the host's apt (a private state directory, architecture arm64, trixie's archive) resolves the
# packages and their dependencies and downloads them; each is unpacked with dpkg-deb into the root (merged /usr,
# as debootstrap makes it) and recorded in the root's dpkg database as "install ok installed": its control fields
# in var/lib/dpkg/status, its file list and its control files (shlibs, symbols, ...) in var/lib/dpkg/info, named
# as dpkg names them (PKG:arm64.* for Multi-Arch: same packages). Nothing is configured and no maintainer script
# runs. The downloads stay in ROOTS/.apt-arm64 for the next creation.
make_sysroot() { # TMP PACKAGES
    local tmp=$1 pkgs=$2 apt_dir="$BB_ROOTS/.apt-arm64" deb name info ctl
    mkdir -p "$apt_dir"/{etc/apt.conf.d,etc/preferences.d,etc/sources.list.d,state/lists/partial} \
        "$apt_dir/cache/archives/partial"
    : > "$apt_dir/status"
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    gpg --show-keys "$keyring" 2>/dev/null | grep -q '13/trixie' \
        || die "$keyring has no trixie key (update debian-archive-keyring)"
    echo "deb [signed-by=$keyring] $BB_MIRROR $SUITE main" > "$apt_dir/etc/sources.list"
    local apt=(apt-get -q -o Dir::Etc="$apt_dir/etc" -o Dir::State="$apt_dir/state"
        -o Dir::State::status="$apt_dir/status" -o Dir::Cache="$apt_dir/cache" -o APT::Architecture=arm64
        -o APT::Architectures::=arm64 -o Debug::NoLocking=1 -o APT::Install-Recommends=false
        -o Acquire::Languages=none -o Acquire::Retries=3)
    "${apt[@]}" update || return 1
    # Everything the packages need, as apt would install them on an empty arm64 system (no Essential set).
    "${apt[@]}" install -y --download-only $pkgs || return 1
    mkdir -p "$tmp/usr/bin" "$tmp/usr/sbin" "$tmp/usr/lib" "$tmp/var/lib/dpkg/info" "$tmp/var/lib/dpkg/updates"
    ln -s usr/bin "$tmp/bin"; ln -s usr/sbin "$tmp/sbin"; ln -s usr/lib "$tmp/lib"
    echo 1 > "$tmp/var/lib/dpkg/info/format"
    : > "$tmp/var/lib/dpkg/status"
    ctl=$(mktemp -d)
    local count=0 chosen version
    # Only what this resolution chose (the cache may keep older versions from a previous creation): apt's file
    # names are NAME_VERSION_ARCH.deb with the epoch's colon as %3a.
    chosen=$("${apt[@]}" install -s -y $pkgs | sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1 \2/p') || return 1
    [ -n "$chosen" ] || return 1
    while read -r name version; do
        deb=$(ls "$apt_dir/cache/archives/${name}_${version//:/%3a}_"*.deb 2>/dev/null | head -n 1)
        [ -n "$deb" ] || { log "no download for $name $version"; return 1; }
        info=$name
        [ "$(dpkg-deb -f "$deb" Multi-Arch)" = same ] && info="$name:$(dpkg-deb -f "$deb" Architecture)"
        # Unpacked once; tar's list of what it unpacked is dpkg's file list (./usr/ -> /usr, ./ -> /.).
        dpkg-deb --fsys-tarfile "$deb" | tar -x -v -C "$tmp" --keep-directory-symlink \
            | sed -e 's|^\./|/|' -e 's|/$||' -e 's|^$|/.|' > "$tmp/var/lib/dpkg/info/$info.list"
        [ "${PIPESTATUS[0]}${PIPESTATUS[1]}" = 00 ] || return 1
        rm -rf "$ctl"/*; dpkg-deb -e "$deb" "$ctl"
        for f in "$ctl"/*; do
            case ${f##*/} in control) ;; *) cp "$f" "$tmp/var/lib/dpkg/info/$info.${f##*/}" ;; esac
        done
        { dpkg-deb -f "$deb" | sed '1a Status: install ok installed'; echo; } >> "$tmp/var/lib/dpkg/status"
        count=$((count + 1))
    done <<< "$chosen"
    rm -rf "$ctl"
    [ "$count" -gt 0 ] || return 1
    log "unpacked $count packages into the arm64 sysroot"
}

root_dir() { # ARCH: the root's directory
    if [ "$1" = arm64 ]; then echo "$BB_ROOTS/$SUITE-arm64-sysroot"; else echo "$BB_ROOTS/$SUITE-$1"; fi
}

# Whether ARCH's cached root serves the current package list: its stamp names that list, or a list that the current
# one only adds to, and the root's dpkg database has every added package installed (an apt root and the sysroot
# both record "install ok installed"). Prints "adopt" in the second case, when the stamp should be rewritten.
current_root() { # ARCH
    local arch=$1 pkgs dest stamped p installed
    pkgs="PKGS_$arch"; pkgs=${!pkgs}
    dest=$(root_dir "$arch")
    stamped=$(cat "$dest/.beaconbridge-root" 2>/dev/null) || return 1
    [ "$stamped" = "$SUITE $arch: $pkgs" ] && return 0
    [ "${stamped%%: *}" = "$SUITE $arch" ] || return 1
    for p in ${stamped#*: }; do [[ " $pkgs " == *" $p "* ]] || return 1; done
    installed=$(awk '/^Package:/ { name = $2 } /^Status: install ok installed/ { print name }' \
        "$dest/var/lib/dpkg/status" 2>/dev/null) || return 1
    for p in $pkgs; do grep -qxF "$p" <<< "$installed" || return 1; done
    echo adopt
}

make_root() {
    local arch=$1 pkgs dest stamp tmp name current
    pkgs="PKGS_$arch"; pkgs=${!pkgs}
    dest=$(root_dir "$arch"); stamp="$dest/.beaconbridge-root"; name=${dest##*/}
    if current=$(current_root "$arch"); then
        if [ "$current" = adopt ]; then
            log "$dest already holds every package of the new list: stamp updated, nothing re-created"
            echo "$SUITE $arch: $pkgs" > "$stamp"
        fi
        echo "$dest"; return 0
    fi
    log "creating $dest (packages: $pkgs)"
    local t0=$SECONDS
    tmp="$BB_ROOTS/.new-$name"
    rm -rf "$tmp"
    if [ "$arch" = arm64 ]; then
        make_sysroot "$tmp" "$pkgs" > "$BB_ROOTS/$name.log" 2>&1 \
            || { tail -20 "$BB_ROOTS/$name.log" >&2; die "creating the arm64 sysroot failed (log above)"; }
    else
        # minbase, then apt inside: apt resolves the dependencies that debootstrap's --include would not.
        debootstrap --arch="$arch" --variant=minbase "$SUITE" "$tmp" "$BB_MIRROR" > "$BB_ROOTS/$name.log" 2>&1 \
            || { tail -20 "$BB_ROOTS/$name.log" >&2; die "debootstrap $arch failed (log above)"; }
        # apt in the root, with /proc and /dev from the host in a private mount namespace (gone when it exits).
        unshare -m --propagation private bash -c '
            set -e
            mount -t proc proc "$1/proc"; mount --bind /dev "$1/dev"
            cp /etc/resolv.conf "$1/etc/resolv.conf"
            # No fsync per unpacked file: the root is a cache made in a scratch directory and renamed into place
            # only when complete, so a crash costs a re-creation, and the fsyncs stalled the disk for other processes.
            echo force-unsafe-io > "$1/etc/dpkg/dpkg.cfg.d/beaconbridge-unsafe-io"
            chroot "$1" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
                bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $2 && apt-get clean"
        ' _ "$tmp" "$pkgs" >> "$BB_ROOTS/$name.log" 2>&1 \
            || { tail -20 "$BB_ROOTS/$name.log" >&2; die "apt-get install in the $arch root failed (log above)"; }
    fi
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
if [ "${1:-}" = --background ]; then
    for arch in amd64 arm64; do
        if ! current_root "$arch" > /dev/null; then
            log "creating the cross build's roots in the background (log: $BB_ROOTS/background.log)"
            # At the lowest CPU and I/O priority: it runs beside the build and the Swift suites (at normal
            # priority on session 19's CI run, the first on a fresh machine, where a suite task was held up
            # for 40 s).
            nohup nice -n 19 ionice -c 3 "$0" > "$BB_ROOTS/background.log" 2>&1 < /dev/null &
            exit 0
        fi
    done
    log "the cross build's roots are cached in $BB_ROOTS"
    exit 0
fi
if [ $# = 0 ]; then
    # Both, side by side (both mostly downloads).
    "$0" amd64 > "$BB_ROOTS/both-amd64.out" 2>&1 &
    amd=$!
    "$0" arm64 || { wait "$amd"; exit 1; }
    wait "$amd" || { cat "$BB_ROOTS/both-amd64.out" >&2; exit 1; }
    cat "$BB_ROOTS/both-amd64.out"
    exit 0
fi
for arch in "$@"; do
    case $arch in amd64 | arm64) ;; *) die "unknown root '$arch' (amd64 or arm64)" ;; esac
    # The arm64 binary runs in the packaging (help2man) and the smoke tests, through binfmt_misc's qemu-aarch64.
    [ "$arch" = arm64 ] && { ensure_binfmt || die "binfmt_misc with qemu-aarch64 is not available"; }
    # One creator at a time per root; a second run waits (at most 40 min), then finds the root made.
    lockfile="$(root_dir "$arch").lock"
    exec {lock}> "$lockfile"
    flock -w 2400 "$lock" || die "timed out waiting for $lockfile"
    make_root "$arch"
    exec {lock}>&-
done
