#!/usr/bin/env bash
# Builds the BeaconBridge Debian package with Debian's own tools (dpkg-shlibdeps, help2man, dpkg-deb) and checks
# it with lintian. See docs/install.md.
# Usage: scripts/deb.sh
# Environment:
#   DEB_BIN      a release binary built with --static-swift-stdlib (default: build one into .build/release)
#   LINK_ORDER   0 to build that binary without the Makefile's LINK_ORDER_FLAGS (lld and scripts/link-order.txt)
#   DEB_OUT      output directory (default .build/deb); the package is DEB_OUT/beaconbridge_VERSION_ARCH.deb
#   DEB_VERSION  package version (default: `beaconbridge --version`)
#   DEB_UNIT     the systemd unit to package (default config/beaconbridge.service)
#   DEB_LINTIAN  0 to skip the lintian check (default 1)
#   DEB_COMMIT   the commit named in the changelog (default: the repository's HEAD)
#   DEB_ARCH     the package's architecture (default: the machine's, dpkg --print-architecture)
#   DEB_STRIP    the strip to use (default strip; aarch64-linux-gnu-strip for an arm64 binary on amd64)
#   DEB_SHLIBDEPS_ARGS  extra dpkg-shlibdeps arguments (a cross build's --admindir of the target's dpkg database)
# The package is for the machine's (or root's) architecture unless DEB_ARCH says otherwise: scripts/cross-build.sh
# runs it natively in the trixie amd64 root for both trixie packages, for arm64 with DEB_ARCH=arm64, the aarch64
# binutils and the arm64 sysroot's dpkg database (the binary itself runs under qemu-user through binfmt_misc).
# Prints the path of the package as its last line. Exits non-zero on any problem (lintian errors or warnings
# that are not overridden in packaging/deb/lintian-overrides included).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PKG="$REPO/packaging/deb"
DEB_OUT=${DEB_OUT:-$REPO/.build/deb}
DEB_UNIT=${DEB_UNIT:-$REPO/config/beaconbridge.service}
DEB_LINTIAN=${DEB_LINTIAN:-1}
SWIFT=${SWIFT:-swift}

log() { printf '[deb %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Debian tools the build needs (idempotent).
packages="dpkg-dev help2man binutils"
[ "$DEB_LINTIAN" = 1 ] && packages="$packages lintian"
missing=""
for p in $packages; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"; done
if [ -n "$missing" ]; then
    log "installing:$missing"
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends $missing >/dev/null \
        || die "could not install$missing"
fi

if [ -z "${DEB_BIN:-}" ]; then
    log "building the release binary (Swift runtime linked statically)"
    # The Makefile's RELEASE_FLAGS, which it prints (one definition of them), with its LINK_ORDER_FLAGS unless
    # LINK_ORDER=0.
    flags=$(make -s --no-print-directory -C "$REPO" print-release-flags LINK_ORDER="${LINK_ORDER:-1}") \
        || die "could not read RELEASE_FLAGS from the Makefile"
    read -ra flags <<< "$flags"
    ( cd "$REPO" && "$SWIFT" build --product beaconbridge "${flags[@]}" ) >&2 \
        || die "swift build failed"
    DEB_BIN="$REPO/.build/release/beaconbridge"
fi
[ -x "$DEB_BIN" ] || die "no binary at $DEB_BIN"
# The Swift runtime must be inside the binary: the target machine has no Swift toolchain. (readelf, not ldd: it
# reads a foreign architecture's binary too.)
if readelf -d "$DEB_BIN" | grep 'NEEDED' | grep -q 'libswift\|libFoundation'; then
    die "$DEB_BIN links the Swift runtime dynamically; build it with --static-swift-stdlib"
fi

ARCH=${DEB_ARCH:-$(dpkg --print-architecture)}
DEB_VERSION=${DEB_VERSION:-$("$DEB_BIN" --version | awk '{ print $2 }')}
[[ "$DEB_VERSION" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || die "bad version '$DEB_VERSION'"
# Reproducible dates and a changelog entry that says where the package came from.
COMMIT=${DEB_COMMIT:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}

WORK="$DEB_OUT/work"
ROOT="$WORK/root"
rm -rf "$WORK" && mkdir -p "$ROOT/DEBIAN"
install -d -m 0755 "$ROOT/usr/bin" "$ROOT/lib/systemd/system" "$ROOT/etc/beaconbridge" \
    "$ROOT/usr/share/doc/beaconbridge" "$ROOT/usr/share/man/man1" "$ROOT/usr/share/lintian/overrides"

# The binary, stripped of symbols (the Swift metadata sections stay: strip keeps allocated sections).
install -m 0755 "$DEB_BIN" "$ROOT/usr/bin/beaconbridge"
"${DEB_STRIP:-strip}" --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT/usr/bin/beaconbridge"
"$ROOT/usr/bin/beaconbridge" --version >/dev/null || die "the stripped binary does not run"

# The unit: the repository's hardened unit, with the package's binary path.
sed 's|/usr/local/bin/beaconbridge|/usr/bin/beaconbridge|g' "$DEB_UNIT" > "$ROOT/lib/systemd/system/beaconbridge.service"
chmod 0644 "$ROOT/lib/systemd/system/beaconbridge.service"
grep -q '/usr/local/' "$ROOT/lib/systemd/system/beaconbridge.service" && die "the unit still names /usr/local"

# The commented example configuration, a conffile: dpkg keeps the administrator's edits on upgrade.
install -m 0644 "$REPO/config/beaconbridge.yaml" "$ROOT/etc/beaconbridge/beaconbridge.yaml"
echo /etc/beaconbridge/beaconbridge.yaml > "$ROOT/DEBIAN/conffiles"
# check-config also checks that outbox.path's directory exists; on the target systemd's StateDirectory= creates
# /var/lib/beaconbridge before ExecStartPre, so the build checks a copy whose outbox lives in a scratch directory.
CHECK_DIR=$(mktemp -d)
sed "s#^  path: /var/lib/beaconbridge/outbox.sqlite\$#  path: $CHECK_DIR/outbox.sqlite#" \
    "$ROOT/etc/beaconbridge/beaconbridge.yaml" > "$CHECK_DIR/beaconbridge.yaml"
grep -q "^  path: $CHECK_DIR/outbox.sqlite\$" "$CHECK_DIR/beaconbridge.yaml" \
    || die "the example configuration no longer has outbox.path /var/lib/beaconbridge/outbox.sqlite (update scripts/deb.sh)"
"$ROOT/usr/bin/beaconbridge" check-config --config "$CHECK_DIR/beaconbridge.yaml" >/dev/null \
    || { rm -rf "$CHECK_DIR"; die "the example configuration does not pass check-config"; }
rm -rf "$CHECK_DIR"

# Documentation: README and docs/*.md (compressed above 4 kB, as Debian policy 12.3 asks), copyright, changelog.
DOC="$ROOT/usr/share/doc/beaconbridge"
install -m 0644 "$PKG/copyright" "$DOC/copyright"
install -m 0644 "$REPO/README.md" "$DOC/README.md"
install -d -m 0755 "$DOC/docs"
for f in "$REPO"/docs/*.md; do install -m 0644 "$f" "$DOC/docs/"; done
find "$DOC" -name '*.md' -size +4k -exec gzip -9n {} +
{
    printf 'beaconbridge (%s) unstable; urgency=medium\n\n' "$DEB_VERSION"
    printf '  * Built from the BeaconBridge repository, commit %s.\n' "$COMMIT"
    printf '    The history of changes is the repository'"'"'s git log.\n\n'
    printf ' -- BeaconBridge maintainers <maintainers@beaconbridge.invalid>  %s\n' \
        "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$DOC/changelog.gz"
chmod 0644 "$DOC/changelog.gz"

# The man page, generated from the binary's --help and --version.
help2man --no-info --section=1 --source="BeaconBridge $DEB_VERSION" --manual="User Commands" \
    --name="Bluetooth LE beacons to MQTT gateway" \
    --include="$PKG/beaconbridge.h2m" "$ROOT/usr/bin/beaconbridge" > "$WORK/beaconbridge.1" \
    || die "help2man failed"
gzip -9n < "$WORK/beaconbridge.1" > "$ROOT/usr/share/man/man1/beaconbridge.1.gz"
chmod 0644 "$ROOT/usr/share/man/man1/beaconbridge.1.gz"

install -m 0644 "$PKG/lintian-overrides" "$ROOT/usr/share/lintian/overrides/beaconbridge"
for script in postinst prerm postrm; do install -m 0755 "$PKG/$script" "$ROOT/DEBIAN/$script"; done

# Depends: computed from the binary's shared libraries by dpkg-shlibdeps (it reads a debian/control). libcurl is
# not among them: the webhook sink loads it with dlopen only when configured, so control.in recommends it (trixie's
# libcurl4t64, bookworm's libcurl4, or the GnuTLS flavour, which the loader also takes).
mkdir -p "$WORK/src/debian"
printf 'Source: beaconbridge\n\nPackage: beaconbridge\nArchitecture: any\n' > "$WORK/src/debian/control"
# shellcheck disable=SC2086 # DEB_SHLIBDEPS_ARGS is a list of arguments
depends=$(cd "$WORK/src" && dpkg-shlibdeps ${DEB_SHLIBDEPS_ARGS:-} -O -e"$ROOT/usr/bin/beaconbridge" 2>"$WORK/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') \
    || { cat "$WORK/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# Packed relative relocations (DT_RELR, the Makefile's LINK_ORDER_FLAGS) need glibc 2.36; dpkg-shlibdeps does not see
# that (a version needed without a symbol), so raise a lower libc6 bound to it.
if readelf -V "$ROOT/usr/bin/beaconbridge" | grep -q GLIBC_ABI_DT_RELR; then
    depends=$(sed -E 's/libc6 \(>= 2\.([0-9]|[12][0-9]|3[0-5])\)/libc6 (>= 2.36)/' <<< "$depends")
fi
# The maintainer scripts call deb-systemd-invoke.
depends="$depends, init-system-helpers (>= 1.54~)"
size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s|@VERSION@|$DEB_VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$depends|" \
    "$PKG/control.in" > "$ROOT/DEBIAN/control"
( cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum ) > "$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/conffiles" "$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +

DEB="$DEB_OUT/beaconbridge_${DEB_VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null || die "dpkg-deb failed"
log "built $DEB ($(du -h "$DEB" | cut -f1)); Depends: $depends"

if [ "$DEB_LINTIAN" = 1 ]; then
    # Errors and warnings fail the build; every override is explained in packaging/deb/lintian-overrides.
    lintian --fail-on error,warning --display-info "$DEB" >&2 || die "lintian reported problems (above)"
    log "lintian: clean (overrides: $(grep -c '^[a-z]' "$PKG/lintian-overrides"))"
fi
echo "$DEB"
